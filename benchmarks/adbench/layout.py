"""ADBench's output layouts, assembled with NumPy from the per-observation blocks the tools compute.

- BA: a CSR matrix with 2p reprojection rows (15 entries each: 11 camera, 3 point, 1 weight columns), then p
  weight rows (1 entry each); columns are 11 n camera parameters, 3 m point coordinates, p weights.
- Hand complicated: the 3N x (2N + 26) Jacobian compressed to 3N x (2 + 26): row 3i + j keeps its two u_i
  columns (the u block is block diagonal), then the 26 theta columns.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse

from .data import BA_CAMERA_PARAMS, BAData


def ba_sparse_jacobian(data: BAData, d_cam, d_point, d_weight, d_weight_error) -> scipy.sparse.csr_matrix:
    """CSR Jacobian from blocks d_cam (p, 2, 11), d_point (p, 2, 3), d_weight (p, 2) and d_weight_error (p,)."""
    n, m, p = len(data.cams), len(data.X), len(data.w)
    d_cam, d_point = np.asarray(d_cam).reshape(p, 2, 11), np.asarray(d_point).reshape(p, 2, 3)
    d_weight, d_weight_error = np.asarray(d_weight).reshape(p, 2, 1), np.asarray(d_weight_error).reshape(p)
    cam, point = data.obs[:, 0], data.obs[:, 1]
    columns = np.concatenate([
        BA_CAMERA_PARAMS * cam[:, None] + np.arange(BA_CAMERA_PARAMS),
        BA_CAMERA_PARAMS * n + 3 * point[:, None] + np.arange(3),
        (BA_CAMERA_PARAMS * n + 3 * m + np.arange(p))[:, None],
    ], axis=1)                                                     # (p, 15), shared by both rows of a block
    block_columns = np.repeat(columns[:, None, :], 2, axis=1).reshape(-1)
    weight_columns = BA_CAMERA_PARAMS * n + 3 * m + np.arange(p)
    values = np.concatenate([np.concatenate([d_cam, d_point, d_weight], axis=2).reshape(-1), d_weight_error])
    indices = np.concatenate([block_columns, weight_columns])
    row_starts = np.concatenate([np.arange(0, 30 * p + 1, 15), 30 * p + np.arange(1, p + 1)])
    shape = (3 * p, BA_CAMERA_PARAMS * n + 3 * m + p)
    return scipy.sparse.csr_matrix((values, indices, row_starts), shape=shape)


def hand_compressed_jacobian(d_us, d_theta) -> np.ndarray:
    """[d residual / d u (N, 3, 2) compressed to 2 columns, d residual / d theta (N, 3, 26)] as (3N, 28)."""
    d_us, d_theta = np.asarray(d_us), np.asarray(d_theta)
    count = d_theta.shape[0]
    return np.concatenate([d_us.reshape(3 * count, 2), d_theta.reshape(3 * count, -1)], axis=1)


def gmm_lower_index(d: int) -> np.ndarray:
    """Gather index (d, d) into [0, l_1, l_2, ...] (a zero, then the strict lower entries of icf column by column):
    L = padded[index] is the strictly lower triangular factor."""
    index = np.zeros((d, d), dtype=np.int64)
    position = 1
    for column in range(d):
        for row in range(column + 1, d):
            index[row, column] = position
            position += 1
    return index


def hand_angle_index(bone_count: int) -> np.ndarray:
    """Gather index (bones, 3) into [0, theta_0, ..., theta_25]: the Euler angles of each bone (0 where fixed).
    Bones 0 and 1 are fixed; each finger has a 2-angle joint, two 1-angle joints and a fixed tip."""
    index = np.zeros((bone_count, 3), dtype=np.int64)
    position, bone = 6, 2
    for _finger in range(5):
        index[bone, :2] = [1 + position, 2 + position]
        index[bone + 1, 0] = 3 + position
        index[bone + 2, 0] = 4 + position
        position, bone = position + 4, bone + 4
    return index
