"""Bad input gets a clear adarray error naming the function, the operation, the shapes and the line."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp


def add_mismatched(x, y):
    return anp.sum(x + y)


def test_shape_mismatch_names_op_shapes_function_and_line():
    with pytest.raises(ad.ShapeError) as info:
        ad.grad(add_mismatched)(np.ones(3), np.ones(4))
    message = str(info.value)
    assert "add" in message and "(3,)" in message and "(4,)" in message
    assert "'add_mismatched'" in message and "test_errors.py:" in message


def test_matmul_mismatch():
    with pytest.raises(ad.ShapeError, match=r"matmul: shapes \(2, 3\) and \(2, 3\)"):
        ad.jit(lambda a: a @ a)(np.ones((2, 3)))


def test_shape_errors_are_also_raised_on_plain_arrays():
    with pytest.raises(ad.ShapeError, match="broadcast"):
        anp.add(np.ones(3), np.ones(4))
    with pytest.raises(ad.ShapeError, match="reshape"):
        anp.reshape(np.ones(6), (4, -1))


def branchy(x):
    if x > 0:
        return x
    return -x


@pytest.mark.parametrize("transform", [ad.jit, ad.vmap])
def test_python_if_on_traced_value_says_what_to_use_instead(transform):
    # Under grad the same function works (tests/test_guards.py); under jit and vmap the value is unknown.
    with pytest.raises(ad.TracingError) as info:
        transform(branchy)(np.ones(2) if transform is ad.vmap else 1.0)
    message = str(info.value)
    assert "where" in message and "ad.cond" in message and "'branchy'" in message
    assert "guards=True" in message


@pytest.mark.parametrize("convert", [float, int, bool])
def test_concrete_conversions_of_traced_values(convert):
    with pytest.raises(ad.TracingError, match="traced value"):
        ad.jit(lambda x: x * convert(x))(1.0)


def test_while_on_traced_value():
    def loop(x):
        while x < 10:
            x = x * 2
        return x

    with pytest.raises(ad.TracingError, match="while_loop"):
        ad.jit(loop)(1.0)


def test_numpy_asarray_of_traced_value():
    with pytest.raises(ad.TracingError, match="adarray.numpy"):
        ad.jit(lambda x: np.asarray(x))(np.ones(2))


def test_differentiating_an_integer_input():
    with pytest.raises(ad.NonDifferentiableError, match="i64"):
        ad.grad(lambda x: anp.sum(x * 1.0))(np.arange(3))


def test_bad_argnums():
    with pytest.raises(ad.ArgumentError, match="argnums 3 is out of range"):
        ad.grad(lambda x: x, argnums=3)(1.0)


def test_grad_of_non_scalar_output():
    with pytest.raises(ad.ArgumentError, match=r"scalar.*\(3,\)"):
        ad.grad(lambda x: x * 2)(np.ones(3))


def test_has_aux_without_a_pair():
    with pytest.raises(ad.ArgumentError, match="has_aux"):
        ad.grad(lambda x: x * 2, has_aux=True)(1.0)


def test_non_array_argument():
    with pytest.raises(ad.ArgumentError, match="static_argnums"):
        ad.jit(lambda x, s: x)(1.0, "text")


def test_static_index_out_of_range():
    with pytest.raises(ad.IndexOutOfRangeError, match="index 5 is out of range for axis 0 of size 3"):
        ad.jit(lambda x: x[5])(np.ones(3))
    with pytest.raises(ad.IndexOutOfRangeError):
        ad.jit(lambda x: x[np.array([0, 3])])(np.ones(3))


def test_traced_index_out_of_range_at_run_time_names_the_equation():
    with pytest.raises(ad.ExecutionError, match="gather"):
        ad.jit(lambda x, i: x[i])(np.ones(3), np.array([7]))


def test_traced_boolean_mask_points_to_where():
    with pytest.raises(ad.TracingError, match="where"):
        ad.jit(lambda x: x[x > 0])(np.ones(3))


def test_escaped_tracer():
    leaked = []
    ad.jit(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises(ad.TracingError, match="escaped"):
        ad.jit(lambda y: y + leaked[0])(1.0)


def test_errors_share_one_root():
    for error in (ad.ShapeError, ad.TracingError, ad.NonDifferentiableError, ad.ArgumentError,
                  ad.UnsupportedError, ad.ParseError, ad.VerifyError, ad.ExecutionError, ad.IndexOutOfRangeError):
        assert issubclass(error, ad.Error)


def test_nan_and_inf_are_values_not_errors():
    assert np.isinf(ad.grad(lambda x: anp.log(x))(0.0))


def named_product(a, b):
    return a * b


@pytest.mark.parametrize("transform", [ad.grad, ad.value_and_grad, ad.jacfwd, ad.jacrev, ad.hessian])
def test_repeated_argnums_are_a_clear_error(transform):
    # Was a bare StopIteration from deep inside. JAX rejects them too (with a TypeError).
    with pytest.raises(ad.ArgumentError, match=r"argnums \(0, 0\) of 'named_product' name the same argument"):
        transform(named_product, argnums=(0, 0))(1.0, 2.0)
    with pytest.raises(ad.ArgumentError, match="same argument"):
        transform(named_product, argnums=(1, -1))(1.0, 2.0)


@pytest.mark.parametrize("argnums", ["a", 1.0, (0, "b"), None])
def test_argnums_of_the_wrong_type(argnums):
    with pytest.raises(ad.ArgumentError, match="argnums of 'named_product' must be an int or a tuple of ints"):
        ad.grad(named_product, argnums=argnums)(1.0, 2.0)


def test_static_argnums_of_the_wrong_type():
    with pytest.raises(ad.ArgumentError, match="static_argnums of 'named_product' must be an int"):
        ad.jit(named_product, static_argnums="b")(1.0, 2.0)


def test_pullback_and_linearize_never_raise_stop_iteration():
    # An unused input or a constant output: zeros, not a StopIteration escaping from the pullback.
    np.testing.assert_array_equal(ad.vjp(lambda a, b: a * 3.0, np.ones(2), np.ones(2))[1](np.ones(2)),
                                  (3.0 * np.ones(2), np.zeros(2)))
    np.testing.assert_array_equal(ad.vjp(lambda a: anp.ones(2), np.ones(2))[1](np.ones(2)), (np.zeros(2),))
    np.testing.assert_array_equal(ad.linearize(lambda a: anp.ones(2), np.ones(2))[1](np.ones(2)), np.zeros(2))


def test_kernel_ir_takes_the_irs_dtype_names_and_names_a_bad_one():
    @ad.kernel
    def scaled(x, n):
        return x * n

    by_name = scaled.ir("f32", "i64")
    assert by_name.in_avals == scaled.ir(np.float32, np.dtype("int64")).in_avals
    assert [str(a) for a in by_name.in_avals] == ["f32[]", "i64[]"]
    assert [str(a) for a in scaled.ir().in_avals] == ["f64[]", "f64[]"]
    with pytest.raises(ad.Error, match=r"kernel 'scaled'.ir: unknown dtype 'f65'; give a NumPy dtype or one of f64"):
        scaled.ir("f64", "f65")
    with pytest.raises(ad.Error, match=r"one dtype per argument \(x, n\), got 1"):
        scaled.ir("f64")


def test_an_unknown_kernel_backend_is_an_adarray_error():
    from adarray.kernels import kernel_backend, set_kernel_backend

    before = kernel_backend()
    with pytest.raises(ad.Error, match="the kernel backend must be one of 'auto', 'numpy', 'numba', got 'cuda'"):
        set_kernel_backend("cuda")
    assert kernel_backend() == before
