"""The four ADBench objectives in JAX (float64): F by `jax.jit(f)`, derivatives by `jax.jit(jax.grad)` (GMM,
LSTM with `lax.scan`), `jax.jit(jax.vmap(jax.jacrev))` (BA blocks) and `jax.jit(jax.jacfwd)` (hand). Imported only
when JAX is installed; `configure(threads)` must run before the first import of jax (XLA reads its flags then)."""
from __future__ import annotations

import functools
import math
import os

import numpy as np
from scipy.special import multigammaln

from .harness import Task
from .layout import ba_sparse_jacobian, gmm_lower_index, hand_angle_index, hand_compressed_jacobian

NAME = "jax"


def configure(threads: int) -> None:
    """XLA's CPU thread pools: one Eigen pool of `threads` threads (set before jax is imported)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "intra_op_parallelism_threads" not in flags:
        extra = f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'} " \
                f"intra_op_parallelism_threads={threads}"
        os.environ["XLA_FLAGS"] = (flags + " " + extra).strip()


def _jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    return jax


def version() -> str:
    return _jax().__version__


def gmm_objective(alphas, means, icf, x, gamma, m):
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    n, d = x.shape
    k = alphas.shape[0]
    log_diagonal = icf[:, :d]
    lower = jnp.concatenate([jnp.zeros((k, 1)), icf[:, d:]], axis=1)[:, gmm_lower_index(d)]
    centred = x[:, None, :] - means[None, :, :]
    scaled = jnp.exp(log_diagonal) * centred + jnp.einsum("kij,nkj->nki", lower, centred)
    sum_log_diagonal = jnp.sum(log_diagonal, axis=1)
    inner = alphas + sum_log_diagonal - 0.5 * jnp.sum(scaled * scaled, axis=2)
    dof = d + m + 1
    prior = jnp.sum(0.5 * gamma ** 2 * (jnp.sum(jnp.exp(2.0 * log_diagonal), axis=1) + jnp.sum(icf[:, d:] ** 2, axis=1))
                    - m * sum_log_diagonal)
    constant = -0.5 * n * d * math.log(2 * math.pi) - k * (dof * d * math.log(gamma / math.sqrt(2.0))
                                                           - multigammaln(0.5 * dof, d))
    return constant + jnp.sum(logsumexp(inner, axis=1)) - n * logsumexp(alphas) + prior


def _cross(a, b):
    import jax.numpy as jnp

    return jnp.stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def reprojection_error(camera, point, weight, feature):
    import jax.numpy as jnp

    rotation, y = camera[0:3], point - camera[3:6]
    squared = jnp.sum(rotation * rotation)
    nonzero = squared != 0
    theta = jnp.sqrt(jnp.where(nonzero, squared, 1.0))
    axis = rotation / theta
    cos, sin = jnp.cos(theta), jnp.sin(theta)
    turned = y * cos + _cross(axis, y) * sin + axis * (jnp.sum(axis * y) * (1 - cos))
    camera_frame = jnp.where(nonzero, turned, y + _cross(rotation, y))
    projected = camera_frame[0:2] / camera_frame[2]
    radius2 = jnp.sum(projected * projected)
    distorted = projected * (1 + camera[9] * radius2 + camera[10] * radius2 * radius2)
    return weight * (distorted * camera[6] + camera[7:9] - feature)


def ba_residuals(cams, points, weights, cam_index, point_index, features):
    import jax

    return jax.vmap(reprojection_error)(cams[cam_index], points[point_index], weights, features), 1 - weights ** 2


def ba_blocks(cams, points, weights, cam_index, point_index, features):
    import jax

    blocks = jax.vmap(jax.jacrev(reprojection_error, argnums=(0, 1, 2)))(
        cams[cam_index], points[point_index], weights, features)
    return (*blocks, jax.vmap(jax.grad(lambda w: 1 - w * w))(weights))


def _euler_rotations(angles):
    import jax.numpy as jnp

    cos, sin = jnp.cos(angles), jnp.sin(angles)
    one, zero = jnp.ones_like(angles[:, 0]), jnp.zeros_like(angles[:, 0])
    cx, cz, cy, sx, sz, sy = cos[:, 0], cos[:, 1], cos[:, 2], sin[:, 0], sin[:, 1], sin[:, 2]
    shape = (angles.shape[0], 3, 3)
    rx = jnp.stack([one, zero, zero, zero, cx, -sx, zero, sx, cx], axis=1).reshape(shape)
    ry = jnp.stack([cy, zero, -sy, zero, one, zero, sy, zero, cy], axis=1).reshape(shape)
    rz = jnp.stack([cz, -sz, zero, sz, cz, zero, zero, zero, one], axis=1).reshape(shape)
    return rz @ ry @ rx


def _angle_axis_matrix(angle_axis):
    import jax.numpy as jnp

    squared = jnp.sum(angle_axis * angle_axis)
    small = squared < 1e-8
    angle = jnp.sqrt(jnp.where(small, 1.0, squared))
    x, y, z = angle_axis[0] / angle, angle_axis[1] / angle, angle_axis[2] / angle
    c, s = jnp.cos(angle), jnp.sin(angle)
    rotation = jnp.stack([
        x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s,
        x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s,
        x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]).reshape(3, 3)
    return jnp.where(small, jnp.eye(3), rotation)


def hand_vertices(theta, base_relatives, inverse_base_absolutes, base_positions, weights, parents):
    import jax.numpy as jnp

    bones = len(parents)
    angles = jnp.concatenate([jnp.zeros(1), theta])[hand_angle_index(bones)]
    rotations = _euler_rotations(angles)
    relatives = jnp.concatenate([base_relatives[:, :, :3] @ rotations, base_relatives[:, :, 3:]], axis=2)
    absolutes = []
    for bone, parent in enumerate(parents):
        absolutes.append(relatives[bone] if parent < 0 else absolutes[parent] @ relatives[bone])
    transforms = jnp.stack(absolutes) @ inverse_base_absolutes
    blended = (weights @ transforms[:, :3, :].reshape(bones, 12)).reshape(-1, 3, 4)
    vertices = jnp.sum(blended * base_positions[:, None, :], axis=2)
    return vertices @ _angle_axis_matrix(theta[0:3]).T + theta[3:6]


def hand_simple(theta, points, correspondences, model, parents):
    return points - hand_vertices(theta, *model, parents)[correspondences]


def hand_complicated(shift, theta, us, points, triangles, model, parents):
    vertices = hand_vertices(theta, *model, parents)
    u = us + shift
    a, b, c = vertices[triangles[:, 0]], vertices[triangles[:, 1]], vertices[triangles[:, 2]]
    return points - (u[:, 0:1] * a + u[:, 1:2] * b + (1 - u[:, 0:1] - u[:, 1:2]) * c)


def lstm_objective(main, extra, state, sequence):
    import jax
    import jax.numpy as jnp

    layers, bits = main.shape[0] // 2, sequence.shape[1]

    def step(carry, pair):
        current, gold = pair
        x = current * extra[0]
        new = []
        for i in range(layers):
            hidden, cell = carry[2 * i], carry[2 * i + 1]
            gates = jnp.concatenate([x, hidden, x, hidden]) * main[2 * i] + main[2 * i + 1]
            forget, ingate, outgate = (jax.nn.sigmoid(gates[j * bits:(j + 1) * bits]) for j in range(3))
            cell = cell * forget + ingate * jnp.tanh(gates[3 * bits:])
            hidden = outgate * jnp.tanh(cell)
            new += [hidden, cell]
            x = hidden
        prediction = x * extra[1] + extra[2]
        normalised = prediction - jnp.log(2.0 + jnp.sum(jnp.exp(prediction)))
        return tuple(new), jnp.sum(gold * normalised)

    initial = tuple(state[i] for i in range(2 * layers))
    _, totals = jax.lax.scan(step, initial, (sequence[:-1], sequence[1:]))
    return -jnp.sum(totals) / ((sequence.shape[0] - 1) * bits)


def _flat(parts):
    return np.concatenate([np.ravel(np.asarray(p)) for p in parts])


def prepare(problem: str, data) -> Task:
    jax = _jax()
    import jax.numpy as jnp

    def put(*arrays):
        return tuple(jax.device_put(jnp.asarray(a)) for a in arrays)

    if problem == "gmm":
        fn = functools.partial(gmm_objective, gamma=data.gamma, m=data.m)
        value, gradient = jax.jit(fn), jax.jit(jax.grad(fn, argnums=(0, 1, 2)))
        args = put(data.alphas, data.means, data.icf, data.x)
        return Task(lambda: value(*args), lambda: gradient(*args), lambda f: np.atleast_1d(np.asarray(f)), _flat)
    if problem == "ba":
        value, blocks = jax.jit(ba_residuals), jax.jit(ba_blocks)
        args = put(data.cams, data.X, data.w, data.obs[:, 0], data.obs[:, 1], data.feats)
        return Task(lambda: value(*args),
                    lambda: ba_sparse_jacobian(data, *(np.asarray(b) for b in blocks(*args))),
                    lambda f: np.concatenate([np.ravel(np.asarray(f[0])), np.ravel(np.asarray(f[1]))]), lambda j: j)
    if problem.startswith("hand"):
        model = data.model
        arrays = put(model.base_relatives, model.inverse_base_absolutes, model.base_positions, model.weights)
        parents = tuple(int(p) for p in model.parents)
        if data.complicated:
            fn = functools.partial(hand_complicated, parents=parents)
            value, jacobian = jax.jit(fn), jax.jit(jax.jacfwd(fn, argnums=(0, 1)))
            args = (*put(np.zeros(2), data.theta, data.us, data.points, model.triangles[data.correspondences]),
                    arrays)
            return Task(lambda: value(*args),
                        lambda: hand_compressed_jacobian(*(np.asarray(j) for j in jacobian(*args))),
                        lambda f: np.ravel(np.asarray(f)), lambda j: j)
        fn = functools.partial(hand_simple, parents=parents)
        value, jacobian = jax.jit(fn), jax.jit(jax.jacfwd(fn))
        args = (*put(data.theta, data.points, data.correspondences), arrays)
        return Task(lambda: value(*args), lambda: jacobian(*args),
                    lambda f: np.ravel(np.asarray(f)), lambda j: np.asarray(j).reshape(-1, 26))
    value, gradient = jax.jit(lstm_objective), jax.jit(jax.grad(lstm_objective, argnums=(0, 1)))
    args = put(data.main, data.extra, data.state, data.sequence)
    return Task(lambda: value(*args), lambda: gradient(*args), lambda f: np.atleast_1d(np.asarray(f)), _flat)
