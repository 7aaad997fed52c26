"""Vendored from autograd 1.9.1; only imports changed (see ../README.md)."""
