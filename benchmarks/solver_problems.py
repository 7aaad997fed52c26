"""Least-squares showcases: bundle adjustment scenes built from ADBench's BA files, hand tracking on ADBench's
hand model, and a sum-of-exponentials curve fit. Used by `benchmarks/solvers.py` and `tests/test_optim.py`.

Bundle adjustment. The BA files (ba1..ba20) hold one camera, one point, one weight and one feature, replicated:
n cameras, m points, p observations, observation i seeing camera i mod n and point i mod m. Every camera and point
being the same, that problem is degenerate; `bundle_adjustment` keeps the file's structure (n, m, p and the
i mod n, i mod m pattern, scaled down to `observations`), its camera model (focal length, principal point, radial
distortion of the template camera) and its distances, and builds a well-posed scene: cameras on a sphere around
the points, each looking at their centre, points in a ball, features the projections plus noise. Each point is
seen from several distinct cameras (n and m are made coprime). The unknowns are ADBench's (11 per camera, 3 per
point, 1 weight per observation); the start perturbs the cameras and points.

Hand tracking. The ADBench hand files give the model, the correspondences and a pose theta; the points to fit
are the model's vertices at that pose (plus noise), and the fit starts from a perturbed pose (and, complicated,
perturbed barycentric coordinates).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

import adarray.numpy as anp
from benchmarks.adbench.data import data_root, read_ba, read_hand
from benchmarks.adbench.tool_adarray import ba_residuals, hand_complicated, hand_simple, hand_vertices

BA_INSTANCES = ("ba1_n49_m7776_p31843", "ba2_n21_m11315_p36455", "ba3_n161_m48126_p182072", "ba4_n372_m47423_p204472",
                "ba5_n257_m65132_p225911")


@dataclass
class Problem:
    """residual(x, *args) -> pytree of arrays; x0 the start (a pytree); truth the parameters that made the data."""

    name: str
    residual: object
    x0: object
    args: tuple
    truth: object = None
    notes: dict = field(default_factory=dict)


# --- bundle adjustment ------------------------------------------------------------------------------------------


def ba_residual(params, cam_index, point_index, features):
    """ADBench's BA residuals (reprojection errors, then weight errors) of the parameters {cams, points, weights}."""
    return ba_residuals(params["cams"], params["points"], params["weights"], cam_index, point_index, features)


def _look_at(centre):
    """The angle-axis vector of the rotation taking world coordinates to a camera at `centre` looking at the
    origin (its z axis towards the origin)."""
    forward = -centre / np.linalg.norm(centre)
    up = np.array([0.0, 0.0, 1.0]) if abs(forward[2]) < 0.9 else np.array([0.0, 1.0, 0.0])
    right = np.cross(up, forward)
    right /= np.linalg.norm(right)
    return Rotation.from_matrix(np.stack([right, np.cross(forward, right), forward])).as_rotvec()


def scene_sizes(n, m, p, observations):
    """(cameras, points, observations) scaled from the file's (n, m, p) to about `observations`, with every point
    seen at least twice by distinct cameras (cameras and points coprime)."""
    scale = min(1.0, observations / p)
    cameras = max(3, round(n * scale))
    count = max(2 * cameras, round(p * scale))
    points = max(4, min(round(m * scale), count // 3))
    while math.gcd(cameras, points) != 1:
        points += 1
    return cameras, points, count


def bundle_adjustment(instance="ba1_n49_m7776_p31843", observations=300, seed=0, noise=0.3, root=None) -> Problem:
    """A well-posed BA scene with the structure of an ADBench file, scaled to about `observations`."""
    data = read_ba((root or data_root()) / "ba" / f"{instance}.txt")
    template = data.cams[0]
    n, m, p = scene_sizes(len(data.cams), len(data.X), len(data.w), observations)
    rng = np.random.default_rng(seed)
    distance = float(np.linalg.norm(template[3:6]))
    directions = rng.normal(size=(n, 3)) * [1.0, 1.0, 0.3] + [0.0, 0.0, 1.0]  # a cap of the sphere, above the scene
    centres = distance * directions / np.linalg.norm(directions, axis=1, keepdims=True)
    cams = np.zeros((n, 11))
    cams[:, 0:3] = np.array([_look_at(c) for c in centres])
    cams[:, 3:6] = centres
    cams[:, 6:11] = template[6:11] * (1 + 0.01 * rng.normal(size=(n, 5)))
    points = rng.normal(scale=0.25 * distance, size=(m, 3))
    index = np.arange(p)
    cam_index, point_index = index % n, index % m
    truth = {"cams": cams, "points": points, "weights": np.ones(p)}
    clean = np.asarray(ba_residual(truth, cam_index, point_index, np.zeros((p, 2)))[0])
    features = clean + noise * rng.normal(size=clean.shape)
    # A start within about a pixel: ADBench's weight error 1 - w^2 lets an observation whose error exceeds
    # sqrt(2) pixels drive its weight to 0 (a robust loss), and a start far out loses observations that way.
    start = {"cams": cams.copy(), "points": points + 0.002 * distance * rng.normal(size=points.shape),
             "weights": np.ones(p)}
    start["cams"][:, 0:3] += 0.001 * rng.normal(size=(n, 3))
    start["cams"][:, 3:6] += 0.001 * distance * rng.normal(size=(n, 3))
    return Problem(f"BA {instance.split('_')[0]} scene (n{n} m{m} p{p})", ba_residual, start,
                   (cam_index, point_index, features), truth,
                   {"cameras": n, "points": m, "observations": p, "noise": noise})


# --- hand tracking ----------------------------------------------------------------------------------------------


def _model(data):
    model = data.model
    arrays = (model.base_relatives, model.inverse_base_absolutes, model.base_positions, model.weights)
    return arrays, tuple(int(p) for p in model.parents)


def hand_complicated_residual(params, points, triangles, arrays, parents):
    return hand_complicated(np.zeros(2), params["theta"], params["us"], points, triangles, arrays, parents)


def hand_tracking(path="complicated_small/hand1_t26_c100.txt", seed=0, noise=1e-3, root=None) -> Problem:
    """Fit the hand pose (and, for complicated files, the barycentric coordinates) to points made from the file's
    pose: simple files give 26 unknowns, complicated ones 26 + 2N."""
    data = read_hand((root or data_root()) / "hand" / path)
    arrays, parents = _model(data)
    rng = np.random.default_rng(seed)
    theta = data.theta
    start_theta = theta + 0.05 * rng.normal(size=theta.shape)
    vertices = np.asarray(hand_vertices(theta, *arrays, parents))
    if data.complicated:
        triangles = data.model.triangles[data.correspondences]
        u = data.us
        corners = vertices[triangles]                                  # (N, 3 corners, 3)
        points = u[:, 0:1] * corners[:, 0] + u[:, 1:2] * corners[:, 1] + (1 - u[:, 0:1] - u[:, 1:2]) * corners[:, 2]
        points = points + noise * rng.normal(size=points.shape)
        residual = functools.partial(hand_complicated_residual, parents=parents)
        start = {"theta": start_theta, "us": u + 0.02 * rng.normal(size=u.shape)}
        return Problem(f"hand complicated {path.split('/')[-1][:-4]} (N{len(u)})", residual, start,
                       (points, triangles, arrays), {"theta": theta, "us": u})
    points = vertices[data.correspondences] + noise * rng.normal(size=(len(data.correspondences), 3))
    residual = functools.partial(hand_simple, parents=parents)
    return Problem(f"hand simple {path.split('/')[-1][:-4]} (N{len(points)})", residual, start_theta,
                   (points, data.correspondences, arrays), theta)


# --- a sum of exponentials ----------------------------------------------------------------------------------------


def exponentials_residual(params, t, y):
    """sum_k a_k exp(-rate_k t) - y."""
    return anp.sum(params["amplitude"][:, None] * anp.exp(-params["rate"][:, None] * t), axis=0) - y


def exponentials(points=200, noise=0.01, seed=0) -> Problem:
    """Three decaying exponentials (amplitudes 3, 2, 1; rates 4, 1, 0.2) sampled on [0, 10], with Gaussian noise."""
    rng = np.random.default_rng(seed)
    truth = {"amplitude": np.array([3.0, 2.0, 1.0]), "rate": np.array([4.0, 1.0, 0.2])}
    t = np.linspace(0.0, 10.0, points)
    y = np.asarray(exponentials_residual(truth, t, np.zeros(points))) + noise * rng.normal(size=points)
    start = {"amplitude": np.array([1.0, 1.0, 1.0]), "rate": np.array([2.0, 0.5, 0.1])}
    return Problem(f"sum of 3 exponentials ({points} points)", exponentials_residual, start, (t, y), truth,
                   {"noise": noise})
