"""Helpers of the JAX lowering of reversible programs (reversible.py), and the statements that move and scale
values, as a mixin of its tracer:

    push / pop             a stack is a Stack (buffer, top) of a static capacity, carried through loops and
                           branches as a pytree; the value trades places with the slot above the top
                           (dynamic_update_slice), with the interpreter's checks (full, empty, not zero, shape);
                           a stack without a static capacity, or whose elements' shape is not known where it is
                           allocated, raises Unsupported (the program then runs on the host)
    p *= x (lognumber)     p, an int64 log in units of 2**-42, grows by rint(log(x) * 2**42)
    inst(a, b)             a user instruction's expressions on (a, b), written back together
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from ...core.errors import ShapeError
from ...reversible.ir import UPDATE_SYMBOLS, blocks, expr_text, factor_text

KIND_NAMES = {"f": float, "c": complex, "i": int, "b": bool}
DTYPES = {"f": jnp.float64, "c": jnp.complex128, "i": jnp.int64, "b": jnp.bool_, "l": jnp.int64}
LOG_LIMIT = 2 ** 62  # a lognumber's int64 log: |log| < 2**20 in units of 2**-42


class Stack:
    """A stack while it is traced: its buffer (slots on the first axis), its top and its static capacity."""

    def __init__(self, buffer, top, capacity):
        self.buffer, self.top, self.capacity = buffer, top, capacity


jax.tree_util.register_pytree_node(Stack, lambda st: ((st.buffer, st.top), st.capacity),
                                   lambda capacity, children: Stack(*children, capacity))


class Unsupported(Exception):
    """A construct this lowering does not translate: the program runs on the host instead."""


def static_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def truth(value):
    """Python's truth value of a scalar: bool(x), x != 0 for numbers."""
    if isinstance(value, (bool, int, float)):
        return bool(value)
    value = jnp.asarray(value)
    return value if value.dtype == jnp.bool_ else value != 0


def typed(value, dtype):
    return lax.convert_element_type(jnp.asarray(value), dtype)


def read_at(array, indices):
    """array[indices], a dynamic index for traced indices."""
    for index in indices:
        array = lax.dynamic_index_in_dim(array, index, axis=0, keepdims=False) if not static_int(index) \
            else array[index]
    return array


def write_at(array, indices, value):
    """array with array[indices] = value, as one in-place dynamic_update_slice (a scatter, which .at[].set
    gives for constant indices, copies the whole array on the CPU)."""
    starts = [jnp.asarray(i, jnp.int64) for i in indices] + [jnp.int64(0)] * (array.ndim - len(indices))
    return lax.dynamic_update_slice(array, value.reshape((1,) * len(indices) + value.shape), starts)


def walk(statements):
    """Every statement of a block, nested ones included, in order."""
    for statement in statements:
        yield statement
        for block in blocks(statement):
            yield from walk(block)




class MovingStatements:
    """The tracer's statements for stacks, lognumbers and instructions (it provides read, write, value, fail and
    distinct)."""

    def _inst(self, frame, s, line) -> None:
        spec, targets = s[2], s[3]
        params, exprs = spec[1], spec[2]
        self.distinct(frame, list(targets), line, "the arguments")
        values = [self.read(frame, t, line) for t in targets]
        types = {p: (frame.types[t if isinstance(t, str) else t[1]][0], jnp.ndim(v))
                 for p, t, v in zip(params, targets, values)}
        inside = frame.view(dict(zip(params, values)), types)
        results = [None if expr == param else self.value(inside, expr, line) for param, expr in zip(params, exprs)]
        for target, result, old in zip(targets, results, values):
            if result is not None:
                self.write(frame, target, jnp.broadcast_to(jnp.asarray(result), jnp.shape(old)), line)

    def _lmul(self, frame, s, line) -> None:
        """p *= x on a lognumber: p, an int64 log in units of 2**-42, grows by log x rounded (exact to undo)."""
        target, log_value = s[2], s[3]
        text = f"`{expr_text(target)} {UPDATE_SYMBOLS[s[0]]} {factor_text(log_value)}`"
        if isinstance(log_value, tuple) and log_value[0] == "llog":
            change = self.value(frame, log_value[1], line)
        else:
            value = jnp.asarray(self.value(frame, log_value, line), jnp.float64)
            if frame.check:
                self.fail(jnp.logical_not(jnp.isfinite(value)), frame, line, f"{text}: a lognumber is multiplied by "
                          "positive finite numbers (the factor's log is {0})", [value])
            change = jnp.rint(value * 2.0 ** 42).astype(jnp.int64)
        old = self.read(frame, target, line)
        new = old + change if s[0] == "lmul" else old - change
        if frame.check:
            self.fail(jnp.abs(new) > LOG_LIMIT, frame, line, f"{text}: the lognumber '{expr_text(target)}' "
                      "overflows (its log passed 2**20)")
        self.write(frame, target, new, line)

    _ldiv = _lmul

    def _push(self, frame, s, line) -> None:
        """rv.push(s, x): x trades places with the slot above the top (zero), which becomes the top."""
        stack, target = s[2], s[3]
        st = frame.env[stack]
        value = self.read(frame, target, line)
        if tuple(jnp.shape(value)) != tuple(st.buffer.shape[1:]):
            self.fail(True, frame, line, f"rv.push({stack}, {expr_text(target)}): '{expr_text(target)}' has shape "
                      f"{tuple(jnp.shape(value))}, the stack holds values of shape {tuple(st.buffer.shape[1:])}", (),
                      ShapeError)
            return
        self.fail(st.top >= st.capacity, frame, line, f"rv.push({stack}, {expr_text(target)}): the stack '{stack}' "
                  "is full (its capacity is {0})", [st.capacity])
        slot = read_at(st.buffer, [st.top])
        buffer = write_at(st.buffer, [st.top], typed(value, st.buffer.dtype))
        self.write(frame, target, typed(slot, jnp.asarray(value).dtype), line)
        frame.env[stack] = Stack(buffer, st.top + 1, st.capacity)

    def _pop(self, frame, s, line) -> None:
        """rv.pop(s, x): the top trades places with x, which must be zero (checked)."""
        stack, target = s[2], s[3]
        st = frame.env[stack]
        value = self.read(frame, target, line)
        self.fail(st.top <= 0, frame, line, f"rv.pop({stack}, {expr_text(target)}): the stack '{stack}' is empty")
        if frame.check and s[4]:
            kind, rank = frame.types[stack]
            if kind in ("sf", "sc"):
                gap = jnp.max(jnp.abs(value)) if rank else jnp.abs(value)
                failed = jnp.logical_not(gap <= frame.atol) if jnp.size(value) else False
            else:
                gap = jnp.sum(value != 0) if rank else value
                failed = jnp.any(value != 0)
            self.fail(failed, frame, line, f"rv.pop({stack}, {expr_text(target)}): '{expr_text(target)}' must be "
                      "zero before the pop (it " + ("is {0} away" if rank else "holds {0}") + "); pop into a fresh "
                      "ancilla or one returned to zero", [gap])
        top = jnp.maximum(st.top - 1, 0)
        slot = read_at(st.buffer, [top])
        buffer = write_at(st.buffer, [top], typed(value, st.buffer.dtype))
        self.write(frame, target, typed(slot, jnp.asarray(value).dtype), line)
        frame.env[stack] = Stack(buffer, top, st.capacity)

    def new_stack(self, frame, name, init, line):
        kind, rank = frame.types[name]
        capacity = None if init[1] is None else self.value(frame, init[1], line)
        if not static_int(capacity):
            raise Unsupported(f"the stack '{name}' has no capacity known when the program is compiled (line {line})")
        self.fail(capacity < 1, frame, line, f"rv.stack({expr_text(init[1])}): the capacity {{0}} is not positive",
                  [capacity])
        shape = () if not rank else self.element_shape(frame, name)
        if shape is None:
            raise Unsupported(f"the shape of the arrays pushed on '{name}' is not known where it is allocated")
        return Stack(jnp.zeros((max(capacity, 1),) + tuple(shape), DTYPES[kind[1]]), jnp.int64(0), capacity)

    def element_shape(self, frame, name):
        """The shape of the values pushed on the stack `name`: a stack of the same elements in scope (the stack
        whose tangents or cotangents it holds), or the first value pushed on it, if already bound."""
        for other, value in frame.env.items():
            if isinstance(value, Stack) and name.startswith(other) and set(name[len(other):]) <= {"'", "^"}:
                return value.buffer.shape[1:]
        statements = list(walk(frame.body))
        for statement in statements:
            if statement[0] in ("push", "pop") and statement[2] == name:
                target = statement[3]
                base = target if isinstance(target, str) else target[1]
                shape = self.known_shape(frame, base, statements)
                return None if shape is None else shape if isinstance(target, str) else shape[len(target) - 2:]
        return None

    def known_shape(self, frame, name, statements):
        """The shape of `name` if bound, or else of the zeros it is first allocated as (if known now)."""
        value = frame.env.get(name)
        if value is not None:
            return None if isinstance(value, Stack) else tuple(jnp.shape(value))
        for statement in statements:
            if statement[0] == "alloc" and statement[2] == name and isinstance(statement[3], tuple):
                init = statement[3]
                if init[0] == "zeros_like" and isinstance(init[1], str) and init[1] in frame.env:
                    return self.known_shape(frame, init[1], ())
                if init[0] == "zeros":
                    try:
                        dims = [self.value(frame, d, 0) for d in init[1:]]
                    except Unsupported:
                        return None
                    return tuple(dims) if all(static_int(d) for d in dims) else None
                return None
        return None
