"""User-supplied derivatives (custom_jvp, custom_vjp) and rematerialisation (checkpoint).

Each wraps the traced function in one primitive whose params hold the programs:
  custom_jvp_call[fun, rule]     jvp: the user's rule; vjp: the transpose of the rule in its
                                 tangents (a vjp of the rule's program, which is linear in them)
  custom_vjp_call[fun, fwd, bwd] vjp: the user's forward (outputs and residuals) and backward;
                                 jvp: the transpose of the backward rule in its cotangents
  checkpoint_call[fun]           vjp: stores only the inputs and recomputes `fun` in the backward sweep

As in JAX, a custom function that is not differentiated runs only the function: called on arrays
it is the plain function, and traced (jit, vmap, make_ir) its rules are held as `LazyProgram`s,
traced the first time a transformation needs them. Under grad, jvp and the Jacobians the call's
values are known (tracing/concrete.py), so the function and its rules may use Python control flow
on them (`if x > 0:`); the guards this records go to the calling trace. Arguments named in
`nondiff_argnums` are Python values (functions, numbers, shapes), passed to the function and,
first, to the rules as they are.
"""
from __future__ import annotations

import contextlib
import functools
import inspect

import numpy as np

from ..core.errors import ArgumentError, ShapeError
from ..core.fingerprint import fingerprint
from ..core.ir import Program
from ..core.primitive import Primitive, Zero, is_zero
from ..core.printer import format_program
from ..core.pytree import flatten, leaf_paths, unflatten
from ..core.types import is_float
from ..passes import simplify
from ..passes.inline_calls import register_call
from ..primitives import elementwise as ew
from ..primitives.rules import batch_all, broadcast_batch
from ..primitives.taylor import FROM_JVP
from ..tracing import Tracer, current_trace, eval_program, record_guard, trace_guarded, trace_program
from ..transforms import sparsity, sparsity_nested
from ..transforms.jet import grouped_jet, grouped_series, grouped_values, has_series
from ..transforms.jvp import jvp_program
from ..transforms.vjp import vjp_program
from ..transforms.vmap import vmap_program
from .arguments import operand_avals
from .common import aval_of, check_same_structure, float_flags, sample_equation, unify_closures


class LazyProgram:
    """A program param traced the first time a transformation asks for it (`.program`): the rules of
    a custom function, which must not run unless it is differentiated. Attribute reads other than its
    own (inputs, eqns, outputs, in_avals, out_avals) go to the program, so code that reads a program
    param reads this one too; it prints as its program once traced.

    >>> rule = LazyProgram(lambda: trace_program(lambda x: x, [aval])[0], "identity")  # doctest: +SKIP
    """

    def __init__(self, make, name: str):
        self._make, self._program, self.name = make, None, name

    @property
    def program(self) -> Program:
        if self._program is None:
            self._program, self._make = self._make(), None
        return self._program

    def then(self, transform, name: str | None = None) -> LazyProgram:
        """The lazy program transform(this program)."""
        return LazyProgram(lambda: transform(self.program), name or self.name)

    def __getattr__(self, attribute):
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(self.program, attribute)

    def ir_text(self, indent: int, full: bool) -> str:
        """The printer's text: the program once traced, before a placeholder (printing for a reader traces
        nothing); the full text, which must parse back, traces it."""
        if self._program is None and not full:
            return f"<{self.name}, traced when differentiated>"
        return format_program(self.program, indent, full)

    def __repr__(self) -> str:
        return f"LazyProgram({self.name!r}, traced={self._program is not None})"

    def fingerprint_key(self):
        """Its program's fingerprint once traced; before, a key equal to no other (tracing it here would run
        the rule's Python code, which must run only when the function is differentiated)."""
        if self._program is None:
            return ("lazy", object())
        return ("program", fingerprint(self._program))


def program_of(param) -> Program:
    """The Program of a program param (traced now if it is a LazyProgram)."""
    return param.program if isinstance(param, LazyProgram) else param


def _call_abstract_eval(*avals, fun, **params):
    if tuple(avals) != fun.in_avals:
        raise ShapeError(f"custom call: operands {tuple(avals)}, the function takes {fun.in_avals}")
    return list(fun.out_avals)


def _seeds(values, avals):
    return [np.zeros(a.shape, a.dtype) if is_zero(v) else v for v, a in zip(values, avals)]


def _batch_programs(primitive, names):
    """Batching: vmap every program param with all its inputs batched (results all batched); a lazy
    one stays lazy."""
    def batch(args, batched, size, **params):
        everything = batch_all(args, batched, size)
        new = dict(params)
        for name in names:
            new[name] = _batched_param(params[name], size)
        outs = primitive.bind(*everything, **new)
        return outs, [True] * len(outs)

    return batch


def _batched_param(param, size):
    def batched(program):
        result, out_flags = vmap_program(program, [True] * len(program.inputs), size)
        return _all_batched(result, out_flags, size)

    return param.then(batched, f"batched {param.name}") if isinstance(param, LazyProgram) else batched(param)


def _all_batched(program, out_flags, size):
    if all(out_flags):
        return program
    result, _, _ = trace_program(
        lambda *a: [o if f else broadcast_batch(o, size) for o, f in zip(eval_program(program, list(a)), out_flags)],
        list(program.in_avals), "batched")
    return result


# --- what custom_jvp and custom_vjp share ---------------------------------------------------------

class _CustomRules:
    """The wrapped function, its nondiff arguments and the guard below.

    A rule that calls the decorated function itself, as JAX documents (`fwd` returning
    `(f(x), residuals)`), would trace the rules again while they are traced, without end. While the
    rules are traced, a call of the decorated function therefore evaluates the plain function, which
    is what JAX computes there too. (Its derivative inside a rule is then the plain function's, which
    matters only when a rule is itself differentiated, i.e. for higher orders.)
    """

    kind = "custom rule"

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        _require_callable(self.kind, fun, "the function")
        self.fun = fun
        self._tracing_rules = 0  # > 0 while this function's rules are traced
        functools.update_wrapper(self, fun)
        try:
            self._signature = inspect.signature(fun)
        except (TypeError, ValueError):  # a builtin without a signature: positional arguments only
            self._signature = None
        self.nondiff_argnums = _nondiff_positions(self, nondiff_argnums, nondiff_argnames)

    @contextlib.contextmanager
    def _rule_tracing(self):
        self._tracing_rules += 1
        try:
            yield
        finally:
            self._tracing_rules -= 1

    def _positional(self, args, kwargs) -> tuple:
        """The call's arguments by position, defaults filled in (JAX resolves keywords the same way)."""
        if self._signature is None:
            if kwargs:
                raise ArgumentError(f"{self.kind} '{self.__name__}': keyword arguments need a function whose "
                                    "signature inspect can read; pass them by position")
            return tuple(args)
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as error:
            raise ArgumentError(f"{self.kind} '{self.__name__}': {error}") from None
        bound.apply_defaults()
        if bound.kwargs:
            raise ArgumentError(f"{self.kind} '{self.__name__}': keyword-only arguments ({', '.join(bound.kwargs)}) "
                                "cannot be passed to the rules by position; make them positional, or close over them")
        return tuple(bound.args)


def _nondiff_positions(custom, argnums, argnames) -> tuple[int, ...]:
    where = f"{custom.kind} '{custom.__name__}'"
    argnums = (argnums,) if isinstance(argnums, (int, np.integer)) else tuple(argnums)
    if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) and i >= 0 for i in argnums):
        raise ArgumentError(f"{where}: nondiff_argnums must be non-negative integers, got {argnums!r}")
    argnames = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    if argnames:
        names = [] if custom._signature is None else list(custom._signature.parameters)
        for name in argnames:
            if name not in names:
                raise ArgumentError(f"{where}: nondiff_argnames names {name!r}, which is not a parameter of the "
                                    f"function (its parameters: {', '.join(names)})")
            argnums += (names.index(name),)
    positions = tuple(dict.fromkeys(int(i) for i in argnums))
    return positions


def _holds_tracer(tree) -> bool:
    return any(isinstance(leaf, Tracer) for leaf in flatten(tree)[0])


def _known_values(leaves):
    """The call's values as trace sources, when the calling trace knows them (grad, jvp, ...), else None."""
    trace = current_trace()
    return list(leaves) if trace is not None and trace.knows_values else None


def _trace_at_call(fn, avals, sources, name, replay_inputs):
    """Trace fn at the call. With `sources`, Python control flow on the call's values works in fn; the
    guards it records are replayed in the calling trace (on `replay_inputs`, one per aval), so that a
    cached program of the caller is traced again when one of fn's branches changes."""
    program, out_tree, closure, record = trace_guarded(fn, avals, sources, name)
    if record.guards is not None:
        guarded = eval_program(record.guards, list(replay_inputs) + list(closure))
        for value, (conversion, result) in zip(guarded, record.checks):
            if isinstance(value, Tracer):
                record_guard(value, conversion, result)
    return program, out_tree, closure


class _Call:
    """One traced call of a custom function: nondiff arguments kept as Python values, the leaves of
    the others (the primitive's operands) with their avals and, under grad and the like, values."""

    def __init__(self, custom, args):
        self.custom, self.name, self.args = custom, custom.__name__, args
        where = f"{custom.kind} '{self.name}'"
        for i in custom.nondiff_argnums:
            if i >= len(args):
                raise ArgumentError(f"{where}: nondiff_argnums names argument {i}, but the call has {len(args)}")
            if _holds_tracer(args[i]):
                raise ArgumentError(
                    f"{where}: argument {i} is in nondiff_argnums but holds a traced value; nondiff arguments are "
                    "for Python values (functions, numbers, shapes). Pass arrays as ordinary arguments (a jvp rule "
                    "can ignore their tangents, bwd can return None for them)")
        self.positions = [i for i in range(len(args)) if i not in custom.nondiff_argnums]
        diff_args = [args[i] for i in self.positions]
        self.avals = []
        for i, arg in zip(self.positions, diff_args):
            if any(callable(leaf) and not isinstance(leaf, Tracer) for leaf in flatten(arg)[0]):
                raise ArgumentError(f"{where}: argument {i} is a function; name it in nondiff_argnums (as JAX "
                                    "does), e.g. custom_jvp(f, nondiff_argnums=(0,))")
            self.avals += operand_avals(where, f"argument {i}", arg)
        self.leaves, self.tree = flatten(diff_args)
        self.sources = _known_values(self.leaves)

    def diff_args(self, leaves) -> list:
        return unflatten(self.tree, list(leaves))

    def full_args(self, leaves) -> list:
        """All the arguments, the differentiable ones from `leaves`."""
        it = iter(self.diff_args(leaves))
        return [self.args[i] if i in self.custom.nondiff_argnums else next(it) for i in range(len(self.args))]

    def nondiff_values(self) -> list:
        return [self.args[i] for i in self.custom.nondiff_argnums]

    def trace_function(self):
        """(fun program, out_tree) of the plain function at this call."""
        def function(*leaves):
            return self.custom.fun(*self.full_args(leaves))

        fun, out_tree, closure = _trace_at_call(function, self.avals, self.sources, self.name, self.leaves)
        _refuse_closure(self.custom, closure)
        return simplify(fun), out_tree


def _refuse_closure(custom, closure) -> None:
    if closure:
        raise ArgumentError(f"{custom.kind} '{custom.__name__}': close over constants only, pass traced values as "
                            "arguments")


def _require_callable(where: str, value, what: str) -> None:
    if not callable(value):
        raise ArgumentError(f"{where}: {what} must be a function, got {_describe(value)}")


def _describe(value) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return f"a {type(value).__name__}"

def _check_cotangents(what: str, name: str, part: str, value, tree, avals) -> list:
    """The leaves of a rule's derivative output `value`, which must have the structure `tree` and,
    at every float leaf, the shape and dtype of `avals` (None stands for zeros). Python numbers
    take the dtype of their leaf. Integer leaves have no derivative: anything is accepted there."""
    if value is None:
        return [np.zeros(a.shape, a.dtype) for a in avals]
    leaves, got = flatten(value)
    if got != tree:
        raise ShapeError(f"{what} '{name}': {part} has the structure {got}, expected {tree} (the structure of the "
                         "primal values)")
    checked = []
    for path, leaf, aval in zip(leaf_paths(tree), leaves, avals):
        if not is_float(aval.dtype):
            checked.append(np.zeros(aval.shape, aval.dtype))
            continue
        if isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
            leaf = np.asarray(leaf, aval.dtype)
        leaf_aval = aval_of(leaf)
        if leaf_aval != aval:
            where = "" if path == "(the value)" else f" at {path}"
            raise ShapeError(f"{what} '{name}': {part}{where} is {leaf_aval}, but the primal is {aval}; a derivative "
                             "has the shape and dtype of its primal")
        checked.append(leaf)
    return checked


# --- custom_jvp ----------------------------------------------------------------------------------

custom_jvp_call_p = register_call(Primitive("custom_jvp_call", _call_abstract_eval, multiple_results=True))


def _custom_jvp_jvp(tangents, primals, outputs, *, fun, rule):
    flags = float_flags(fun.in_avals)
    tangent_values = _seeds([t for t, f in zip(tangents, flags) if f], [a for a, f in zip(fun.in_avals, flags) if f])
    results = eval_program(program_of(rule), list(primals) + tangent_values)
    n = len(fun.outputs)
    return [t if is_float(a.dtype) else Zero(a) for t, a in zip(results[n:], fun.out_avals)]


def _custom_jvp_vjp(cotangents, primals, outputs, needs, *, fun, rule):
    flags = float_flags(fun.in_avals)
    n_in, n = len(fun.inputs), len(fun.outputs)
    # The rule is linear in its tangents: the vjp of its tangent outputs w.r.t. its tangent inputs is J^T.
    wrt = [False] * n_in + [True] * sum(flags)
    derived = vjp_program(program_of(rule), wrt)
    zeros = [np.zeros(a.shape, a.dtype) for a, f in zip(fun.in_avals, flags) if f]
    seeds = [np.zeros(a.shape, a.dtype) for a in fun.out_avals] + _seeds(cotangents, fun.out_avals)
    results = iter(eval_program(derived, list(primals) + zeros + seeds)[2 * n:])
    return [next(results) if f else None for f in flags]


custom_jvp_call_p.jvp, custom_jvp_call_p.vjp = _custom_jvp_jvp, _custom_jvp_vjp
custom_jvp_call_p.batch = _batch_programs(custom_jvp_call_p, ("fun", "rule"))


class custom_jvp(_CustomRules):  # noqa: N801 - named like the decorator users know from JAX
    """A function with a user-supplied forward-mode rule (reverse mode follows from it).

    The rule takes (primals, tangents), tuples with one entry per argument, and returns (primal
    output, tangent output); with nondiff_argnums those arguments come first, as they are, and are
    left out of primals and tangents. It runs only when the function is differentiated.

    >>> @custom_jvp
    ... def safe_log(x): return anp.log(x)
    >>> @safe_log.defjvp
    ... def _(primals, tangents): (x,), (t,) = primals, tangents; return safe_log(x), t / x
    >>> apply = custom_jvp(lambda f, x: f(x), nondiff_argnums=(0,))   # rule(f, primals, tangents)
    """

    kind = "custom_jvp"

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.rule = None

    def defjvp(self, rule):
        _require_callable(f"custom_jvp '{self.__name__}'.defjvp", rule, "the rule")
        self.rule = rule
        return rule

    def defjvps(self, *jvps):
        """One function per argument instead of one rule: jvp_k(tangent_k, primal_out, *primals) is the
        part of the tangent output that argument k moves (None: the output does not depend on it);
        the parts are summed.

        >>> product.defjvps(lambda tx, out, x, y: tx * y, lambda ty, out, x, y: x * ty)  # doctest: +SKIP
        """
        where = f"custom_jvp '{self.__name__}'.defjvps"
        if self.nondiff_argnums:
            raise ArgumentError(f"{where}: cannot be used with nondiff_argnums (as in JAX); use defjvp")
        for jvp in jvps:
            if jvp is not None:
                _require_callable(where, jvp, "each jvp")

        def rule(primals, tangents):
            if len(jvps) != len(primals):
                raise ArgumentError(f"{where}: needs one function (or None) per argument of '{self.__name__}' "
                                    f"({len(primals)}), got {len(jvps)}")
            out = self(*primals)
            out_tree = flatten(out)[1]
            total = None
            for jvp, primal, tangent in zip(jvps, primals, tangents):
                if jvp is None or not any(is_float(aval_of(leaf).dtype) for leaf in flatten(primal)[0]):
                    continue
                part, part_tree = flatten(jvp(tangent, out, *primals))
                if part_tree != out_tree:
                    raise ShapeError(f"{where}: a jvp function returned the structure {part_tree}, but "
                                     f"'{self.__name__}' returns {out_tree}")
                total = part if total is None else [t + p for t, p in zip(total, part)]
            return out, None if total is None else unflatten(out_tree, total)

        self.rule = rule

    def __call__(self, *args, **kwargs):
        if self.rule is None:
            raise ArgumentError(f"custom_jvp '{self.__name__}' has no rule: decorate one with @{self.__name__}.defjvp")
        args = self._positional(args, kwargs)
        if self._tracing_rules or not _holds_tracer(args):
            return self.fun(*args)  # not differentiated here: the function only
        call = _Call(self, args)
        fun, out_tree = call.trace_function()
        rule = LazyProgram(lambda: self._trace_rule(call, fun, out_tree), f"jvp rule of {self.__name__}")
        if call.sources is not None:
            rule.program  # noqa: B018 - under grad and the like: traced now, while the call's values are known
        outs = custom_jvp_call_p.bind(*call.leaves, fun=fun, rule=rule)
        return unflatten(out_tree, outs)

    def _trace_rule(self, call, fun, out_tree):
        """The rule as a program (primals, float tangents) -> (primal outputs, tangent outputs)."""
        avals, flags = call.avals, float_flags(call.avals)
        tangent_avals = [a for a, f in zip(avals, flags) if f]

        def rule(*values):
            primals = call.diff_args(values[:len(avals)])
            it = iter(values[len(avals):])
            tangents = call.diff_args([next(it) if f else np.zeros(a.shape, a.dtype) for a, f in zip(avals, flags)])
            result = self.rule(*call.nondiff_values(), tuple(primals), tuple(tangents))
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise ArgumentError(f"custom_jvp '{self.__name__}': the rule must return a pair (primal outputs, "
                                    f"tangent outputs), got {_describe(result)}")
            out, tangent_out = result
            if flatten(out)[1] != out_tree:
                raise ShapeError(f"custom_jvp '{self.__name__}': the rule's primal outputs have the structure "
                                 f"{flatten(out)[1]}, the function returns {out_tree}")
            tangent_leaves = _check_cotangents("custom_jvp", self.__name__, "the rule's tangent output", tangent_out,
                                               out_tree, fun.out_avals)
            return list(flatten(out)[0]) + tangent_leaves

        sources = replay = None
        if call.sources is not None:
            sources = call.sources + [None] * len(tangent_avals)
            replay = list(call.leaves) + [np.zeros(a.shape, a.dtype) for a in tangent_avals]
        with self._rule_tracing():
            program, _, closure = _trace_at_call(rule, avals + tangent_avals, sources, f"{self.__name__} jvp rule",
                                                 replay)
        _refuse_closure(self, closure)
        return simplify(program)


# --- custom_vjp ----------------------------------------------------------------------------------

def _custom_vjp_abstract_eval(*avals, fun, fwd, bwd):
    return _call_abstract_eval(*avals, fun=fun)


custom_vjp_call_p = register_call(Primitive("custom_vjp_call", _custom_vjp_abstract_eval, multiple_results=True))


def _custom_vjp_forward(*args, fun, fwd, bwd):
    results = eval_program(program_of(fwd), list(args))
    n = len(fun.outputs)
    return results[:n], results[n:]


def _custom_vjp_vjp(cotangents, primals, outputs, needs, *, residuals, fun, fwd, bwd):
    results = iter(eval_program(program_of(bwd), list(residuals) + _seeds(cotangents, fun.out_avals)))
    return [next(results) if f else None for f in float_flags(fun.in_avals)]


def _custom_vjp_jvp(tangents, primals, outputs, *, fun, fwd, bwd):
    """J t from the user's backward rule: it is linear in its cotangents g, so the vjp of
    g -> bwd(residuals, g) against t is J t (forward mode by transposing the user's rule)."""
    fwd, bwd = program_of(fwd), program_of(bwd)
    n = len(fun.outputs)
    residuals = eval_program(fwd, list(primals))[n:]
    in_flags, out_flags = float_flags(fun.in_avals), float_flags(fun.out_avals)
    transposed = vjp_program(bwd, [False] * len(residuals) + out_flags)
    zeros = [np.zeros(a.shape, a.dtype) for a in fun.out_avals]
    seeds = _seeds([t for t, f in zip(tangents, in_flags) if f], [a for a, f in zip(fun.in_avals, in_flags) if f])
    results = iter(eval_program(transposed, list(residuals) + zeros + seeds)[len(bwd.outputs):])
    return [next(results) if f else Zero(a) for a, f in zip(fun.out_avals, out_flags)]


custom_vjp_call_p.forward_with_residuals = _custom_vjp_forward
custom_vjp_call_p.vjp, custom_vjp_call_p.jvp = _custom_vjp_vjp, _custom_vjp_jvp
custom_vjp_call_p.batch = _batch_programs(custom_vjp_call_p, ("fun", "fwd", "bwd"))


class custom_vjp(_CustomRules):  # noqa: N801 - named like the decorator users know from JAX
    """A function with a user-supplied reverse-mode rule (forward mode transposes it).

    fwd takes the function's arguments and returns (output, residuals); bwd(residuals, g) returns
    one cotangent per argument (None for a zero one). With nondiff_argnums those arguments come
    first in bwd, as they are, and get no cotangent. The rules run only when the function is
    differentiated.

    >>> f.defvjp(fwd, bwd)  # fwd(*args) -> (out, residuals); bwd(residuals, g) -> tuple of cotangents
    """

    kind = "custom_vjp"

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.fwd, self.bwd = None, None

    def defvjp(self, fwd, bwd):
        _require_callable(f"custom_vjp '{self.__name__}'.defvjp", fwd, "fwd")
        _require_callable(f"custom_vjp '{self.__name__}'.defvjp", bwd, "bwd")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise ArgumentError(f"custom_vjp '{self.__name__}' has no rule: call {self.__name__}.defvjp(fwd, bwd)")
        args = self._positional(args, kwargs)
        if self._tracing_rules or not _holds_tracer(args):
            return self.fun(*args)  # not differentiated here: the function only
        call = _Call(self, args)
        fun, out_tree = call.trace_function()
        residual_tree = []
        fwd = LazyProgram(lambda: self._trace_fwd(call, fun, out_tree, residual_tree), f"fwd of {self.__name__}")
        bwd = LazyProgram(lambda: self._trace_bwd(call, fun, out_tree, fwd.program, residual_tree[0]),
                          f"bwd of {self.__name__}")
        if call.sources is not None:  # under grad and the like: traced now, while the call's values are known
            bwd.program  # noqa: B018
        outs = custom_vjp_call_p.bind(*call.leaves, fun=fun, fwd=fwd, bwd=bwd)
        return unflatten(out_tree, outs)

    def _trace_fwd(self, call, fun, out_tree, residual_tree):
        """fwd as a program: the operands -> (outputs, residual leaves); `residual_tree` gets their structure."""
        def forward(*leaves):
            result = self.fwd(*call.full_args(leaves))
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise ArgumentError(f"custom_vjp '{self.__name__}': fwd must return a pair (outputs, residuals), got "
                                    f"{_describe(result)}")
            out, residuals = result
            out_leaves, got = flatten(out)
            if got != out_tree:
                raise ShapeError(f"custom_vjp '{self.__name__}': fwd returns outputs of the structure {got}, the "
                                 f"function returns {out_tree}")
            res_leaves, res_tree = flatten(residuals)
            residual_tree[:] = [res_tree]
            return list(out_leaves) + list(res_leaves)

        with self._rule_tracing():
            program, _, closure = _trace_at_call(forward, call.avals, call.sources, f"{self.__name__} fwd",
                                                 call.leaves)
        _refuse_closure(self, closure)
        n = len(fun.outputs)
        check_same_structure("custom_vjp", self.__name__, out_tree, fun.out_avals, "its fwd", out_tree,
                             program.out_avals[:n])
        return simplify(program)

    def _trace_bwd(self, call, fun, out_tree, fwd, residual_tree):
        """bwd as a program: (residual leaves, output cotangents) -> the float operands' cotangents."""
        n = len(fun.outputs)
        residual_avals = list(fwd.out_avals[n:])
        flags = float_flags(call.avals)
        count = len(call.positions)
        expected = f"({count}{', nondiff_argnums excluded' if self.nondiff_argnums else ''})"

        def backward(*values):
            residuals = unflatten(residual_tree, values[:len(residual_avals)])
            cotangents = unflatten(out_tree, values[len(residual_avals):])
            grads = self.bwd(*call.nondiff_values(), residuals, cotangents)
            if not isinstance(grads, (tuple, list)) or len(grads) != count:
                raise ShapeError(f"custom_vjp '{self.__name__}': bwd must return a tuple with one cotangent per "
                                 f"argument {expected}, got {_describe(grads)}")
            leaves, start = [], 0
            for position, grad, arg_tree in zip(call.positions, grads, call.tree.children):
                stop = start + arg_tree.num_leaves
                leaves += _check_cotangents("custom_vjp", self.__name__, f"bwd's cotangent of argument {position}",
                                            grad, arg_tree, call.avals[start:stop])
                start = stop
            return [g for g, f in zip(leaves, flags) if f]

        sources = replay = None
        if call.sources is not None:  # the residuals' values, computed only if bwd's Python code asks for them
            residuals = eval_program(fwd, list(call.leaves))[n:]
            sources = list(residuals) + [None] * n
            replay = list(residuals) + [np.zeros(a.shape, a.dtype) for a in fun.out_avals]
        with self._rule_tracing():
            program, _, closure = _trace_at_call(backward, residual_avals + list(fun.out_avals), sources,
                                                 f"{self.__name__} bwd", replay)
        _refuse_closure(self, closure)
        return simplify(program)


# --- checkpoint (rematerialisation) --------------------------------------------------------------

checkpoint_call_p = register_call(Primitive("checkpoint_call", _call_abstract_eval, multiple_results=True))


def _checkpoint_jvp(tangents, primals, outputs, *, fun):
    flags = float_flags(fun.in_avals)
    derived = simplify(jvp_program(fun, flags))
    tangent_values = _seeds([t for t, f in zip(tangents, flags) if f], [a for a, f in zip(fun.in_avals, flags) if f])
    results = checkpoint_call_p.bind(*primals, *tangent_values, fun=derived)
    n = len(fun.outputs)
    return [t if is_float(a.dtype) else Zero(a) for t, a in zip(results[n:], fun.out_avals)]


def _checkpoint_vjp(cotangents, primals, outputs, needs, *, fun):
    flags = [need and f for need, f in zip(needs, float_flags(fun.in_avals))]
    derived = vjp_program(fun, flags)
    n = len(fun.outputs)
    results = iter(eval_program(derived, list(primals) + _seeds(cotangents, fun.out_avals))[n:])
    return [next(results) if f else None for f in flags]


checkpoint_call_p.jvp, checkpoint_call_p.vjp = _checkpoint_jvp, _checkpoint_vjp
checkpoint_call_p.batch = _batch_programs(checkpoint_call_p, ("fun",))


def checkpoint(fun):
    """fun, rematerialised: reverse mode keeps only its inputs and recomputes it in the backward sweep.

    >>> layer = checkpoint(lambda x: anp.tanh(x @ w))  # doctest: +SKIP
    """
    _require_callable("checkpoint", fun, "the function")

    @functools.wraps(fun)
    def wrapped(*args):
        leaves, tree = flatten(list(args))
        avals = [aval_of(leaf) for leaf in leaves]
        program, out_tree, closure = trace_program(lambda *ls: fun(*unflatten(tree, ls)), avals,
                                                   getattr(fun, "__name__", "checkpointed"))
        programs, consts = unify_closures([(program, closure)])
        outs = checkpoint_call_p.bind(*leaves, *consts, fun=simplify(programs[0]))
        return unflatten(out_tree, outs)

    return wrapped




def _sample_custom_jvp(rng):
    @custom_jvp
    def softclip(x):
        return ew.tanh(x)

    @softclip.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        y = ew.tanh(x)
        return y, ew.mul(t, ew.sub(1.0, ew.mul(y, y)))

    return [sample_equation(softclip, [rng.normal(size=3)], "custom_jvp_call")]


def _sample_custom_vjp(rng):
    @custom_vjp
    def scaled_exp(x, s):
        return ew.mul(ew.exp(x), s)

    def forward(x, s):
        y = ew.exp(x)
        return ew.mul(y, s), (y, s)

    def backward(residuals, g):
        y, s = residuals
        return ew.mul(ew.mul(g, y), s), ew.mul(g, y)

    scaled_exp.defvjp(forward, backward)
    return [sample_equation(scaled_exp, [rng.normal(size=3), rng.normal(size=3)], "custom_vjp_call")]


def _sample_checkpoint(rng):
    return [sample_equation(checkpoint(lambda x, y: ew.mul(ew.sin(x), y)), [rng.normal(size=3), rng.normal(size=3)],
                            "checkpoint_call")]


custom_jvp_call_p.sample = _sample_custom_jvp
custom_vjp_call_p.sample = _sample_custom_vjp
checkpoint_call_p.sample = _sample_checkpoint


# --- Taylor mode ---------------------------------------------------------------------------------------
# custom_jvp: the series of the user's jvp rule (as nested jvp would use it: the rule at first order,
# its own derivatives above). custom_vjp: the series of its jvp (the user's backward rule, transposed).
# checkpoint: a checkpointed call of the function's Taylor program.

def _checkpoint_taylor(series, outputs, *, fun):
    order = len(series[0]) - 1
    wrt = [a.differentiable and has_series(s) for s, a in zip(series, fun.in_avals)]
    groups, out_groups = [range(len(fun.inputs))], [range(len(fun.outputs))]
    program, flags = grouped_jet(fun, order, wrt, groups, out_groups)
    outs = checkpoint_call_p.bind(*grouped_values(series, groups, wrt), fun=program)
    result = grouped_series(outs, out_groups, flags, order, [aval_of(o) for o in outputs])
    return [s[1:] for s in result]


def _set_taylor_rules():
    custom_jvp_call_p.taylor = custom_vjp_call_p.taylor = FROM_JVP
    checkpoint_call_p.taylor = _checkpoint_taylor


_set_taylor_rules()

sparsity.register(custom_jvp_call_p, sparsity.Rule("nested", sparsity_nested.custom_jvp_dependence, exact=False))
sparsity.register(custom_vjp_call_p, sparsity.Rule("nested", sparsity_nested.custom_vjp_dependence, exact=False))
sparsity.register(checkpoint_call_p, sparsity.Rule("nested", sparsity_nested.checkpoint_dependence, exact=False))
