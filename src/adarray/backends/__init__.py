"""Backends turn a Program into a callable. One package per backend, each a table of
implementations keyed by the Primitive object: `numpy` (the reference interpreter, the default),
`numba` (fused native loops) and `jax` (lowering to XLA, sharding; optional, imported only when
used). A backend imports the primitives it implements; nothing below the top-level API imports a
backend."""
