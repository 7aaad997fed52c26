"""Lowering a kernel's AST into its scalar IR: a Program over 0-d values.

The scalar IR is the array IR at rank 0, so it prints, parses, verifies and transforms like any
program. Structured control flow is the phi view of the coarsening paper: `cond` merges the
values a branch assigns (each output is a phi of the branches), `while` carries the values a
loop assigns. A variable that is the same in every branch (an untouched one, or the same
constant) is not merged; a conditional expression whose arms are a few cheap operations becomes
a `select` (both arms evaluated: a branch would cost more than it saves).

Early returns set a `done` flag and the return values; statements after a return that may have
happened run under `cond(done, skip, rest)`, and loops also stop on `done`.

    @kernel
    def relu_or_square(x):           { lambda a:f64[] .
        if x > 0.0:                      b:bool[] = gt a 0.0:f64[]
            return x * x                 c:i64[] = convert[dtype=i64] b
        return 0.0                       d:f64[] = cond[branches=(...)] c a
                                       in (d) }
"""
from __future__ import annotations

import ast
import math
import operator

import numpy as np

from .. import numpy as anp
from ..control.common import with_consts
from ..control.cond import cond_p
from ..control.while_loop import while_loop
from ..core.ir import Program
from ..core.types import Aval
from ..passes import simplify
from ..primitives import elementwise as ew
from ..primitives.operations import BY_KERNEL_NAME, BY_SYMBOL
from ..tracing import Tracer, current_trace, eval_program, trace_program
from .language import (
    COMPARISON_SYMBOLS,
    CONSTANTS,
    DERIVED,
    FUNCTIONS,
    OPERATOR_SYMBOLS,
    assigned_names,
    function_name,
    is_number,
    module_name,
    resolve_free,
)

DONE, RETURN = "%done", "%return"  # names no Python variable can have
CHEAP_ARM = 4  # a conditional expression whose arms have at most this many equations becomes a select
_PYTHON = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
           ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge}
# An operator's function on tracers, by its symbol in the operations table (primitives/operations.py).
_ARRAY = {node: getattr(anp, BY_SYMBOL[symbol].numpy)
          for node, symbol in {**OPERATOR_SYMBOLS, **COMPARISON_SYMBOLS}.items()}


def _softplus(x):
    return anp.logaddexp(x, 0.0)


# A kernel function's binder: the adarray.numpy function of its row in the operations table, and the
# functions the language writes with them (language.DERIVED); some convert integers to float first.
_MATH = {name: getattr(anp, row.numpy) for name, row in BY_KERNEL_NAME.items()}
_MATH.update({
    "softplus": _softplus, "square": anp.square, "fabs": lambda x: anp.abs(_float(x)),
    "floor": lambda x: anp.floor(_float(x)), "ceil": lambda x: anp.ceil(_float(x)),
    "isfinite": lambda x: anp.isfinite(_float(x)), "isnan": lambda x: anp.isnan(_float(x)),
})
assert set(FUNCTIONS) == set(_MATH) | {"min", "max", "float", "int", "bool"} and set(DERIVED) <= set(FUNCTIONS)


def _float(x):
    return _cast(x, np.float64, keep_float=True) if isinstance(x, Tracer) else float(x)


def _cast(value, dtype, keep_float=False):
    dtype = np.dtype(dtype)
    if isinstance(value, Tracer):
        if keep_float and np.issubdtype(value.dtype, np.floating):
            return value
        return ew.convert(value, dtype)
    return np.asarray(value, dtype)


def _dtype(value) -> np.dtype:
    if isinstance(value, Tracer):
        return value.dtype
    return np.asarray(value).dtype


def _weak_promote(values) -> np.dtype:
    """NumPy 2's promotion with Python numbers weak: the dtype a phi of `values` needs."""
    parts = [v if isinstance(v, (bool, int, float)) and not isinstance(v, np.generic) else _dtype(v)
             for v in values]
    return np.result_type(*parts)


class _Undefined:
    """A variable assigned on some paths only: reading it is an error."""

    def __init__(self, line: int):
        self.line = line


class Lowering:
    """Interprets a kernel's AST over 0-d tracers, emitting the scalar IR."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.source = kernel.source
        self.fn = kernel.fn
        self.closure: list[tuple[str, object]] = []  # free arrays: (name, value), one extra input each
        self.closure_inputs: dict[str, Tracer] = {}
        self.root = None  # the trace of the kernel itself: free arrays become its inputs

    def error(self, node, message):
        return self.source.error(node, message)

    # --- entry -----------------------------------------------------------------------------------

    def program(self, dtypes) -> Program:
        function = self.source.function
        names = [a.arg for a in function.args.posonlyargs + function.args.args]
        if len(dtypes) != len(names):
            raise self.error(function, f"takes {len(names)} arguments, got {len(dtypes)}")

        def run(*args):
            self.root = current_trace()
            env = dict(zip(names, args))
            env[DONE] = False
            env = self.block(function.body, env)
            if env[DONE] is not True:
                raise self.error(function, "not every path returns a value")
            count = sum(1 for k in env if k.startswith(RETURN))
            return [env[f"{RETURN}{i}"] for i in range(count)]

        program, _, _ = trace_program(run, [Aval((), d) for d in dtypes], self.source.name)
        return simplify(program)

    # --- statements ------------------------------------------------------------------------------

    def block(self, statements, env) -> dict:
        for index, statement in enumerate(statements):
            done = env[DONE]
            if done is True:
                break
            if isinstance(done, Tracer):  # a return may have happened: the rest runs only where it did not
                rest = statements[index:]
                run_rest = lambda e, rest=rest: self.block(rest, {**e, DONE: False})
                return self.branch(done, [run_rest, lambda e: {**e, DONE: True}], env, statement)
            if isinstance(statement, ast.If) and index + 1 < len(statements):
                # `if c: ... return` followed by more code: the rest is the else (one branch, not two)
                rest = statements[index + 1:]
                if _always_returns(statement.body) and not _always_returns(statement.orelse):
                    merged = ast.If(statement.test, statement.body, statement.orelse + rest)
                    return self.statement(ast.copy_location(merged, statement), env)
                if _always_returns(statement.orelse) and not _always_returns(statement.body):
                    merged = ast.If(statement.test, statement.body + rest, statement.orelse)
                    return self.statement(ast.copy_location(merged, statement), env)
            env = self.statement(statement, env)
        return env

    def statement(self, node, env) -> dict:
        env = dict(env)
        if isinstance(node, ast.Assign):
            value = self.expression(node.value, env, allow_tuple=True)
            for target in node.targets:
                self.assign(target, value, env)
        elif isinstance(node, ast.AugAssign):
            current = self.read(node.target, env)
            env[node.target.id] = self.binary(node.op, current, self.expression(node.value, env), node)
        elif isinstance(node, ast.AnnAssign):
            env[node.target.id] = self.expression(node.value, env)
        elif isinstance(node, ast.If):
            test = self.truth(self.expression(node.test, env))
            if not isinstance(test, Tracer):
                return self.block(node.body if test else node.orelse, env)
            return self.branch(test, [lambda e: self.block(node.orelse, e), lambda e: self.block(node.body, e)],
                               env, node)
        elif isinstance(node, ast.While):
            return self.loop(lambda e: self.truth(self.expression(node.test, e)), node.body, env, node)
        elif isinstance(node, ast.For):
            return self.for_loop(node, env)
        elif isinstance(node, ast.Return):
            value = self.expression(node.value, env, allow_tuple=True)
            values = value if isinstance(value, tuple) else (value,)
            for i, v in enumerate(values):
                env[f"{RETURN}{i}"] = v
            env[DONE] = True
        return env

    def assign(self, target, value, env) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, tuple):
                raise self.error(target, "a tuple cannot be stored in a variable (kernels hold numbers)")
            env[target.id] = value
            return
        if not isinstance(value, tuple) or len(value) != len(target.elts):
            raise self.error(target, f"cannot unpack into {len(target.elts)} names")
        for name, v in zip(target.elts, value):
            env[name.id] = v

    # --- branches: cond merges the values the branches assign -------------------------------------

    def branch(self, index, blocks, env, node) -> dict:
        """Run `blocks[index](env)`; returns the merged environment. `index` is a traced bool."""
        index = ew.convert(index, np.int64)
        traced = []
        for k, run in enumerate(blocks):
            box = {}

            def body(run=run, box=box):
                result = run(dict(env))
                box["env"] = result
                return [v for v in result.values() if not isinstance(v, _Undefined)]

            program, _, closure = trace_program(body, [], f"{self.source.name} branch {k}")
            traced.append((program, closure, box["env"]))
        names = list({n: 0 for _, _, e in traced for n in e})
        merged, outputs = {}, []
        for name in names:
            values = [e.get(name, _Undefined(self.source.line(node))) for _, _, e in traced]
            if any(isinstance(v, _Undefined) for v in values):
                if name.startswith(RETURN):  # not yet returned on that path: any value of the right type
                    dtype = _weak_promote([v for v in values if not isinstance(v, _Undefined)])
                    outputs.append((name, [0 if isinstance(v, _Undefined) else v for v in values], dtype))
                    continue
                merged[name] = _Undefined(self.source.line(node))
                continue
            first = values[0]
            if all(_same(v, first) for v in values):
                merged[name] = first
                continue
            try:
                dtype = _weak_promote(values)
            except TypeError:
                raise self.error(node, f"'{name}' has incompatible types in the branches") from None
            outputs.append((name, values, dtype))
        if not outputs:
            return {**merged}
        programs, operands = _unify_closures([(p, c) for p, c, _ in traced])
        branches = []
        for k, (program, (_, _, branch_env)) in enumerate(zip(programs, traced)):
            order = [n for n, v in branch_env.items() if not isinstance(v, _Undefined)]

            def select(*args, program=program, order=order, k=k):
                results = dict(zip(order, eval_program(program, list(args))))
                return [_cast(results[name] if name in results else values[k], dtype)
                        for name, values, dtype in outputs]

            branch_program, _, _ = trace_program(select, [o.aval for o in operands],
                                                 f"{self.source.name} branch {k}")
            branches.append(simplify(branch_program))
        results = cond_p.bind(index, *operands, branches=tuple(branches))
        for (name, _, _), value in zip(outputs, results):
            merged[name] = value
        return merged

    # --- loops: while carries the values the body assigns ----------------------------------------

    def loop(self, test, body, env, node, step=None) -> dict:
        """`while test(env): env = body(env)`, stopping also when a return happened."""
        assigned = assigned_names(body) + ([DONE] if _has_return(body) else [])
        carried = [n for n in assigned if n in env and not isinstance(env[n], _Undefined)]
        if step is not None:
            carried.append(step[0])
        local = [n for n in assigned if n not in carried]
        dtypes = {n: _weak_promote([env[n]]) for n in carried}
        returns: list[str] = []
        for _ in range(4):  # the carried types: promote until the body keeps them
            probe = self.run_body(body, env, carried, dtypes, returns, step, node)
            changed = False
            for name, value in probe.items():
                if name in dtypes and _weak_promote([value]) != dtypes[name]:
                    promoted = np.promote_types(dtypes[name], _weak_promote([value]))
                    changed |= promoted != dtypes[name]
                    dtypes[name] = promoted
                if name.startswith(RETURN) and name not in returns:
                    returns.append(name)
                    dtypes[name] = _weak_promote([value])
                    changed = True
            if not changed:
                break
        else:
            raise self.error(node, "the loop changes the types of its variables")
        names = carried + returns
        init = tuple(_cast(env[n] if n in env and not isinstance(env[n], _Undefined) else 0, dtypes[n])
                     for n in names)

        def as_env(values):
            inner = {k: v for k, v in env.items()}
            inner.update(zip(names, values))
            for n in local:
                inner.pop(n, None)
            return inner

        def cond_fn(values):
            inner = as_env(values)
            running = test(inner)
            if DONE in names:
                running = self.combine(anp.logical_and, running, anp.logical_not(inner[DONE]))
            return _cast(running, np.bool_)

        def body_fn(values):
            inner = as_env(values)
            if DONE in names:  # the loop runs only while no return has happened
                inner[DONE] = False
            result = self.step(body, inner, step)
            return tuple(_cast(result[n], dtypes[n]) for n in names)

        final = while_loop(cond_fn, body_fn, init)
        out = dict(env)
        out.update(zip(names, final))
        for n in local + ([step[1]] if step else []):
            out[n] = _Undefined(self.source.line(node))
        if step is not None:
            out.pop(step[0], None)
        return out

    def step(self, body, env, step):
        if step is None:
            return self.block(body, env)
        counter, target, increment = step
        env = dict(env)
        env[target] = env[counter]
        result = dict(self.block(body, env))
        result[counter] = anp.add(env[counter], increment)
        return result

    def run_body(self, body, env, carried, dtypes, returns, step, node) -> dict:
        """Trace one iteration on carried values of the given types; returns its environment."""
        names = carried + returns
        box = {}

        def probe(*values):
            inner = dict(env)
            inner.update(zip(names, values))
            if DONE in names:
                inner[DONE] = False
            box["env"] = self.step(body, inner, step)
            return []

        trace_program(probe, [Aval((), dtypes[n]) for n in names], f"{self.source.name} loop")
        return {n: v for n, v in box["env"].items() if n in names or n.startswith(RETURN)}

    def for_loop(self, node: ast.For, env) -> dict:
        bounds = [self.expression(a, env) for a in node.iter.args]
        for bound in bounds:
            if np.dtype(_weak_promote([bound])).kind not in "iub":
                raise self.error(node, f"range() needs integer bounds, got {_weak_promote([bound])}")
        start, stop, increment = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds[:2], 1) if len(
            bounds) == 2 else bounds
        if isinstance(increment, Tracer) or increment == 0:
            raise self.error(node, "range()'s step must be a nonzero constant in kernels")
        counter = f"%counter{id(node)}"
        env = dict(env)
        env[counter] = start if isinstance(start, Tracer) else int(start)
        compare = anp.less if increment > 0 else anp.greater
        return self.loop(lambda e: compare(e[counter], stop), node.body, env, node,
                         step=(counter, node.target.id, int(increment)))

    # --- expressions ----------------------------------------------------------------------------

    def expression(self, node, env, allow_tuple=False):
        if isinstance(node, ast.Tuple):
            return tuple(self.expression(e, env) for e in node.elts)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.read(node, env)
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, self.expression(node.left, env), self.expression(node.right, env), node)
        if isinstance(node, ast.UnaryOp):
            value = self.expression(node.operand, env)
            if isinstance(node.op, ast.Not):
                truth = self.truth(value)
                return (not truth) if not isinstance(truth, Tracer) else anp.logical_not(truth)
            if isinstance(node.op, ast.USub):
                return -value if not isinstance(value, Tracer) else anp.negative(value)
            return value
        if isinstance(node, ast.BoolOp):
            return self.boolean(node, env)
        if isinstance(node, ast.Compare):
            result, left = None, self.expression(node.left, env)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.expression(right_node, env)
                test = self.binary(op, left, right, node)
                result = test if result is None else self.combine(anp.logical_and, result, test)
                left = right
            return result
        if isinstance(node, ast.IfExp):
            return self.conditional(node, env)
        if isinstance(node, ast.Attribute):
            return CONSTANTS[node.attr]
        if isinstance(node, ast.Call):
            return self.call(node, env)
        raise self.error(node, "unsupported expression")  # the checker rejects these first

    def read(self, node, env):
        name = node.id
        if name in env:
            value = env[name]
            if isinstance(value, _Undefined):
                raise self.error(node, f"'{name}' may be undefined here: it is assigned on some paths only "
                                       f"(the branch or loop at line {value.line})")
            return value
        if name in self.kernel.locals:
            raise self.error(node, f"'{name}' is used before it is assigned")
        found, value = resolve_free(self.fn, name)
        if not found:
            raise self.error(node, f"'{name}' is not defined")
        if is_number(value) and not isinstance(value, Tracer):
            return value.item() if isinstance(value, (np.ndarray, np.generic)) else value
        if isinstance(value, (Tracer, np.ndarray)):
            return self.closure_input(name, value, node)
        raise self.error(node, f"'{name}' is a {type(value).__name__}; kernels read numbers and arrays")

    def closure_input(self, name, value, node):
        """A free array becomes an extra input of the kernel (broadcast with the arguments)."""
        if name not in self.closure_inputs:
            dtype = value.dtype if isinstance(value, Tracer) else np.asarray(value).dtype
            self.closure_inputs[name] = self.root.new_input(Aval((), dtype))
            self.closure.append((name, value))
        return self.closure_inputs[name]

    def truth(self, value):
        if isinstance(value, Tracer):
            return value if value.dtype == np.bool_ else anp.not_equal(value, 0)
        return bool(value)

    def combine(self, op, a, b):
        if not isinstance(a, Tracer) and not isinstance(b, Tracer):
            return bool(op(a, b))
        for constant, other in ((a, b), (b, a)):
            if not isinstance(constant, Tracer):  # and/or with a constant decides or passes through
                keep = bool(constant) if op is anp.logical_and else not bool(constant)
                return other if keep else bool(constant)
        return op(a, b)

    def boolean(self, node, env):
        """and/or on truth values; a constant operand decides statically when it can."""
        is_and = isinstance(node.op, ast.And)
        result = None
        for value_node in node.values:
            value = self.truth(self.expression(value_node, env))
            if not isinstance(value, Tracer) and value != is_and:
                return value  # False in an `and`, True in an `or`
            if not isinstance(value, Tracer):
                continue
            result = value if result is None else (anp.logical_and if is_and else anp.logical_or)(result, value)
        return is_and if result is None else result

    def binary(self, op, a, b, node):
        if not isinstance(a, Tracer) and not isinstance(b, Tracer):
            try:
                return _PYTHON[type(op)](a, b)
            except (ZeroDivisionError, OverflowError, ValueError) as error:
                raise self.error(node, f"constant arithmetic fails: {error}") from None
        if type(op) is ast.Mod and all(np.dtype(_weak_promote([v])).kind in "iub" for v in (a, b)):
            return anp.subtract(a, anp.multiply(anp.floor_divide(a, b), b))
        if type(op) is ast.Mod:
            dtype = _weak_promote([a, b])
            return ew.rem(_cast(a, dtype), _cast(b, dtype))
        return _ARRAY[type(op)](a, b)

    def conditional(self, node, env):
        test = self.truth(self.expression(node.test, env))
        if not isinstance(test, Tracer):
            return self.expression(node.body if test else node.orelse, env)
        arms = []
        for arm in (node.body, node.orelse):
            program, _, closure = trace_program(lambda arm=arm: [self.expression(arm, env)], [], "arm")
            arms.append((program, closure))
        cheap = all(len(p.eqns) <= CHEAP_ARM and all(e.prim.name not in ("cond", "while") for e in p.eqns)
                    for p, _ in arms)
        if cheap:
            values = [eval_program(p, list(c))[0] for p, c in arms]
            dtype = _weak_promote(values)
            return ew.select(test, _cast(values[0], dtype), _cast(values[1], dtype))
        merged = self.branch(test, [lambda e: {**e, "%value": self.expression(node.orelse, e)},
                                    lambda e: {**e, "%value": self.expression(node.body, e)}], env, node)
        return merged["%value"]

    def call(self, node, env):
        func = node.func
        args = [self.expression(a, env) for a in node.args]
        if isinstance(func, ast.Attribute):
            found, module = resolve_free(self.fn, func.value.id)
            if not found or not module_name(module):
                raise self.error(node, f"'{func.value.id}' is not the math, numpy or adarray.numpy module")
            name = func.attr
            if name not in FUNCTIONS:
                raise self.error(node, f"{func.value.id}.{name} is not a kernel function")
        else:
            found, value = resolve_free(self.fn, func.id)
            if not found:
                raise self.error(node, f"'{func.id}' is not defined")
            if getattr(value, "_is_adarray_kernel", False):
                return self.inline(value, args, node)
            name = function_name(value)
            if name is None:
                raise self.error(node, f"calls '{func.id}', which is not a kernel function")
        return self.apply(name, args, node)

    def apply(self, name, args, node):
        arity = FUNCTIONS[name]
        if arity is not None and len(args) != arity:
            raise self.error(node, f"{name}() takes {arity} argument(s), got {len(args)}")
        if name in ("min", "max"):
            result = args[0]
            for arg in args[1:]:
                result = (anp.minimum if name == "min" else anp.maximum)(result, arg)
            return result
        if name in ("float", "int", "bool"):
            value = args[0]
            if not isinstance(value, Tracer):
                return {"float": float, "int": int, "bool": bool}[name](value)
            return self.truth(value) if name == "bool" else _cast(value, {"float": np.float64, "int": np.int64}[name])
        if all(not isinstance(a, Tracer) for a in args):
            args = [np.asarray(a) for a in args]
            with np.errstate(all="ignore"):
                return np.asarray(_MATH[name](*args)).item()
        return _MATH[name](*args)

    def inline(self, callee, args, node):
        """A call of another kernel: its scalar IR, inlined."""
        if callee.lowering_active:
            raise self.error(node, f"kernel '{callee.__name__}' calls itself; recursion is not supported")
        values = [a if isinstance(a, Tracer) else np.asarray(a, _weak_promote([a])) for a in args]
        program, closure = callee.scalar_program(tuple(_dtype(v) for v in values))
        if closure:
            raise self.error(node, f"kernel '{callee.__name__}' reads arrays it does not take as arguments; "
                                   "a kernel called from another kernel must not")
        if len(values) != len(program.inputs):
            raise self.error(node, f"kernel '{callee.__name__}' takes {len(program.inputs)} arguments, "
                                   f"got {len(values)}")
        outs = eval_program(program, values)
        return outs[0] if len(outs) == 1 else tuple(outs)


def _unify_closures(traced):
    """Programs that all take the union of the closures (compared by identity) after their operands."""
    everything: list = []
    for _, closure in traced:
        everything += [t for t in closure if not any(t is e for e in everything)]
    programs = []
    for program, closure in traced:
        same = len(closure) == len(everything) and all(a is b for a, b in zip(closure, everything))
        programs.append(program if same else with_consts(program, closure, everything))
    return programs, everything


def _same(a, b) -> bool:
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return a is b
    if isinstance(a, _Undefined) or isinstance(b, _Undefined):
        return False
    return type(a) is type(b) and (a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)))


def _always_returns(statements) -> bool:
    """Does every path through `statements` end in a return (syntactically)?"""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and _always_returns(last.orelse)


def _has_return(statements) -> bool:
    return any(isinstance(n, ast.Return) for s in statements for n in ast.walk(s))
