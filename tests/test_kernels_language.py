"""The kernel language: what it accepts (values against plain Python) and what it rejects, with the
kernel's name, the construct and the source line in the message."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.kernels import kernel

LIMIT = 2.5


def _python(fn, *arrays):
    """fn applied element by element in plain Python (the kernel's reference semantics)."""
    arrays = np.broadcast_arrays(*[np.asarray(a) for a in arrays])
    values = [fn(*[a.item() for a in items]) for items in zip(*[a.reshape(-1) for a in arrays])]
    return np.array(values).reshape(arrays[0].shape)


def clipped_polynomial(x, n):
    """Local variables, +=, a conditional expression, elif, and a loop with a per-element trip count."""
    total = 0.0
    for k in range(n):
        total += (k + 1) * x ** k
    scale = 2 if n > 2 else 1
    if total > LIMIT:
        total = LIMIT + math.log1p(total - LIMIT)
    elif total < -LIMIT:
        total = -LIMIT
    return scale * total


def digits(x):
    """A while loop with an integer counter; integer division and modulo; int/float conversions."""
    count = 0
    value = int(abs(x) * 1000.0)
    while value > 0 and count < 12:
        value = value // 7
        count += 1
    return count + value % 3 + float(x > 0.0)


def early(x, y):
    """Early returns in branches and inside a loop; and/or/not; chained comparisons; min/max."""
    if not (x > 0.0 or y > 0.0):
        return min(x, y, -1.0)
    s = 0.0
    for k in range(1, 8):
        s = s + max(x, y) / k
        if 0.5 < s < 1.0 and k > 2:
            return s
    return s * 2.0


def two_outputs(x):
    return math.sin(x) * x, anp.sigmoid(x) if x > 0.0 else np.tanh(x)


@pytest.mark.parametrize("fn, arrays", [
    (clipped_polynomial, [np.linspace(-1.5, 1.5, 13), np.array([[0], [1], [3], [6]])]),
    (digits, [np.array([-3.3, 0.0, 0.0004, 1.7, 250.0])]),
    (early, [np.linspace(-1.0, 1.0, 9)[:, None], np.linspace(-1.0, 0.6, 5)]),
])
def test_kernels_compute_what_python_computes(fn, arrays):
    assert np.allclose(kernel(fn)(*arrays), _python(fn, *arrays), rtol=1e-12, atol=1e-12)


def test_a_kernel_may_return_several_values_and_call_other_kernels():
    inner = kernel(two_outputs)

    @kernel
    def outer(x):
        a, b = inner(x)
        return a + 2.0 * b

    x = np.array([-1.0, 0.5, 2.0])
    first, second = inner(x)
    assert np.allclose(first, np.sin(x) * x)
    assert np.allclose(second, np.where(x > 0, 1 / (1 + np.exp(-x)), np.tanh(x)))
    assert np.allclose(outer(x), first + 2 * second)


def test_the_scalar_ir_prints_parses_back_and_shows_structured_control_flow():
    program = kernel(early).ir()
    text = str(program)
    assert "cond[" in text and "while[" in text
    assert str(ad.parse_program(text)) == text
    assert all(v.aval.shape == () for v in program.inputs)


# --- rejected constructs: name, construct and line ----------------------------------------------


def uses_list(x):
    values = [x, x]  # noqa: F841 (the list is the rejected construct)
    return x


def uses_index(x):
    return x[0]


def uses_break(x):
    while x > 0.0:
        break
    return x


def uses_print(x):
    print(x)
    return x


def uses_lambda(x):
    return (lambda y: y)(x)


def uses_string(x):
    return "x"


def uses_matmul(x):
    return x @ x


def uses_try(x):
    try:
        y = x
    except ValueError:
        y = 0.0
    return y


def uses_attribute(x):
    return x.real


def helper(x):
    return x


def calls_python(x):
    return helper(x)


def uses_default(x, y=1.0):
    return x


def uses_varargs(*x):
    return 0.0


def returns_nothing(x):
    if x > 0.0:
        return


def returns_mixed(x):
    if x > 0.0:
        return x, x
    return x


def never_returns(x):
    y = x  # noqa: F841


def iterates_a_tuple(x):
    for y in (1.0, 2.0):
        x = x + y
    return x


def uses_invert(x):
    return ~x


def uses_is(x):
    return x is None


def defines_function(x):
    def inner(y):
        return y
    return x


def uses_while_else(x):
    while x > 0.0:
        x = x - 1.0
    else:
        x = 0.0
    return x


def uses_unknown_math(x):
    return math.gamma(x)


def assigns_item(x):
    y = 0.0
    y[0] = x
    return y


REJECTED = [
    (uses_list, "a list", 1),
    (uses_index, r"indexing \(x\[\.\.\.\]\)", 1),
    (uses_break, "break", 2),
    (uses_print, "an expression statement", 1),
    (uses_lambda, "a lambda", 1),
    (uses_string, "a str constant", 1),
    (uses_matmul, "the operator @", 1),
    (uses_try, "a try statement", 1),
    (uses_attribute, r"attribute access \.real", 1),
    (calls_python, "calls 'helper', which is not a kernel function", 1),
    (uses_default, "default argument values", 0),
    (uses_varargs, r"\*args", 0),
    (returns_nothing, "a return without a value", 2),
    (returns_mixed, "every return must give the same number of values", 3),
    (never_returns, "a kernel must return a value", 0),
    (iterates_a_tuple, r"must iterate over range\(\.\.\.\)", 1),
    (uses_invert, "the operator ~", 1),
    (uses_is, "the comparison 'Is'", 1),
    (defines_function, "a nested function", 1),
    (uses_while_else, "while/else", 1),
    (uses_unknown_math, "math.gamma is not a kernel function", 1),
    (assigns_item, r"assignment to indexing", 2),
]


@pytest.mark.parametrize("fn, construct, offset", REJECTED, ids=[r[0].__name__ for r in REJECTED])
def test_unsupported_python_is_rejected_at_decoration_with_name_construct_and_line(fn, construct, offset):
    line = inspect.getsourcelines(fn)[1] + offset
    with pytest.raises(ad.KernelSyntaxError, match=rf"kernel '{fn.__name__}', line {line}: .*{construct}") as info:
        kernel(fn)
    assert f"test_kernels_language.py:{line}" in str(info.value)
    assert isinstance(info.value, SyntaxError) and isinstance(info.value, ad.Error)


def maybe_undefined(x):
    if x > 0.0:
        y = x
    return y


def float_range(x):
    for k in range(x):  # noqa: B007
        x = x + 1.0
    return x


def recursive(x):
    return recursive(x - 1.0)


def half_returns(x):
    if x > 0.0:
        return x
    y = x  # noqa: F841


recursive = kernel(recursive)


@pytest.mark.parametrize("fn, message, offset", [
    (maybe_undefined, "'y' may be undefined here: it is assigned on some paths only", 3),
    (float_range, r"range\(\) needs integer bounds, got float64", 1),
    (recursive, "kernel 'recursive' calls itself; recursion is not supported", 1),
    (half_returns, "not every path returns a value", 0),
])
def test_errors_found_when_tracing_name_the_kernel_and_line(fn, message, offset):
    target = fn.fn if hasattr(fn, "fn") else fn
    line = inspect.getsourcelines(target)[1] + offset
    compiled = fn if hasattr(fn, "fn") else kernel(fn)
    with pytest.raises(ad.KernelSyntaxError, match=rf"kernel '{target.__name__}', line {line}: {message}"):
        compiled(np.array([1.0, -1.0]))


def test_a_call_with_the_wrong_number_of_arguments_names_the_kernel():
    with pytest.raises(ad.KernelSyntaxError, match=r"kernel 'digits' takes 1 arguments \(x\), got 2"):
        kernel(digits)(1.0, 2.0)


def test_arguments_that_do_not_broadcast_name_the_kernel_and_shapes():
    with pytest.raises(ad.ShapeError, match=r"kernel 'early': arguments could not be broadcast.*\(3,\) \(4,\)"):
        kernel(early)(np.ones(3), np.ones(4))
