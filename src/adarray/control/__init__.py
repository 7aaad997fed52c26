"""Structured control flow and custom derivatives: cond, switch, fold, fori_loop, while_loop,
checkpoint, custom_jvp, custom_vjp, fixed_point.

Bodies and branches are traced once into nested programs (params of one
primitive each); their rules transform those programs, so derivatives of every
order and batching work through them. This layer sits above `transforms`.
"""
from .cond import cond, switch
from .custom import checkpoint, custom_jvp, custom_vjp
from .fixed_point import fixed_point
from .loops import fold, fori_loop
from .while_loop import while_loop

__all__ = ["checkpoint", "cond", "custom_jvp", "custom_vjp", "fixed_point", "fold", "fori_loop", "switch", "while_loop"]
