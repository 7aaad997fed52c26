"""Readers for the ADBench input files, their containers, and the catalogue of instances per size.

Formats (microsoft/ADBench, docs/FileFormat.md; see ../shared/design/papers/adbench.md):

- GMM: "d K n"; K lines alpha; K lines of d means; K lines of d(d+1)/2 icf; n lines of d points (or one point
  replicated n times); "gamma m".
- BA: "n m p"; one camera (11 numbers), one point (3), one weight, one feature (2). The reader replicates them:
  n cameras, m points, p weights and features; observation i sees camera i mod n and point i mod m.
- Hand: "N 26"; N lines "vertex x y z"; (complicated only) N lines "u1 u2"; 26 lines of theta. The model folder
  (bones.txt, vertices.txt, triangles.txt; colon-separated) sits next to the file, in `model/`.
- LSTM: "l c b"; blank; 2l lines of 4b main parameters; blank; 3 lines of b extra parameters; blank; 2l lines of
  b state; blank; c lines of b sequence bits.

Every reader raises `FormatError` (a ValueError) naming the file and what is wrong.

The tiny and small instances ship in `instances/` (ADBench's files, MIT: see instances/README.md); the full
set is read from `--data DIR` or $ADBENCH_DATA (`data_root`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

BA_CAMERA_PARAMS = 11
HAND_THETA = 26


SHIPPED = Path(__file__).resolve().parent / "instances"  # the tiny and small sets (instances/README.md)
FULL_DATA_HINT = ("the repository ships the tiny and small instances only (benchmarks/adbench/instances); pass "
                  "--data DIR or set ADBENCH_DATA to a copy of ADBench's data/ folder (github.com/microsoft/ADBench)")


class FormatError(ValueError):
    """An input file that does not follow its ADBench format."""


# --- containers ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GMMData:
    alphas: np.ndarray      # (K,)
    means: np.ndarray       # (K, d)
    icf: np.ndarray         # (K, d (d + 1) / 2): d log-diagonal entries, then the strict lower part column by column
    x: np.ndarray           # (n, d)
    gamma: float            # Wishart gamma
    m: int                  # Wishart m

    @property
    def params(self):
        return (self.alphas, self.means, self.icf)

    def with_params(self, params):
        alphas, means, icf = params
        return replace(self, alphas=alphas, means=means, icf=icf)

    @property
    def size(self) -> int:
        """ADBench's x-axis: the gradient length K (1 + d + d (d + 1) / 2)."""
        k, d = self.means.shape
        return k * (1 + d + d * (d + 1) // 2)


@dataclass(frozen=True)
class BAData:
    cams: np.ndarray        # (n, 11): rotation (3, angle-axis), centre (3), focal (1), principal point (2), radial (2)
    X: np.ndarray           # (m, 3)
    w: np.ndarray           # (p,)
    obs: np.ndarray         # (p, 2) int: camera index, point index
    feats: np.ndarray       # (p, 2)

    @property
    def params(self):
        return (self.cams, self.X, self.w)

    def with_params(self, params):
        cams, X, w = params
        return replace(self, cams=cams, X=X, w=w)

    @property
    def size(self) -> int:
        """ADBench's x-axis for BA: 11 n + 3 m + 2 p."""
        return BA_CAMERA_PARAMS * len(self.cams) + 3 * len(self.X) + 2 * len(self.w)


@dataclass(frozen=True)
class HandModel:
    bone_names: tuple
    parents: np.ndarray                 # (B,) int, -1 for the root
    base_relatives: np.ndarray          # (B, 4, 4)
    inverse_base_absolutes: np.ndarray  # (B, 4, 4)
    base_positions: np.ndarray          # (V, 4) homogeneous
    weights: np.ndarray                 # (V, B) skinning weights
    triangles: np.ndarray               # (T, 3) int


@dataclass(frozen=True)
class HandData:
    model: HandModel
    correspondences: np.ndarray  # (N,) int: a vertex (simple) or a triangle (complicated)
    points: np.ndarray           # (N, 3)
    theta: np.ndarray            # (26,)
    us: np.ndarray | None = None  # (N, 2) barycentric coordinates, complicated only

    @property
    def complicated(self) -> bool:
        return self.us is not None

    @property
    def params(self):
        return (self.us, self.theta) if self.complicated else (self.theta,)

    def with_params(self, params):
        if self.complicated:
            us, theta = params
            return replace(self, us=us, theta=theta)
        (theta,) = params
        return replace(self, theta=theta)

    @property
    def size(self) -> int:
        """ADBench's x-axis for the hand: the number of points N."""
        return len(self.points)


@dataclass(frozen=True)
class LSTMData:
    main: np.ndarray      # (2 l, 4 b): per layer a weight row and a bias row
    extra: np.ndarray     # (3, b): input scale, output scale, output bias
    state: np.ndarray     # (2 l, b): per layer hidden and cell
    sequence: np.ndarray  # (c, b)

    @property
    def params(self):
        return (self.main, self.extra)

    def with_params(self, params):
        main, extra = params
        return replace(self, main=main, extra=extra)

    @property
    def size(self) -> int:
        """ADBench's x-axis for the LSTM: layers x characters."""
        return (len(self.main) // 2) * len(self.sequence)


# --- readers ------------------------------------------------------------------------------------------------------


def _lines(path) -> list[list[str]]:
    path = Path(path)
    if not path.is_file():
        hint = f"; {FULL_DATA_HINT}" if SHIPPED in path.resolve().parents else ""
        raise FileNotFoundError(f"no such ADBench input file: {path}{hint}")
    with open(path) as handle:
        return [line.split() for line in handle]


def _floats(path, row, expected: int, what: str) -> np.ndarray:
    if len(row) != expected:
        raise FormatError(f"{path}: {what} should have {expected} numbers, found {len(row)}: {' '.join(row[:8])}")
    try:
        return np.array([float(v) for v in row])
    except ValueError:
        raise FormatError(f"{path}: {what} is not numeric: {' '.join(row[:8])}") from None


def _header(path, rows, count: int, what: str) -> list[int]:
    if not rows or len(rows[0]) < count:
        raise FormatError(f"{path}: the first line should hold {what}")
    try:
        values = [int(v) for v in rows[0][:count]]
    except ValueError:
        raise FormatError(f"{path}: the first line should hold the integers {what}, found {rows[0]}") from None
    if any(v <= 0 for v in values):
        raise FormatError(f"{path}: {what} must be positive, found {values}")
    return values


def _take(path, rows, start: int, count: int, width: int, what: str) -> np.ndarray:
    if start + count > len(rows):
        raise FormatError(f"{path}: the file ends before the {count} lines of {what} (line {start + 1} on)")
    return np.array([_floats(path, rows[start + i], width, f"line {start + i + 1} ({what})") for i in range(count)])


def read_gmm(path, replicate_point: bool = False) -> GMMData:
    """A GMM instance; with replicate_point the file holds one point that stands for all n (the 2.5M files)."""
    rows = [r for r in _lines(path) if r]
    d, k, n = _header(path, rows, 3, "d K n")
    alphas = _take(path, rows, 1, k, 1, "alphas")[:, 0]
    means = _take(path, rows, 1 + k, k, d, "means")
    icf = _take(path, rows, 1 + 2 * k, k, d * (d + 1) // 2, "icf")
    start = 1 + 3 * k
    points = 1 if replicate_point else n
    x = _take(path, rows, start, points, d, "points")
    if replicate_point:
        x = np.repeat(x, n, axis=0)
    tail = rows[start + points:]
    if len(tail) != 1 or len(tail[0]) != 2:
        raise FormatError(f"{path}: expected one last line 'gamma m' after the {points} points, "
                          f"found {len(tail)} more lines (is replicate_point right?)")
    return GMMData(alphas, means, icf, x, float(tail[0][0]), int(tail[0][1]))


def read_ba(path) -> BAData:
    """A BA instance: one camera, point, weight and feature replicated as the format says."""
    rows = [r for r in _lines(path) if r]
    n, m, p = _header(path, rows, 3, "n m p")
    if len(rows) < 5:
        raise FormatError(f"{path}: expected a camera, a point, a weight and a feature after the header")
    cam = _floats(path, rows[1], BA_CAMERA_PARAMS, "the camera (line 2)")
    point = _floats(path, rows[2], 3, "the point (line 3)")
    weight = _floats(path, rows[3], 1, "the weight (line 4)")[0]
    feat = _floats(path, rows[4], 2, "the feature (line 5)")
    index = np.arange(p)
    obs = np.stack([index % n, index % m], axis=1)
    return BAData(np.tile(cam, (n, 1)), np.tile(point, (m, 1)), np.full(p, weight), obs, np.tile(feat, (p, 1)))


def read_hand_model(folder) -> HandModel:
    """bones.txt (name:parent:16 relative:16 inverse absolute), vertices.txt (x:y:z:5 unused:count:bone:weight...),
    triangles.txt (a:b:c)."""
    folder = Path(folder)
    for name in ("bones.txt", "vertices.txt", "triangles.txt"):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"hand model folder {folder} has no {name}")
    bones = [line.strip().split(":") for line in open(folder / "bones.txt") if line.strip()]
    if any(len(b) != 34 for b in bones):
        raise FormatError(f"{folder / 'bones.txt'}: each line should hold name:parent and 32 numbers")
    names = tuple(b[0] for b in bones)
    parents = np.array([int(b[1]) for b in bones])
    matrices = np.array([[float(v) for v in b[2:]] for b in bones])
    relatives = matrices[:, :16].reshape(-1, 4, 4)
    inverse_absolutes = matrices[:, 16:].reshape(-1, 4, 4)
    vertex_rows = [line.strip().split(":") for line in open(folder / "vertices.txt") if line.strip()]
    positions = np.ones((len(vertex_rows), 4))
    weights = np.zeros((len(vertex_rows), len(bones)))
    for v, row in enumerate(vertex_rows):
        positions[v, :3] = [float(a) for a in row[:3]]
        count = int(row[8])
        for i in range(count):
            weights[v, int(row[9 + 2 * i])] = float(row[10 + 2 * i])
    triangles = np.loadtxt(folder / "triangles.txt", dtype=np.int64, delimiter=":", ndmin=2)
    return HandModel(names, parents, relatives, inverse_absolutes, positions, weights, triangles)


def read_hand(path, model_folder=None) -> HandData:
    """A hand instance, simple or complicated (told apart by the line count); the model defaults to `model/`
    beside the file, else to the `model/` of the folder above (the shipped instances keep one copy of the small
    model, which ADBench repeats in each `*_small/` folder)."""
    path = Path(path)
    if model_folder is None:
        beside, above = path.parent / "model", path.parent.parent / "model"
        model_folder = above if not beside.is_dir() and above.is_dir() else beside
    rows = [r for r in _lines(path) if r]
    n, n_theta = _header(path, rows, 2, "N 26")
    if n_theta != HAND_THETA:
        raise FormatError(f"{path}: the hand model has {HAND_THETA} pose parameters, the header says {n_theta}")
    if len(rows) == 1 + n + HAND_THETA:
        complicated = False
    elif len(rows) == 1 + 2 * n + HAND_THETA:
        complicated = True
    else:
        raise FormatError(f"{path}: expected {1 + n + HAND_THETA} lines (simple) or {1 + 2 * n + HAND_THETA} "
                          f"(complicated) for N = {n}, found {len(rows)}")
    body = _take(path, rows, 1, n, 4, "correspondence x y z")
    correspondences = body[:, 0].astype(np.int64)
    us = _take(path, rows, 1 + n, n, 2, "u1 u2") if complicated else None
    theta = _take(path, rows, 1 + n * (1 + complicated), HAND_THETA, 1, "theta")[:, 0]
    model = read_hand_model(model_folder or path.parent / "model")
    limit = len(model.triangles) if complicated else len(model.base_positions)
    if correspondences.min() < 0 or correspondences.max() >= limit:
        raise FormatError(f"{path}: correspondences must index the model's {limit} "
                          f"{'triangles' if complicated else 'vertices'}")
    return HandData(model, correspondences, body[:, 1:], theta, us)


def read_lstm(path, max_chars: int | None = None) -> LSTMData:
    """An LSTM instance; max_chars keeps only the first characters of the sequence (for quick runs)."""
    rows = [r for r in _lines(path) if r]
    layers, chars, bits = _header(path, rows, 3, "l c b")
    main = _take(path, rows, 1, 2 * layers, 4 * bits, "main parameters")
    extra = _take(path, rows, 1 + 2 * layers, 3, bits, "extra parameters")
    state = _take(path, rows, 4 + 2 * layers, 2 * layers, bits, "state")
    sequence = _take(path, rows, 4 + 4 * layers, chars, bits, "sequence")
    if max_chars is not None:
        if max_chars < 2:
            raise ValueError("max_chars must be at least 2 (the loss predicts each character from the previous)")
        sequence = sequence[:max_chars]
    return LSTMData(main, extra, state, sequence)


# --- where the data live, and which instances each size runs ------------------------------------------------------




def data_root(explicit=None, needed=()) -> Path:
    """The ADBench data folder: `explicit` (--data), else $ADBENCH_DATA, else the instances shipped in
    benchmarks/adbench/instances. Raises FileNotFoundError, saying where to get them, when a folder lacks one
    of the `needed` instances."""
    if explicit:
        root, origin = Path(explicit), "--data"
    elif os.environ.get("ADBENCH_DATA"):
        root, origin = Path(os.environ["ADBENCH_DATA"]), "$ADBENCH_DATA"
    else:
        root, origin = SHIPPED, "shipped"
    if not any((root / problem).is_dir() for problem in ("gmm", "ba", "hand", "lstm")):
        raise FileNotFoundError(f"ADBench data not found in {root} ({origin}): expected ADBench's data/ layout "
                                "(gmm/, ba/, hand/, lstm/)")
    missing = [instance.path for instance in needed if not (root / instance.path).is_file()]
    if missing:
        where = FULL_DATA_HINT if origin == "shipped" else f"from {origin}"
        raise FileNotFoundError(f"ADBench instances missing in {root}: {', '.join(missing[:4])}"
                                f"{' ...' if len(missing) > 4 else ''}; {where}")
    return root


@dataclass(frozen=True)
class Instance:
    problem: str          # gmm, ba, hand-simple, hand-complicated, lstm
    name: str             # e.g. 1k/gmm_d10_K5, ba1_n49_m7776_p31843, small/hand1_t26_c100, lstm_l2_c1024
    path: str             # relative to the data root
    options: dict = field(default_factory=dict)  # extra reader arguments

    def load(self, root: Path):
        full = root / self.path
        if self.problem == "gmm":
            return read_gmm(full, **self.options)
        if self.problem == "ba":
            return read_ba(full)
        if self.problem.startswith("hand"):
            return read_hand(full, **self.options)
        return read_lstm(full, **self.options)


PROBLEMS = ("gmm", "ba", "hand", "lstm")
SIZES = ("tiny", "small", "medium")


def _gmm(*names):
    return [Instance("gmm", f"1k/{n}", f"gmm/1k/{n}.txt") for n in names]


def _ba(*names):
    return [Instance("ba", n, f"ba/{n}.txt") for n in names]


def _hand(folder, *names):
    kind = "hand-complicated" if folder.startswith("complicated") else "hand-simple"
    return [Instance(kind, f"{folder}/{n}", f"hand/{folder}/{n}.txt") for n in names]


def _lstm(*names, max_chars=None):
    label = (lambda n: f"{n}[:{max_chars}]") if max_chars else (lambda n: n)
    options = {"max_chars": max_chars} if max_chars else {}
    return [Instance("lstm", label(n), f"lstm/{n}.txt", options) for n in names]


CATALOGUE = {
    "tiny": {
        "gmm": _gmm("gmm_d2_K5"),
        "ba": [Instance("ba", "test (n2 m10 p10)", "ba/test.txt")],
        "hand": [Instance("hand-simple", "test (N2)", "hand/test.txt"),
                 Instance("hand-complicated", "hand_complicated (N2)", "hand/hand_complicated.txt")],
        "lstm": _lstm("lstm_l2_c1024", max_chars=16),
    },
    "small": {
        "gmm": _gmm("gmm_d2_K5", "gmm_d10_K5", "gmm_d10_K25", "gmm_d20_K10"),
        "ba": _ba("ba1_n49_m7776_p31843", "ba2_n21_m11315_p36455"),
        "hand": _hand("simple_small", "hand1_t26_c100", "hand4_t26_c400")
        + _hand("complicated_small", "hand1_t26_c100", "hand4_t26_c400"),
        "lstm": _lstm("lstm_l2_c1024", max_chars=128) + _lstm("lstm_l2_c1024"),
    },
    "medium": {
        "gmm": _gmm("gmm_d10_K50", "gmm_d20_K50", "gmm_d32_K50", "gmm_d64_K25"),
        "ba": _ba("ba3_n161_m48126_p182072", "ba5_n257_m65132_p225911"),
        "hand": _hand("simple_big", "hand1_t26_c100", "hand5_t26_c800")
        + _hand("complicated_big", "hand1_t26_c100", "hand5_t26_c800"),
        "lstm": _lstm("lstm_l2_c4096", "lstm_l4_c1024"),
    },
}


def catalogue(problems, size: str) -> list[Instance]:
    """The instances of `size` for the given problems (gmm, ba, hand, lstm), in a fixed order."""
    if size not in CATALOGUE:
        raise ValueError(f"unknown size {size!r}; choose one of {', '.join(SIZES)}")
    chosen = []
    for problem in problems:
        if problem not in PROBLEMS:
            raise ValueError(f"unknown problem {problem!r}; choose from {', '.join(PROBLEMS)}")
        chosen.extend(CATALOGUE[size][problem])
    return chosen
