"""Which of autograd's tests fail on adarray today, and why: {"file::test": (area, reason)}.

Every listed test runs as a strict xfail: when the missing piece lands, the test passes, pytest reports
the XPASS as a failure, and its entry here must be deleted (that is the switch). A parametrised test
is listed with its parameters, or without them when every case fails for the same reason. The reason
names the first thing that fails; a later one is named after "then" where it is known.

Areas, i.e. who is expected to make the test pass:
  linalg              anp.linalg.* and adarray.scipy.linalg (a helper is on it)
  numpy-functions     adarray.numpy functions that are missing (a helper is on it)
  special/stats/nn    adarray.scipy.special / stats (a helper is on it)
  api-habits          habits of autograd/JAX users adarray refuses today (a helper is on it)
  complex             complex inputs or outputs: adarray differentiates real floating-point values only
                      (nobody's area; "the real cases pass" means only the complex ones fail)
  by-design           autograd behaviour adarray deliberately does not copy
  autograd-internals  autograd's own extension API and deprecated helpers, not mapped by autograd_compat

Generated from a run of the suite (see README.md, "Triage"), then read and corrected by hand.
"""

_WHERE_RETURNS_PYTHON_OBJECTS = ("autograd's where returns the chosen Python object (int, float, list) for a scalar "
                                 "condition; adarray follows NumPy and returns an array")

EXPECTED_FAILURES: dict[str, tuple[str, str]] = {
    # --- linalg (28) ------------------------------------------------------------------------------
    "test_linalg.py::test_eig_real": ("linalg", "anp.linalg.eig is missing"),
    "test_linalg.py::test_pinv": ("linalg", "anp.linalg.pinv is missing"),
    # --- numpy-functions (109) --------------------------------------------------------------------
    "test_examples.py::test_fluid_simulation_initial_velocities": (
        "numpy-functions",
        "anp.meshgrid and anp.roll are missing; then by design: the example indexes a NumPy array with traced"
        " indices (init_smoke[i, j]), which NumPy cannot hand to a tracer (JAX refuses it too; "
        "anp.asarray(f)[i, j] works)"),
    "test_numpy.py::test_astype": ("numpy-functions", "anp.dtype is missing"),
    "test_numpy.py::test_diagonal": ("numpy-functions", "anp.make_diagonal is missing"),
    "test_numpy.py::test_make_diagonal": ("numpy-functions", "anp.make_diagonal is missing"),
    "test_systematic.py::test_angle": ("numpy-functions", "anp.angle is missing"),
    "test_systematic.py::test_arccosh": ("numpy-functions", "anp.arccosh is missing"),
    "test_systematic.py::test_arcsinh": ("numpy-functions", "anp.arcsinh is missing"),
    "test_systematic.py::test_arctanh": ("numpy-functions", "anp.arctanh is missing"),
    "test_systematic.py::test_conj": ("numpy-functions", "anp.conj is missing"),
    "test_systematic.py::test_conjugate": ("numpy-functions", "anp.conjugate is missing"),
    "test_systematic.py::test_exp2": ("numpy-functions", "anp.exp2 is missing"),
    "test_systematic.py::test_fabs": ("numpy-functions", "anp.fabs is missing"),
    "test_systematic.py::test_fmax": ("numpy-functions", "anp.fmax is missing"),
    "test_systematic.py::test_fmin": ("numpy-functions", "anp.fmin is missing"),
    "test_systematic.py::test_imag": ("numpy-functions", "anp.imag is missing"),
    "test_systematic.py::test_kron": ("numpy-functions", "anp.kron is missing"),
    "test_systematic.py::test_log10": ("numpy-functions", "anp.log10 is missing"),
    "test_systematic.py::test_log2": ("numpy-functions", "anp.log2 is missing"),
    "test_systematic.py::test_logaddexp2": ("numpy-functions", "anp.logaddexp2 is missing"),
    "test_systematic.py::test_real": ("numpy-functions", "anp.real is missing"),
    "test_systematic.py::test_real_ic": ("numpy-functions", "anp.real_if_close is missing"),
    "test_systematic.py::test_rollaxis": ("numpy-functions", "anp.rollaxis is missing"),
    "test_wrappers.py::test_dtypes": (
        "numpy-functions",
        "anp.real is missing; then float128 / complex256 arrays, which adarray does not support (float16 and "
        "float32 gradients keep their dtype)"),
    # --- special/stats/nn (4) ---------------------------------------------------------------------
    # --- api-habits (1) ---------------------------------------------------------------------------
    "test_numpy.py::test_cast_to_int": (
        "api-habits",
        "np.int64(traced array): adarray.numpy's dtypes are NumPy's scalar types, which cannot convert a "
        "traced value (JAX's jnp.int64(x) casts)"),
    # --- complex (52) -----------------------------------------------------------------------------
    "test_linalg.py::test_eig_batched": (
        "complex",
        "anp.linalg.eig is missing; and every case of the test is complex (adarray differentiates real values"
        " only)"),
    "test_linalg.py::test_eig_complex": (
        "complex",
        "anp.linalg.eig is missing; and every case of the test is complex (adarray differentiates real values"
        " only)"),
    "test_linalg.py::test_eigvalh_lower_complex": (
        "complex",
        "anp.linalg.eigh is missing; and every case of the test is complex (adarray differentiates real "
        "values only)"),
    "test_linalg.py::test_eigvalh_upper_complex": (
        "complex",
        "anp.linalg.eigh is missing; and every case of the test is complex (adarray differentiates real "
        "values only)"),
    "test_linalg.py::test_frobenius_norm_axis_complex": (
        "complex",
        "complex values are not differentiated by adarray (this test has only complex cases)"),
    "test_linalg.py::test_frobenius_norm_complex": (
        "complex",
        "complex values are not differentiated by adarray (this test has only complex cases)"),
    "test_linalg.py::test_norm_axis_complex[shape0-0]": (
        "complex",
        "complex values are not differentiated by adarray (this test has only complex cases)"),
    "test_linalg.py::test_norm_axis_complex[shape0-1]": (
        "complex",
        "complex values are not differentiated by adarray (this test has only complex cases)"),
    "test_linalg.py::test_norm_axis_complex[shape0-2]": (
        "complex",
        "complex values are not differentiated by adarray (this test has only complex cases)"),
    "test_linalg.py::test_norm_nuclear_axis_complex": (
        "complex",
        "anp.linalg.norm: ord='nuc' is not supported; and every case of the test is complex (adarray "
        "differentiates real values only)"),
    "test_linalg.py::test_norm_nuclear_complex": (
        "complex",
        "anp.linalg.norm: ord='nuc' is not supported; and every case of the test is complex (adarray "
        "differentiates real values only)"),
    "test_linalg.py::test_svd_only_s_2d_complex": (
        "complex",
        "anp.linalg.svd is missing; and every case of the test is complex (adarray differentiates real values"
        " only)"),
    "test_linalg.py::test_svd_only_s_3d_complex": (
        "complex",
        "anp.linalg.svd is missing; and every case of the test is complex (adarray differentiates real values"
        " only)"),
    "test_linalg.py::test_svd_square_2d_complex": (
        "complex",
        "anp.linalg.svd is missing; and every case of the test is complex (adarray differentiates real values"
        " only)"),
    "test_linalg.py::test_svd_square_3d_complex": (
        "complex",
        "anp.linalg.svd is missing; and every case of the test is complex (adarray differentiates real values"
        " only)"),
    "test_linalg.py::test_svd_tall_2d_complex": (
        "complex",
        "anp.linalg.svd is missing; and every case of the test is complex (adarray differentiates real values"
        " only)"),
    "test_linalg.py::test_svd_tall_3d_complex": (
        "complex",
        "anp.linalg.svd is missing; and every case of the test is complex (adarray differentiates real values"
        " only)"),
    "test_linalg.py::test_svd_wide_2d_complex": (
        "complex",
        "anp.linalg.svd is missing; and every case of the test is complex (adarray differentiates real values"
        " only)"),
    "test_linalg.py::test_svd_wide_3d_complex": (
        "complex",
        "anp.linalg.svd is missing; and every case of the test is complex (adarray differentiates real values"
        " only)"),
    "test_linalg.py::test_vector_2norm_complex": (
        "complex",
        "complex values are not differentiated by adarray (this test has only complex cases)"),
    "test_linalg.py::test_vector_norm_ord_complex[6-2]": (
        "complex",
        "complex values are not differentiated by adarray (this test has only complex cases)"),
    "test_linalg.py::test_vector_norm_ord_complex[6-3]": (
        "complex",
        "anp.linalg.norm: ord=3 is not supported; and every case of the test is complex (adarray "
        "differentiates real values only)"),
    "test_linalg.py::test_vector_norm_ord_complex[6-4]": (
        "complex",
        "anp.linalg.norm: ord=4 is not supported; and every case of the test is complex (adarray "
        "differentiates real values only)"),
    "test_systematic.py::test_abs": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_absolute": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_add": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_cos": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_cosh": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_dot": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_einsum_matmult": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_exp": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_expm1": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_log": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_log1p": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_matmul": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_max": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_mean": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_min": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_op_add": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_op_mul": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_op_sub": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_outer": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_prod": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_sin": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_sinh": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_sqrt": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_std": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_sum": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_tan": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_tanh": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_tensordot_1": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    "test_systematic.py::test_var": (
        "complex",
        "complex values are not differentiated by adarray; the real cases pass"),
    # --- by-design (5) ----------------------------------------------------------------------------
    "test_numpy.py::test_numpy_version": (
        "by-design",
        "autograd.numpy is NumPy wrapped and reports NumPy's __version__; adarray.numpy is not NumPy"),
    "test_wrappers.py::test_custom_where_dtypes[int-True-1-2]": ("by-design", _WHERE_RETURNS_PYTHON_OBJECTS),
    "test_wrappers.py::test_custom_where_dtypes[float-True-3.0-4.0]": ("by-design", _WHERE_RETURNS_PYTHON_OBJECTS),
    "test_wrappers.py::test_custom_where_dtypes[float-False-1-2.0]": ("by-design", _WHERE_RETURNS_PYTHON_OBJECTS),
    "test_wrappers.py::test_custom_where_dtypes[list-True-x3-y3]": ("by-design", _WHERE_RETURNS_PYTHON_OBJECTS),
    # --- autograd-internals (4) -------------------------------------------------------------------
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
    "test_wrappers.py::test_deprecated_quick_grad_check_wrapper": (
        "autograd-internals",
        "quick_grad_check (deprecated in autograd) is not provided; adarray.testing.check_grads is the check"),
}
