"""Numerical oracles for derivative rules and passes, with the one tolerance policy.

Every check computes in float64 (complex128 for complex values) and looks only at
floating-point inputs and outputs, real or complex (integer and boolean values are
never differentiated). A failure raises AssertionError whose message holds the text
of the programs involved.

Complex values follow JAX's conventions: random directions are complex (both the
real and the imaginary directions at once), and the adjoint test pairs values by
<u, v> = Re(sum u * v), under which reverse mode is the linear transpose of forward
mode (no conjugation).

    check_jvp           J v from the jvp program   ~  (f(x + h v) - f(x - h v)) / 2h
    check_vjp           <u, J v> (jvp program)     ==  <J^T u, v> (vjp program)
    check_second_order  both checks again on the jvp and the vjp programs
    check_passes        verify, print/parse round trip, simplify keeps the values
    check_vmap          the batched program == a Python loop over slices, then stack
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import adarray.backends.numpy  # noqa: F401  (the implementations of every primitive)
import adarray.primitives  # noqa: F401  (registers every primitive)
from adarray.backends.numpy import compile_program
from adarray.core.ir import Program
from adarray.core.parser import parse_program
from adarray.core.printer import format_program
from adarray.core.types import is_complex, is_float, real_dtype
from adarray.core.verify import verify
from adarray.passes import simplify
from adarray.transforms.jvp import jvp_program
from adarray.transforms.vjp import vjp_program
from adarray.transforms.vmap import vmap_program

from .differences import numerical_gradient, numerical_jvp, wide

__all__ = [
    "Tolerance",
    "check_jvp",
    "check_passes",
    "check_second_order",
    "check_vjp",
    "check_vmap",
    "numerical_gradient",
    "numerical_jvp",
    "program_tolerance",
    "tolerances",
]


@dataclass(frozen=True)
class Tolerance:
    """How closely a derivative must match its oracle at a given precision.

    eps:        central-difference step h (about the cube root of the machine epsilon,
                which balances truncation O(h^2) against rounding O(ulp / h));
    rtol, atol: derivative vs central differences, |d - fd| <= atol + rtol |fd|;
    exact:      relative tolerance of identities that hold up to rounding only
                (the adjoint test, a pass that must not change values).
    """

    eps: float
    rtol: float
    atol: float
    exact: float


_TOLERANCES = {
    np.dtype(np.float64): Tolerance(eps=1e-6, rtol=1e-5, atol=1e-7, exact=1e-10),
    np.dtype(np.float32): Tolerance(eps=1e-3, rtol=1e-2, atol=1e-3, exact=1e-4),
    np.dtype(np.float16): Tolerance(eps=3e-2, rtol=1e-1, atol=5e-2, exact=1e-2),
}


def tolerances(dtype) -> Tolerance:
    """The tolerance policy of one dtype (complex dtypes get their real parts'; non-float dtypes float64's)."""
    dtype = real_dtype(dtype)
    return _TOLERANCES.get(dtype, _TOLERANCES[np.dtype(np.float64)])


def program_tolerance(*programs: Program) -> Tolerance:
    """The loosest tolerance among the float types a program computes in (inputs and equations)."""
    avals = []
    for program in programs:
        avals += list(program.in_avals) + list(program.out_avals)
        avals += [v.aval for eqn in program.eqns for v in eqn.outputs]
    floats = [real_dtype(a.dtype) for a in avals if is_float(a.dtype)]
    if not floats:
        return tolerances(np.float64)
    return tolerances(min(floats, key=lambda d: d.itemsize))


# --- helpers -------------------------------------------------------------------------------------


def _text(*programs: Program) -> str:
    return "\n".join(format_program(p, full=True) for p in programs)


def _fail(message: str, *programs: Program):
    raise AssertionError(f"{message}\n{_text(*programs)}")


def _float_flags(avals) -> list[bool]:
    return [is_float(a.dtype) for a in avals]


def random_normal(rng, shape, dtype):
    """Standard-normal values of a float dtype; for a complex dtype, normal real and imaginary parts."""
    if is_complex(dtype):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _random_like(avals, rng, only_floats=True):
    """Standard-normal arrays for float avals; zeros (or None if only_floats) for the others."""
    values = []
    for aval in avals:
        if is_float(aval.dtype):
            values.append(random_normal(rng, aval.shape, aval.dtype))
        else:
            values.append(None if only_floats else np.zeros(aval.shape, aval.dtype))
    return values


def pairing(x, y) -> float:
    """Re(sum x * y): the real pairing under which reverse mode is the transpose of forward mode
    (JAX's convention; for real values the dot product)."""
    return float(np.real(np.sum(wide(x) * wide(y))))


def _dot(xs, ys) -> float:
    """sum_i <x_i, y_i> over the pairs where both are given (the real pairing)."""
    return float(sum(pairing(x, y) for x, y in zip(xs, ys) if x is not None and y is not None))


def _norm(xs) -> float:
    return float(np.sqrt(sum(np.sum(np.abs(wide(x)) ** 2) for x in xs if x is not None)))


def _run(program: Program, args):
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in compile_program(program)(*args)]


def _check_close(actual, expected, rtol, atol, what, *programs):
    actual, expected = wide(actual), wide(expected)
    if actual.shape != expected.shape:
        _fail(f"{what}: shape {actual.shape}, expected {expected.shape}", *programs)
    if not np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
        error = np.abs(actual - expected)
        worst = np.unravel_index(np.nanargmax(np.where(np.isnan(error), np.inf, error)), error.shape)
        _fail(
            f"{what}: mismatch (rtol={rtol:g}, atol={atol:g}); worst at {tuple(map(int, worst))}: "
            f"got {actual[worst]!r}, expected {expected[worst]!r}\n"
            f"got:\n{actual}\nexpected:\n{expected}",
            *programs,
        )


# --- the oracles ---------------------------------------------------------------------------------


def check_jvp(program: Program, args, rng) -> None:
    """J v from simplify(jvp_program) against central differences, for a random v on the float inputs.

    Also checks that the jvp program's primal outputs equal the program's outputs.
    """
    wrt = _float_flags(program.in_avals)
    if not any(wrt):
        return
    tol = program_tolerance(program)
    derived = simplify(jvp_program(program, wrt))
    tangents = _random_like(program.in_avals, rng)
    outputs = _run(derived, list(args) + [t for t in tangents if t is not None])
    n = len(program.outputs)
    primals, jvps = outputs[:n], outputs[n:]
    expected = _run(program, args)
    for i, (got, want) in enumerate(zip(primals, expected)):
        _check_close(got, want, tol.exact, tol.exact, f"jvp: primal output {i}", program, derived)
    numerical = numerical_jvp(compile_program(program), args, tangents, tol.eps)
    for i, (got, want) in enumerate(zip(jvps, numerical)):
        if want is not None:
            _check_close(got, want, tol.rtol, tol.atol,
                         f"jvp: tangent of output {i} vs central differences (h={tol.eps:g})",
                         program, derived)


def check_vjp(program: Program, args, rng) -> None:
    """The adjoint test <u, J v> == <J^T u, v> for random u (float outputs) and v (float inputs).

    J v comes from simplify(jvp_program), J^T u from simplify(vjp_program).
    """
    wrt = _float_flags(program.in_avals)
    if not any(wrt) or not any(_float_flags(program.out_avals)):
        return
    tol = program_tolerance(program)
    forward = simplify(jvp_program(program, wrt))
    reverse = simplify(vjp_program(program, wrt))
    v = _random_like(program.in_avals, rng)
    u = _random_like(program.out_avals, rng, only_floats=False)
    n_out = len(program.outputs)
    jv = _run(forward, list(args) + [t for t in v if t is not None])[n_out:]
    jtu = _run(reverse, list(args) + u)[n_out:]
    floats_out = [x if is_float(a.dtype) else None for x, a in zip(u, program.out_avals)]
    jv = [x if is_float(a.dtype) else None for x, a in zip(jv, program.out_avals)]
    v_flagged = [t for t in v if t is not None]
    for i, (got, t) in enumerate(zip(jtu, v_flagged)):
        if np.shape(got) != np.shape(t):
            _fail(f"vjp: cotangent {i} has shape {np.shape(got)}, its input {np.shape(t)}", program, reverse)
    left, right = _dot(floats_out, jv), _dot(jtu, v_flagged)
    scale = _norm(floats_out) * _norm(jv) + _norm(jtu) * _norm(v_flagged)
    if not np.isfinite(left) or not np.isfinite(right) or abs(left - right) > tol.exact * scale + 1e-300:
        _fail(
            f"vjp: adjoint test failed: <u, J v> = {left!r} (jvp program) but <J^T u, v> = {right!r} "
            f"(vjp program); difference {abs(left - right):g}, allowed {tol.exact * scale:g}",
            program, forward, reverse,
        )


def check_second_order(program: Program, args, rng, *, finite_differences: bool = True) -> None:
    """The rules are differentiable: check_jvp and check_vjp on the jvp program and the vjp program.

    The jvp program is taken at (x, random v), the vjp program at (x, random u).
    `finite_differences=False` runs only the adjoint tests (for primitives whose
    derivative is defined rather than computed, such as stop_gradient).
    """
    wrt = _float_flags(program.in_avals)
    if not any(wrt):
        return
    tangents = [t for t in _random_like(program.in_avals, rng) if t is not None]
    derivatives = [(jvp_program(program, wrt), list(args) + tangents)]
    if any(_float_flags(program.out_avals)):
        u = _random_like(program.out_avals, rng, only_floats=False)
        derivatives.append((vjp_program(program, wrt), list(args) + u))
    for derived, derived_args in derivatives:
        try:
            if finite_differences:
                check_jvp(derived, derived_args, rng)
            check_vjp(derived, derived_args, rng)
        except AssertionError as error:
            raise AssertionError(f"second order, of the program\n{_text(program)}\n{error}") from None


def _sample_args(program: Program):
    rng = np.random.default_rng(0)
    return [random_normal(rng, a.shape, a.dtype) if is_float(a.dtype) else np.zeros(a.shape, a.dtype)
            for a in program.in_avals]


def check_passes(program: Program, args=None) -> None:
    """verify(program); parse(format(program, full=True)) prints the same text and computes the same
    values; simplify(program) verifies and computes the same values.

    Values are compared on `args` (default: standard normal floats, zero integers, False booleans).
    """
    try:
        verify(program)
    except AssertionError as error:
        _fail(f"verify failed: {error}", program)
    text = format_program(program, full=True)
    try:
        parsed = parse_program(text)
    except Exception as error:
        _fail(f"the printed program does not parse: {type(error).__name__}: {error}", program)
    again = format_program(parsed, full=True)
    if again != text:
        raise AssertionError(f"print/parse round trip changed the text:\n{text}\n--- became ---\n{again}")
    try:
        verify(parsed)
    except AssertionError as error:
        _fail(f"the parsed program does not verify: {error}", parsed)
    simplified = simplify(program)
    try:
        verify(simplified)
    except AssertionError as error:
        _fail(f"simplify gave a program that does not verify: {error}", program, simplified)
    if args is None:
        args = _sample_args(program)
    tol = program_tolerance(program)
    expected = _run(program, args)
    for label, other in (("parsed", parsed), ("simplified", simplified)):
        values = _run(other, args)
        if len(values) != len(expected):
            _fail(f"{label}: {len(values)} outputs, expected {len(expected)}", program, other)
        for i, (got, want) in enumerate(zip(values, expected)):
            if np.asarray(got).dtype != np.asarray(want).dtype:
                _fail(f"{label}: output {i} has dtype {np.asarray(got).dtype}, expected "
                      f"{np.asarray(want).dtype}", program, other)
            _check_close(got, want, tol.exact, tol.exact, f"{label}: output {i}", program, other)


def check_vmap(program: Program, args, rng, size: int = 3) -> None:
    """vmap_program == a Python loop over slices, then stack.

    Tried with every input batched and with each input batched alone. Float inputs
    get a different random perturbation per slice; integer and boolean inputs are
    repeated (their values, e.g. indices, stay valid).
    """
    n = len(program.inputs)
    patterns = [[True] * n] + ([[i == j for j in range(n)] for i in range(n)] if n > 1 else [])
    for batched in patterns:
        stacked = []
        for arg, flag in zip(args, batched):
            arg = np.asarray(arg)
            if not flag:
                stacked.append(arg)
            elif is_float(arg.dtype):
                stacked.append(np.stack([arg + 0.1 * k * random_normal(rng, arg.shape, arg.dtype)
                                         for k in range(size)]))
            else:
                stacked.append(np.stack([arg] * size))
        batched_program, out_batched = vmap_program(program, batched, size)
        verify(batched_program)
        actual = _run(batched_program, stacked)
        slices = [_run(program, [a[k] if f else a for a, f in zip(stacked, batched)]) for k in range(size)]
        tolerance = program_tolerance(program)
        for index, (value, flag) in enumerate(zip(actual, out_batched)):
            expected = np.stack([s[index] for s in slices]) if flag else slices[0][index]
            _check_close(value, expected, tolerance.exact, tolerance.exact,
                         f"vmap output {index} (batched inputs {batched})", program, batched_program)
