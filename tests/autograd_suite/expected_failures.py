"""Which of autograd's tests fail on adarray today, and why: {"file::test": (area, reason)}.

Every listed test runs as a strict xfail: when the missing piece lands, the test passes, pytest reports
the XPASS as a failure, and its entry here must be deleted (that is the switch). A parametrised test
is listed with its parameters, or without them when every case fails for the same reason. The reason
names the first thing that fails; a later one is named after "then" where it is known.

Areas, i.e. who is expected to make the test pass:
  by-design           autograd behaviour adarray deliberately does not copy
  autograd-internals  autograd's own extension API, not mapped by autograd_compat
(The areas api-habits, linalg, numpy-functions, special/stats/nn and complex are empty: their tests pass.)

Generated from a run of the suite (see README.md, "Triage"), then read and corrected by hand.
"""

_WHERE_RETURNS_PYTHON_OBJECTS = ("autograd's where returns the chosen Python object (int, float, list) for a scalar "
                                 "condition; adarray follows NumPy and returns an array")

EXPECTED_FAILURES: dict[str, tuple[str, str]] = {
    # --- by-design (5) ----------------------------------------------------------------------------
    "test_numpy.py::test_numpy_version": (
        "by-design",
        "autograd.numpy is NumPy wrapped and reports NumPy's __version__; adarray.numpy is not NumPy"),
    "test_wrappers.py::test_custom_where_dtypes[int-True-1-2]": ("by-design", _WHERE_RETURNS_PYTHON_OBJECTS),
    "test_wrappers.py::test_custom_where_dtypes[float-True-3.0-4.0]": ("by-design", _WHERE_RETURNS_PYTHON_OBJECTS),
    "test_wrappers.py::test_custom_where_dtypes[float-False-1-2.0]": ("by-design", _WHERE_RETURNS_PYTHON_OBJECTS),
    "test_wrappers.py::test_custom_where_dtypes[list-True-x3-y3]": ("by-design", _WHERE_RETURNS_PYTHON_OBJECTS),
    # --- autograd-internals (3) -------------------------------------------------------------------
    "test_wrappers.py::test_deprecated_defgrad_wrapper": (
        "autograd-internals",
        "autograd's extension API (primitive wrapping an opaque NumPy function, defgrad): adarray traces "
        "instead; custom rules are adarray.custom_vjp / custom_jvp"),
    "test_wrappers.py::test_deprecated_defvjp_is_zero_wrapper": (
        "autograd-internals",
        "autograd's extension API (primitive, defvjp_is_zero): adarray traces instead; custom rules are "
        "adarray.custom_vjp / custom_jvp"),
    "test_wrappers.py::test_deprecated_defvjp_wrapper": (
        "autograd-internals",
        "autograd's extension API (primitive wrapping an opaque NumPy function, defvjp): adarray traces "
        "instead; custom rules are adarray.custom_vjp / custom_jvp"),
}
