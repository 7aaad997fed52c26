"""Program optimisation passes; `simplify` runs them all (after every transformation)."""
from .dce import eliminate_dead_code, prune_nested
from .simplify import simplify

__all__ = ["eliminate_dead_code", "prune_nested", "simplify"]
