"""The canonical text form of programs (the parser reads it back); defined in core/ir.py, beside the
programs and equations that print themselves with it.

    { lambda a:f64[3] .
        b:f64[3] = mul a a
        c:f64[] = reduce[axes=(0,), op=add] b
      in (c) }
"""
from .ir import Namer, format_atom, format_eqn, format_literal, format_number, format_param, format_program

__all__ = ["Namer", "format_atom", "format_eqn", "format_literal", "format_number", "format_param", "format_program"]
