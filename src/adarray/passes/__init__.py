"""Program optimisation passes; `simplify` runs them all (after every transformation)."""
from .dce import eliminate_dead_code
from .simplify import simplify

__all__ = ["eliminate_dead_code", "simplify"]
