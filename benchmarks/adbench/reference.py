"""Plain-NumPy reference values of the four ADBench objectives, written independently of the AD versions.

The formulations differ on purpose from the ones the tools differentiate, so that an error in one is unlikely to
repeat in the other: GMM loops over components and builds each Q_k entry by entry; BA rotates with the Rodrigues
*matrix* instead of the cross-product form; the hand uses explicit Python loops over bones and vertices' weights;
the LSTM is an explicit loop over time and layers. Every function takes the data container and returns a flat
float64 vector (a 1-element one for the scalar objectives).

`relative_error` is ADBench's measure |a - b| / max(1, |a| + |b|), elementwise; `central_difference` the
directional finite difference used to check derivatives.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp, multigammaln

from .data import BAData, GMMData, HandData, LSTMData

ADBENCH_TOLERANCE = 1e-8


def relative_error(a, b) -> float:
    """max over elements of |a - b| / max(1, |a| + |b|) (ADBench's JacobianCheck measure)."""
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"cannot compare arrays of {a.size} and {b.size} elements")
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(a) + np.abs(b))))


# --- GMM ----------------------------------------------------------------------------------------------------------


def _q_matrix(icf_row, d):
    q = np.diag(np.exp(icf_row[:d]))
    position = d
    for column in range(d):
        for row in range(column + 1, d):
            q[row, column] = icf_row[position]
            position += 1
    return q


def gmm(data: GMMData) -> np.ndarray:
    x, alphas, means, icf = data.x, data.alphas, data.means, data.icf
    n, d = x.shape
    k_count = len(alphas)
    inner = np.empty((n, k_count))
    prior = 0.0
    for k in range(k_count):
        q = _q_matrix(icf[k], d)
        log_diagonal = icf[k, :d]
        mahalanobis = (x - means[k]) @ q.T
        inner[:, k] = alphas[k] + log_diagonal.sum() - 0.5 * np.einsum("ij,ij->i", mahalanobis, mahalanobis)
        frobenius = np.sum(np.exp(log_diagonal) ** 2) + np.sum(icf[k, d:] ** 2)
        prior += 0.5 * data.gamma ** 2 * frobenius - data.m * log_diagonal.sum()
    dof = d + data.m + 1
    prior -= k_count * (dof * d * math.log(data.gamma / math.sqrt(2.0)) - multigammaln(0.5 * dof, d))
    value = -0.5 * n * d * math.log(2 * math.pi) + logsumexp(inner, axis=1).sum() - n * logsumexp(alphas) + prior
    return np.array([value])


# --- BA -----------------------------------------------------------------------------------------------------------


def _rotation_matrices(rotations):
    """Rodrigues' formula R = cos t I + sin t [v]x + (1 - cos t) v v^T per camera; I + [r]x when r = 0."""
    matrices = np.empty((len(rotations), 3, 3))
    for i, r in enumerate(rotations):
        theta = math.sqrt(float(r @ r))
        axis = r / theta if theta != 0 else r
        cross = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
        if theta == 0:
            matrices[i] = np.eye(3) + cross
        else:
            matrices[i] = (math.cos(theta) * np.eye(3) + math.sin(theta) * cross
                           + (1 - math.cos(theta)) * np.outer(axis, axis))
    return matrices


def ba(data: BAData) -> np.ndarray:
    """[reprojection errors (2 per observation, row-major), weight errors (1 per observation)]."""
    cams, points = data.cams[data.obs[:, 0]], data.X[data.obs[:, 1]]
    unique, inverse = np.unique(data.cams[:, :3], axis=0, return_inverse=True)
    rotations = _rotation_matrices(unique)[inverse.ravel()][data.obs[:, 0]]
    camera_frame = np.einsum("pij,pj->pi", rotations, points - cams[:, 3:6])
    projected = camera_frame[:, :2] / camera_frame[:, 2:3]
    radius2 = np.sum(projected ** 2, axis=1, keepdims=True)
    distortion = 1 + cams[:, 9:10] * radius2 + cams[:, 10:11] * radius2 ** 2
    predicted = projected * distortion * cams[:, 6:7] + cams[:, 7:9]
    reprojection = data.w[:, None] * (predicted - data.feats)
    return np.concatenate([reprojection.ravel(), 1 - data.w ** 2])


# --- hand ---------------------------------------------------------------------------------------------------------


def _euler_xzy(angles):
    """Rz(angles[1]) Ry(angles[2]) Rx(angles[0]) (ADBench's bone rotation)."""
    x, z, y = angles
    rx = np.array([[1, 0, 0], [0, math.cos(x), -math.sin(x)], [0, math.sin(x), math.cos(x)]])
    ry = np.array([[math.cos(y), 0, -math.sin(y)], [0, 1, 0], [math.sin(y), 0, math.cos(y)]])
    rz = np.array([[math.cos(z), -math.sin(z), 0], [math.sin(z), math.cos(z), 0], [0, 0, 1]])
    return rz @ ry @ rx


def _bone_angles(theta, bone_count):
    """Per-bone Euler angles: bones 0 and 1 fixed, then per finger 2 + 1 + 1 angles and a fixed tip."""
    angles = np.zeros((bone_count, 3))
    position, bone = 6, 2
    for _finger in range(5):
        angles[bone, :2] = theta[position:position + 2]
        angles[bone + 1, 0] = theta[position + 2]
        angles[bone + 2, 0] = theta[position + 3]
        position += 4
        bone += 4
    return angles


def hand_vertices(data: HandData) -> np.ndarray:
    model, theta = data.model, data.theta
    bone_count = len(model.parents)
    angles = _bone_angles(theta, bone_count)
    absolutes = [None] * bone_count
    for b in range(bone_count):
        pose = np.eye(4)
        pose[:3, :3] = _euler_xzy(angles[b])
        relative = model.base_relatives[b] @ pose
        parent = model.parents[b]
        absolutes[b] = relative if parent < 0 else absolutes[parent] @ relative
    vertices = np.zeros((len(model.base_positions), 3))
    for b in range(bone_count):
        skin = absolutes[b] @ model.inverse_base_absolutes[b]
        vertices += model.weights[:, b:b + 1] * (model.base_positions @ skin.T)[:, :3]
    axis_angle = theta[:3]
    angle = math.sqrt(float(axis_angle @ axis_angle))
    if angle < 1e-4:
        rotation = np.eye(3)
    else:
        axis = axis_angle / angle
        cross = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
        rotation = math.cos(angle) * np.eye(3) + math.sin(angle) * cross + (1 - math.cos(angle)) * np.outer(axis, axis)
    return vertices @ rotation.T + theta[3:6]


def hand(data: HandData) -> np.ndarray:
    """Residuals y_i - model point i, (N, 3) flattened row-major."""
    vertices = hand_vertices(data)
    if data.complicated:
        a, b, c = (vertices[data.model.triangles[data.correspondences, j]] for j in range(3))
        u1, u2 = data.us[:, :1], data.us[:, 1:]
        model_points = u1 * a + u2 * b + (1 - u1 - u2) * c
    else:
        model_points = vertices[data.correspondences]
    return (data.points - model_points).ravel()


# --- LSTM ---------------------------------------------------------------------------------------------------------


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def lstm(data: LSTMData) -> np.ndarray:
    main, extra, sequence = data.main, data.extra, data.sequence
    layers, bits = len(main) // 2, sequence.shape[1]
    hidden = [data.state[2 * i].copy() for i in range(layers)]
    cell = [data.state[2 * i + 1].copy() for i in range(layers)]
    total = 0.0
    for t in range(len(sequence) - 1):
        x = sequence[t] * extra[0]
        for i in range(layers):
            weight, bias = main[2 * i].reshape(4, bits), main[2 * i + 1].reshape(4, bits)
            forget = _sigmoid(x * weight[0] + bias[0])
            ingate = _sigmoid(hidden[i] * weight[1] + bias[1])
            outgate = _sigmoid(x * weight[2] + bias[2])
            change = np.tanh(hidden[i] * weight[3] + bias[3])
            cell[i] = cell[i] * forget + ingate * change
            hidden[i] = outgate * np.tanh(cell[i])
            x = hidden[i]
        prediction = x * extra[1] + extra[2]
        normalised = prediction - math.log(2.0 + np.sum(np.exp(prediction)))
        total += float(sequence[t + 1] @ normalised)
    return np.array([-total / ((len(sequence) - 1) * bits)])


OBJECTIVES = {"gmm": gmm, "ba": ba, "hand-simple": hand, "hand-complicated": hand, "lstm": lstm}


# --- finite differences -------------------------------------------------------------------------------------------


def central_difference(problem: str, data, direction, step: float = 1e-6) -> np.ndarray:
    """(F(p + h v) - F(p - h v)) / 2h for the parameters p = data.params and a direction v (same structure)."""
    objective = OBJECTIVES[problem]
    plus = data.with_params(tuple(p + step * v for p, v in zip(data.params, direction)))
    minus = data.with_params(tuple(p - step * v for p, v in zip(data.params, direction)))
    return (objective(plus) - objective(minus)) / (2 * step)


def random_direction(data, seed: int = 0):
    """A random unit-scale direction with the structure of data.params."""
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(np.shape(p)) for p in data.params)


def directional_derivative(problem: str, data, derivative, direction) -> np.ndarray:
    """J v from a tool's derivative in its ADBench layout: a gradient (GMM, LSTM: the parameters flattened in
    order), a CSR matrix (BA), or a dense Jacobian (hand; complicated: 2 compressed u columns, then theta)."""
    if problem in ("gmm", "lstm"):
        flat = np.concatenate([np.ravel(v) for v in direction])
        return np.array([np.ravel(derivative) @ flat])
    if problem == "ba":
        return derivative @ np.concatenate([np.ravel(v) for v in direction])
    if problem == "hand-simple":
        return derivative @ direction[0]
    us_direction, theta_direction = direction
    per_row_u = np.repeat(us_direction, 3, axis=0)  # row 3i + j depends on u_i only
    return np.sum(derivative[:, :2] * per_row_u, axis=1) + derivative[:, 2:] @ theta_direction
