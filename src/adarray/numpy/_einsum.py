"""numpy.einsum in full, lowered to the binary einsum primitive (distinct letters per operand).

What NumPy accepts is rewritten here before anything is bound:
  * `...` becomes fresh letters, right-aligned across operands (broadcast like NumPy);
  * the operand/sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` becomes letters;
  * a letter repeated within one operand (``ii->``, ``ii->i``, ``iij->j``) takes that operand's
    diagonal first (a gather), so traces and diagonals are differentiable like any gather;
  * an axis of size 1 against a longer axis of the same letter elsewhere is squeezed out of its
    operand: x_0 * sum_j y_j is what broadcasting means, and the other operand sums j alone;
  * operands are then contracted pairwise, left to right, or along np.einsum_path's order when
    `optimize` asks for it (any value is accepted, as in NumPy).
"""
from __future__ import annotations

import string

import numpy as np

from ..core.errors import ShapeError
from ..primitives import linalg, structural
from ..primitives import reduce as reductions
from ._core import asvalue, cast, result_dtype, shape
from ._matrix import diagonal

_LETTERS = string.ascii_letters


def _sublist_letters(sublist, what):
    letters = []
    for item in sublist:
        if item is Ellipsis:
            letters.append("...")
        elif isinstance(item, (int, np.integer)) and 0 <= int(item) < len(_LETTERS):
            letters.append(_LETTERS[int(item)])
        else:
            raise ShapeError(f"einsum: {what} subscript {item!r} must be an integer in [0, 52) or Ellipsis")
    return "".join(letters)


def _parse_arguments(args):
    """(subscripts string, operands) from either calling form."""
    if not args:
        raise ShapeError("einsum: needs subscripts and at least one operand")
    if isinstance(args[0], str):
        return args[0].replace(" ", ""), list(args[1:])
    operands, terms = list(args[0::2]), [_sublist_letters(s, "input") for s in args[1::2]]
    output = None
    if len(args) % 2:  # a trailing output sublist
        output = _sublist_letters(operands.pop(), "output")
    return ",".join(terms) + ("" if output is None else "->" + output), operands


def _expand_ellipses(subscripts, shapes):
    """Input terms and the output term with every '...' replaced by fresh letters."""
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(f"einsum '{subscripts}': {len(terms)} terms for {len(shapes)} operands")
    for term in terms + ([output] if arrow else []):
        named = term.replace("...", "")
        if term.count("...") > 1 or "." in named or any(c not in _LETTERS for c in named):
            raise ShapeError(f"einsum '{subscripts}': bad term '{term}' (letters and at most one '...')")
    fresh = [c for c in _LETTERS if c not in subscripts]
    widths = []
    for term, operand_shape in zip(terms, shapes):
        named = len(term.replace("...", ""))
        width = len(operand_shape) - named
        if width < 0 or (width and "..." not in term):
            raise ShapeError(f"einsum '{subscripts}': term '{term}' does not fit shape {tuple(operand_shape)}")
        widths.append(width)
    ellipsis = "".join(fresh[: max(widths, default=0)])
    terms = [t.replace("...", ellipsis[len(ellipsis) - w:]) for t, w in zip(terms, widths)]
    if arrow:
        output = output.replace("...", ellipsis)
    else:
        named = "".join(t for t in inputs.replace("...", "").split(","))
        output = ellipsis + "".join(sorted(c for c in set(named) if named.count(c) == 1))
    return terms, output


def _take_diagonals(operand, term, subscripts):
    """An operand whose term repeats a letter, reduced to its diagonal over those axes."""
    while len(set(term)) != len(term):
        letter = next(c for c in term if term.count(c) > 1)
        first = term.index(letter)
        second = term.index(letter, first + 1)
        sizes = shape(operand)[first], shape(operand)[second]
        if sizes[0] != sizes[1]:
            raise ShapeError(
                f"einsum '{subscripts}': the axes of repeated index '{letter}' differ in size "
                f"({sizes[0]} != {sizes[1]}) in an operand of shape {shape(operand)}"
            )
        operand = diagonal(operand, 0, first, second)
        term = term[:first] + term[first + 1: second] + term[second + 1:] + letter
    return operand, term


def _squeeze_broadcast_axes(operands, terms, subscripts):
    """Drop size-1 axes whose letter has a longer size in another operand (NumPy broadcasting)."""
    sizes: dict[str, int] = {}
    for term, operand in zip(terms, operands):
        for letter, size in zip(term, shape(operand)):
            known = sizes.setdefault(letter, size)
            if size != known and 1 not in (size, known):
                raise ShapeError(
                    f"einsum '{subscripts}': index '{letter}' has sizes {known} and {size} "
                    f"(operand shapes {', '.join(str(shape(o)) for o in operands)})"
                )
            sizes[letter] = max(size, known) if 0 not in (size, known) else 0
    squeezed_operands, squeezed_terms = [], []
    for term, operand in zip(terms, operands):
        keep = [i for i, (c, n) in enumerate(zip(term, shape(operand))) if not (n == 1 and sizes[c] != 1)]
        if len(keep) != len(term):
            operand = structural.reshape(operand, tuple(shape(operand)[i] for i in keep))
            term = "".join(term[i] for i in keep)
        squeezed_operands.append(operand)
        squeezed_terms.append(term)
    return squeezed_operands, squeezed_terms


def _order(terms, output, operands, optimize):
    """Pairs of positions (in the shrinking operand list) to contract, as np.einsum_path gives them."""
    if len(terms) <= 2 or optimize is False or optimize is None:
        return [(0, 1)] * (len(terms) - 1)
    if isinstance(optimize, (list, tuple)) and optimize and optimize[0] == "einsum_path":
        path = optimize[1:]
    else:
        strategy = optimize if optimize in ("greedy", "optimal") else "greedy"
        dummies = [np.broadcast_to(np.zeros((), np.float64), shape(o)) for o in operands]
        path = np.einsum_path(",".join(terms) + "->" + output, *dummies, optimize=strategy)[0][1:]
    pairs = []
    for step in path:
        step = tuple(sorted(int(i) for i in step))
        while len(step) > 2:  # a step over several operands, pairwise: the product goes last
            pairs.append(step[:2])
            rest = tuple(i - sum(1 for j in step[:2] if j < i) for i in step[2:])
            step = tuple(sorted(rest + (len(terms) - len(pairs) - 1,)))
        if len(step) == 2:
            pairs.append(step)
    return pairs


def _sum_to(operand, term, output):
    """Sum the letters not in `output` away and order the rest like `output`."""
    summed = tuple(i for i, c in enumerate(term) if c not in output)
    if summed:
        operand = reductions.reduce_sum(operand, summed)
        term = "".join(c for c in term if c in output)
    return structural.transpose(operand, tuple(term.index(c) for c in output))


def einsum(*args, optimize=False, dtype=None, out=None):  # noqa: A002 - NumPy's names
    """Einstein summation with NumPy's full syntax: '...', sublists, repeated indices, broadcasting.

    >>> einsum("ij,jk->ik", a, b); einsum("ii->", m); einsum("...ij,...jk", x, y)  # doctest: +SKIP
    >>> einsum(a, [0, 1], b, [1, 2], [0, 2])                                          # doctest: +SKIP
    """
    if out is not None:
        raise ShapeError("einsum: out= is not supported (arrays are immutable); use the returned value")
    subscripts, operands = _parse_arguments(args)
    operands = [asvalue(o) for o in operands]
    terms, output = _expand_ellipses(subscripts, [shape(o) for o in operands])
    if len(set(output)) != len(output):
        raise ShapeError(f"einsum '{subscripts}': the output repeats an index")
    if any(c not in "".join(terms) for c in output):
        raise ShapeError(f"einsum '{subscripts}': an output index does not appear in the inputs")
    target = np.dtype(dtype) if dtype is not None else result_dtype(*operands)
    compute = np.dtype(np.int64) if target == np.bool_ else target
    operands = [cast(o, compute) for o in operands]
    pairs = [_take_diagonals(o, t, subscripts) for o, t in zip(operands, terms)]
    operands, terms = _squeeze_broadcast_axes([o for o, _ in pairs], [t for _, t in pairs], subscripts)
    for left, right in _order(terms, output, operands, optimize):
        later = set("".join(t for i, t in enumerate(terms) if i not in (left, right))) | set(output)
        keep = "".join(dict.fromkeys(c for c in terms[left] + terms[right] if c in later))
        if set(keep) == set(output):  # the last product: in the output's order, so no transpose follows it
            keep = output
        product = linalg.einsum(f"{terms[left]},{terms[right]}->{keep}", operands[left], operands[right])
        operands = [o for i, o in enumerate(operands) if i not in (left, right)] + [product]
        terms = [t for i, t in enumerate(terms) if i not in (left, right)] + [keep]
    result = _sum_to(operands[0], terms[0], output)
    if target == np.bool_:
        return cast(result, np.bool_)
    return result
