"""The four ADBench objectives written with `adarray.numpy`, as a user would, and their derivatives.

- GMM: the objective as a function of (alphas, means, icf, x); the gradient by `ad.grad` (argnums 0, 1, 2).
- BA: one observation's reprojection error (camera, point, weight, feature) -> 2 numbers; the 2 x 15 blocks of all
  observations at once by `ad.vmap(ad.jacrev(...))` (one batched program, no Python loop over observations),
  scattered into CSR by NumPy (`layout.ba_sparse_jacobian`). Reverse mode: 2 outputs against 15 inputs; it is
  also what measured fastest for every tool (adarray's jacfwd version took 4x longer, JAX's 4.5x, PyTorch's 3.7x).
- Hand: the residuals of the skinned hand model; the Jacobian by `ad.jacfwd` over theta (26 columns). The
  complicated variant adds a shift s (2 numbers) to every point's barycentric u: since residual i depends on u_i
  only, d residual / d s is the compressed u block (ADBench's seed matrix), so jacfwd over (s, theta) gives the
  3N x 28 output in 28 batched forward passes.
- D-LSTM: the loss through the sequence loop written with `ad.fold`; the gradient by `ad.grad`.

Every derivative is staged once by `ad.jit`, as JAX's tool wraps its own in `jax.jit`: un-jitted, `ad.grad`
traces at every call (it sees each call's closures), which is not what is compared here.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import multigammaln

import adarray as ad
import adarray.numpy as anp

from .harness import Task
from .layout import ba_sparse_jacobian, gmm_lower_index, hand_angle_index, hand_compressed_jacobian

NAME = "adarray"


def version() -> str:
    return ad.__version__


def use_backend(backend: str) -> None:
    """Run every staged program of the tasks prepared from now on (and their calls) on `backend`."""
    ad.set_backend(backend)


# --- GMM ----------------------------------------------------------------------------------------------------------


def gmm_objective(alphas, means, icf, x, gamma, m):
    """ADBench's GMM objective (log-likelihood with a Wishart prior); gamma and m are Python numbers."""
    n, d = x.shape
    k = alphas.shape[0]
    log_diagonal = icf[:, :d]
    padded = anp.concatenate([anp.zeros((k, 1)), icf[:, d:]], axis=1)
    lower = padded[:, gmm_lower_index(d)]                                  # (k, d, d), strictly lower
    centred = x[:, None, :] - means[None, :, :]                            # (n, k, d)
    scaled = anp.exp(log_diagonal) * centred + anp.einsum("kij,nkj->nki", lower, centred)
    sum_log_diagonal = anp.sum(log_diagonal, axis=1)
    inner = alphas + sum_log_diagonal - 0.5 * anp.sum(scaled * scaled, axis=2)
    dof = d + m + 1
    prior = anp.sum(0.5 * gamma ** 2 * (anp.sum(anp.exp(2.0 * log_diagonal), axis=1) + anp.sum(icf[:, d:] ** 2, axis=1))
                    - m * sum_log_diagonal)
    constant = -0.5 * n * d * math.log(2 * math.pi) - k * (dof * d * math.log(gamma / math.sqrt(2.0))
                                                           - multigammaln(0.5 * dof, d))
    return constant + anp.sum(anp.logsumexp(inner, axis=1)) - n * anp.logsumexp(alphas) + prior


def _fresh(fn, **keywords):
    """A new function object for fn: adarray caches staged programs per function object, so every prepared task
    traces and compiles its own programs (on its first call, e.g. inside a profiler)."""
    return functools.partial(fn, **keywords)


def _gmm_task(data) -> Task:
    objective = _fresh(gmm_objective, gamma=data.gamma, m=data.m)
    value, gradient = ad.jit(objective), ad.jit(ad.grad(objective, argnums=(0, 1, 2)))
    args = (data.alphas, data.means, data.icf, data.x)
    return Task(lambda: value(*args), lambda: gradient(*args),
                lambda f: np.atleast_1d(np.asarray(f)), lambda g: np.concatenate([np.ravel(p) for p in g]))


# --- BA -----------------------------------------------------------------------------------------------------------


def _cross(a, b):
    return anp.stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def rotate(rotation, point):
    """Rodrigues rotation by an angle-axis vector; Y + r x Y when r = 0 (the masked branch gets no derivative)."""
    squared = anp.sum(rotation * rotation)
    nonzero = squared != 0
    theta = anp.sqrt(anp.where(nonzero, squared, 1.0))
    axis = rotation / theta
    cos, sin = anp.cos(theta), anp.sin(theta)
    turned = point * cos + _cross(axis, point) * sin + axis * (anp.sum(axis * point) * (1 - cos))
    return anp.where(nonzero, turned, point + _cross(rotation, point))


def reprojection_error(camera, point, weight, feature):
    """w (project(camera, point) - feature) for one observation: 2 numbers."""
    camera_frame = rotate(camera[0:3], point - camera[3:6])
    projected = camera_frame[0:2] / camera_frame[2]
    radius2 = anp.sum(projected * projected)
    distorted = projected * (1 + camera[9] * radius2 + camera[10] * radius2 * radius2)
    return weight * (distorted * camera[6] + camera[7:9] - feature)


def weight_error(weight):
    return 1 - weight * weight


def ba_residuals(cams, points, weights, cam_index, point_index, features):
    """All residuals: (p, 2) reprojection errors and (p,) weight errors."""
    errors = ad.vmap(reprojection_error)(cams[cam_index], points[point_index], weights, features)
    return errors, weight_error(weights)


def ba_blocks(cams, points, weights, cam_index, point_index, features):
    """Per-observation derivative blocks: (p, 2, 11), (p, 2, 3), (p, 2) and the weight errors' (p,)."""
    block = ad.vmap(ad.jacrev(reprojection_error, argnums=(0, 1, 2)))
    d_cam, d_point, d_weight = block(cams[cam_index], points[point_index], weights, features)
    return d_cam, d_point, d_weight, ad.vmap(ad.grad(weight_error))(weights)


def _ba_task(data) -> Task:
    value, blocks = ad.jit(_fresh(ba_residuals)), ad.jit(_fresh(ba_blocks))
    args = (data.cams, data.X, data.w, data.obs[:, 0], data.obs[:, 1], data.feats)
    return Task(lambda: value(*args), lambda: ba_sparse_jacobian(data, *blocks(*args)),
                lambda f: np.concatenate([np.ravel(f[0]), np.ravel(f[1])]), lambda j: j)


# --- hand ---------------------------------------------------------------------------------------------------------


def _euler_rotations(angles):
    """Rz(angles[:, 1]) Ry(angles[:, 2]) Rx(angles[:, 0]) for every bone: (bones, 3, 3)."""
    cos, sin = anp.cos(angles), anp.sin(angles)
    one, zero = anp.ones_like(angles[:, 0]), anp.zeros_like(angles[:, 0])
    cx, cz, cy, sx, sz, sy = cos[:, 0], cos[:, 1], cos[:, 2], sin[:, 0], sin[:, 1], sin[:, 2]
    shape = (angles.shape[0], 3, 3)
    rx = anp.reshape(anp.stack([one, zero, zero, zero, cx, -sx, zero, sx, cx], axis=1), shape)
    ry = anp.reshape(anp.stack([cy, zero, -sy, zero, one, zero, sy, zero, cy], axis=1), shape)
    rz = anp.reshape(anp.stack([cz, -sz, zero, sz, cz, zero, zero, zero, one], axis=1), shape)
    return rz @ ry @ rx


def _angle_axis_matrix(angle_axis):
    """The rotation by an angle-axis vector; the identity when its norm is below 1e-4."""
    squared = anp.sum(angle_axis * angle_axis)
    small = squared < 1e-8
    angle = anp.sqrt(anp.where(small, 1.0, squared))
    x, y, z = angle_axis[0] / angle, angle_axis[1] / angle, angle_axis[2] / angle
    c, s = anp.cos(angle), anp.sin(angle)
    rotation = anp.reshape(anp.stack([
        x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s,
        x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s,
        x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]), (3, 3))
    return anp.where(small, anp.eye(3), rotation)


def hand_vertices(theta, base_relatives, inverse_base_absolutes, base_positions, weights, parents):
    """Skinned, posed vertex positions (V, 3); `parents` is a tuple of Python ints (the bone tree)."""
    bones = len(parents)
    angles = anp.concatenate([anp.zeros(1), theta])[hand_angle_index(bones)]
    rotations = _euler_rotations(angles)
    relatives = anp.concatenate([base_relatives[:, :, :3] @ rotations, base_relatives[:, :, 3:]], axis=2)
    absolutes = []
    for bone, parent in enumerate(parents):
        absolutes.append(relatives[bone] if parent < 0 else absolutes[parent] @ relatives[bone])
    transforms = anp.stack(absolutes) @ inverse_base_absolutes                  # (bones, 4, 4)
    blended = anp.reshape(weights @ anp.reshape(transforms[:, :3, :], (bones, 12)), (-1, 3, 4))
    vertices = anp.sum(blended * base_positions[:, None, :], axis=2)           # (V, 3)
    return vertices @ anp.transpose(_angle_axis_matrix(theta[0:3])) + theta[3:6]


def hand_simple(theta, points, correspondences, model, parents):
    return points - hand_vertices(theta, *model, parents)[correspondences]


def hand_complicated(shift, theta, us, points, triangles, model, parents):
    """Residuals with barycentric coordinates us + shift (shift = 0 gives the objective)."""
    vertices = hand_vertices(theta, *model, parents)
    u = us + shift
    a, b, c = vertices[triangles[:, 0]], vertices[triangles[:, 1]], vertices[triangles[:, 2]]
    return points - (u[:, 0:1] * a + u[:, 1:2] * b + (1 - u[:, 0:1] - u[:, 1:2]) * c)


def _hand_task(data) -> Task:
    model = data.model
    arrays = (model.base_relatives, model.inverse_base_absolutes, model.base_positions, model.weights)
    parents = tuple(int(p) for p in model.parents)
    if data.complicated:
        fn = _fresh(hand_complicated, parents=parents)
        triangles = model.triangles[data.correspondences]
        args = (np.zeros(2), data.theta, data.us, data.points, triangles, arrays)
        value, jacobian = ad.jit(fn), ad.jit(ad.jacfwd(fn, argnums=(0, 1)))
        return Task(lambda: value(*args), lambda: hand_compressed_jacobian(*jacobian(*args)),
                    np.ravel, lambda j: j)
    fn = _fresh(hand_simple, parents=parents)
    args = (data.theta, data.points, data.correspondences, arrays)
    value, jacobian = ad.jit(fn), ad.jit(ad.jacfwd(fn))
    return Task(lambda: value(*args), lambda: jacobian(*args), np.ravel, lambda j: np.reshape(j, (-1, 26)))


# --- LSTM ---------------------------------------------------------------------------------------------------------


def lstm_objective(main, extra, state, sequence):
    """ADBench's D-LSTM loss: the layers' (hidden, cell) pairs are the carry of a fold over the characters."""
    layers, bits = main.shape[0] // 2, sequence.shape[1]

    def step(carry, pair):
        current, gold = pair
        x = current * extra[0]
        new = []
        for i in range(layers):
            hidden, cell = carry[2 * i], carry[2 * i + 1]
            gates = anp.concatenate([x, hidden, x, hidden]) * main[2 * i] + main[2 * i + 1]
            forget, ingate, outgate = (anp.sigmoid(gates[j * bits:(j + 1) * bits]) for j in range(3))
            cell = cell * forget + ingate * anp.tanh(gates[3 * bits:])
            hidden = outgate * anp.tanh(cell)
            new += [hidden, cell]
            x = hidden
        prediction = x * extra[1] + extra[2]
        normalised = prediction - anp.log(2.0 + anp.sum(anp.exp(prediction)))
        return tuple(new), anp.sum(gold * normalised)

    initial = tuple(state[i] for i in range(2 * layers))
    _, totals = ad.fold(step, initial, (sequence[:-1], sequence[1:]))
    return -anp.sum(totals) / ((sequence.shape[0] - 1) * bits)


def _lstm_task(data) -> Task:
    objective = _fresh(lstm_objective)
    value, gradient = ad.jit(objective), ad.jit(ad.grad(objective, argnums=(0, 1)))
    args = (data.main, data.extra, data.state, data.sequence)
    return Task(lambda: value(*args), lambda: gradient(*args),
                lambda f: np.atleast_1d(np.asarray(f)), lambda g: np.concatenate([np.ravel(p) for p in g]))


def prepare(problem: str, data) -> Task:
    """Fresh staged functions for one instance (nothing is traced until the first call)."""
    builders = {"gmm": _gmm_task, "ba": _ba_task, "hand-simple": _hand_task, "hand-complicated": _hand_task,
                "lstm": _lstm_task}
    return builders[problem](data)
