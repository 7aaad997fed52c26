"""NumPy implementation of fixed_point: iterate the compiled step until the state stops moving."""
from __future__ import annotations

import numpy as np

from ..core.errors import ExecutionError
from ..core.primitive import IMPLS
from .numpy_control import compiled


def _fixed_point(*args, step, num_params, tol, max_iter):
    """x <- step(params, x) until every element moves by at most tol * (1 + |x|)."""
    params, state = args[:num_params], [np.asarray(x) for x in args[num_params:]]
    run = compiled(step)
    for _ in range(max_iter):
        new = [np.asarray(x) for x in run(*params, *state)]
        # NaN never compares as converged, so a diverging loop ends in the error below.
        converged = all(np.all(np.abs(n - x) <= tol * (1.0 + np.abs(n))) if np.issubdtype(n.dtype, np.inexact)
                        else np.array_equal(n, x) for n, x in zip(new, state))
        state = new
        if converged:
            return state
    changes = [float(np.max(np.abs(n - x), initial=0.0)) for n, x in zip(run(*params, *state), state)]
    raise ExecutionError(f"fixed_point: no convergence to tol={tol:g} after max_iter={max_iter} iterations "
                         f"(the last step still moved the state by up to {max(changes, default=0.0):g}); "
                         "f must be a contraction near the fixed point, or raise max_iter")


IMPLS["fixed_point"] = _fixed_point
