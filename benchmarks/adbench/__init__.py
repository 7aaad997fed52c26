"""ADBench (microsoft/ADBench) problems for adarray and its peers, side by side.

Modules:
    data       readers of the ADBench file formats and the catalogue of instances (tiny, small, medium)
    reference  independent plain-NumPy objectives, ADBench's error measure, finite differences
    layout     ADBench's output layouts (BA CSR, compressed hand Jacobian) and shared index tables
    tool_adarray, tool_jax, tool_torch, tool_autograd
               the four objectives per tool; `prepare(problem, data)` returns a `harness.Task`
    harness    ADBench's timing protocol, peak memory, checks
    report     Markdown, CSV and plots
    profiling  per-primitive time of adarray's interpreter (wraps adarray.backends.numpy.IMPLS)
    run        the command line: `adarray bench adbench ...` or `python -m benchmarks.adbench ...`

Only numpy, scipy and adarray are needed; the peers are imported when present.
"""
