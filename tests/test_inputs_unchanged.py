"""Never write into what the user passed in, generated from the registry.

Every sampled case runs eagerly, through its jvp, vjp, second-order (jvp of the vjp) and vmap
programs, on read-only inputs (`flags.writeable = False`, so an in-place write raises) that are
compared with copies afterwards. Derivative inputs (tangents, cotangents) are read-only too.
"""
from __future__ import annotations

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.backends.numpy import compile_program
from adarray.core.primitive import REGISTRY
from adarray.core.types import is_float
from adarray.testing.registry import primitive_program, registry_cases, seed
from adarray.transforms.jvp import jvp_program
from adarray.transforms.vjp import vjp_program
from adarray.transforms.vmap import vmap_program

CASES = [pytest.param(name, args, params, id=case_id) for case_id, name, args, params in registry_cases()]


def _frozen(value):
    array = np.array(value, copy=True)
    array.flags.writeable = False
    return array


def _run_and_compare(program, values):
    frozen = [_frozen(v) for v in values]
    saved = [np.array(v, copy=True) for v in values]
    with np.errstate(all="ignore"):
        compile_program(program)(*frozen)
    for index, (after, before) in enumerate(zip(frozen, saved)):
        assert np.array_equal(after, before, equal_nan=True), f"input {index} was written into\n{program}"


@pytest.mark.parametrize("name, args, params", CASES)
def test_primitive_and_its_derivatives_leave_inputs_alone(name, args, params):
    rng = np.random.default_rng(seed(name, "read-only", repr(params), *[np.shape(a) for a in args]))
    frozen, saved = [_frozen(a) for a in args], [np.array(a, copy=True) for a in args]
    with np.errstate(all="ignore"):
        REGISTRY[name].bind(*frozen, **params)
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(frozen, saved)), f"eager {name} wrote its input"
    program = primitive_program(name, args, params)
    _run_and_compare(program, args)
    wrt = [is_float(a.dtype) for a in program.in_avals]
    if any(wrt):
        tangents = [rng.standard_normal(a.shape).astype(a.dtype) for a, w in zip(program.in_avals, wrt) if w]
        cotangents = [rng.standard_normal(a.shape).astype(a.dtype) if is_float(a.dtype) else np.zeros(a.shape, a.dtype)
                      for a in program.out_avals]
        _run_and_compare(jvp_program(program, wrt), list(args) + tangents)
        reverse = vjp_program(program, wrt)
        _run_and_compare(reverse, list(args) + cotangents)
        second = [is_float(a.dtype) for a in reverse.in_avals]
        more = [rng.standard_normal(a.shape).astype(a.dtype) for a, w in zip(reverse.in_avals, second) if w]
        _run_and_compare(jvp_program(reverse, second), list(args) + cotangents + more)
    batched, _ = vmap_program(program, [True] * len(args), 2)
    _run_and_compare(batched, [np.stack([a, a]) for a in args])


def test_the_reported_cases():
    """jvp of cumprod wrote the running product into its input (a view, for axes of length <= 2)."""
    x = _frozen([3.0, 5.0])
    ad.jvp(anp.cumprod, (x,), (_frozen([1.0, 1.0]),))
    ad.hessian(lambda v: anp.prod(v))(x)
    assert x.tolist() == [3.0, 5.0]
    single = _frozen([2.0])
    assert ad.grad(lambda v: anp.sum(anp.cumprod(v)))(single).tolist() == [1.0]


@pytest.mark.parametrize("transform", [
    lambda f, x: ad.grad(f)(x), lambda f, x: ad.jit(f)(x), lambda f, x: ad.vmap(f)(x[None]),
    lambda f, x: ad.jacfwd(f)(x), lambda f, x: ad.jacrev(f)(x), lambda f, x: ad.hessian(f)(x),
    lambda f, x: ad.vjp(f, x)[1](1.0), lambda f, x: ad.jvp(f, (x,), (np.ones_like(x),)),
], ids=["grad", "jit", "vmap", "jacfwd", "jacrev", "hessian", "vjp", "jvp"])
def test_every_transformation_leaves_read_only_inputs_alone(transform):
    def loss(v):
        prefix = anp.cumprod(v) + anp.cumsum(v[::-1])
        return anp.sum(anp.sort(prefix) * anp.prod(v)) + anp.linalg.norm(v) + anp.max(v.at[0].multiply(2.0))

    x = _frozen([3.0, 0.0, 5.0, 1.5])
    transform(loss, x)
    assert x.tolist() == [3.0, 0.0, 5.0, 1.5]
