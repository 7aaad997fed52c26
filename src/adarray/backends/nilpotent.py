"""Arithmetic of jets in nilpotent directions t_1..t_k (t_m^2 = 0), shared by the backends' derivatives of the
adjugate: a jet is a dict from a bit mask R of the directions to the coefficient of prod_{m in R} t_m (absent
masks are 0). The coefficients are arrays of any backend (NumPy, jax.numpy); every truncation is exact.

    >>> product({0: 2.0, 1: 1.0}, {0: 3.0, 1: 1.0}, lambda a, b: a * b)  # (2 + t)(3 + t) = 6 + 5t
    {0: 6.0, 1: 5.0}
"""
from __future__ import annotations


def product(x: dict, y: dict, multiply) -> dict:
    """x y, with `multiply` for the coefficients (np.matmul, a scaling, ...)."""
    out = {}
    for mask_x, value_x in x.items():
        for mask_y, value_y in y.items():
            if mask_x & mask_y:
                continue  # t_m^2 = 0
            term = multiply(value_x, value_y)
            mask = mask_x | mask_y
            out[mask] = out[mask] + term if mask in out else term
    return out


def add(x: dict, y: dict, scale=1.0) -> dict:
    """x + scale y."""
    out = dict(x)
    for mask, value in y.items():
        out[mask] = out[mask] + scale * value if mask in out else scale * value
    return out


def scale(x: dict, factor) -> dict:
    return {mask: factor * value for mask, value in x.items()}


def scaled_matrices(scalars: dict, matrices: dict) -> dict:
    """A jet of (batches of) scalars times a jet of matrices."""
    return product(scalars, matrices, lambda s, m: s[..., None, None] * m)


def trace(x: dict, xp) -> dict:
    """The trace of a jet of (batches of) matrices; `xp` is the array module (numpy, jax.numpy)."""
    return {mask: xp.trace(value, axis1=-2, axis2=-1) for mask, value in x.items()}


def adjugate_and_det(matrix: dict, size: int, order: int, xp, matrices) -> tuple[dict, dict]:
    """adj(Y) and det(Y) of a size x size jet Y without a constant part, by Faddeev-LeVerrier
    (M_1 = I, c_(n-1) = -tr(Y), M_j = Y M_(j-1) + c_(n-j+1) I, c_(n-j) = -tr(Y M_j) / j;
    adj = (-1)^(n+1) M_n, det = (-1)^n c_0): products, traces and divisions by integers only.
    They have degree size - 1 and size, so they vanish when that exceeds `order`. `matrices(x, y)` is
    the product of two jets of matrices in the backend's precision."""
    if size - 1 > order:
        return {}, {}
    identity = {0: xp.eye(size, dtype=xp.result_type(*matrix.values()))}
    m, c = identity, scale(trace(matrix, xp), -1.0)
    for j in range(2, size + 1):
        m = add(matrices(matrix, m), scaled_matrices(c, identity))
        c = scale(trace(matrices(matrix, m), xp), -1.0 / j)
    return scale(m, (-1.0) ** (size + 1)), scale(c, (-1.0) ** size)
