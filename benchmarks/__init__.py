"""Benchmarks of adarray: ADBench problems against the peers (`benchmarks.adbench`), micro-benchmarks of the
parallel primitives, mixed mode, the per-call overhead. A second top-level package of the adarray distribution:
installed with it, so that `adarray bench` imports it by name; no library module imports it."""
