"""The four ADBench objectives in HIPS autograd (NumPy underneath, float64). Gradients by `autograd.grad` (GMM,
LSTM: a Python loop over the sequence). autograd has no vmap, so the BA blocks come from one forward pass and two
reverse passes of `make_vjp` over all observations at once (observations are independent, so the vjp with a unit
cotangent on component r of every observation's error gives row r of every block). The hand Jacobians take 26
(+ 2) forward-mode passes of `make_jvp`, one per column. Imported only when autograd is installed."""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import multigammaln

from .harness import Task
from .layout import ba_sparse_jacobian, gmm_lower_index, hand_angle_index, hand_compressed_jacobian

NAME = "autograd"


def version() -> str:
    from importlib.metadata import version as package_version

    return package_version("autograd")


def gmm_objective(alphas, means, icf, x, gamma, m):
    import autograd.numpy as gnp
    from autograd.scipy.special import logsumexp

    n, d = x.shape
    k = alphas.shape[0]
    log_diagonal = icf[:, :d]
    lower = gnp.concatenate([gnp.zeros((k, 1)), icf[:, d:]], axis=1)[:, gmm_lower_index(d)]
    centred = x[:, None, :] - means[None, :, :]
    scaled = gnp.exp(log_diagonal) * centred + gnp.einsum("kij,nkj->nki", lower, centred)
    sum_log_diagonal = gnp.sum(log_diagonal, axis=1)
    inner = alphas + sum_log_diagonal - 0.5 * gnp.sum(scaled * scaled, axis=2)
    dof = d + m + 1
    prior = gnp.sum(0.5 * gamma ** 2 * (gnp.sum(gnp.exp(2.0 * log_diagonal), axis=1) + gnp.sum(icf[:, d:] ** 2, axis=1))
                    - m * sum_log_diagonal)
    constant = -0.5 * n * d * math.log(2 * math.pi) - k * (dof * d * math.log(gamma / math.sqrt(2.0))
                                                           - multigammaln(0.5 * dof, d))
    return constant + gnp.sum(logsumexp(inner, axis=1)) - n * logsumexp(alphas) + prior


def _cross(a, b):
    import autograd.numpy as gnp

    return gnp.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                      a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


def reprojection_errors(blocks, features):
    """All observations at once: blocks = (cameras (p, 11), points (p, 3), weights (p,)) -> (p, 2)."""
    import autograd.numpy as gnp

    cameras, points, weights = blocks
    rotation, y = cameras[:, 0:3], points - cameras[:, 3:6]
    squared = gnp.sum(rotation * rotation, axis=1, keepdims=True)
    nonzero = squared != 0
    theta = gnp.sqrt(gnp.where(nonzero, squared, 1.0))
    axis = rotation / theta
    cos, sin = gnp.cos(theta), gnp.sin(theta)
    turned = y * cos + _cross(axis, y) * sin + axis * (gnp.sum(axis * y, axis=1, keepdims=True) * (1 - cos))
    camera_frame = gnp.where(nonzero, turned, y + _cross(rotation, y))
    projected = camera_frame[:, 0:2] / camera_frame[:, 2:3]
    radius2 = gnp.sum(projected * projected, axis=1, keepdims=True)
    distorted = projected * (1 + cameras[:, 9:10] * radius2 + cameras[:, 10:11] * radius2 * radius2)
    return weights[:, None] * (distorted * cameras[:, 6:7] + cameras[:, 7:9] - features)


def _euler_rotations(angles):
    import autograd.numpy as gnp

    cos, sin = gnp.cos(angles), gnp.sin(angles)
    one, zero = gnp.ones(angles.shape[0]), gnp.zeros(angles.shape[0])
    cx, cz, cy, sx, sz, sy = cos[:, 0], cos[:, 1], cos[:, 2], sin[:, 0], sin[:, 1], sin[:, 2]
    shape = (angles.shape[0], 3, 3)
    rx = gnp.reshape(gnp.stack([one, zero, zero, zero, cx, -sx, zero, sx, cx], axis=1), shape)
    ry = gnp.reshape(gnp.stack([cy, zero, -sy, zero, one, zero, sy, zero, cy], axis=1), shape)
    rz = gnp.reshape(gnp.stack([cz, -sz, zero, sz, cz, zero, zero, zero, one], axis=1), shape)
    return gnp.matmul(gnp.matmul(rz, ry), rx)


def _angle_axis_matrix(angle_axis):
    import autograd.numpy as gnp

    squared = gnp.sum(angle_axis * angle_axis)
    if squared < 1e-8:  # autograd traces eagerly: Python control flow is allowed
        return gnp.eye(3)
    angle = gnp.sqrt(squared)
    x, y, z = angle_axis[0] / angle, angle_axis[1] / angle, angle_axis[2] / angle
    c, s = gnp.cos(angle), gnp.sin(angle)
    return gnp.reshape(gnp.stack([
        x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s,
        x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s,
        x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]), (3, 3))


def hand_vertices(theta, base_relatives, inverse_base_absolutes, base_positions, weights, parents):
    import autograd.numpy as gnp

    bones = len(parents)
    angles = gnp.concatenate([gnp.zeros(1), theta])[hand_angle_index(bones)]
    rotations = _euler_rotations(angles)
    relatives = gnp.concatenate([gnp.matmul(base_relatives[:, :, :3], rotations), base_relatives[:, :, 3:]], axis=2)
    absolutes = []
    for bone, parent in enumerate(parents):
        absolutes.append(relatives[bone] if parent < 0 else gnp.dot(absolutes[parent], relatives[bone]))
    transforms = gnp.matmul(gnp.stack(absolutes), inverse_base_absolutes)
    blended = gnp.reshape(gnp.dot(weights, gnp.reshape(transforms[:, :3, :], (bones, 12))), (-1, 3, 4))
    vertices = gnp.sum(blended * base_positions[:, None, :], axis=2)
    return gnp.dot(vertices, _angle_axis_matrix(theta[0:3]).T) + theta[3:6]


def hand_simple(theta, points, correspondences, model, parents):
    return points - hand_vertices(theta, *model, parents)[correspondences]


def hand_complicated(variables, us, points, triangles, model, parents):
    """variables = (shift (2,), theta (26,)) as one vector of 28, so that make_jvp sees one input."""
    shift, theta = variables[:2], variables[2:]
    vertices = hand_vertices(theta, *model, parents)
    u = us + shift
    a, b, c = vertices[triangles[:, 0]], vertices[triangles[:, 1]], vertices[triangles[:, 2]]
    return points - (u[:, 0:1] * a + u[:, 1:2] * b + (1 - u[:, 0:1] - u[:, 1:2]) * c)


def lstm_objective(main, extra, state, sequence):
    import autograd.numpy as gnp

    layers, bits = main.shape[0] // 2, sequence.shape[1]
    carry = [state[i] for i in range(2 * layers)]
    total = 0.0
    for t in range(sequence.shape[0] - 1):
        x = sequence[t] * extra[0]
        for i in range(layers):
            hidden, cell = carry[2 * i], carry[2 * i + 1]
            gates = gnp.concatenate([x, hidden, x, hidden]) * main[2 * i] + main[2 * i + 1]
            forget, ingate, outgate = (1 / (1 + gnp.exp(-gates[j * bits:(j + 1) * bits])) for j in range(3))
            cell = cell * forget + ingate * gnp.tanh(gates[3 * bits:])
            hidden = outgate * gnp.tanh(cell)
            carry[2 * i], carry[2 * i + 1] = hidden, cell
            x = hidden
        prediction = x * extra[1] + extra[2]
        normalised = prediction - gnp.log(2.0 + gnp.sum(gnp.exp(prediction)))
        total = total + gnp.sum(sequence[t + 1] * normalised)
    return -total / ((sequence.shape[0] - 1) * bits)


def _columns(jvp, count):
    """The Jacobian column by column: one forward-mode pass per basis vector."""
    return np.stack([jvp(np.eye(count)[i])[1] for i in range(count)], axis=-1)


def prepare(problem: str, data) -> Task:
    import autograd

    flat = lambda parts: np.concatenate([np.ravel(p) for p in parts])
    if problem == "gmm":
        fn = functools.partial(gmm_objective, gamma=data.gamma, m=data.m)
        gradient = autograd.grad(lambda params, x: fn(*params, x))
        params = (data.alphas, data.means, data.icf)
        return Task(lambda: fn(*params, data.x), lambda: gradient(params, data.x), np.atleast_1d, flat)
    if problem == "ba":
        cam_index, point_index = data.obs[:, 0], data.obs[:, 1]

        def residuals():
            blocks = (data.cams[cam_index], data.X[point_index], data.w)
            return reprojection_errors(blocks, data.feats), 1 - data.w ** 2

        def jacobian():
            blocks = (data.cams[cam_index], data.X[point_index], data.w)
            pullback, errors = autograd.make_vjp(reprojection_errors)(blocks, data.feats)
            rows = [pullback(np.repeat(np.eye(2)[r:r + 1], len(data.w), axis=0)) for r in range(2)]
            d_cam, d_point, d_weight = (np.stack([row[i] for row in rows], axis=1) for i in range(3))
            d_weight_error = autograd.elementwise_grad(lambda w: 1 - w * w)(data.w)
            return ba_sparse_jacobian(data, d_cam, d_point, d_weight, d_weight_error)

        return Task(residuals, jacobian, lambda f: np.concatenate([np.ravel(v) for v in f]), lambda j: j,
                    note="blocks by 2 vjps over all observations (no vmap)")
    if problem == "lstm":
        gradient = autograd.grad(lambda params: lstm_objective(*params, data.state, data.sequence))
        params = (data.main, data.extra)
        return Task(lambda: lstm_objective(*params, data.state, data.sequence), lambda: gradient(params),
                    np.atleast_1d, flat)
    model = data.model
    arrays = (model.base_relatives, model.inverse_base_absolutes, model.base_positions, model.weights)
    parents = tuple(int(p) for p in model.parents)
    if problem == "hand-complicated":
        triangles = model.triangles[data.correspondences]
        fn = lambda variables: hand_complicated(variables, data.us, data.points, triangles, arrays, parents)
        variables = np.concatenate([np.zeros(2), data.theta])
        jvp = autograd.make_jvp(fn)(variables)

        def jacobian():
            columns = _columns(jvp, 28)
            return hand_compressed_jacobian(columns[..., :2], columns[..., 2:])

        return Task(lambda: fn(variables), jacobian, np.ravel, lambda j: j, note="28 make_jvp passes")
    fn = lambda theta: hand_simple(theta, data.points, data.correspondences, arrays, parents)
    jvp = autograd.make_jvp(fn)(data.theta)
    return Task(lambda: fn(data.theta), lambda: _columns(jvp, 26), np.ravel, lambda j: j.reshape(-1, 26),
                note="26 make_jvp passes")
