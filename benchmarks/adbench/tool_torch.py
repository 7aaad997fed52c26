"""The four ADBench objectives in PyTorch (float64, CPU, eager): F under `torch.no_grad()`, gradients with
`torch.func.grad` (GMM, LSTM: a Python loop over the sequence), BA blocks with `torch.func.vmap(torch.func.jacrev)`
and the hand Jacobians with `torch.func.jacfwd`. Imported only when torch is installed."""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import multigammaln

from .harness import Task
from .layout import ba_sparse_jacobian, gmm_lower_index, hand_angle_index, hand_compressed_jacobian

NAME = "torch"


def _torch():
    import torch

    return torch


def configure(threads: int) -> None:
    torch = _torch()
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(threads)
    except RuntimeError:  # can only be set once, before any parallel work
        pass


def version() -> str:
    return _torch().__version__


def gmm_objective(alphas, means, icf, x, gamma, m, lower_index):
    torch = _torch()
    n, d = x.shape
    k = alphas.shape[0]
    log_diagonal = icf[:, :d]
    lower = torch.cat([torch.zeros((k, 1), dtype=icf.dtype), icf[:, d:]], dim=1)[:, lower_index]
    centred = x[:, None, :] - means[None, :, :]
    scaled = torch.exp(log_diagonal) * centred + torch.einsum("kij,nkj->nki", lower, centred)
    sum_log_diagonal = torch.sum(log_diagonal, dim=1)
    inner = alphas + sum_log_diagonal - 0.5 * torch.sum(scaled * scaled, dim=2)
    dof = d + m + 1
    prior = torch.sum(0.5 * gamma ** 2 * (torch.sum(torch.exp(2.0 * log_diagonal), dim=1)
                                          + torch.sum(icf[:, d:] ** 2, dim=1)) - m * sum_log_diagonal)
    constant = -0.5 * n * d * math.log(2 * math.pi) - k * (dof * d * math.log(gamma / math.sqrt(2.0))
                                                           - multigammaln(0.5 * dof, d))
    return constant + torch.sum(torch.logsumexp(inner, dim=1)) - n * torch.logsumexp(alphas, dim=0) + prior


def _cross(a, b):
    return _torch().stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def reprojection_error(camera, point, weight, feature):
    torch = _torch()
    rotation, y = camera[0:3], point - camera[3:6]
    squared = torch.sum(rotation * rotation)
    nonzero = squared != 0
    theta = torch.sqrt(torch.where(nonzero, squared, torch.ones_like(squared)))
    axis = rotation / theta
    cos, sin = torch.cos(theta), torch.sin(theta)
    turned = y * cos + _cross(axis, y) * sin + axis * (torch.sum(axis * y) * (1 - cos))
    camera_frame = torch.where(nonzero, turned, y + _cross(rotation, y))
    projected = camera_frame[0:2] / camera_frame[2]
    radius2 = torch.sum(projected * projected)
    distorted = projected * (1 + camera[9] * radius2 + camera[10] * radius2 * radius2)
    return weight * (distorted * camera[6] + camera[7:9] - feature)


def _euler_rotations(angles):
    torch = _torch()
    cos, sin = torch.cos(angles), torch.sin(angles)
    one, zero = torch.ones_like(angles[:, 0]), torch.zeros_like(angles[:, 0])
    cx, cz, cy, sx, sz, sy = cos[:, 0], cos[:, 1], cos[:, 2], sin[:, 0], sin[:, 1], sin[:, 2]
    shape = (angles.shape[0], 3, 3)
    rx = torch.stack([one, zero, zero, zero, cx, -sx, zero, sx, cx], dim=1).reshape(shape)
    ry = torch.stack([cy, zero, -sy, zero, one, zero, sy, zero, cy], dim=1).reshape(shape)
    rz = torch.stack([cz, -sz, zero, sz, cz, zero, zero, zero, one], dim=1).reshape(shape)
    return rz @ ry @ rx


def _angle_axis_matrix(angle_axis):
    torch = _torch()
    squared = torch.sum(angle_axis * angle_axis)
    small = squared < 1e-8
    angle = torch.sqrt(torch.where(small, torch.ones_like(squared), squared))
    x, y, z = angle_axis[0] / angle, angle_axis[1] / angle, angle_axis[2] / angle
    c, s = torch.cos(angle), torch.sin(angle)
    rotation = torch.stack([
        x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s,
        x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s,
        x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]).reshape(3, 3)
    return torch.where(small, torch.eye(3, dtype=angle_axis.dtype), rotation)


def hand_vertices(theta, base_relatives, inverse_base_absolutes, base_positions, weights, parents, angle_index):
    torch = _torch()
    bones = len(parents)
    angles = torch.cat([torch.zeros(1, dtype=theta.dtype), theta])[angle_index]
    rotations = _euler_rotations(angles)
    relatives = torch.cat([base_relatives[:, :, :3] @ rotations, base_relatives[:, :, 3:]], dim=2)
    absolutes = []
    for bone, parent in enumerate(parents):
        absolutes.append(relatives[bone] if parent < 0 else absolutes[parent] @ relatives[bone])
    transforms = torch.stack(absolutes) @ inverse_base_absolutes
    blended = (weights @ transforms[:, :3, :].reshape(bones, 12)).reshape(-1, 3, 4)
    vertices = torch.sum(blended * base_positions[:, None, :], dim=2)
    return vertices @ _angle_axis_matrix(theta[0:3]).T + theta[3:6]


def hand_simple(theta, points, correspondences, model, parents, angle_index):
    return points - hand_vertices(theta, *model, parents, angle_index)[correspondences]


def hand_complicated(shift, theta, us, points, triangles, model, parents, angle_index):
    vertices = hand_vertices(theta, *model, parents, angle_index)
    u = us + shift
    a, b, c = vertices[triangles[:, 0]], vertices[triangles[:, 1]], vertices[triangles[:, 2]]
    return points - (u[:, 0:1] * a + u[:, 1:2] * b + (1 - u[:, 0:1] - u[:, 1:2]) * c)


def lstm_objective(main, extra, state, sequence):
    torch = _torch()
    layers, bits = main.shape[0] // 2, sequence.shape[1]
    carry = [state[i] for i in range(2 * layers)]
    total = 0.0
    for t in range(sequence.shape[0] - 1):
        x = sequence[t] * extra[0]
        for i in range(layers):
            hidden, cell = carry[2 * i], carry[2 * i + 1]
            gates = torch.cat([x, hidden, x, hidden]) * main[2 * i] + main[2 * i + 1]
            forget, ingate, outgate = (torch.sigmoid(gates[j * bits:(j + 1) * bits]) for j in range(3))
            cell = cell * forget + ingate * torch.tanh(gates[3 * bits:])
            hidden = outgate * torch.tanh(cell)
            carry[2 * i], carry[2 * i + 1] = hidden, cell
            x = hidden
        prediction = x * extra[1] + extra[2]
        normalised = prediction - torch.log(2.0 + torch.sum(torch.exp(prediction)))
        total = total + torch.sum(sequence[t + 1] * normalised)
    return -total / ((sequence.shape[0] - 1) * bits)


def _numpy(value):
    return value.detach().numpy() if hasattr(value, "detach") else np.asarray(value)


def _flat(parts):
    return np.concatenate([np.ravel(_numpy(p)) for p in parts])


def prepare(problem: str, data) -> Task:
    torch = _torch()
    func = torch.func

    def put(*arrays):
        return tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in arrays)

    def no_grad(fn, *args):
        def run():
            with torch.no_grad():
                return fn(*args)
        return run

    if problem == "gmm":
        fn = functools.partial(gmm_objective, gamma=data.gamma, m=data.m,
                               lower_index=torch.from_numpy(gmm_lower_index(data.x.shape[1])))
        gradient = func.grad(fn, argnums=(0, 1, 2))
        args = put(data.alphas, data.means, data.icf, data.x)
        return Task(no_grad(fn, *args), lambda: gradient(*args), lambda f: np.atleast_1d(_numpy(f)), _flat)
    if problem == "ba":
        residual_map = func.vmap(reprojection_error)
        block_map = func.vmap(func.jacrev(reprojection_error, argnums=(0, 1, 2)))
        weight_map = func.vmap(func.grad(lambda w: 1 - w * w))
        args = put(data.cams, data.X, data.w, data.obs[:, 0], data.obs[:, 1], data.feats)
        cams, points, weights, cam_index, point_index, features = args

        def residuals():
            return residual_map(cams[cam_index], points[point_index], weights, features), 1 - weights ** 2

        def jacobian():
            blocks = block_map(cams[cam_index], points[point_index], weights, features)
            return ba_sparse_jacobian(data, *(_numpy(b) for b in blocks), _numpy(weight_map(weights)))

        return Task(no_grad(residuals), jacobian, lambda f: np.concatenate([np.ravel(_numpy(v)) for v in f]),
                    lambda j: j)
    if problem.startswith("hand"):
        model = data.model
        arrays = put(model.base_relatives, model.inverse_base_absolutes, model.base_positions, model.weights)
        static = {"parents": tuple(int(p) for p in model.parents),
                  "angle_index": torch.from_numpy(hand_angle_index(len(model.parents)))}
        if data.complicated:
            fn = functools.partial(hand_complicated, **static)
            jacobian = func.jacfwd(fn, argnums=(0, 1))
            args = (*put(np.zeros(2), data.theta, data.us, data.points, model.triangles[data.correspondences]),
                    arrays)
            return Task(no_grad(fn, *args), lambda: hand_compressed_jacobian(*(_numpy(j) for j in jacobian(*args))),
                        lambda f: np.ravel(_numpy(f)), lambda j: j)
        fn = functools.partial(hand_simple, **static)
        jacobian = func.jacfwd(fn)
        args = (*put(data.theta, data.points, data.correspondences), arrays)
        return Task(no_grad(fn, *args), lambda: jacobian(*args), lambda f: np.ravel(_numpy(f)),
                    lambda j: _numpy(j).reshape(-1, 26))
    gradient = func.grad(lstm_objective, argnums=(0, 1))
    args = put(data.main, data.extra, data.state, data.sequence)
    return Task(no_grad(lstm_objective, *args), lambda: gradient(*args), lambda f: np.atleast_1d(_numpy(f)), _flat)
