"""The staging tracer.

`trace_program(fn, avals)` calls `fn` on `Tracer`s; every primitive bound on a
tracer appends an equation to the innermost active `Trace`. Tracers of an
enclosing trace that the function closes over become extra program inputs
(closure conversion), so inner programs stay closed. Values that are not
tracers (NumPy arrays, Python scalars) become literals.

Transformations are written the same way: they re-run a program's equations
under a new trace, calling each primitive's rule, which binds primitives.
"""
from __future__ import annotations

import dis
import operator
import sys

import numpy as np

from ..core import errors as errors_module
from ..core import primitive as primitive_module
from ..core.builder import Builder
from ..core.errors import TracingError
from ..core.ir import Literal, Program, Var, walk
from ..core.precision import narrow
from ..core.pytree import flatten
from ..core.types import Aval, aval_of, is_complex, is_float
from .concrete import ConcreteValues, check_conversion, convert, integer_array
from .eager import evaluate

# Filled by adarray.numpy: name -> function implementing the operator/method on tracers.
ARRAY_METHODS: dict = {}

_stack: list[Trace] = []


def current_trace() -> Trace | None:
    return _stack[-1] if _stack else None


def is_tracer(value) -> bool:
    return isinstance(value, Tracer)


class Trace(Builder, ConcreteValues):
    """One program under construction by tracing a Python function (concrete values and guards:
    see concrete.py)."""

    def __init__(self, name: str = "<function>"):
        super().__init__()
        self.name = name
        self.closure: dict[int, tuple[Tracer, Var]] = {}
        self.set_sources(None)

    def new_input(self, aval: Aval) -> Tracer:
        return Tracer(self.input(aval), self)

    def atom(self, value):
        """The IR atom for a value used in this trace, lifting outer tracers."""
        if isinstance(value, Tracer):
            if value.trace is self:
                return value.variable
            if not any(t is value.trace for t in _stack):
                raise TracingError(
                    f"a traced value of '{value.trace.name}' escaped its trace and was used in "
                    f"'{self.name}'; return it from the function instead of storing it"
                )
            key = id(value.variable)
            if key not in self.closure:
                self.closure[key] = (value, Var(value.aval))
            return self.closure[key][1]
        if isinstance(value, Literal):
            return value
        value = narrow(value)   # a longdouble constant: float64 (core/precision.py)
        return Literal(np.asarray(value), aval_of(value))

    def emit(self, prim, args, params):
        tracers = [Tracer(v, self) for v in super().emit(prim, [self.atom(a) for a in args], params)]
        return tracers if prim.multiple_results else tracers[0]

    def finish(self, outputs) -> tuple[Program, list[Tracer]]:
        out_atoms = [self.atom(o) for o in outputs]
        closure = list(self.closure.values())
        return self.build(out_atoms, [var for _, var in closure]), [tracer for tracer, _ in closure]


# Inside a trace, a constant computation whose result would exceed this many elements (and its
# inputs) is staged, not evaluated: broadcasting a small constant (a vmapped Jacobian's seed basis)
# must not put a batch-sized array into the program. The simplifier's folding limit is the same.
CONSTANT_LIMIT = 4096


def _bind(prim, args, params):
    if not any(isinstance(a, Tracer) for a in args):
        trace = current_trace()
        if trace is not None and _grows_a_constant(prim, args, params):
            return trace.emit(prim, args, params)
        return _eager(prim, args, params)
    trace = current_trace()
    if trace is None:
        escaped = next(a for a in args if isinstance(a, Tracer))
        raise TracingError(
            f"a traced value of '{escaped.trace.name}' escaped its trace; return it from the function "
            "instead of storing it"
        )
    return trace.emit(prim, args, params)


def _grows_a_constant(prim, args, params) -> bool:
    in_avals = [a.aval if isinstance(a, Literal) else aval_of(a) for a in args]
    out_avals = prim.abstract_eval(*in_avals, **params)
    out_size = sum(a.size for a in (out_avals if prim.multiple_results else [out_avals]))
    return out_size > max(CONSTANT_LIMIT, sum(a.size for a in in_avals))


def _eager(prim, args, params):
    arrays = [a.value if isinstance(a, Literal) else np.asarray(narrow(a)) for a in args]
    prim.abstract_eval(*[aval_of(a) for a in arrays], **params)
    return evaluate(prim, arrays, params)


primitive_module.set_binder(_bind)
errors_module.current_function_name = lambda: _stack[-1].name if _stack else None


def trace_program(fn, avals, name: str | None = None):
    """Trace `fn(*tracers)`, one tracer per aval, into a closed program.

    Returns (program, out_tree, closure). The program's inputs are the tracers'
    vars followed by one var per outer tracer that `fn` closed over (listed in
    `closure`); its outputs are the leaves of the pytree `fn` returned.
    """
    program, out_tree, closure, _ = trace_guarded(fn, avals, None, name)
    return program, out_tree, closure


class TraceRecord:
    """What a guarded trace saw besides its program (see concrete.py).

    `guards`: the guard program (inputs: the program's inputs; outputs: the guarded values) or None,
    with one (conversion, result) per output in `checks`; `depends_on_outer`: Python control flow
    in it read a value of an enclosing trace, so the program must not be reused on its own.
    """

    def __init__(self, guards, checks, depends_on_outer):
        self.guards, self.checks, self.depends_on_outer = guards, checks, depends_on_outer


def trace_guarded(fn, avals, sources, name: str | None = None):
    """`trace_program` with concrete values: `sources` gives one per input (a NumPy value, a
    tracer of an enclosing trace, or None when unknown), or is None for a trace without values.

    Returns (program, out_tree, closure, TraceRecord).
    """
    trace = Trace(name or getattr(fn, "__name__", "<function>"))
    _stack.append(trace)
    try:
        args = [trace.new_input(a) for a in avals]
        trace.set_sources(sources)
        try:
            leaves, out_tree = flatten(fn(*args))
        except ValueError as error:
            _raise_store_error(error)
            raise
        for leaf in leaves:
            if not isinstance(leaf, (Tracer, np.ndarray, np.generic, int, float, bool, complex)):
                raise TracingError(
                    f"'{trace.name}' returned a {type(leaf).__name__}; outputs must be arrays or "
                    "nested tuples, lists and dicts of arrays"
                )
        program, closure = trace.finish(leaves)
    finally:
        _stack.pop()
    guards = trace.guard_program(program.inputs[len(avals):])
    record = TraceRecord(guards, [(c, r) for _, c, r in trace.guards], trace.depends_on_outer)
    return program, out_tree, closure, record


def _raise_store_error(error: ValueError) -> None:
    """NumPy reports an element store that failed (`buf[i] = x`) as "setting an array element with a
    sequence", with the real error as its cause: raise a TracingError cause instead, at the user's line."""
    cause = error.__cause__
    if isinstance(cause, TracingError) and str(error).startswith("setting an array element"):
        raise cause.with_traceback(error.__traceback__) from None


_STORE_SUBSCR = dis.opmap["STORE_SUBSCR"]


def _storing_into_an_array(frame) -> bool:
    """Is `frame` (the Python caller of a conversion: NumPy's element store is C code) executing
    `target[index] = value`? Then NumPy is converting a traced value to store it into its array."""
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == _STORE_SUBSCR


def record_guard(tracer: Tracer, conversion, result) -> None:
    """Record in the tracer's trace that `conversion(tracer)` gave `result` (a staged program
    chosen by its guards is inlined into this trace: its guards become this trace's)."""
    trace = tracer.trace
    if not trace.knows_values or not any(t is trace for t in _stack):
        tracer._unknown("Python control flow (in a function transformed inside this one)")
    trace.add_guard(tracer.variable, conversion, result)
    _mark_dependents(trace)


def _mark_dependents(trace) -> None:
    """Traces nested inside `trace` now depend on one of its values, which is not their input."""
    position = next(i for i, t in enumerate(_stack) if t is trace)
    for inner in _stack[position + 1:]:
        inner.depends_on_outer = True


def eval_program(program: Program, args):
    """Run a program by binding its equations one by one (inlines it into the current trace)."""
    def bind(eqn, ins):
        outs = eqn.prim.bind(*ins, **eqn.params)
        return outs if eqn.prim.multiple_results else [outs]

    return walk(program, args, bind)


_CONTROL_FLOW = (
    "Use anp.where(cond, a, b) for a value choice, or ad.cond / ad.while_loop / ad.fori_loop for control "
    "flow. Under grad, jvp, vjp and the Jacobians, Python control flow works (one trace per path "
    "taken); ad.jit(f, guards=True) does the same under jit."
)
_STATIC = "Keep it an array; mark the argument static (static_argnums / static_argnames) if it is fixed."
_STORE = ("A NumPy array holds numbers, not traced values. Build the array from traced values with "
          "anp.stack([...]) or anp.array([...]) of a Python list, or start from an adarray array (anp.zeros) and "
          "write buf = buf.at[i].set(x).")


class Tracer:
    """A traced array: a Var of the trace being built, with NumPy-like operators."""

    __slots__ = ("variable", "trace")
    __array_priority__ = 1000

    def __init__(self, var: Var, trace: Trace):
        self.variable = var
        self.trace = trace

    aval = property(lambda self: self.variable.aval)
    shape = property(lambda self: self.variable.aval.shape)
    dtype = property(lambda self: self.variable.aval.dtype)
    ndim = property(lambda self: self.variable.aval.ndim)
    size = property(lambda self: self.variable.aval.size)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"Tracer({self.aval}, in '{self.trace.name}')"

    # --- concrete values and guards (see concrete.py) -------------------------------------------

    def _unknown(self, what: str, instead: str = _CONTROL_FLOW):
        raise TracingError(
            f"{what} on a traced value ({self.aval}): its value is not known while tracing here (under "
            f"jit or vmap, or in the body of a loop, branch or custom rule). {instead}"
        )

    _concrete = _unknown  # the former name of _unknown (code written against it keeps working)

    def _resolve(self, conversion, what: str, instead: str):
        """`conversion` of the concrete value, recorded as a guard; an error when it is unknown."""
        trace = self.trace
        if not any(t is trace for t in _stack):
            raise TracingError(
                f"a traced value of '{trace.name}' escaped its trace and was used in Python control flow; "
                "return it from the function instead of storing it"
            )
        check_conversion(self.aval, conversion, what)
        value = trace.concrete_value(self.variable) if trace.knows_values else None
        if value is None:
            self._unknown(what, instead)
        result = convert(value, conversion)
        trace.add_guard(self.variable, conversion, result)
        _mark_dependents(trace)
        return result

    def __bool__(self):
        return self._resolve(bool, "bool() (an `if`, `while`, `and`/`or` or assert)", _CONTROL_FLOW)

    def _store(self, conversion):
        """NumPy converts this value to store it into one of its arrays (`buf[i] = x`): only a concrete
        integer or boolean value may go there (it is a constant of the program, as for `int(x)`)."""
        if conversion is float and (is_float(self.dtype) or is_complex(self.dtype)):
            raise TracingError(
                f"buf[i] = x stores a traced value ({self.aval}) into a NumPy array: the value (and its derivative) "
                f"exists only in the traced program. {_STORE}"
            )
        return self._resolve(conversion, "Storing it into a NumPy array (buf[i] = x)", _STORE)

    def __float__(self):
        if _storing_into_an_array(sys._getframe(1)):
            return self._store(float)
        return self._resolve(float, "float()", _STATIC)

    def __int__(self):
        if _storing_into_an_array(sys._getframe(1)):
            return self._store(int)
        return self._resolve(int, "int()", _STATIC)

    def __index__(self):
        return self._resolve(
            operator.index, "Using it as a Python index",
            "Index an adarray value with it directly (x[i] accepts traced integers); to index a NumPy "
            "array `table`, write anp.asarray(table)[i] or anp.take(table, i).",
        )

    def __array__(self, dtype=None, copy=None):
        wanted = self.dtype if dtype is None else np.dtype(dtype)
        if wanted.kind in "iub" and self.trace.knows_values:
            # NumPy needs an integer value (a NumPy table indexed by traced integers, np.int64(x)): as autograd
            # gives it, under the derivatives that trace with values, guarded like Python control flow. Integer
            # values carry no derivative (a float truncated is piecewise constant), so none is lost.
            return self._resolve(integer_array, "np.asarray()", _STATIC).astype(wanted, copy=False)
        raise TracingError(
            f"np.asarray() (or indexing a NumPy array with it, or storing it into one) on a traced value "
            f"({self.aval}): NumPy cannot compute on it. Use adarray.numpy functions (import adarray.numpy as "
            "anp) on traced values. To index a NumPy array `table` with a traced index i, write "
            "anp.asarray(table)[i] or anp.take(table, i); to put traced values into an array, build it with "
            "anp.array([...]) or x.at[i].set(v)."
        )

    def __setitem__(self, index, value):
        raise TracingError(
            f"x[index] = value on a traced value ({self.aval}): traced arrays are immutable. "
            "Write x = x.at[index].set(value) (or .add, .multiply, .min, .max) instead."
        )

    def item(self, *args):
        self._unknown("item()", "Keep it an array (x[()] or x.reshape(()) for a 0-d one); mark the argument "
                      "static (static_argnums) if its value is fixed.")

    def tolist(self):
        self._unknown("tolist()", "Keep it an array (index it, or use list(x) for a list of traced rows).")

    def __hash__(self):
        return id(self)

    def __array_function__(self, function, types, args, kwargs):
        if function in _STATIC_QUERIES:
            return _STATIC_QUERIES[function](args[0])
        replacement = ARRAY_METHODS.get(f"function.{function.__name__}")
        if replacement is None:
            raise TracingError(
                f"numpy.{function.__name__} cannot run on a traced value; use adarray.numpy "
                "(import adarray.numpy as anp) instead"
            )
        return replacement(*args, **kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        function = ARRAY_METHODS.get(f"ufunc.{ufunc.__name__}")
        if method != "__call__" or kwargs or function is None:
            raise TracingError(
                f"NumPy's {ufunc.__name__}.{method} cannot run on a traced value in '{self.trace.name}'; "
                "use the adarray.numpy function of the same name"
            )
        return function(*inputs)


_STATIC_QUERIES = {np.shape: lambda x: x.shape, np.ndim: lambda x: x.ndim, np.size: lambda x: x.size}


def _method(name):
    def method(self, *args, **kwargs):
        return ARRAY_METHODS[name](self, *args, **kwargs)

    method.__name__ = name
    return method


def _reflected(name):
    def method(self, other):
        return ARRAY_METHODS[name](other, self)

    method.__name__ = f"r{name}"
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
              "and", "or", "xor"):
    setattr(Tracer, f"__{_name}__", _method(_name))
    setattr(Tracer, f"__r{_name}__", _reflected(_name))
for _name in ("neg", "pos", "abs", "invert", "lt", "le", "gt", "ge", "eq", "ne", "getitem"):
    setattr(Tracer, f"__{_name}__", _method(_name))
for _name in ("sum", "prod", "max", "min", "mean", "var", "std", "reshape", "astype", "transpose",
              "argmax", "argmin", "all", "any", "squeeze", "flatten", "ravel", "dot", "clip",
              "cumsum", "cumprod", "take", "swapaxes", "repeat", "argsort", "diagonal", "nonzero",
              "searchsorted"):
    setattr(Tracer, _name, _method(_name))
Tracer.T = property(lambda self: ARRAY_METHODS["T"](self))
Tracer.at = property(lambda self: ARRAY_METHODS["at"](self))
Tracer.real = property(lambda self: ARRAY_METHODS["real"](self))
Tracer.imag = property(lambda self: ARRAY_METHODS["imag"](self))
Tracer.conj = _method("conj")
Tracer.conjugate = _method("conjugate")

