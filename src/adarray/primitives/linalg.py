"""einsum[spec]: the one contraction primitive (dot, matmul, inner, outer, tensordot).

Binary, each operand with distinct letters, e.g. ``ij,jk->ik`` (scalars have no letters: ``,->``);
adarray.numpy.einsum rewrites everything else NumPy accepts (ellipses, repeated indices, more
operands, broadcasting) into a sequence of these. It is bilinear:
the cotangent of one operand is an einsum of the cotangent with the other,
broadcast along letters that only that operand had (summed out alone).
"""
from __future__ import annotations

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from .rules import add_tangents, aval_of_value
from .structural import broadcast_in_dim
from .taylor import cauchy


def parse_spec(spec: str):
    inputs, output = spec.split("->")
    return inputs.split(","), output


def _einsum_abstract_eval(a, b, *, spec):
    (sa, sb), so = parse_spec(spec)
    sizes: dict[str, int] = {}
    for letters, aval in ((sa, a), (sb, b)):
        if len(letters) != aval.ndim or len(set(letters)) != len(letters):
            raise ShapeError(f"einsum '{spec}': operand {aval} does not fit '{letters}'")
        for letter, size in zip(letters, aval.shape):
            if sizes.setdefault(letter, size) != size:
                raise ShapeError(
                    f"einsum '{spec}': axis '{letter}' has size {sizes[letter]} in one operand and "
                    f"{size} in the other (shapes {a.shape} and {b.shape})"
                )
    if a.dtype != b.dtype:
        raise ShapeError(f"einsum '{spec}': operands {a} and {b} differ in dtype")
    if any(letter not in sizes for letter in so) or len(set(so)) != len(so):
        raise ShapeError(f"einsum '{spec}': bad output letters")
    return a.update(shape=tuple(sizes[letter] for letter in so))


einsum_p = Primitive("einsum", _einsum_abstract_eval)


def einsum(spec: str, a, b):
    return einsum_p.bind(a, b, spec=spec)


def _cotangent(cotangent, out_letters, other, other_letters, letters, aval):
    """Cotangent of the operand with `letters` given the cotangent of the output."""
    reachable = [c for c in letters if c in out_letters or c in other_letters]
    partial = einsum(f"{out_letters},{other_letters}->{''.join(reachable)}", cotangent, other)
    if len(reachable) == len(letters):
        return partial
    dims = tuple(letters.index(c) for c in reachable)
    return broadcast_in_dim(partial, aval.shape, dims)


def _einsum_vjp(cotangent, primals, output, needs, *, spec):
    a, b = primals
    (sa, sb), so = parse_spec(spec)
    if is_zero(cotangent):
        return [None, None]
    return [
        _cotangent(cotangent, so, b, sb, sa, aval_of_value(a)) if needs[0] else None,
        _cotangent(cotangent, so, a, sa, sb, aval_of_value(b)) if needs[1] else None,
    ]


def _einsum_jvp(tangents, primals, output, *, spec):
    (ta, tb), (a, b) = tangents, primals
    total = Zero(aval_of_value(output))
    if not is_zero(ta):
        total = add_tangents(total, einsum(spec, ta, b))
    if not is_zero(tb):
        total = add_tangents(total, einsum(spec, a, tb))
    return total


einsum_p.jvp, einsum_p.vjp = _einsum_jvp, _einsum_vjp
einsum_p.sample = lambda rng: [
    ([rng.normal(size=(2, 3)), rng.normal(size=(3, 4))], {"spec": "ij,jk->ik"}),
    ([rng.normal(size=(3,)), rng.normal(size=(3,))], {"spec": "i,i->"}),
    ([rng.normal(size=(2, 3)), rng.normal(size=(4,))], {"spec": "ij,k->ik"}),
    ([rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))], {"spec": "bij,bjk->bik"}),
    ([rng.normal(size=(2, 3)), rng.normal(size=(0, 3))], {"spec": "ij,kj->ik"}),
    # scalar operands: their cotangents are einsums with an empty output ("i,i->" feeding ",->")
    ([rng.normal(size=()), rng.normal(size=())], {"spec": ",->"}),
    ([rng.normal(size=(3,)), rng.normal(size=())], {"spec": "i,->i"}),
    ([rng.normal(size=(2, 3)), rng.normal(size=(3,))], {"spec": "ij,j->"}),
]


def _einsum_batch(args, batched, size, *, spec):
    """A fresh letter for the batch axis, on the batched operands and the output."""
    (sa, sb), so = parse_spec(spec)
    letter = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in spec)
    sa, sb = (letter + sa if batched[0] else sa), (letter + sb if batched[1] else sb)
    return einsum(f"{sa},{sb}->{letter}{so}", *args), True


einsum_p.batch = _einsum_batch


# --- Taylor mode: bilinear, so a Cauchy product of einsums --------------------------------------------

def _einsum_taylor(series, output, *, spec):
    a, b = series
    aval = aval_of_value(output)
    return [cauchy(a, b, k, product=lambda x, y: _einsum_or_zero(spec, x, y, output), aval=aval)
            for k in range(1, len(a))]


def _einsum_or_zero(spec, x, y, output):
    if is_zero(x) or is_zero(y):
        return Zero(aval_of_value(output))
    return einsum(spec, x, y)


einsum_p.taylor = _einsum_taylor
