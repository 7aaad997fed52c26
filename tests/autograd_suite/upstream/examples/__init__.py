"""Vendored autograd 1.9.1 examples; only imports changed (see ../../README.md)."""
