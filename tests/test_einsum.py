"""einsum against numpy.einsum: ellipses, the sublist form, repeated indices (traces and
diagonals), size-1 broadcasting, optimize=, implicit outputs; gradients against central differences
to second order, vmap against a loop, and the scalar-spec regression."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import numerical_gradient

# (spec, operand shapes)
SPECS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->", [(3, 3)]),
    ("ii", [(4, 4)]),
    ("ii->i", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("iji->j", [(3, 2, 3)]),
    ("iii->i", [(2, 2, 2)]),
    ("ij,ji->", [(3, 2), (2, 3)]),
    ("ba", [(2, 3)]),
    ("...", [(3,)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 2)]),
    ("i...,i...", [(2, 3), (2, 1)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    ("ij...,jk...->ik...", [(2, 3, 4), (3, 2, 1)]),
    ("ij,jk", [(2, 1), (3, 4)]),  # a contracted index of size 1 against 3 broadcasts
    ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)]),
    ("ijk,kl,lm->im", [(2, 3, 4), (4, 5), (5, 2)]),
    ("i,j,k", [(2,), (3,), (4,)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 2), (2, 3)]),
    (",", [(), ()]),
    (",->", [(), ()]),
    ("i,i->", [(3,), (3,)]),
    ("i,->i", [(3,), ()]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("ij,kj->ik", [(2, 3), (0, 3)]),
    ("ii->", [(0, 0)]),
]


def _operands(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s) for s in shapes]


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal"])
@pytest.mark.parametrize("spec, shapes", SPECS, ids=[s for s, _ in SPECS])
def test_values_match_numpy(spec, shapes, optimize):
    operands = _operands(shapes)
    expected = np.einsum(spec, *operands)
    for actual in (anp.einsum(spec, *operands, optimize=optimize),
                   ad.jit(lambda *xs: anp.einsum(spec, *xs, optimize=optimize))(*operands)):
        assert np.shape(actual) == np.shape(expected)
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12)


def test_an_explicit_contraction_path_is_accepted():
    operands = _operands([(2, 3), (3, 4), (4, 5)])
    path = np.einsum_path("ij,jk,kl->il", *operands, optimize="optimal")[0]
    np.testing.assert_allclose(anp.einsum("ij,jk,kl->il", *operands, optimize=path),
                               np.einsum("ij,jk,kl->il", *operands))


def test_sublist_form():
    a, b = _operands([(2, 3), (3, 4)])
    np.testing.assert_allclose(anp.einsum(a, [0, 1], b, [1, 2], [0, 2]), a @ b)
    np.testing.assert_allclose(anp.einsum(a, [0, 1], b, [1, 2]), np.einsum(a, [0, 1], b, [1, 2]))
    np.testing.assert_allclose(anp.einsum(a, [Ellipsis, 1], a.T, [1, Ellipsis]),
                               np.einsum(a, [Ellipsis, 1], a.T, [1, Ellipsis]))
    np.testing.assert_allclose(anp.einsum(np.eye(3) * 2, [0, 0]), 6.0)


def test_dtypes_follow_numpy():
    ints = np.arange(6).reshape(2, 3)
    assert anp.einsum("ij,ij->", ints, ints).dtype == np.einsum("ij,ij->", ints, ints).dtype
    assert anp.einsum("ij,j", ints, np.ones(3, np.float32)).dtype == np.float64
    flags = np.eye(3, dtype=bool)
    np.testing.assert_array_equal(anp.einsum("ii->i", flags), np.einsum("ii->i", flags))
    np.testing.assert_array_equal(anp.einsum("ij,jk", flags, flags), np.einsum("ij,jk", flags, flags))


def _objective(spec, operands):
    weights = np.random.default_rng(5).normal(size=np.shape(np.einsum(spec, *operands)))
    return lambda *xs: anp.sum(anp.einsum(spec, *xs) * weights)


@pytest.mark.parametrize("spec, shapes", SPECS, ids=[s for s, _ in SPECS])
def test_gradients_match_finite_differences(spec, shapes):
    operands = _operands(shapes)
    f = _objective(spec, operands)
    argnums = tuple(range(len(operands)))
    grads = ad.grad(f, argnums=argnums)(*operands)
    for argnum, grad in zip(argnums, grads):
        along = lambda v, k=argnum: float(f(*operands[:k], v, *operands[k + 1:]))
        np.testing.assert_allclose(grad, numerical_gradient(along, operands[argnum]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("spec, shapes", SPECS, ids=[s for s, _ in SPECS])
def test_second_order_of_a_squared_contraction(spec, shapes):
    """Hessian-vector products of sum(einsum(...)**2) (first operand) against differences of the gradient."""
    operands = _operands(shapes)

    def f(x):
        return anp.sum(anp.einsum(spec, x, *operands[1:]) ** 2)

    x = operands[0]
    direction = np.random.default_rng(6).normal(size=np.shape(x))
    _, hv = ad.jvp(ad.grad(f), (x,), (direction,))
    eps = 1e-5
    expected = (ad.grad(f)(x + eps * direction) - ad.grad(f)(x - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(hv, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("spec, shapes", SPECS, ids=[s for s, _ in SPECS])
def test_vmap_matches_a_loop(spec, shapes):
    operands = _operands(shapes)
    batch = np.stack([operands[0] * (k + 1) for k in range(3)])
    in_axes = (0,) + (None,) * (len(operands) - 1)
    batched = ad.vmap(lambda *xs: anp.einsum(spec, *xs), in_axes=in_axes)(batch, *operands[1:])
    looped = np.stack([np.einsum(spec, x, *operands[1:]) for x in batch])
    np.testing.assert_allclose(batched, looped, rtol=1e-12, atol=1e-12)


def test_gradient_of_a_scalar_einsum_regression():
    """The scalar spec ',->' used to crash the NumPy backend with 'string index out of range'."""
    assert ad.grad(lambda s: anp.einsum(",->", s, s) * s)(2.0) == 12.0
    assert ad.grad(ad.grad(lambda s: anp.einsum(",->", s, s) * s))(2.0) == 12.0
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(ad.grad(lambda x: anp.einsum("i,i->", x, x) ** 2)(x), 4 * (x @ x) * x)
    hessian = ad.hessian(lambda x: anp.einsum("i,i->", x, x) ** 2)(x)
    np.testing.assert_allclose(hessian, 8 * np.outer(x, x) + 4 * (x @ x) * np.eye(3))
    np.testing.assert_allclose(ad.jacrev(ad.grad(lambda x: anp.einsum("i,i", x, x) ** 2))(x), hessian)


@pytest.mark.parametrize("args", [
    ("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5))),
    ("ii->i", np.ones((2, 3))),
    ("ij->ii", np.ones((2, 2))),
    ("ij->k", np.ones((2, 2))),
    ("ij,jk", np.ones((2, 3))),
    ("i.j", np.ones((2, 3))),
    ("ijk", np.ones((2, 3))),
    ("...i...", np.ones(3)),
    (np.ones(2), [0, 99]),
])
def test_bad_specs_raise_adarray_errors(args):
    with pytest.raises(ad.ShapeError):
        anp.einsum(*args)


def test_the_last_product_is_bound_in_the_output_order():
    """No transpose after the product: a backend then lays the product out as its readers walk it."""
    program = str(ad.make_ir(lambda l, c: anp.einsum("kij,nkj->nki", l, c))(np.ones((3, 2, 2)), np.ones((4, 3, 2))))
    assert "einsum[spec='kij,nkj->nki']" in program and "transpose" not in program
