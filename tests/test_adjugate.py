"""det and adjugate: derivatives of every order at matrices of every rank.

adj(A) is a polynomial of degree n - 1 in the entries of A and det(A) one of degree n, so all their
derivatives exist everywhere. The reference is independent of the code under test: the Leibniz sum
det(A) = sum_sigma sgn(sigma) prod_i A[i, sigma(i)] differentiated by hand (each factor of p distinct
rows replaced by a direction), evaluated in float64 or, for the accuracy tests, in exact rational
arithmetic on the float inputs. adj(A)[j, i] = d det / dA[i, j] gives the adjugate's derivatives.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.backends.numpy import linalg as numpy_linalg
from adarray.core.errors import ShapeError
from adarray.primitives.matrix_functions import adjugate, adjugate_derivative, adjugate_derivative_p
from adarray.primitives.spectral import matrix_with_singular_values

COMPOSITIONS = {
    "fwd(fwd)": lambda f: ad.jacfwd(ad.jacfwd(f)),
    "fwd(rev)": lambda f: ad.jacfwd(ad.jacrev(f)),
    "rev(fwd)": lambda f: ad.jacrev(ad.jacfwd(f)),
    "rev(rev)": lambda f: ad.jacrev(ad.jacrev(f)),
}
THIRD_ORDER = {
    "fwd(fwd(fwd))": lambda f: ad.jacfwd(ad.jacfwd(ad.jacfwd(f))),
    "fwd(fwd(rev))": lambda f: ad.jacfwd(ad.jacfwd(ad.jacrev(f))),
    "fwd(rev(rev))": lambda f: ad.jacfwd(ad.jacrev(ad.jacrev(f))),
    "rev(fwd(rev))": lambda f: ad.jacrev(ad.jacfwd(ad.jacrev(f))),
    "rev(rev(rev))": lambda f: ad.jacrev(ad.jacrev(ad.jacrev(f))),
}


# --- the reference ---------------------------------------------------------------------------------


def _sign(permutation) -> int:
    pairs = itertools.combinations(range(len(permutation)), 2)
    inversions = sum(1 for i, j in pairs if permutation[i] > permutation[j])
    return -1 if inversions % 2 else 1


def det_derivative_tensor(a, order: int):
    """T[a1, b1, ..., ap, bp] = d^p det(A) / dA[a1, b1] ... dA[ap, bp] (p = order) by the Leibniz sum:
    the term of sigma depends on A[r, sigma(r)] only, linearly, so differentiating it with respect
    to p distinct rows r_m leaves the product of the other rows' factors."""
    n = a.shape[-1]
    out = np.zeros((n, n) * order)
    for sigma in itertools.permutations(range(n)):
        sign = _sign(sigma)
        for rows in itertools.permutations(range(n), order):
            rest = np.prod([a[i, sigma[i]] for i in range(n) if i not in rows])
            out[tuple(x for r in rows for x in (r, sigma[r]))] += sign * rest
    return out


def adjugate_derivative_tensor(a, order: int):
    """J[j, i, a1, b1, ...] = d^p adj(A)[j, i] / dA[a1, b1] ...: adj(A)[j, i] = d det / dA[i, j]."""
    return np.swapaxes(det_derivative_tensor(a, order + 1), 0, 1)


def exact_adjugate_form(a, directions):
    """d^k adj(A)[E1..Ek] in exact rational arithmetic on the float inputs: entry (j, i) is
    d^(k+1) det(A)[E1, ..., Ek, e_i e_j^T], the Leibniz sum with the rows r_m taking direction m."""
    n, order = a.shape[-1], len(directions)
    exact = [[[Fraction(float(x)) for x in row] for row in m] for m in [a, *directions]]
    out = np.zeros((n, n))
    for i, j in itertools.product(range(n), range(n)):
        total = Fraction(0)
        for sigma in itertools.permutations(range(n)):
            if sigma[i] != j:
                continue
            others = [r for r in range(n) if r != i]
            for rows in itertools.permutations(others, order):
                term = Fraction(_sign(sigma))
                for m, r in enumerate(rows):
                    term *= exact[m + 1][r][sigma[r]]
                for r in others:
                    if r not in rows:
                        term *= exact[0][r][sigma[r]]
                total += term
        out[j, i] = float(total)
    return out


def test_the_reference_is_right():
    """The Leibniz reference against NumPy (value, gradient) and a hand-written 2 x 2 case."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 4))
    assert det_derivative_tensor(a, 0) == pytest.approx(np.linalg.det(a))
    assert np.allclose(adjugate_derivative_tensor(a, 0), np.linalg.det(a) * np.linalg.inv(a))
    two = np.array([[1.0, 2.0], [3.0, 4.0]])
    hessian = det_derivative_tensor(two, 2)   # det = a d - b c
    assert hessian[0, 0, 1, 1] == hessian[1, 1, 0, 0] == 1 and hessian[0, 1, 1, 0] == hessian[1, 0, 0, 1] == -1
    assert np.count_nonzero(hessian) == 4
    e = rng.normal(size=(4, 4))
    assert np.allclose(exact_adjugate_form(a, [e]), np.einsum("jiab,ab->ji", adjugate_derivative_tensor(a, 1), e))


# --- matrices of every rank ------------------------------------------------------------------------


def _with_values(seed, n, values):
    return matrix_with_singular_values(np.random.default_rng(seed), (n, n), np.asarray(values, float))


def _cases():
    rng = np.random.default_rng(7)
    cases = []
    for n in (3, 4):
        for rank in range(n, -1, -1):
            values = np.concatenate([rng.uniform(0.6, 2.0, rank), np.zeros(n - rank)])
            cases.append((f"n{n}-rank{rank}", _with_values(10 * n + rank, n, values)))
        for rank in range(2, n):   # repeated nonzero singular values
            values = [1.5] * rank + [0.0] * (n - rank)
            cases.append((f"n{n}-rank{rank}-repeated", _with_values(100 + 10 * n + rank, n, values)))
        cases.append((f"n{n}-jordan", np.eye(n, k=1)))                       # nilpotent: values 1, ..., 1, 0
        cases.append((f"n{n}-orthogonal", _with_values(200 + n, n, [1.0] * n)))   # all values repeated
        cases.append((f"n{n}-diagonal-zeros", np.diag([2.0] + [0.0] * (n - 2) + [-1.5])))  # exact zeros
    return cases


CASES = [pytest.param(a, id=label) for label, a in _cases()]


def _close(got, want, rtol=1e-10):
    got = np.asarray(got)
    assert got.shape == want.shape
    scale = 1.0 + np.abs(want).max()
    assert np.allclose(got, want, rtol=rtol, atol=rtol * scale), np.abs(got - want).max()


# --- det -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("a", CASES)
@pytest.mark.parametrize("compose", list(COMPOSITIONS), ids=list(COMPOSITIONS))
def test_det_hessian(a, compose):
    _close(COMPOSITIONS[compose](anp.linalg.det)(a), det_derivative_tensor(a, 2))


@pytest.mark.parametrize("a", CASES)
@pytest.mark.parametrize("compose", list(THIRD_ORDER), ids=list(THIRD_ORDER))
def test_det_third_derivative(a, compose):
    _close(THIRD_ORDER[compose](anp.linalg.det)(a), det_derivative_tensor(a, 3))


@pytest.mark.parametrize("n", [3, 4])
def test_det_derivatives_up_to_the_degree_and_beyond(n):
    """d^n det is the constant polarised determinant; d^(n+1) det = 0."""
    a = np.random.default_rng(n).normal(size=(n, n))
    f = anp.linalg.det
    for _ in range(n):
        f = ad.jacfwd(f)
    _close(f(a), det_derivative_tensor(a, n))
    assert np.all(ad.jacfwd(f)(a) == 0.0)


def test_hessian_of_det_at_the_zero_matrix():
    """At A = 0 (rank n - 3 for n = 3): d^2 det(0) = 0 for n = 3, and the third derivative is the
    polarised determinant: d^3 det(0)[v, v, v] = 3! det(v)."""
    v = np.random.default_rng(3).normal(size=(3, 3))
    for compose in COMPOSITIONS.values():
        assert np.all(np.asarray(compose(anp.linalg.det)(np.zeros((3, 3)))) == 0.0)
    for compose in THIRD_ORDER.values():
        third = compose(anp.linalg.det)(np.zeros((3, 3)))
        assert np.einsum("abcdef,ab,cd,ef->", third, v, v, v) == pytest.approx(6 * np.linalg.det(v))


# --- adjugate --------------------------------------------------------------------------------------


@pytest.mark.parametrize("a", CASES)
def test_adjugate_first_derivative(a):
    want = adjugate_derivative_tensor(a, 1)
    _close(ad.jacfwd(adjugate)(a), want)
    _close(ad.jacrev(adjugate)(a), want)


@pytest.mark.parametrize("a", CASES)
@pytest.mark.parametrize("compose", list(COMPOSITIONS), ids=list(COMPOSITIONS))
def test_adjugate_second_derivative(a, compose):
    _close(COMPOSITIONS[compose](adjugate)(a), adjugate_derivative_tensor(a, 2))


@pytest.mark.parametrize("a", [p for p in CASES if p.id in ("n4-rank4", "n4-rank1", "n4-rank0", "n4-jordan",
                                                          "n3-rank2")])
@pytest.mark.parametrize("compose", ["fwd(fwd(fwd))", "fwd(rev(rev))"])
def test_adjugate_third_derivative(a, compose):
    """Constant for n = 4 (the last nonzero one), zero for n = 3."""
    _close(THIRD_ORDER[compose](adjugate)(a), adjugate_derivative_tensor(a, 3))


@pytest.mark.parametrize("values, compose", [
    ((2.0, 1.5, 1.0, 0.8, 0.6), "fwd(fwd(fwd))"),
    ((2.0, 1.0, 0.5, 0.0, 0.0), "fwd(fwd(rev))"),
    ((1.5, 1.5, 1.5, 0.0, 0.0), "fwd(fwd(fwd))"),
    ((1.2, 0.0, 0.0, 0.0, 0.0), "fwd(fwd(rev))"),
    ((0.0,) * 5, "fwd(fwd(fwd))"),
], ids=["rank5", "rank3", "rank3-repeated", "rank1", "rank0"])
def test_adjugate_third_derivative_five_by_five(values, compose):
    """n = 5: the third derivative of adj still depends on A (linearly)."""
    a = _with_values(5, 5, values)
    _close(THIRD_ORDER[compose](adjugate)(a), adjugate_derivative_tensor(a, 3))


def test_second_derivative_of_the_adjugate_at_zero_by_polarisation():
    """The reported case: d^2 adj(0)[v, v] = 2 adj(v) for 3 x 3 matrices (adj is quadratic)."""
    v = np.random.default_rng(11).normal(size=(3, 3))
    want = 2.0 * np.linalg.det(v) * np.linalg.inv(v)

    def along(t):
        return adjugate(t * v)

    for compose in COMPOSITIONS.values():
        assert np.allclose(compose(along)(0.0), want, rtol=1e-12, atol=1e-12)
    assert np.allclose(ad.jvp(lambda t: ad.jvp(along, (t,), (1.0,))[1], (0.0,), (1.0,))[1], want, rtol=1e-12)


def test_derivatives_beyond_the_degree_are_symbolic_zeros():
    """d^n adj = 0 identically: for n = 3 the third derivative is a literal zero, no computation."""
    a = np.random.default_rng(5).normal(size=(3, 3))
    third = ad.jacfwd(ad.jacfwd(ad.jacfwd(adjugate)))
    assert np.all(third(a) == 0.0)
    assert "adjugate_derivative" not in str(ad.make_ir(third)(a))
    assert "adjugate_derivative" in str(ad.make_ir(ad.jacfwd(ad.jacfwd(adjugate)))(a))


# --- batches and vmap ------------------------------------------------------------------------------


def _mixed_batch():
    """4 x 4 matrices of ranks 4, 3, 2, 2 (repeated), 1, 0, and an ill-conditioned full-rank one:
    the implementation groups them by the size of their well-conditioned leading block."""
    values = [[2.0, 1.5, 1.0, 0.7], [2.0, 1.0, 0.5, 0.0], [1.8, 0.9, 0.0, 0.0], [1.5, 1.5, 0.0, 0.0],
              [1.2, 0.0, 0.0, 0.0], [0.0] * 4, [1.0, 0.5, 1e-3, 1e-6]]
    return np.stack([_with_values(300 + i, 4, v) for i, v in enumerate(values)])


def test_batched_hessian_of_det():
    batch = _mixed_batch()
    got = ad.hessian(lambda a: anp.sum(anp.linalg.det(a)))(batch)
    for i, a in enumerate(batch):
        for j in range(len(batch)):
            _close(got[i, :, :, j], det_derivative_tensor(a, 2) if i == j else np.zeros((4,) * 4))
    _close(ad.vmap(ad.hessian(anp.linalg.det))(batch), np.stack([det_derivative_tensor(a, 2) for a in batch]))


def test_vmap_of_second_and_third_derivatives_of_the_adjugate():
    batch = _mixed_batch()
    second = ad.vmap(ad.jacrev(ad.jacfwd(adjugate)))(batch)
    _close(second, np.stack([adjugate_derivative_tensor(a, 2) for a in batch]))
    third = ad.vmap(ad.jacfwd(ad.jacfwd(ad.jacrev(anp.linalg.det))))(batch)
    _close(third, np.stack([det_derivative_tensor(a, 3) for a in batch]))


def test_adjugate_derivative_under_vmap_with_shared_operands():
    """vmap broadcasts an unbatched matrix to the batch (zero strides): one SVD per distinct matrix."""
    rng = np.random.default_rng(13)
    a, directions = _mixed_batch()[1], rng.normal(size=(5, 2, 4, 4))
    got = ad.vmap(lambda e: adjugate_derivative(a, e[0], e[1]))(directions)
    want = np.einsum("jiabcd,xab,xcd->xji", adjugate_derivative_tensor(a, 2), directions[:, 0], directions[:, 1])
    _close(got, want)
    shared = directions[0, 0]
    got = ad.vmap(lambda m: adjugate_derivative(m, shared))(_mixed_batch())
    _close(got, np.stack([np.einsum("jiab,ab->ji", adjugate_derivative_tensor(m, 1), shared) for m in _mixed_batch()]))


# --- accuracy and the implementation's choices ------------------------------------------------------

SPECTRA = [(1.0, 1e-3, 1e-6, 0.0), (1e3, 1.0, 1e-3, 1e-6), (1.0, 0.5, 1e-9, 1e-9), (1.0, 1.0, 1.0, 1e-12),
           (1.0, 0.05, 3e-3, 1e-4), (1.0, 1.0, 0.011, 0.009), (1e-3, 1e-6, 1e-9, 1e-12)]


@pytest.mark.parametrize("values", SPECTRA, ids=[str(v) for v in SPECTRA])
def test_accuracy_against_exact_arithmetic(values):
    """Graded and nearly singular spectra: the forms agree with the exact polynomial (in rational
    arithmetic on the same float inputs) to about what the SVD's backward error allows."""
    rng = np.random.default_rng(17)
    a = _with_values(17, 4, values)
    for order in (1, 2, 3):
        directions = [rng.normal(size=(4, 4)) for _ in range(order)]
        want = exact_adjugate_form(a, directions)
        got = adjugate_derivative(a, *directions)
        assert np.abs(got - want).max() <= 1e-11 * np.abs(want).max(), (order, np.abs(got - want).max())


@pytest.mark.parametrize("ratio", [1.0, 0.5, 1e-6])
def test_the_block_split_changes_no_value(ratio, monkeypatch):
    """The leading-block threshold chooses how to compute (pure minor expansion at ratio 1, a larger
    inverse-based block at 1e-6), never what."""
    rng = np.random.default_rng(19)
    matrices = [_with_values(19 + i, 4, v) for i, v in enumerate([(2.0, 1.5, 1.0, 0.7), (2.0, 1.0, 0.1, 0.0),
                                                                  (1.5, 1.5, 0.0, 0.0), (0.0,) * 4])]
    inputs = [(a, [rng.normal(size=(4, 4)) for _ in range(order)]) for a in matrices for order in (1, 2, 3)]
    want = [adjugate_derivative(a, *directions) for a, directions in inputs]
    monkeypatch.setattr(numpy_linalg, "_BLOCK_RATIO", ratio)
    for (a, directions), expected in zip(inputs, want):
        _close(adjugate_derivative(a, *directions), expected, rtol=1e-11)


@pytest.mark.parametrize("rank", [7, 5, 2])
def test_larger_matrices_against_differences(rank):
    """n = 7: the first and second forms against central differences of the (SVD) adjugate and of
    the first form."""
    rng = np.random.default_rng(rank)
    a = _with_values(rank, 7, np.concatenate([rng.uniform(0.5, 1.5, rank), np.zeros(7 - rank)]))
    e, f = rng.normal(size=(2, 7, 7))
    h = 1e-4
    adj = ad.jit(adjugate)
    first = (adj(a + h * e) - adj(a - h * e)) / (2 * h)
    _close(adjugate_derivative(a, e), first, rtol=1e-6)
    second = (adjugate_derivative(a + h * f, e) - adjugate_derivative(a - h * f, e)) / (2 * h)
    _close(adjugate_derivative(a, e, f), second, rtol=1e-6)


def test_float32():
    a = _with_values(23, 3, [1.5, 1.0, 0.0]).astype(np.float32)
    hessian = ad.hessian(anp.linalg.det)(a)
    assert hessian.dtype == np.float32
    _close(hessian, det_derivative_tensor(a.astype(np.float64), 2), rtol=1e-5)


def test_inputs_are_not_written():
    a, e = _mixed_batch(), np.random.default_rng(29).normal(size=(7, 4, 4))
    a_copy, e_copy = a.copy(), e.copy()
    a.flags.writeable = e.flags.writeable = False
    adjugate_derivative(a, e, e)
    ad.hessian(lambda m: anp.sum(anp.linalg.det(m)))(a)
    assert np.array_equal(a, a_copy) and np.array_equal(e, e_copy)


def test_shape_errors_name_the_operation():
    a = np.eye(3)
    with pytest.raises(ShapeError, match="adjugate_derivative.*between 1 and n - 1"):
        adjugate_derivative_p.bind(a)
    with pytest.raises(ShapeError, match="adjugate_derivative.*between 1 and n - 1"):
        adjugate_derivative_p.bind(a, a, a, a)
    with pytest.raises(ShapeError, match="adjugate_derivative: direction 0 must be like"):
        adjugate_derivative(a, np.eye(2))
    with pytest.raises(ShapeError, match="adjugate_derivative: a must be a square matrix"):
        adjugate_derivative(np.ones((2, 3)), np.ones((2, 3)))
    assert np.all(adjugate_derivative(a, a, a, a) == 0.0)   # order >= n: the form is 0
