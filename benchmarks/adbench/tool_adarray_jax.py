"""adarray's ADBench programs (tool_adarray.py: the same objectives and derivative transformations) lowered to
XLA: `ad.jit(..., backend="jax")` around the objective and around each derivative, so the programs our rules
produce run on the same XLA as JAX's own `jax.jit(jax.grad)` (tool_jax.py). Inputs are placed on the device once,
as tool_jax does; results are jax.Arrays (the harness waits for them)."""
from __future__ import annotations

import numpy as np

import adarray as ad

from . import tool_adarray as ours
from .harness import Task
from .layout import ba_sparse_jacobian, hand_compressed_jacobian

NAME = "adarray-jax"


def configure(threads: int) -> None:
    from . import tool_jax

    tool_jax.configure(threads)


def version() -> str:
    import jax

    return f"{ad.__version__} on jax {jax.__version__}"


def _jit(fn):
    return ad.jit(fn, backend="jax")


def _put(*arrays):
    import jax

    from adarray.backends.jax import x64

    with x64():
        return tuple(jax.device_put(np.asarray(a)) for a in arrays)


def _flat(parts):
    return np.concatenate([np.ravel(np.asarray(p)) for p in parts])


def prepare(problem: str, data) -> Task:
    if problem == "gmm":
        objective = ours._fresh(ours.gmm_objective, gamma=data.gamma, m=data.m)
        value, gradient = _jit(objective), _jit(ad.grad(objective, argnums=(0, 1, 2)))
        args = _put(data.alphas, data.means, data.icf, data.x)
        return Task(lambda: value(*args), lambda: gradient(*args), lambda f: np.atleast_1d(np.asarray(f)), _flat)
    if problem == "ba":
        value, blocks = _jit(ours._fresh(ours.ba_residuals)), _jit(ours._fresh(ours.ba_blocks))
        args = _put(data.cams, data.X, data.w, data.obs[:, 0], data.obs[:, 1], data.feats)
        return Task(lambda: value(*args),
                    lambda: ba_sparse_jacobian(data, *(np.asarray(b) for b in blocks(*args))),
                    lambda f: np.concatenate([np.ravel(np.asarray(f[0])), np.ravel(np.asarray(f[1]))]), lambda j: j)
    if problem.startswith("hand"):
        model = data.model
        arrays = _put(model.base_relatives, model.inverse_base_absolutes, model.base_positions, model.weights)
        parents = tuple(int(p) for p in model.parents)
        if data.complicated:
            fn = ours._fresh(ours.hand_complicated, parents=parents)
            value, jacobian = _jit(fn), _jit(ad.jacfwd(fn, argnums=(0, 1)))
            args = (*_put(np.zeros(2), data.theta, data.us, data.points, model.triangles[data.correspondences]),
                    arrays)
            return Task(lambda: value(*args),
                        lambda: hand_compressed_jacobian(*(np.asarray(j) for j in jacobian(*args))),
                        lambda f: np.ravel(np.asarray(f)), lambda j: j)
        fn = ours._fresh(ours.hand_simple, parents=parents)
        value, jacobian = _jit(fn), _jit(ad.jacfwd(fn))
        args = (*_put(data.theta, data.points, data.correspondences), arrays)
        return Task(lambda: value(*args), lambda: jacobian(*args),
                    lambda f: np.ravel(np.asarray(f)), lambda j: np.asarray(j).reshape(-1, 26))
    objective = ours._fresh(ours.lstm_objective)
    value, gradient = _jit(objective), _jit(ad.grad(objective, argnums=(0, 1)))
    args = _put(data.main, data.extra, data.state, data.sequence)
    return Task(lambda: value(*args), lambda: gradient(*args), lambda f: np.atleast_1d(np.asarray(f)), _flat)
