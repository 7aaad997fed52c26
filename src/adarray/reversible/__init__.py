"""Reversible programs: a language that runs backwards, and gradients by reverse computing with no tape.

    import adarray.reversible as rv

    @rv.reversible
    def norm(res, y, x):
        for i in range(len(x)):
            y += x[i] ** 2
        res += anp.sqrt(y)

    out = norm(0.0, 0.0, x)                        # every argument, updated: (res, y, x)
    back = rv.invert(norm)(*out)                   # the inputs again
    g = rv.grad(norm, loss=0)(0.0, 0.0, x)         # d out[0] / d every argument
    ad.grad(lambda x: norm(0.0, 0.0, x)[0])(x)     # the same from inside an ordinary program

The language (language.py, docs/reversible.md) is checked when a function is decorated; a call is one
`reversible` equation in the IR (primitive.py) whose derivative rules are source transformations of the
statement IR (derivatives.py): forward mode, and reverse mode that runs the inverse program while propagating
cotangents, so no intermediate state is stored. Programs run as generated Python over NumPy values
(backends/numpy/reversible.py) or, with Numba, as native loops (backends/numba/reversible.py).
"""
from ..core.errors import ReversibilityError
from .bennett import BennettStats, bennett
from .execution import reversible_backend, set_reversible_backend
from .function import GradientFunction, ReversibleFunction, grad, invert, reversible
from .instructions import Instruction, instruction
from .ir import program_text
from .markers import alloc, compute, free, if_, lognumber, neg, pop, push, rot, stack, swap, uncompute, while_
from .primitive import reversible_grad_p, reversible_p
from .samples import gradient_cases as _gradient_cases
from .samples import reversible_cases as _reversible_cases

reversible_p.sample = _reversible_cases
reversible_grad_p.sample = _gradient_cases

__all__ = [
    "BennettStats", "GradientFunction", "Instruction", "ReversibilityError", "ReversibleFunction", "alloc", "bennett",
    "compute", "free", "grad", "if_", "instruction", "invert", "lognumber", "neg", "pop", "program_text", "push",
    "reversible", "reversible_backend", "reversible_grad_p", "reversible_p", "rot", "set_reversible_backend", "stack",
    "swap", "uncompute", "while_",
]
