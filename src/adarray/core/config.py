"""Settings: the choices that change how programs run, in one object, with the environment variables that set
them read here and nowhere else.

    >>> from adarray.core.config import config
    >>> config.backend                                    # "auto" unless $ADARRAY_BACKEND says otherwise
    'auto'
    >>> previous = config.update("kernel_backend", "numpy")
    >>> with config.override(backend="numpy"):          # for a block of code (tests)
    ...     pass
    >>> _ = config.update("kernel_backend", previous)

| setting | environment variable | values |
|---|---|---|
| backend | ADARRAY_BACKEND | auto (default), numpy, numba: staged programs (`ad.set_backend`) |
| kernel_backend | ADARRAY_KERNEL_BACKEND | auto (default), numpy, numba: scalar kernels (`set_kernel_backend`) |
| reversible_backend | ADARRAY_REVERSIBLE_BACKEND | auto (default), numpy, numba: reversible programs |
| sparse_method | ADARRAY_SPARSE_METHOD | index (default), reversible: sparse matrix operations |
| kernel_arity_numpy | ADARRAY_KERNEL_ARITY_NUMPY | 12 (default): most partials per element in mixed mode |
| kernel_arity_numba | ADARRAY_KERNEL_ARITY_NUMBA | 32 (default): the same, kernels compiled by Numba |
| numba_keep_memory | ADARRAY_NUMBA_KEEP_MEMORY | 0 (default), 1: keep freed memory in the process (glibc) |
| numba_parallel | ADARRAY_NUMBA_PARALLEL | 1 (default), 0: threads for large loops of compiled programs |
| cache_dir | ADARRAY_CACHE_DIR | the disk cache of compiled programs (default ~/.cache/adarray/kernels) |

The environment is read once, when adarray is imported; `update` and `override` change a setting later. The
setters of the public API (`ad.set_backend`, `set_kernel_backend`, `rv.set_reversible_backend`,
`sparse.set_method`) check what they need (an installed engine) and then update this object.
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from .errors import ArgumentError


@dataclass(frozen=True)
class Setting:
    name: str
    variable: str
    default: object
    choices: tuple | None = None  # the values allowed, or None for any (a path)
    flag: bool = False  # a boolean read from "0" / "1"
    count: bool = False  # an integer >= 0
    label: str = ""  # what errors call it

    def parse(self, text: str):
        if self.flag:
            if text not in ("0", "1"):
                raise ArgumentError(f"${self.variable} must be 0 or 1, got {text!r}")
            return text == "1"
        if self.count:
            if not text.isdigit():
                raise ArgumentError(f"${self.variable} must be a whole number, got {text!r}")
            return int(text)
        return self.check(text)

    def check(self, value):
        if self.flag:
            if not isinstance(value, bool):
                raise ArgumentError(f"the setting {self.name!r} is True or False, got {value!r}")
        elif self.count:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ArgumentError(f"the setting {self.name!r} is a whole number >= 0, got {value!r}")
        elif self.choices is not None and value not in self.choices:
            raise ArgumentError(f"{self.label or self.name} must be one of {', '.join(map(repr, self.choices))}, "
                                f"got {value!r}")
        return value


BACKENDS = ("auto", "numpy", "numba")
SETTINGS = (
    Setting("backend", "ADARRAY_BACKEND", "auto", BACKENDS, label="the backend"),
    Setting("kernel_backend", "ADARRAY_KERNEL_BACKEND", "auto", BACKENDS, label="the kernel backend"),
    Setting("reversible_backend", "ADARRAY_REVERSIBLE_BACKEND", "auto", BACKENDS, label="the reversible backend"),
    Setting("sparse_method", "ADARRAY_SPARSE_METHOD", "index", ("index", "reversible"), label="the sparse method"),
    # Above this many partials per element, reverse mode over a kernel's operations beats mixed mode.
    # Measured by `adarray bench mixed --section arity` (2^18 elements, prod_j tanh(x_j > 0.5 ? x_j : -x_j)):
    # interpreted, mixed mode's O(k^2) array passes lose from k = 13-15 on; compiled, it still won by 1.6-3x
    # at k = 32.
    Setting("kernel_arity_numpy", "ADARRAY_KERNEL_ARITY_NUMPY", 12, count=True),
    Setting("kernel_arity_numba", "ADARRAY_KERNEL_ARITY_NUMBA", 32, count=True),
    Setting("numba_keep_memory", "ADARRAY_NUMBA_KEEP_MEMORY", False, flag=True),
    Setting("numba_parallel", "ADARRAY_NUMBA_PARALLEL", True, flag=True),
    Setting("cache_dir", "ADARRAY_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "adarray", "kernels")),
)


class Config:
    """The current value of every setting (attributes named as in SETTINGS)."""

    def __init__(self, settings, environment):
        object.__setattr__(self, "_settings", {s.name: s for s in settings})
        values = {}
        for setting in settings:
            text = environment.get(setting.variable)
            values[setting.name] = setting.parse(text) if text else setting.default
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"adarray has no setting {name!r}") from None

    def __setattr__(self, name, value):
        raise AttributeError("settings change through config.update(name, value)")

    def update(self, name: str, value):
        """Set `name` to `value` (checked); returns the previous value."""
        if name not in self._settings:
            raise ArgumentError(f"adarray has no setting {name!r}; the settings are {', '.join(self._settings)}")
        previous = self._values[name]
        self._values[name] = self._settings[name].check(value)
        return previous

    @contextlib.contextmanager
    def override(self, **values):
        """Settings changed inside a `with` block only."""
        previous = {name: self.update(name, value) for name, value in values.items()}
        try:
            yield self
        finally:
            for name, value in previous.items():
                self.update(name, value)

    def key(self) -> tuple:
        """Every setting's value, hashable: part of the key of a cached program, so a changed setting is obeyed."""
        return tuple(self._values.values())

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{name}={value!r}" for name, value in self._values.items()) + ")"


config = Config(SETTINGS, os.environ)
