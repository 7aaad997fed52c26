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
    "test_examples.py::test_gaussian_process_marginal_likelihood": (
        "linalg",
        "anp.linalg.solve is missing; then adarray.scipy.stats.multivariate_normal.logpdf (special/stats/nn)"),
    "test_linalg.py::test_det": ("linalg", "anp.linalg.det is missing"),
    "test_linalg.py::test_det_3d": ("linalg", "anp.linalg.det is missing"),
    "test_linalg.py::test_eig_real": ("linalg", "anp.linalg.eig is missing"),
    "test_linalg.py::test_eigvalh_lower": ("linalg", "anp.linalg.eigh is missing"),
    "test_linalg.py::test_eigvalh_upper": ("linalg", "anp.linalg.eigh is missing"),
    "test_linalg.py::test_inv": ("linalg", "anp.linalg.inv is missing"),
    "test_linalg.py::test_inv_3d": ("linalg", "anp.linalg.inv is missing"),
    "test_linalg.py::test_norm_nuclear": ("linalg", "anp.linalg.norm: ord='nuc' is not supported"),
    "test_linalg.py::test_norm_nuclear_axis": ("linalg", "anp.linalg.norm: ord='nuc' is not supported"),
    "test_linalg.py::test_pinv": ("linalg", "anp.linalg.pinv is missing"),
    "test_linalg.py::test_slogdet": ("linalg", "anp.linalg.slogdet is missing"),
    "test_linalg.py::test_slogdet_3d": ("linalg", "anp.linalg.slogdet is missing"),
    "test_linalg.py::test_solve_arg1": ("linalg", "anp.linalg.solve is missing"),
    "test_linalg.py::test_solve_arg1_1d": ("linalg", "anp.linalg.solve is missing"),
    "test_linalg.py::test_solve_arg1_3d": ("linalg", "anp.linalg.solve is missing"),
    "test_linalg.py::test_solve_arg1_3d_3d": ("linalg", "anp.linalg.solve is missing"),
    "test_linalg.py::test_solve_arg2": ("linalg", "anp.linalg.solve is missing"),
    "test_linalg.py::test_svd_only_s_2d": ("linalg", "anp.linalg.svd is missing"),
    "test_linalg.py::test_svd_only_s_3d": ("linalg", "anp.linalg.svd is missing"),
    "test_linalg.py::test_svd_square_2d": ("linalg", "anp.linalg.svd is missing"),
    "test_linalg.py::test_svd_square_3d": ("linalg", "anp.linalg.svd is missing"),
    "test_linalg.py::test_svd_tall_2d": ("linalg", "anp.linalg.svd is missing"),
    "test_linalg.py::test_svd_tall_3d": ("linalg", "anp.linalg.svd is missing"),
    "test_linalg.py::test_svd_wide_2d": ("linalg", "anp.linalg.svd is missing"),
    "test_linalg.py::test_svd_wide_3d": ("linalg", "anp.linalg.svd is missing"),
    "test_linalg.py::test_vector_norm_ord[6-3]": ("linalg", "anp.linalg.norm: ord=3 is not supported"),
    "test_linalg.py::test_vector_norm_ord[6-4]": ("linalg", "anp.linalg.norm: ord=4 is not supported"),
    # --- numpy-functions (111) --------------------------------------------------------------------
    "test_examples.py::test_fluid_simulation_initial_velocities": (
        "numpy-functions",
        "anp.meshgrid and anp.roll are missing; then by design: the example indexes a NumPy array with traced"
        " indices (init_smoke[i, j]), which NumPy cannot hand to a tracer (JAX refuses it too; "
        "anp.asarray(f)[i, j] works)"),
    "test_linalg.py::test_cholesky": ("numpy-functions", "anp.tril is missing; then anp.linalg.cholesky (linalg)"),
    "test_linalg.py::test_cholesky_broadcast": (
        "numpy-functions",
        "anp.tril is missing; then anp.linalg.cholesky (linalg)"),
    "test_linalg.py::test_cholesky_reparameterization_trick": (
        "numpy-functions",
        "anp.tril is missing; then anp.linalg.cholesky (linalg)"),
    "test_linalg.py::test_eigvalh_lower_broadcasting": (
        "numpy-functions",
        "einsum with '...' (ellipsis) is not supported; then anp.linalg.eigh (linalg)"),
    "test_linalg.py::test_eigvalh_upper_broadcasting": (
        "numpy-functions",
        "einsum with '...' (ellipsis) is not supported; then anp.linalg.eigh (linalg)"),
    "test_numpy.py::test_astype": ("numpy-functions", "anp.dtype is missing"),
    "test_numpy.py::test_c_": ("numpy-functions", "anp.c_ is missing"),
    "test_numpy.py::test_c_mixed": ("numpy-functions", "anp.c_ is missing"),
    "test_numpy.py::test_diag": ("numpy-functions", "anp.diag is missing"),
    "test_numpy.py::test_diagonal": ("numpy-functions", "anp.make_diagonal is missing"),
    "test_numpy.py::test_fliplr": ("numpy-functions", "anp.fliplr is missing"),
    "test_numpy.py::test_flipud": ("numpy-functions", "anp.flipud is missing"),
    "test_numpy.py::test_gradient": ("numpy-functions", "anp.gradient is missing"),
    "test_numpy.py::test_make_diagonal": ("numpy-functions", "anp.make_diagonal is missing"),
    "test_numpy.py::test_nan_to_num": ("numpy-functions", "anp.nan_to_num is missing"),
    "test_numpy.py::test_r_basic": ("numpy-functions", "anp.r_ is missing"),
    "test_numpy.py::test_r_double": ("numpy-functions", "anp.r_ is missing"),
    "test_numpy.py::test_r_mixed": ("numpy-functions", "anp.r_ is missing"),
    "test_numpy.py::test_r_no_relation": ("numpy-functions", "anp.r_ is missing"),
    "test_numpy.py::test_r_node_and_const": ("numpy-functions", "anp.r_ is missing"),
    "test_numpy.py::test_r_slicing": ("numpy-functions", "anp.r_ is missing"),
    "test_numpy.py::test_roll": ("numpy-functions", "anp.roll is missing"),
    "test_numpy.py::test_roll_no_axis": ("numpy-functions", "anp.roll is missing"),
    "test_numpy.py::test_rot90": ("numpy-functions", "anp.rot90 is missing"),
    "test_numpy.py::test_simple_append_arr": ("numpy-functions", "anp.append is missing"),
    "test_numpy.py::test_simple_append_list": ("numpy-functions", "anp.append is missing"),
    "test_numpy.py::test_simple_append_list_2D": ("numpy-functions", "anp.append is missing"),
    "test_numpy.py::test_trace": ("numpy-functions", "anp.trace is missing"),
    "test_numpy.py::test_trace2": ("numpy-functions", "anp.trace is missing"),
    "test_numpy.py::test_trace_extradims": ("numpy-functions", "anp.trace is missing"),
    "test_numpy.py::test_tril": ("numpy-functions", "anp.tril is missing"),
    "test_numpy.py::test_triu": ("numpy-functions", "anp.triu is missing"),
    "test_scalar_ops.py::test_arccosh": ("numpy-functions", "anp.arccosh is missing"),
    "test_scalar_ops.py::test_arcsinh": ("numpy-functions", "anp.arcsinh is missing"),
    "test_scalar_ops.py::test_arctanh": ("numpy-functions", "anp.arctanh is missing"),
    "test_scalar_ops.py::test_deg2rad": ("numpy-functions", "anp.deg2rad is missing"),
    "test_scalar_ops.py::test_degrees": ("numpy-functions", "anp.degrees is missing"),
    "test_scalar_ops.py::test_exp2": ("numpy-functions", "anp.exp2 is missing"),
    "test_scalar_ops.py::test_log10": ("numpy-functions", "anp.log10 is missing"),
    "test_scalar_ops.py::test_log2": ("numpy-functions", "anp.log2 is missing"),
    "test_scalar_ops.py::test_rad2deg": ("numpy-functions", "anp.rad2deg is missing"),
    "test_scalar_ops.py::test_radians": ("numpy-functions", "anp.radians is missing"),
    "test_scalar_ops.py::test_sinc": ("numpy-functions", "anp.sinc is missing"),
    "test_systematic.py::test_angle": ("numpy-functions", "anp.angle is missing"),
    "test_systematic.py::test_arccosh": ("numpy-functions", "anp.arccosh is missing"),
    "test_systematic.py::test_arcsinh": ("numpy-functions", "anp.arcsinh is missing"),
    "test_systematic.py::test_arctanh": ("numpy-functions", "anp.arctanh is missing"),
    "test_systematic.py::test_array_split_1d": ("numpy-functions", "anp.array_split is missing"),
    "test_systematic.py::test_array_split_2d": ("numpy-functions", "anp.array_split is missing"),
    "test_systematic.py::test_array_split_3d": ("numpy-functions", "anp.array_split is missing"),
    "test_systematic.py::test_atleast_1d": ("numpy-functions", "anp.atleast_1d is missing"),
    "test_systematic.py::test_atleast_2d": ("numpy-functions", "anp.atleast_2d is missing"),
    "test_systematic.py::test_atleast_3d": ("numpy-functions", "anp.atleast_3d is missing"),
    "test_systematic.py::test_column_stack_1d": ("numpy-functions", "anp.column_stack is missing"),
    "test_systematic.py::test_column_stack_2d": ("numpy-functions", "anp.column_stack is missing"),
    "test_systematic.py::test_conj": ("numpy-functions", "anp.conj is missing"),
    "test_systematic.py::test_conjugate": ("numpy-functions", "anp.conjugate is missing"),
    "test_systematic.py::test_cross": ("numpy-functions", "anp.cross is missing"),
    "test_systematic.py::test_deg2rad": ("numpy-functions", "anp.deg2rad is missing"),
    "test_systematic.py::test_degrees": ("numpy-functions", "anp.degrees is missing"),
    "test_systematic.py::test_diag": ("numpy-functions", "anp.diag is missing"),
    "test_systematic.py::test_diag_flat": ("numpy-functions", "anp.diag is missing"),
    "test_systematic.py::test_diff": ("numpy-functions", "anp.diff is missing"),
    "test_systematic.py::test_dsplit_3d": ("numpy-functions", "anp.dsplit is missing"),
    "test_systematic.py::test_einsum2_covsum": (
        "numpy-functions",
        "einsum's interleaved form einsum(a, [0, 1], b, [1, 2]) is not supported"),
    "test_systematic.py::test_einsum2_matmult": (
        "numpy-functions",
        "einsum's interleaved form einsum(a, [0, 1], b, [1, 2]) is not supported"),
    "test_systematic.py::test_einsum2_matmult_broadcast": (
        "numpy-functions",
        "einsum's interleaved form einsum(a, [0, 1], b, [1, 2]) is not supported"),
    "test_systematic.py::test_einsum2_three_args": (
        "numpy-functions",
        "einsum's interleaved form einsum(a, [0, 1], b, [1, 2]) is not supported"),
    "test_systematic.py::test_einsum2_transpose": (
        "numpy-functions",
        "einsum's interleaved form einsum(a, [0, 1], b, [1, 2]) is not supported"),
    "test_systematic.py::test_einsum_ellipses": ("numpy-functions", "einsum with '...' (ellipsis) is not supported"),
    "test_systematic.py::test_einsum_ellipses_center": (
        "numpy-functions",
        "einsum with '...' (ellipsis) is not supported"),
    "test_systematic.py::test_einsum_ellipses_tail": (
        "numpy-functions",
        "einsum with '...' (ellipsis) is not supported"),
    "test_systematic.py::test_einsum_matmult_broadcast": (
        "numpy-functions",
        "einsum with '...' (ellipsis) is not supported"),
    "test_systematic.py::test_einsum_matmult_broadcast_leadzero": (
        "numpy-functions",
        "einsum with '...' (ellipsis) is not supported"),
    "test_systematic.py::test_einsum_naked_sum_ellipsis": (
        "numpy-functions",
        "einsum with '...' (ellipsis) is not supported"),
    "test_systematic.py::test_einsum_three_args": (
        "numpy-functions",
        "einsum with a repeated index in one operand (a diagonal) is not supported"),
    "test_systematic.py::test_exp2": ("numpy-functions", "anp.exp2 is missing"),
    "test_systematic.py::test_fabs": ("numpy-functions", "anp.fabs is missing"),
    "test_systematic.py::test_fmax": ("numpy-functions", "anp.fmax is missing"),
    "test_systematic.py::test_fmin": ("numpy-functions", "anp.fmin is missing"),
    "test_systematic.py::test_gradient": ("numpy-functions", "anp.gradient is missing"),
    "test_systematic.py::test_hsplit_2d": ("numpy-functions", "anp.hsplit is missing"),
    "test_systematic.py::test_hsplit_3d": ("numpy-functions", "anp.hsplit is missing"),
    "test_systematic.py::test_imag": ("numpy-functions", "anp.imag is missing"),
    "test_systematic.py::test_kron": ("numpy-functions", "anp.kron is missing"),
    "test_systematic.py::test_log10": ("numpy-functions", "anp.log10 is missing"),
    "test_systematic.py::test_log2": ("numpy-functions", "anp.log2 is missing"),
    "test_systematic.py::test_logaddexp2": ("numpy-functions", "anp.logaddexp2 is missing"),
    "test_systematic.py::test_pad": ("numpy-functions", "anp.pad is missing"),
    "test_systematic.py::test_partition": ("numpy-functions", "anp.partition is missing"),
    "test_systematic.py::test_rad2deg": ("numpy-functions", "anp.rad2deg is missing"),
    "test_systematic.py::test_radians": ("numpy-functions", "anp.radians is missing"),
    "test_systematic.py::test_real": ("numpy-functions", "anp.real is missing"),
    "test_systematic.py::test_real_ic": ("numpy-functions", "anp.real_if_close is missing"),
    "test_systematic.py::test_rollaxis": ("numpy-functions", "anp.rollaxis is missing"),
    "test_systematic.py::test_row_stack_1d": ("numpy-functions", "anp.row_stack is missing"),
    "test_systematic.py::test_row_stack_2d": ("numpy-functions", "anp.row_stack is missing"),
    "test_systematic.py::test_select": ("numpy-functions", "anp.select is missing"),
    "test_systematic.py::test_sort": ("numpy-functions", "anp.sort is missing"),
    "test_systematic.py::test_trace": ("numpy-functions", "anp.trace is missing"),
    "test_systematic.py::test_tril": ("numpy-functions", "anp.tril is missing"),
    "test_systematic.py::test_tril_3d": ("numpy-functions", "anp.tril is missing"),
    "test_systematic.py::test_triu": ("numpy-functions", "anp.triu is missing"),
    "test_systematic.py::test_triu_3d": ("numpy-functions", "anp.triu is missing"),
    "test_systematic.py::test_vsplit_2d": ("numpy-functions", "anp.vsplit is missing"),
    "test_systematic.py::test_vsplit_3d": ("numpy-functions", "anp.vsplit is missing"),
    "test_wrappers.py::test_dtypes": (
        "numpy-functions",
        "anp.real is missing; then float128 / complex256 arrays, which adarray does not support (float16 and "
        "float32 gradients keep their dtype)"),
    "test_wrappers.py::test_hessian_tensor_product_3d": ("numpy-functions", "anp.ndim is missing"),
    "test_wrappers.py::test_matrix_jacobian_product": ("numpy-functions", "anp.roll is missing"),
    "test_wrappers.py::test_tensor_jacobian_product": ("numpy-functions", "anp.roll is missing"),
    # --- special/stats/nn (4) ---------------------------------------------------------------------
    "test_examples.py::test_black_box_variational_inference": (
        "special/stats/nn",
        "adarray.scipy.stats.norm.logpdf and multivariate_normal are missing"),
    "test_examples.py::test_character_model_on_its_own_source[lstm]": (
        "special/stats/nn",
        "autograd.scipy.special.logsumexp: adarray.scipy.special is missing (anp.logsumexp exists; with it "
        "the example trains)"),
    "test_examples.py::test_character_model_on_its_own_source[rnn]": (
        "special/stats/nn",
        "autograd.scipy.special.logsumexp: adarray.scipy.special is missing (anp.logsumexp exists; with it "
        "the example trains)"),
    "test_examples.py::test_independent_component_analysis": (
        "special/stats/nn",
        "adarray.scipy.stats.t.logpdf is missing"),
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
