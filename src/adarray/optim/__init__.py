"""Optimisation with exact derivatives: nonlinear least squares, SciPy interop, and gradient descent
with no learning rate (safe_rate, on verified upper bounds).

    from adarray import optim
    result = optim.levenberg_marquardt(residual, x0)      # or optim.gauss_newton
    result.x, result.cost, result.history, result.message, result.covariance
    optim.minimize(f, x0, method="trust-krylov")          # scipy.optimize.minimize with exact derivatives
    optim.least_squares(residual, x0, method="trf")       # scipy.optimize.least_squares with our Jacobians
    optim.safe_rate(loss, x0)                             # a step size from a verified bound each step

An application layer: it uses the public transformations (grad, jit, hvp, sparse_jacobian) and bounds.
Parameters are pytrees of float arrays; residuals return pytrees of arrays, flattened in order.
"""
from .least_squares import (
    LeastSquaresResult,
    NonFiniteResidualError,
    SingularJacobianError,
    gauss_newton,
    levenberg_marquardt,
)
from .safe_rate import SafeRateResult, safe_rate
from .scipy_interop import least_squares, minimize

__all__ = ["LeastSquaresResult", "NonFiniteResidualError", "SingularJacobianError", "gauss_newton",
           "least_squares", "levenberg_marquardt", "minimize", "SafeRateResult", "safe_rate"]
