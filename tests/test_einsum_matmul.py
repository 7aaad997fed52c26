"""The NumPy backend runs an einsum that is a (batched) matrix product as one matmul: same values as NumPy's einsum
up to rounding, for every arrangement of batch, free and summed letters, dtypes, and the small or unusual products
that stay with einsum."""
import numpy as np
import pytest

from adarray.backends.numpy import IMPLS, arrays
from adarray.primitives.linalg import einsum_p

contract = IMPLS[einsum_p]

SIZES = {"b": 3, "c": 2, "i": 17, "j": 13, "k": 19, "l": 5, "m": 11}


@pytest.fixture
def fresh_recipes():
    """The recipes are cached by spec and shapes: forget those made under a patched SMALL_PRODUCT."""
    arrays._matmul_recipe.cache_clear()
    yield
    arrays._matmul_recipe.cache_clear()


def operand(rng, letters, dtype):
    shape = tuple(SIZES[c] for c in letters)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-5, 6, shape).astype(dtype)
    values = rng.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.normal(size=shape)
    return values.astype(dtype)


@pytest.mark.parametrize("spec", [
    "ij,jk->ik", "ij,kj->ik", "ji,jk->ik", "ji,kj->ki", "ik,jk->ij", "ik,ij->jk",  # every transpose of a matmul
    "ij,j->i", "j,jk->k", "i,i->",  # matrix-vector, dot
    "ijl,jlk->ik", "ilj,kjl->ki",  # several summed letters, in different orders
    "bij,bjk->bik", "bij,jk->bik", "ibj,bkj->kbi", "bcij,cbjk->cbki",  # batch letters, also in the output's middle
    "ijk,kl->lij", "mij,jk->kmi",  # several free letters of one operand
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
@pytest.mark.parametrize("smallest", [0, arrays.SMALL_PRODUCT], ids=["all by matmul", "small by einsum"])
def test_matrix_products_agree_with_einsum(spec, dtype, smallest, monkeypatch, fresh_recipes):
    monkeypatch.setattr(arrays, "SMALL_PRODUCT", smallest)
    rng = np.random.default_rng(len(spec))
    sa, sb = spec.split("->")[0].split(",")
    a, b = operand(rng, sa, dtype), operand(rng, sb, dtype)
    want = np.einsum(spec, a, b)
    got = contract(a, b, spec=spec)
    assert got.shape == want.shape and got.dtype == want.dtype
    if np.dtype(dtype).kind == "i":
        np.testing.assert_array_equal(got, want)
    else:
        rtol = 1e-5 if dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.max(np.abs(want)))


@pytest.mark.parametrize("spec", ["ij,jk->ik", "bij,bjk->bik", "ij,kj->ik"])
def test_which_products_go_to_matmul(spec, monkeypatch):
    """Large products take matmul; small ones, outer and elementwise products, and letters summed in one operand
    only stay with einsum (and still give einsum's values)."""
    calls = []
    real = np.matmul
    monkeypatch.setattr(arrays.np, "matmul", lambda *args: calls.append(1) or real(*args))
    rng = np.random.default_rng(0)
    sa, sb = spec.split("->")[0].split(",")
    contract(operand(rng, sa, np.float64), operand(rng, sb, np.float64), spec=spec)
    assert calls
    for other, shapes in [(spec, [(2, 2), (2, 2)] if spec != "bij,bjk->bik" else [(3, 2, 2), (3, 2, 2)]),
                          ("ij,kl->ijkl", [(3, 4), (5, 6)]), ("ij,ij->ij", [(30, 40), (30, 40)]),
                          ("ij,jk->k", [(30, 40), (40, 50)])]:
        calls.clear()
        a, b = (rng.normal(size=shape) for shape in shapes)
        np.testing.assert_allclose(contract(a, b, spec=other), np.einsum(other, a, b), rtol=1e-13)
        assert not calls, other


def test_transposed_and_read_only_operands_are_left_alone():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(40, 30)).T, rng.normal(size=(30, 50))
    a.setflags(write=False)
    b.setflags(write=False)
    before = a.copy(), b.copy()
    np.testing.assert_allclose(contract(a, b, spec="ij,ik->jk"), a.T @ b, rtol=1e-13)
    np.testing.assert_array_equal(a, before[0])
    np.testing.assert_array_equal(b, before[1])


def test_empty_axes():
    for spec, shape_a, shape_b in [("ij,jk->ik", (0, 40), (40, 60)), ("ij,jk->ik", (40, 0), (0, 60)),
                                   ("bij,bjk->bik", (0, 40, 40), (0, 40, 40))]:
        a, b = np.ones(shape_a), np.ones(shape_b)
        np.testing.assert_array_equal(contract(a, b, spec=spec), np.einsum(spec, a, b))
