"""autograd's names on adarray: the compatibility layer that autograd's own tests and examples (fetched and
renamed by tests/autograd_suite/autograd_source.py) import in place of `autograd`.

It is a test fixture, not part of adarray: it maps autograd's calling conventions (argnum, keyword
arguments passed through to the function, curried make_* helpers) onto adarray's transformations, and
it never fills a gap of adarray with NumPy. A name that adarray lacks raises AttributeError saying so
(see `numpy/__init__.py`), so that the suite reports what a user moving from autograd would miss.
"""
from __future__ import annotations

import builtins as _builtins

import numpy as _onp

import adarray as _ad
import adarray.numpy as _anp

from .builtins import dict, isinstance, list, tuple, type  # noqa: A001  (autograd exports these names)

__all__ = [
    "checkpoint", "deriv", "elementwise_grad", "grad", "grad_and_aux", "grad_named", "hessian",
    "hessian_tensor_product", "hessian_vector_product", "holomorphic_grad", "jacobian", "make_ggnvp", "make_hvp",
    "make_jvp", "make_vjp", "multigrad_dict", "tensor_jacobian_product", "value_and_grad",
    "vector_jacobian_product", "dict", "isinstance", "list", "tuple", "type",
]


def _name(fun):
    return getattr(fun, "__name__", _builtins.type(fun).__name__)


def _unary(fun, argnum, args, kwargs):
    """(fun as a function of x alone, x): x is args[argnum], or the tuple of args[i] for a list of argnums;
    the other arguments and the keywords are held fixed (autograd's unary_to_nary)."""
    several = _builtins.isinstance(argnum, (_builtins.list, _builtins.tuple))
    nums = _builtins.tuple(argnum) if several else (argnum,)

    def unary(x):
        full = _builtins.list(args)
        for i, value in zip(nums, x if several else (x,)):
            full[i] = value
        return fun(*full, **kwargs)

    unary.__name__ = _name(fun)
    x = _builtins.tuple(args[i] for i in nums) if several else args[argnum]
    return unary, x


def _nary(operator, fun, argnum, doc):
    def wrapped(*args, **kwargs):
        unary, x = _unary(fun, argnum, args, kwargs)
        return operator(unary, x)

    wrapped.__name__ = f"{operator.__name__}_of_{_name(fun)}_wrt_argnum_{argnum}"
    wrapped.__doc__ = f"    {operator.__name__} of function {_name(fun)} with respect to argnum {argnum}. {doc}"
    return wrapped


def _argnums(argnum):
    return _builtins.tuple(argnum) if _builtins.isinstance(argnum, (_builtins.list, _builtins.tuple)) else argnum


def grad(fun, argnum=0):
    """
    Returns a function which evaluates adarray.grad(fun, argnums=argnum): the derivative of the scalar `fun`
    in its argument number `argnum` (a tuple of them for a list of argnums). Keyword arguments go to `fun`
    unchanged. (autograd's tests require this docstring to start with a newline and "Returns a function which".)"""
    def grad(unary, x):
        return _ad.grad(unary)(x)

    slow = _nary(grad, fun, argnum, "")

    def gradient(*args, **kwargs):  # without keywords, adarray's cache (per function) applies
        return slow(*args, **kwargs) if kwargs else _ad.grad(fun, argnums=_argnums(argnum))(*args)

    gradient.__name__, gradient.__doc__ = slow.__name__, slow.__doc__
    return gradient


def value_and_grad(fun, argnum=0):
    """(fun(*args), its gradient in argument `argnum`) from one call: adarray.value_and_grad."""
    def value_and_grad(unary, x):
        return _ad.value_and_grad(unary)(x)

    slow = _nary(value_and_grad, fun, argnum, "")

    def both(*args, **kwargs):
        return slow(*args, **kwargs) if kwargs else _ad.value_and_grad(fun, argnums=_argnums(argnum))(*args)

    both.__name__, both.__doc__ = slow.__name__, slow.__doc__
    return both


def grad_and_aux(fun, argnum=0):
    """The gradient of the first output and the second output unchanged (adarray.grad with has_aux)."""
    def grad_and_aux(unary, x):
        return _ad.grad(lambda v: _builtins.tuple(unary(v)), has_aux=True)(x)

    return _nary(grad_and_aux, fun, argnum, "")


def elementwise_grad(fun, argnum=0):
    """The sum of each column of the Jacobian, in one reverse pass: the vjp with a cotangent of ones."""
    def elementwise_grad(unary, x):
        out, pullback = _ad.vjp(unary, x)
        return pullback(_onp.ones(_onp.shape(out), _onp.result_type(out)))[0]

    return _nary(elementwise_grad, fun, argnum, "")


def deriv(fun, argnum=0):
    """The jvp with a tangent of ones (autograd's `deriv`)."""
    def deriv(unary, x):
        return _ad.jvp(unary, (x,), (_onp.ones_like(x, dtype=float),))[1]

    return _nary(deriv, fun, argnum, "")


def jacobian(fun, argnum=0):
    """The Jacobian, of shape out.shape + in.shape (adarray.jacrev)."""
    def jacobian(unary, x):
        return _ad.jacrev(unary)(x)

    return _nary(jacobian, fun, argnum, "")


def hessian(fun, argnum=0):
    """The exact Hessian (adarray.hessian)."""
    def hessian(unary, x):
        return _ad.hessian(unary)(x)

    return _nary(hessian, fun, argnum, "")


def holomorphic_grad(fun, argnum=0):
    """autograd's gradient of a holomorphic function: the gradient of its real part."""
    return grad(lambda *args, **kwargs: _anp.real(fun(*args, **kwargs)), argnum)


def grad_named(fun, argname):
    """The gradient with respect to a named positional argument."""
    import inspect

    return grad(fun, inspect.getfullargspec(fun).args.index(argname))


def make_vjp(fun, argnum=0):
    """x -> (vjp function, fun(x)), autograd's order."""
    def make_vjp(unary, x):
        out, pullback = _ad.vjp(unary, x)
        return (lambda g: pullback(g)[0]), out

    return _nary(make_vjp, fun, argnum, "")


def make_jvp(fun, argnum=0):
    """x -> (v -> (fun(x), J v))."""
    def make_jvp(unary, x):
        return lambda v: _ad.jvp(unary, (x,), (v,))

    return _nary(make_jvp, fun, argnum, "")


def make_hvp(fun, argnum=0):
    """x -> (v -> H v, grad(fun)(x)): the vjp of the gradient."""
    def make_hvp(unary, x):
        gradient, pullback = _ad.vjp(_ad.grad(unary), x)
        return (lambda v: pullback(v)[0]), gradient

    return _nary(make_hvp, fun, argnum, "")


def hessian_tensor_product(fun, argnum=0):
    """(*args, tensor) -> the Hessian contracted with tensor over all of the argument's axes."""
    def product(*args, **kwargs):
        args, tensor = args[:-1], args[-1]
        unary, x = _unary(fun, argnum, args, kwargs)
        return _ad.jvp(_ad.grad(unary), (x,), (tensor,))[1]

    return product


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    """(*args, tensor) -> tensor contracted with the Jacobian over the output's leading axes (a vjp)."""
    def product(*args, **kwargs):
        args, tensor = args[:-1], args[-1]
        unary, x = _unary(fun, argnum, args, kwargs)
        return jacobian(lambda v: _anp.tensordot(tensor, unary(v), axes=_onp.ndim(tensor)))(x)

    return product


vector_jacobian_product = tensor_jacobian_product


def make_ggnvp(f, g=lambda x: 1.0 / 2 * _anp.sum(x ** 2, axis=-1), f_argnum=0):
    """x -> (v -> J^T H_g J v), the generalised Gauss-Newton product of g(f(x))."""
    def make_ggnvp(unary, x):
        f_x, f_vjp = _ad.vjp(unary, x)
        _, g_hvp = _ad.vjp(_ad.grad(g), f_x)

        def ggnvp(v):
            _, jv = _ad.jvp(unary, (x,), (v,))
            return f_vjp(g_hvp(jv)[0])[0]

        return ggnvp

    return _nary(make_ggnvp, f, f_argnum, "")


def multigrad_dict(fun):
    """Gradients with respect to every argument, as a dict keyed by the argument names."""
    import inspect

    signature = inspect.signature(fun)

    def gradfun(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return grad(lambda arguments: fun(**arguments))(_builtins.dict(bound.arguments))

    return gradfun


checkpoint = _ad.checkpoint
