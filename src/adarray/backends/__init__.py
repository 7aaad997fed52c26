"""Backends turn a Program into a callable. The NumPy interpreter is the reference."""
