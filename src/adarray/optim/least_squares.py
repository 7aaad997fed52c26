"""Gauss-Newton and Levenberg-Marquardt: minimise 0.5 ||r(x)||^2 with exact Jacobians.

    result = levenberg_marquardt(residual, x0, args=(data,))
    result.x          # in the pytree structure of x0
    result.cost       # 0.5 * sum(residual ** 2), SciPy's convention
    result.history    # the starting cost, then the cost after each iteration

The Jacobian comes from `ad.sparse_jacobian` (its pattern, a graph colouring and one batched pass per
colour), so its cost does not grow with the number of parameters when each residual touches few of
them (bundle adjustment: 14 passes at any size). It is kept sparse when large and sparse, else turned
dense. The linear algebra follows:
  dense   LM: Cholesky of J^T J + mu D. GN: QR with column pivoting of J (rank-revealing: a singular
          J^T J raises SingularJacobianError instead of letting a rounded Cholesky through).
  sparse  LM: a direct solve (SuperLU in symmetric mode with a fill-reducing order) while the
          parameters stay below DIRECT_LIMIT, else LSQR on [J; sqrt(mu) D^1/2] (or CG on the normal
          equations). GN: the same direct factorisation, with its pivots checked against their
          diagonal (a relative pivot below n * eps means a rank-deficient J, within rounding).
Damping (Levenberg-Marquardt): D is the running maximum of diag(J^T J) (Marquardt's scaling, as
MINPACK does), and mu follows Nielsen's update (Madsen, Nielsen and Tingleff, "Methods for non-linear
least squares problems", 2004, section 3.2): after a step with gain ratio rho > 0,
mu *= max(1/3, 1 - (2 rho - 1)^3), nu = 2; after a rejected step mu *= nu, nu *= 2. A step whose
residual is not finite is rejected the same way, so the parameters never become NaN.
Stopping: max |J^T r| <= gtol; a step ||dx|| <= xtol (xtol + ||x||); an accepted step reducing the
cost by at most ftol * cost; or max_iterations.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import structural_rank

from ..api.grad import jit
from ..core.errors import ArgumentError, Error
from ..progress import Progress
from ..sparse_jacobians import sparse_jacobian
from ..tree_util import tree_leaves
from .parameters import Parameters

SOLVERS = ("auto", "cholesky", "direct", "lsqr", "cg")
JACOBIANS = ("auto", "dense", "sparse")
DENSE_COLUMNS = 1000         # "auto": a Jacobian with at most this many columns is made dense,
DENSE_FILL = 0.2             # ... or one whose pattern fills this fraction of it (and fits in DENSE_ENTRIES)
DENSE_ENTRIES = 20_000_000
DIRECT_LIMIT = 300_000       # "auto": sparse direct solves up to this many parameters, LSQR above
MAX_DAMPING = 1e16           # LM gives up when mu (relative to D) grows beyond this


class NonFiniteResidualError(Error, ArithmeticError):
    """The residual (or its Jacobian) is NaN or infinite at the starting point."""


class SingularJacobianError(Error, ArithmeticError):
    """J^T J is singular (J has dependent columns): Gauss-Newton has no unique step."""


@dataclass
class LeastSquaresResult:
    """What a solve found. `x` has the structure of x0; `history` holds the starting cost, then the cost
    after each iteration (rejected steps repeat it)."""

    x: object
    cost: float
    iterations: int
    history: list
    success: bool
    message: str
    residual: np.ndarray = field(repr=False, default=None)
    jacobian: object = field(repr=False, default=None)   # at x: a NumPy array or a SciPy CSR matrix
    gradient: np.ndarray = field(repr=False, default=None)
    num_passes: int = 0          # batched derivative passes per Jacobian
    function_evaluations: int = 0
    jacobian_evaluations: int = 0

    @functools.cached_property
    def covariance(self) -> np.ndarray:
        """s^2 (J^T J)^-1 with s^2 = 2 cost / (m - n): the parameters' covariance under the linear
        approximation at x, for residuals that are independent errors of equal variance (flat, in
        the order of x's leaves). Confidence intervals: x +- t * sqrt(diag). Computed when first read."""
        jacobian = self.jacobian.toarray() if sp.issparse(self.jacobian) else np.asarray(self.jacobian)
        m, n = jacobian.shape
        if m <= n:
            raise ArgumentError(f"covariance needs more residuals than parameters, got {m} residuals for {n}")
        return 2.0 * self.cost / (m - n) * np.linalg.pinv(jacobian.T @ jacobian)


class _Problem:
    """The residual as a function of a flat parameter vector: values, Jacobians, pytree conversions."""

    def __init__(self, what, residual, x0, args, jacobian, sparsity, check):
        if not callable(residual):
            raise ArgumentError(f"{what}: the residual must be callable, got a {type(residual).__name__}")
        if jacobian not in JACOBIANS:
            raise ArgumentError(f"{what}: jacobian must be one of {', '.join(JACOBIANS)}, got {jacobian!r}")
        self.what, self.residual_fn, self.args = what, residual, tuple(args)
        self.parameters = Parameters(what, x0)
        self.x0 = self.parameters.x0
        self.value_fn = jit(residual)
        self.jacobian_fn = sparse_jacobian(residual, argnums=0, sparsity=sparsity, check=check)
        self.jacobian_kind = jacobian
        self.dense = None  # decided at the first Jacobian
        self.function_evaluations = self.jacobian_evaluations = 0

    def tree(self, vector):
        """The parameters in the structure of x0 (new arrays; x0 is never written)."""
        return self.parameters.tree(vector)

    def _flat(self, outputs):
        if not tree_leaves(outputs):
            raise ArgumentError(f"{self.what}: the residual returned no arrays")
        return Parameters.flat(outputs)

    def value(self, vector):
        self.function_evaluations += 1
        return self._flat(self.value_fn(self.tree(vector), *self.args))

    def linearize(self, vector):
        """(r, J) at `vector`; J dense or sparse as decided at the first call."""
        self.jacobian_evaluations += 1
        outputs, matrix = self.jacobian_fn.value_and_jacobian(self.tree(vector), *self.args)
        if self.dense is None:
            m, n = matrix.shape
            fill = matrix.nnz / max(1, m * n)
            self.dense = self.jacobian_kind == "dense" or (self.jacobian_kind == "auto" and m * n <= DENSE_ENTRIES and (
                n <= DENSE_COLUMNS or fill >= DENSE_FILL))
        return self._flat(outputs), (matrix.toarray() if self.dense else matrix)

    def num_passes(self, vector) -> int:
        return self.jacobian_fn.num_passes(self.tree(vector), *self.args)


def _check_start(problem, r, jacobian):
    bad = np.flatnonzero(~np.isfinite(r))
    if bad.size:
        raise NonFiniteResidualError(
            f"{problem.what}: the residual of '{_name(problem.residual_fn)}' is not finite at x0 ({bad.size} of "
            f"{r.size} entries, the first at flat index {bad[0]}: {r[bad[0]]}); start from a point where it is")
    values = jacobian.data if sp.issparse(jacobian) else jacobian
    if not np.all(np.isfinite(values)):
        raise NonFiniteResidualError(f"{problem.what}: the Jacobian of '{_name(problem.residual_fn)}' is not finite "
                                     "at x0; start from a point where the residual is differentiable")


def _name(fn):
    return getattr(fn, "__name__", type(fn).__name__)


def _check_options(what, max_iterations, gtol, xtol, ftol, linear_solver):
    if linear_solver not in SOLVERS:
        raise ArgumentError(f"{what}: linear_solver must be one of {', '.join(SOLVERS)}, got {linear_solver!r}")
    if int(max_iterations) != max_iterations or max_iterations < 0:
        raise ArgumentError(f"{what}: max_iterations must be a non-negative integer, got {max_iterations!r}")
    for name, value in (("gtol", gtol), ("xtol", xtol), ("ftol", ftol)):
        if not value >= 0:
            raise ArgumentError(f"{what}: {name} must be a non-negative number, got {value!r}")


def _progress(setting, total, what) -> Progress:
    """progress=None shows a bar on a terminal once a solve has run for a second (and clears it at the end);
    True always shows it (plain lines where there is no bar), and the bar stays; False never."""
    return Progress(total, what, show=setting, delay=0.0 if setting else 1.0, leave=bool(setting))


# --- linear algebra --------------------------------------------------------------------------------------------------


def _normal(jacobian, r):
    gram = jacobian.T @ jacobian
    return (gram.tocsc() if sp.issparse(gram) else gram), jacobian.T @ r


def _symmetric_lu(matrix):
    """SuperLU of a symmetric matrix with diagonal pivots and a symmetric fill-reducing order."""
    return spla.splu(sp.csc_matrix(matrix), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                     options={"SymmetricMode": True})


def _damped_step(jacobian, r, gram, gradient, scale, mu, solver):
    """dx minimising ||J dx + r||^2 + mu ||D^1/2 dx||^2, or None when the solve fails."""
    try:
        if isinstance(gram, np.ndarray):
            factor = scipy.linalg.cho_factor(gram + np.diag(mu * scale), check_finite=True)
            return scipy.linalg.cho_solve(factor, -gradient)
        if solver == "direct":
            return _symmetric_lu(gram + sp.diags(mu * scale)).solve(-gradient)
        if solver == "cg":
            damped = gram + sp.diags(mu * scale)
            step, _ = spla.cg(damped, -gradient, M=sp.diags(1.0 / damped.diagonal()), rtol=1e-10,
                              maxiter=10 * len(gradient))
            return step
        root = np.sqrt(scale)
        scaled = jacobian @ sp.diags(1.0 / root)
        y = spla.lsqr(scaled, -r, damp=np.sqrt(mu), atol=1e-12, btol=1e-12, iter_lim=10 * len(gradient))[0]
        return y / root
    except (np.linalg.LinAlgError, RuntimeError, ValueError):
        return None


def _gauss_newton_step(what, jacobian, r, gram, gradient):
    """The Gauss-Newton step, after a rank-revealing test: SingularJacobianError when J^T J is singular."""
    m, n = jacobian.shape
    eps = np.finfo(np.float64).eps
    if isinstance(jacobian, np.ndarray):
        q, upper, permutation = scipy.linalg.qr(jacobian, mode="economic", pivoting=True)
        diagonal = np.abs(np.diag(upper))
        tolerance = max(m, n) * eps * (diagonal[0] if diagonal.size else 0.0)
        rank = int(np.sum(diagonal > tolerance))
        if rank < n:
            raise SingularJacobianError(
                f"{what}: J^T J is singular: the {m} x {n} Jacobian has numerical rank {rank} (QR with column "
                f"pivoting, tolerance {tolerance:.3g}); fix the dependent parameters or use levenberg_marquardt")
        step = np.empty(n)
        step[permutation] = scipy.linalg.solve_triangular(upper, -(q.T @ r))
        return step
    rank = structural_rank(sp.csr_matrix(jacobian))
    if rank < n:
        raise SingularJacobianError(f"{what}: J^T J is singular: the {m} x {n} Jacobian's pattern has structural "
                                    f"rank {rank}; fix the dependent parameters or use levenberg_marquardt")
    try:
        factor = _symmetric_lu(gram)
    except RuntimeError as error:
        raise SingularJacobianError(f"{what}: J^T J is singular: a zero pivot in its factorisation ({error}); fix "
                                    "the dependent parameters or use levenberg_marquardt") from None
    pivots = np.abs(factor.U.diagonal())
    own = np.abs(gram.diagonal())[np.argsort(factor.perm_c)]
    relative = pivots / np.where(own > 0, own, 1.0)
    if relative.min(initial=np.inf) <= n * eps:
        raise SingularJacobianError(
            f"{what}: J^T J is singular: a pivot of its factorisation is {relative.min():.3g} of its diagonal entry "
            f"(tolerance n * eps = {n * eps:.3g}); fix the dependent parameters or use levenberg_marquardt")
    return factor.solve(-gradient)


def _solver(linear_solver, dense, n):
    if dense:
        return "cholesky"
    if linear_solver in ("auto", "cholesky"):
        return "direct" if n <= DIRECT_LIMIT else "lsqr"
    return linear_solver


# --- the solvers -----------------------------------------------------------------------------------------------------


def _start(what, residual, x0, args, jacobian, sparsity, check):
    """(problem, x0 flattened, r, J, cost, J^T J, J^T r) at the starting point, checked finite."""
    problem = _Problem(what, residual, x0, args, jacobian, sparsity, check)
    x = problem.x0
    r, jac = problem.linearize(x)
    _check_start(problem, r, jac)
    gram, gradient = _normal(jac, r)
    return problem, x, r, jac, 0.5 * float(r @ r), gram, gradient


def _finish(problem, x, r, jacobian, gradient, history, iterations, success, message):
    return LeastSquaresResult(
        x=problem.tree(x), cost=float(history[-1]), iterations=iterations, history=list(map(float, history)),
        success=success, message=message, residual=r, jacobian=jacobian, gradient=gradient,
        num_passes=problem.num_passes(x), function_evaluations=problem.function_evaluations,
        jacobian_evaluations=problem.jacobian_evaluations)


def levenberg_marquardt(residual, x0, args=(), *, max_iterations=100, gtol=1e-8, xtol=1e-8, ftol=1e-8,
                        damping=1e-3, jacobian="auto", linear_solver="auto", sparsity=None, check=False,
                        progress=None, callback=None) -> LeastSquaresResult:
    """Minimise 0.5 ||residual(x, *args)||^2 by Levenberg-Marquardt with Nielsen's damping update.

    x0 is a pytree of float arrays; the residual returns a pytree of arrays (flattened in order).
    `damping` is the starting mu relative to D = diag(J^T J); `jacobian` ("auto", "dense",
    "sparse") and `linear_solver` ("auto", "cholesky", "direct", "lsqr", "cg") choose the linear
    algebra; `sparsity` and `check` go to ad.sparse_jacobian; `callback(iteration, x, cost)` is called
    after each accepted step. See the module docstring for the method and the stopping rules.

    >>> result = levenberg_marquardt(lambda p, t, y: p[0] * anp.exp(p[1] * t) - y,
    ...                              np.array([1.0, 0.0]), args=(t, y))  # doctest: +SKIP
    >>> result.x, result.cost, result.success  # doctest: +SKIP
    """
    what = "levenberg_marquardt"
    _check_options(what, max_iterations, gtol, xtol, ftol, linear_solver)
    problem, x, r, jac, cost, gram, gradient = _start(what, residual, x0, args, jacobian, sparsity, check)
    solver = _solver(linear_solver, problem.dense, x.size)
    scale = np.maximum(np.abs(gram.diagonal()), 0.0)
    scale[scale == 0] = 1.0
    mu, nu = float(damping), 2.0
    history, rejected_nonfinite = [cost], 0
    success, message = False, f"stopped after max_iterations = {max_iterations} iterations"
    progress = _progress(progress, max_iterations, what)
    iteration = 0
    try:
        while True:
            if np.max(np.abs(gradient), initial=0.0) <= gtol:
                success, message = True, f"the gradient max |J^T r| is at most gtol = {gtol}"
                break
            if iteration >= max_iterations:
                break
            iteration += 1
            step = _damped_step(jac, r, gram, gradient, scale, mu, solver)
            if step is None or not np.all(np.isfinite(step)):
                mu, nu = mu * nu, nu * 2
            elif np.linalg.norm(step) <= xtol * (xtol + np.linalg.norm(x)):
                success, message = True, f"the step is at most xtol = {xtol} relative to x"
                history.append(cost)
                break
            else:
                trial = x + step
                r_trial = problem.value(trial)
                if not np.all(np.isfinite(r_trial)):
                    rejected_nonfinite += 1
                    mu, nu = mu * nu, nu * 2
                else:
                    cost_trial = 0.5 * float(r_trial @ r_trial)
                    model = jac @ step
                    predicted = -float(gradient @ step) - 0.5 * float(model @ model)
                    rho = (cost - cost_trial) / predicted if predicted > 0 else -1.0
                    if rho > 0:
                        reduction = cost - cost_trial
                        x, previous = trial, cost
                        r, jac = problem.linearize(x)
                        cost = cost_trial
                        if not np.all(np.isfinite(jac.data if sp.issparse(jac) else jac)):
                            history.append(cost)
                            message = "the Jacobian is not finite at the last accepted point"
                            break
                        gram, gradient = _normal(jac, r)
                        scale = np.maximum(scale, np.abs(gram.diagonal()))
                        mu *= max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3)
                        nu = 2.0
                        if callback is not None:
                            callback(iteration, problem.tree(x), cost)
                        if reduction <= ftol * previous:
                            success, message = True, f"the cost fell by at most ftol = {ftol} relative"
                            history.append(cost)
                            break
                    else:
                        mu, nu = mu * nu, nu * 2
            history.append(cost)
            progress.update(f"cost={cost:.6g} mu={mu:.2g}")
            if mu > MAX_DAMPING:
                message = f"the damping mu grew beyond {MAX_DAMPING:g} without reducing the cost"
                break
    finally:
        progress.close()
    if rejected_nonfinite:
        message += (f"; {rejected_nonfinite} trial step(s) gave a non-finite residual and were rejected (the damping "
                    "was raised)")
    return _finish(problem, x, r, jac, gradient, history, iteration, success, message)


def gauss_newton(residual, x0, args=(), *, max_iterations=100, gtol=1e-8, xtol=1e-8, ftol=1e-8, jacobian="auto",
                 linear_solver="auto", sparsity=None, check=False, progress=None,
                 callback=None) -> LeastSquaresResult:
    """Minimise 0.5 ||residual(x, *args)||^2 by Gauss-Newton: dx solves J dx = -r in least squares.

    A step that does not reduce the cost is halved (up to 30 times; a non-finite residual counts as
    no reduction). Before each step a rank-revealing test (QR with column pivoting for dense J, the
    factorisation's pivots for sparse J) raises SingularJacobianError when J^T J is singular. Options
    as in levenberg_marquardt.

    >>> gauss_newton(lambda x: x ** 2 - 2.0, np.array([1.0])).x  # doctest: +SKIP
    array([1.41421356])
    """
    what = "gauss_newton"
    _check_options(what, max_iterations, gtol, xtol, ftol, linear_solver)
    problem, x, r, jac, cost, gram, gradient = _start(what, residual, x0, args, jacobian, sparsity, check)
    history = [cost]
    success, message = False, f"stopped after max_iterations = {max_iterations} iterations"
    progress = _progress(progress, max_iterations, what)
    iteration = 0
    try:
        while True:
            if np.max(np.abs(gradient), initial=0.0) <= gtol:
                success, message = True, f"the gradient max |J^T r| is at most gtol = {gtol}"
                break
            if iteration >= max_iterations:
                break
            iteration += 1
            step = _gauss_newton_step(what, jac, r, gram, gradient)
            if np.linalg.norm(step) <= xtol * (xtol + np.linalg.norm(x)):
                success, message = True, f"the step is at most xtol = {xtol} relative to x"
                history.append(cost)
                break
            for _ in range(31):
                r_trial = problem.value(x + step)
                if np.all(np.isfinite(r_trial)) and 0.5 * float(r_trial @ r_trial) < cost:
                    break
                step = step / 2
            else:
                history.append(cost)
                message = ("no step along the Gauss-Newton direction reduces the cost (after 30 halvings); "
                           "levenberg_marquardt is more robust")
                break
            previous = cost
            x = x + step
            r, jac = problem.linearize(x)
            cost = 0.5 * float(r @ r)
            gram, gradient = _normal(jac, r)
            history.append(cost)
            progress.update(f"cost={cost:.6g}")
            if callback is not None:
                callback(iteration, problem.tree(x), cost)
            if previous - cost <= ftol * previous:
                success, message = True, f"the cost fell by at most ftol = {ftol} relative"
                break
    finally:
        progress.close()
    return _finish(problem, x, r, jac, gradient, history, iteration, success, message)
