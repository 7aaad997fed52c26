"""@rv.reversible, rv.invert and rv.grad: reversible functions as values a user calls.

    @rv.reversible
    def norm(res, y, x):
        for i in range(len(x)):
            y += x[i] ** 2
        res += anp.sqrt(y)

    out = norm(0.0, 0.0, x)                 # every argument, updated: (res, y, x)
    back = rv.invert(norm)(*out)            # the inputs again (up to rounding for floats)
    g = rv.grad(norm, loss=0)(0.0, 0.0, x)  # d out[0] / d every argument, by reverse computing

A call specialises the function's statement IR to its arguments' kinds and ranks (specialize.py) and binds
one `reversible` equation (primitive.py): eagerly on arrays, or recorded when the arguments are traced, so
ad.grad, ad.jvp, ad.vmap and ad.jit work through it.
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.errors import ArgumentError
from ..core.pytree import flatten, leaf_paths, unflatten
from ..kernels.language import resolve_free
from ..tracing import Tracer
from .ir import function_text, invert_block
from .language import parse_function
from .primitive import float_flags, reversible_grad_p, reversible_p, tangent_of
from .specialize import kind_of_dtype, specialize
from .structures import tree_type


class ReversibleFunction:
    """A function in the reversible language. Calling it returns every argument, updated."""

    _is_adarray_reversible = True

    def __init__(self, fn, check=True, atol=1e-8, *, _parsed=None):
        if not isinstance(check, (bool, np.bool_)):
            raise ArgumentError(f"@rv.reversible: check must be True or False, got {check!r}")
        if not isinstance(atol, (int, float)) or atol < 0:
            raise ArgumentError(f"@rv.reversible: atol must be a non-negative number, got {atol!r}")
        self.fn, self.check, self.atol = fn, bool(check), float(atol)
        if _parsed is None:
            self.source, self.args, self.body = parse_function(fn)
            self.name = self.table_name = self.source.name
            self.original = self
            self._inverse = None
        else:
            self.source, self.args, self.body, self.name, self.original, self._inverse = _parsed
            self.table_name = self.name
        self._programs: dict = {}
        self._callees: dict = {}
        functools.update_wrapper(self, fn)
        self.__name__ = self.__qualname__ = self.name

    # --- structure ---------------------------------------------------------------------------------------

    @property
    def inverse(self) -> ReversibleFunction:
        if self._inverse is None:
            parsed = (self.source, self.args, invert_block(self.body), "~" + self.name, self.original, self)
            self._inverse = ReversibleFunction(self.fn, self.check, self.atol, _parsed=parsed)
        return self._inverse

    def resolve(self, name: str, line: int) -> ReversibleFunction:
        """The reversible function a call statement names ('~g' is the inverse of g), found in fn's scope."""
        cached = self._callees.get(name)
        if cached is not None:
            return cached
        base = name.lstrip("~")
        inversions = len(name) - len(base)
        if base == self.source.name:
            target = self.original
        else:
            found, target = resolve_free(self.fn, base)
            if not found:
                raise self.source.error(line, f"calls '{base}', which is not defined")
            if not getattr(target, "_is_adarray_reversible", False):
                raise self.source.error(line, f"calls '{base}', which is not a reversible function (a plain call "
                                              "cannot be undone; decorate it with @rv.reversible)")
        if inversions % 2:
            target = target.inverse
        self._callees[name] = target
        return target

    def program(self, types) -> tuple:
        """The typed program table for arguments of `types` ((kind, rank) per argument), cached."""
        types = tuple(types)
        program = self._programs.get(types)
        if program is None:
            program = self._programs[types] = specialize(self, types)
        return program

    def __str__(self) -> str:
        return function_text((self.name, tuple(self.args), (), self.check, self.atol, self.body))

    def __repr__(self) -> str:
        return f"<reversible function {self.name}>"

    # --- calling -----------------------------------------------------------------------------------------

    def _arguments(self, args, what, keywords=None):
        """(the leaves of the arguments as arrays, the program for their types, each argument's TreeDef or None)."""
        if keywords:
            args = self._by_name(args, keywords, what)
        if len(args) != len(self.args):
            raise ArgumentError(f"{what} '{self.name}' takes {len(self.args)} arguments ({', '.join(self.args)}), "
                                f"got {len(args)}")
        values, types, trees = [], [], []
        for name, arg in zip(self.args, args):
            leaves, treedef = flatten(arg)
            structured = treedef.kind != "leaf"
            leaf_types = []
            for path, leaf in zip(leaf_paths(treedef, name) if structured else [name], leaves):
                value = leaf if isinstance(leaf, Tracer) else np.asarray(leaf)
                kind = kind_of_dtype(value.dtype)
                if kind is None:
                    raise ArgumentError(f"{what} '{self.name}': argument '{path}' has dtype {np.dtype(value.dtype)}; "
                                        "reversible functions take float, complex, integer and boolean scalars and "
                                        "arrays (or dataclasses, dicts, tuples and lists of them)")
                values.append(value)
                leaf_types.append((kind, len(value.shape)))
            types.append(tree_type(treedef, leaf_types) if structured else leaf_types[0])
            trees.append(treedef if structured else None)
        return values, self.program(types), trees

    def _by_name(self, args, keywords, what):
        """Positional arguments followed by keyword ones, in the order of the function's parameters."""
        unknown = [k for k in keywords if k not in self.args]
        twice = [k for k in keywords if k in self.args[:len(args)]]
        missing = [a for a in self.args[len(args):] if a not in keywords]
        if unknown or twice or missing:
            problem = (f"no argument named '{unknown[0]}'" if unknown else f"'{twice[0]}' given twice" if twice
                       else f"'{missing[0]}' is missing")
            raise ArgumentError(f"{what} '{self.name}'({', '.join(self.args)}): {problem}")
        return tuple(args) + tuple(keywords[a] for a in self.args[len(args):])

    def __call__(self, *args, **keywords):
        values, program, trees = self._arguments(args, "reversible function", keywords)
        return rebuild(reversible_p.bind(*values, program=program, batch=0), trees)


def reversible(fn=None, *, check: bool = True, atol: float = 1e-8):
    """Decorator: a function in the reversible language (checked now), callable forwards and, through
    rv.invert, backwards. `check=False` drops the run-time checks (ancillas restored, post-conditions, loop
    bounds); `atol` is the tolerance of float checks.

    >>> @reversible
    ... def double(y, x):
    ...     y += 2.0 * x
    >>> double(1.0, 3.0)  # doctest: +SKIP
    (array(7.), array(3.))
    """
    if fn is None:
        return lambda f: ReversibleFunction(f, check, atol)
    if isinstance(fn, ReversibleFunction):
        return fn
    if not callable(fn):
        raise ArgumentError(f"@rv.reversible decorates a function, got {type(fn).__name__}")
    return ReversibleFunction(fn, check, atol)


def _is_reversible(f) -> bool:
    return getattr(f, "_is_adarray_reversible", False)


def invert(f):
    """The inverse of a reversible function (or instruction): rv.invert(f)(*f(*x)) gives x back (exactly for
    integers and booleans, up to rounding for floats). Inside a reversible function, `rv.invert(g)(a, b)` is a
    statement."""
    if not _is_reversible(f) or isinstance(f, GradientFunction):
        raise ArgumentError(f"rv.invert takes a @rv.reversible function or an rv.instruction, got "
                            f"{type(f).__name__}")
    return f.inverse


invert._is_rv_invert = True


def rebuild(leaves, trees) -> tuple:
    """One value per argument from the flat leaves: a structured argument is unflattened (a None leaf stays None)."""
    leaves, out = list(leaves), []
    position = 0
    for treedef in trees:
        if treedef is None:
            out.append(leaves[position])
            position += 1
        else:
            out.append(unflatten(treedef, leaves[position:position + treedef.num_leaves]))
            position += treedef.num_leaves
    return tuple(out)


class GradientFunction:
    """rv.grad(f, loss): the derivative of f's updated argument `loss` with respect to every argument, by
    reverse computing. Calling it gives one gradient per argument (None for integer and boolean ones, structures
    for structured ones). rv.grad of it, with the loss (k, i, ...) the element [i, ...] of the gradient of argument
    k, gives second derivatives (a Hessian row), and so on: each order reverse-computes the tangent program of the
    previous one, so no order stores the states of the iterations.

    For a gradient G(X) = reversible_grad[Q](X, S) (the cotangents of Q's differentiable arguments), the gradient
    of <u, G(X)> is reversible_grad[T(Q)](X, U; 0, S) with T(Q) the tangent program and U = u as the tangents:
    the gradient of <S, Q'(X) U> (primitive.py, reversible_grad.vjp)."""

    _is_adarray_reversible = True

    def __init__(self, f, loss, chain=()):
        self.f, self.loss, self.chain = f, loss, tuple(chain)
        self.args = f.args
        self.name = self.__name__ = "grad_" * (len(self.chain) + 1) + getattr(f, "name", "f")

    def __call__(self, *args, **keywords):
        values, program, trees = self.f._arguments(args, "rv.grad of", keywords)
        flags = float_flags(program)
        leaves = [0]
        for tree in trees:
            leaves.append(leaves[-1] + (tree.num_leaves if tree is not None else 1))
        loss = leaves[self.loss]
        if trees[self.loss] is not None or not flags[loss] or len(values[loss].shape) != 0 \
                or kind_of_dtype(values[loss].dtype) != "f":
            shown = "a structure" if trees[self.loss] is not None else f"{values[loss].dtype}{list(values[loss].shape)}"
            raise ArgumentError(f"rv.grad: the loss, argument '{self.f.args[self.loss]}' of '{self.f.name}', must be a "
                                f"float scalar, got {shown}")
        floats = [k for k, flag in enumerate(flags) if flag]
        seeds = [np.full(np.shape(values[k]), 1.0 if k == loss else 0.0, dtype=values[k].dtype) for k in floats]
        inputs = list(values)
        for position, index in self.chain:
            leaf = leaves[position]
            if trees[position] is not None or not flags[leaf]:
                raise ArgumentError(f"rv.grad of {self.name}: the loss must be an element of the gradient of a float "
                                    f"argument that is not structured, got argument '{self.f.args[position]}'")
            direction = [np.zeros(np.shape(values[k]), values[k].dtype) for k in floats]
            target = direction[floats.index(leaf)]
            try:
                target[index] = 1.0
            except (IndexError, TypeError, ValueError):
                raise ArgumentError(f"rv.grad of {self.name}: {index} is not an element of the gradient of "
                                    f"'{self.f.args[position]}' (shape {target.shape})") from None
            current = float_flags(program)
            inputs += direction + [np.zeros(np.shape(v), np.asarray(v).dtype)
                                   for v, flag in zip(inputs[len(values):], current[len(values):]) if flag]
            seeds = [np.zeros(np.shape(s), np.asarray(s).dtype) for s in seeds] + seeds
            program = tangent_of(program)
        outs = iter(reversible_grad_p.bind(*inputs, *seeds, program=program, batch=0)[:len(floats)])
        return rebuild([next(outs) if flag else None for flag in flags], trees)

    def __repr__(self) -> str:
        return f"<{self.name}: loss {self.loss!r}{''.join(f', then {c}' for c in self.chain)}>"


def grad(f, loss=0):
    """d (the updated argument `loss`) / d (every argument), by reverse computing.

    Returns a function of f's arguments giving one gradient per argument (None for integer and boolean
    arguments). The forward run's states are not stored: the inverse program recomputes them. Of a gradient
    function, rv.grad(rv.grad(f), loss=(k, i, ...)) differentiates the element [i, ...] of the gradient of
    argument k (a Hessian row), again by reverse computing.
    """
    if isinstance(f, GradientFunction):
        position, index = (loss, ()) if isinstance(loss, (int, np.integer)) else (loss[0], tuple(loss[1:]))
        if not isinstance(position, (int, np.integer)) or not 0 <= position < len(f.args):
            raise ArgumentError(f"rv.grad of {f.name}: loss must be (argument index, element index...) of one of its "
                                f"gradients, got {loss!r}")
        return GradientFunction(f.f, f.loss, f.chain + ((int(position), index),))
    if not _is_reversible(f):
        raise ArgumentError(f"rv.grad takes a @rv.reversible function, got {type(f).__name__}")
    if not isinstance(loss, (int, np.integer)) or not 0 <= loss < len(f.args):
        raise ArgumentError(f"rv.grad: loss must be an argument index of '{f.name}' (0 to {len(f.args) - 1}), got "
                            f"{loss!r}")
    return GradientFunction(f, int(loss))
