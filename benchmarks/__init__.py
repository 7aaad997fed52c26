"""Benchmarks of adarray: ADBench problems against the peers (`benchmarks.adbench`), micro-benchmarks of the
parallel primitives, mixed mode. Not installed with the library; `adarray bench` finds this directory next to
the source tree (editable install) and puts the repository root on sys.path."""
