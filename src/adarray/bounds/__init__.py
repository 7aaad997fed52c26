"""Verified Taylor enclosures (AutoBound, Streeter & Dillon 2022-2023), through any traced program.

    import adarray.bounds as ab

    tb = ab.taylor_bounds(f, max_degree=2)(x0, (lo, hi))    # f(x) - sum_{i<k} c_i dx^i in I dx^k on the box
    tb.coefficients, tb.lower(x), tb.upper(x), tb(x), tb.final_interval()
    ab.minimize_global(f, (lo, hi), tol)                    # certified global minimum by branch and bound
    ab.integrate(f, lo, hi, degree, cells)                  # certified bounds of an integral
    ab.register_enclosure(primitive, rule)                  # enclosures for your own primitives

Every interval operation rounds outward (verified=True, the default), so the bounds hold in floating
point. Layers: interval.py (outward-rounded intervals), series.py (interval Taylor coefficients of
the elementwise functions), elementwise.py (sharp 1-D enclosures), enclosure.py (Taylor enclosure
arithmetic), interpreter.py, rules.py and structured.py (programs and primitives), api.py,
applications.py.
"""
from . import rules as _rules
from . import structured as _structured
from .api import MAX_DEGREE, TaylorBounds, taylor_bounds
from .applications import GlobalMinimum, integrate, minimize_global
from .interpreter import register_enclosure

_rules.install()
_structured.install()

__all__ = ["MAX_DEGREE", "GlobalMinimum", "TaylorBounds", "integrate", "minimize_global", "register_enclosure",
           "taylor_bounds"]
