"""autograd.test_util on adarray: check_grads (adarray.testing.check_grads with autograd's argnum
convention), combo_check, check_equivalent, scalar_close."""
import os
from itertools import product

import numpy as onp

from adarray.core.pytree import flatten
from adarray.testing import check_grads as _check_grads

# For triage only (never set in CI): skip the checks at complex arguments, to see whether a test that
# fails on complex values passes on its real ones.
REAL_ONLY = os.environ.get("AUTOGRAD_COMPAT_REAL_ONLY") == "1"
CHECKS = {"run": 0, "skipped": 0}  # per test, reset by tests/autograd_suite/conftest.py

TOL = 1e-6   # autograd's absolute and relative tolerances for scalar_close and check_equivalent
RTOL = 1e-6


def scalar_close(a, b):
    """a and b agree to TOL absolutely or to RTOL relative to their mean magnitude."""
    gap = abs(a - b)
    return gap < TOL or gap < RTOL * abs(a + b)


def check_grads(fun, argnum=0, modes=("fwd", "rev"), order=2):
    """check_grads(fun, argnum, modes, order)(*args, **kwargs): fun's derivatives with respect to
    args[argnum] (a tuple of them for a list of argnums), the other arguments and keywords fixed."""
    def check(*args, **kwargs):
        several = isinstance(argnum, (list, tuple))
        nums = tuple(argnum) if several else (argnum,)

        def restricted(*chosen):
            full = list(args)
            for i, value in zip(nums, chosen):
                full[i] = value
            return fun(*full, **kwargs)

        restricted.__name__ = getattr(fun, "__name__", "fun")
        if REAL_ONLY and any(onp.iscomplexobj(leaf) for leaf in flatten(args)[0]):
            CHECKS["skipped"] += 1
            return
        CHECKS["run"] += 1
        _check_grads(restricted, tuple(args[i] for i in nums), order=order, modes=modes)

    return check


def combo_check(fun, *check_args, **check_kwargs):
    """combo_check(fun, argnum, ...)(values_0, values_1, ..., key=values, ...): check_grads(fun, argnum, ...)
    at every combination of one value per positional argument and one per keyword."""
    def run(*values_per_argument, **values_per_keyword):
        names = list(values_per_keyword)
        for arguments in product(*values_per_argument):
            for keyword_values in product(*values_per_keyword.values()):
                check_grads(fun, *check_args, **check_kwargs)(*arguments, **dict(zip(names, keyword_values)))

    return run


def check_equivalent(x, y):
    """Same structure, shapes and (to autograd's tolerance) values; for pytrees of arrays."""
    x_leaves, x_tree = flatten(x)
    y_leaves, y_tree = flatten(y)
    assert x_tree == y_tree, f"Structure mismatch:\nx: {x_tree}\ny: {y_tree}"
    for a, b in zip(x_leaves, y_leaves):
        a, b = onp.asarray(a), onp.asarray(b)
        assert a.shape == b.shape, f"Shape mismatch: {a.shape} vs {b.shape}"
        assert onp.allclose(a, b, rtol=RTOL, atol=TOL), f"Value mismatch:\nx: {a}\ny: {b}"
