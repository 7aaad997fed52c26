"""The reversible language: what it accepts, what it rejects (with which message), inverses and run-time checks."""
import importlib.util
import inspect

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
import adarray.reversible as rv
from adarray.reversible import ReversibilityError


def _line(fn, text):
    """The file line of the first source line of fn containing `text`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def rejected(fn, *fragments):
    """Decorating fn raises ReversibilityError naming the function, the line and every fragment."""
    with pytest.raises(ReversibilityError) as info:
        rv.reversible(fn)
    message = str(info.value)
    assert isinstance(info.value, ad.Error)
    assert f"reversible '{fn.__name__}', line" in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


# --- rejected at decoration ------------------------------------------------------------------------------

def test_plain_assignment():
    def f(y, x):
        y = x * 2.0  # noqa: F841
    message = rejected(f, "plain assignment", "forgets the old value", "rv.alloc(0.0)")
    assert f"line {_line(f, 'y = x')}" in message


def test_reading_the_target_on_the_right():
    def f(y, x):
        y += x * y
    rejected(f, "`y += x * y` reads its target 'y'", f"line {_line(f, 'y += x * y')}")

    def g(x, w, i):
        x[i] += x[i] * w
    rejected(g, "`x[i] += x[i] * w` reads its target x[i]")


def test_indices_that_read_what_the_statement_writes():
    # each of these ran forwards but its inverse undid another element (x[x[i]] += 1 with x = [0, 5]: the
    # inverse decremented x[1]), or a total that had changed (x[i] += sum(x))
    def f(y, x, i):
        x[x[i]] += 1
    rejected(f, "the index `x[i]` reads 'x'", "copy the index into an ancilla", f"line {_line(f, 'x[x[i]]')}")

    def g(y, w, i):
        y[i] += w[y[0]]
    rejected(g, "the index `y[0]` reads 'y'")

    def h(k, x):
        rv.swap(k[0], k[k[0]])
    rejected(h, "the index `k[0]` reads 'k'")

    @rv.reversible
    def inner(a, b):
        b += a

    def call(k, x):
        inner(k, x[k])
    rejected(call, "the index `k` reads 'k'")

    def total(y, x, i):
        x[i] += anp.sum(x) * y
    rejected(total, "updates an element of 'x' from the whole array 'x'")

    @rv.reversible
    def allowed(y, x, p, i):  # shapes, other arrays' elements and permutations are fine
        x[p[i]] += y * len(x) + x.shape[0]
        y += x[i] * x[p[0]]
    out = allowed(1.0, np.zeros(3), np.array([2, 0, 1]), 0)
    np.testing.assert_array_equal(out[1], [0.0, 0.0, 6.0])



def test_the_same_variable_twice_in_one_product():
    """NiLang refuses `y += x * x` (each factor writes its gradient back and one write is lost); here every
    occurrence accumulates its own share, so products may repeat a variable, float or integer (the issue's
    `log(k * (k + nu))` with an integer loop index)."""
    @rv.reversible
    def f(y, x):
        y += x * x * anp.sin(x)
    x = 0.7
    assert rv.grad(f)(0.0, x)[1] == pytest.approx(2 * x * np.sin(x) + x * x * np.cos(x), rel=1e-15)
    assert ad.hessian(lambda x: f(0.0, x)[0])(x) == pytest.approx(
        2 * np.sin(x) + 4 * x * np.cos(x) - x * x * np.sin(x), rel=1e-14)

    @rv.reversible
    def g(y, k):
        y += k * k * (k + 1)
    assert g(0, 3) == (36, 3)

    @rv.reversible
    def series(y, nu, n):
        for k in range(1, n):
            y += anp.log(k * (k + nu)) + 2 * k * k
    assert series(0.0, 2, 4)[0] == pytest.approx(np.log(1 * 3 * 2 * 4 * 3 * 5) + 2 * (1 + 4 + 9), rel=1e-15)


def test_unpaired_compute_and_uncompute():
    def f(y, x):
        t = rv.alloc(0.0)
        with rv.compute():
            t += x
        y += t
    rejected(f, "`with rv.compute():` has no matching rv.uncompute()", f"line {_line(f, 'with rv.compute')}")

    def g(y, x):
        y += x
        rv.uncompute()
    rejected(g, "rv.uncompute() without a preceding `with rv.compute():`", f"line {_line(g, 'rv.uncompute')}")


def test_missing_double_and_unallocated_free():
    def missing(y, x):
        t = rv.alloc(0.0)
        t += x
        y += t
    rejected(missing, "missing rv.free", "'t'", f"line {_line(missing, 'rv.alloc')}")

    def double_free(y):
        t = rv.alloc(0.0)
        rv.free(t, 0.0)
        rv.free(t, 0.0)
    rejected(double_free, "double rv.free of 't'")

    def double_alloc(y):
        t = rv.alloc(0.0)
        t = rv.alloc(1.0)
        rv.free(t, 1.0)
    rejected(double_alloc, "double rv.alloc of 't'")

    def free_argument(y):
        rv.free(y, 0.0)
    rejected(free_argument, "rv.free of the argument 'y'")

    def missing_in_loop(y, n):
        for _i in range(n):
            t = rv.alloc(0.0)
            t += y
    rejected(missing_in_loop, "missing rv.free", "loop body")


def test_use_after_free():
    def f(y, x):
        t = rv.alloc(0.0)
        rv.free(t, 0.0)
        y += t * x
    rejected(f, "'t' is used after rv.free", f"line {_line(f, 'y += t')}")


def test_loop_bounds_written_by_the_body():
    def f(y, n):
        for _i in range(n):
            n += 1
    rejected(f, "writes 'n', which the loop bounds", f"line {_line(f, 'for _i')}")

    def g(y, n):
        for i in range(n):
            i += 1
    rejected(g, "writes the loop variable 'i'")


def test_alloc_of_another_variable():
    def f(y, x):
        t = rv.alloc(x)
        rv.free(t, x)
    rejected(f, "rv.alloc takes a constant", "silently copy", "t = rv.alloc(0.0); t += y")


def test_calls_and_returns_outside_the_language():
    def plain_call(y, x):
        print(x)
    rejected(plain_call, "calls 'print', which is not a reversible function", f"line {_line(plain_call, 'print')}")

    def helper(v):
        return v

    def ordinary_function(y, x):
        helper(x)
    rejected(ordinary_function, "calls 'helper', which is not a reversible function")

    def returns(y, x):
        y += x
        return y
    rejected(returns, "return of a value", f"line {_line(returns, 'return y')}")

    def expression(y, x):
        x + y
    rejected(expression, "an expression statement does nothing")

    def early(y, x):
        return
        y += x
    rejected(early, "an early return")


def test_other_constructs_outside_the_language():
    def branch_writes_condition(y, x):
        if y > 0:
            y += x
    rejected(branch_writes_condition, "the branch writes 'y', which its condition `y > 0` reads", "rv.if_(pre, post)")

    def plain_while(y, n):
        while n > 0:
            y += 1.0
    rejected(plain_while, "needs a post-condition", "rv.while_(pre, post)")

    @rv.reversible
    def multiply_by_variable(y, x):
        y *= x  # reversible on a lognumber only: refused at the first call, when y's kind is known
    with pytest.raises(ReversibilityError, match=rf"line {_line(multiply_by_variable.fn, 'y *= x')}: `y \*= x`: "
                                                 r"\*= and /= are reversible only by a non-zero constant"):
        multiply_by_variable(1.0, 2.0)

    def divide_by_zero(y):
        y /= 0
    rejected(divide_by_zero, "non-zero constant")

    def other_operator(y, x):
        y **= x
    rejected(other_operator, "the operator is not reversible")

    def slicing(y, x):
        y += anp.sum(x[1:])
    rejected(slicing, "slices are not supported")

    def unknown_function(y, x):
        y += np.linalg.norm(x)
    rejected(unknown_function, "calls a function reversible expressions do not know")

    def free_array(y):
        y += CONSTANT_ARRAY[0]
    rejected(free_array, "'CONSTANT_ARRAY' is a ndarray from outside the function", "pass arrays as arguments")

    def swap_itself(y):
        rv.swap(y, y)
    rejected(swap_itself, "`rv.swap(y, y)` passes 'y' twice")

    def rotation_angle(a, b):
        rv.rot(a, b, a)
    rejected(rotation_angle, "the angle reads 'a', which the rotation updates")

    def same_argument(x):
        swap_pair(x, x)
    rejected(same_argument, "passes 'x' twice")


CONSTANT_ARRAY = np.ones(3)


@rv.reversible
def swap_pair(a, b):
    rv.swap(a, b)


def test_markers_outside_reversible_functions():
    with pytest.raises(ReversibilityError, match="only has a meaning inside a function decorated"):
        rv.swap(1.0, 2.0)


# --- accepted programs and their inverses ----------------------------------------------------------------

@rv.reversible
def every_statement(y, a, b, k, flag, x):
    y += a * 2.0
    y -= anp.exp(b) / 3.0
    k ^= 5
    flag ^= True
    a *= 2.0
    b /= 4.0
    rv.swap(a, b)
    rv.rot(a, b, 0.3)
    rv.neg(y)
    swap_pair(x[0], x[1])
    rv.invert(swap_pair)(x[1], x[2])
    t = rv.alloc(0.0)
    with rv.compute():
        t += anp.sin(a)
    y += t
    rv.uncompute()
    rv.free(t, 0.0)
    for i in range(len(x) - 1, 0, -2):
        x[i] += x[i - 1] * 0.5
    for i in reversed(range(1, len(x))):
        x[i - 1] -= 0.25 * x[i]
    if k > 3:
        y += 1.0
    else:
        y -= 1.0
    if rv.if_(a > 0.0, a > 0.0):
        a += 1.0
    c = rv.alloc(0)
    while rv.while_(c < 3, c > 0):
        c += 1
        y += 0.5 * c
    rv.free(c, 3)


def test_every_statement_runs_forwards_and_backwards():
    x = np.array([1.0, -2.0, 3.0, 0.5])
    args = (0.3, 0.7, -0.4, 7, False, x)
    out = every_statement(*args)
    back = rv.invert(every_statement)(*out)
    for original, restored in zip(args, back):
        np.testing.assert_allclose(restored, original, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(x, [1.0, -2.0, 3.0, 0.5])  # the caller's array is not written
    assert out[3] == 7 ^ 5 and out[4] == np.True_
    assert back[3] == 7 and back[3].dtype == np.int64  # integers come back exactly


def test_inverse_of_a_stepped_range_walks_the_realised_indices():
    @rv.reversible
    def stepped(y, x):
        for i in range(1, 6, 2):  # 1, 3, 5 (not ending on 6: NiLang's reversal visited 6, 4, 2)
            y += x[i] * (i + 1.0)
            x[i] += 1.0
    x = np.arange(7.0)
    y, x_new = stepped(0.0, x)
    assert y == 1 * 2 + 3 * 4 + 5 * 6
    y_back, x_back = rv.invert(stepped)(y, x_new)
    assert y_back == 0.0
    np.testing.assert_array_equal(x_back, x)
    assert "reversed(range(1, 6, 2))" in str(rv.invert(stepped))


def test_integers_and_booleans_invert_exactly_floats_to_rounding():
    @rv.reversible
    def mix(k, b, y, x):
        for i in range(40):
            k += 3 * i + 7
            b ^= i % 3 == 0
            y += anp.sin(x * i) / 3.0
    args = (np.int64(2 ** 40), np.False_, 0.1, 0.7)
    out = mix(*args)
    back = rv.invert(mix)(*out)
    assert back[0] == args[0] and back[1] == args[1]  # exactly
    assert back[2] != 0.1 and abs(back[2] - 0.1) < 1e-15  # each += rounds; the inverse undoes it up to rounding
    assert back[3] == 0.7


def test_rounding_can_absorb_a_float_for_good():
    @rv.reversible
    def absorb(y, x):
        y += 1e16 * x
        y -= 1e16 * x
    y, _ = absorb(0.1, 1.0)  # (0.1 + 1e16) - 1e16 == 0: the 0.1 is absorbed, and no inverse can bring it back
    assert y == 0.0
    assert rv.invert(absorb)(y, 1.0)[0] == 0.0


def test_element_updates_that_alias_at_run_time_are_caught():
    @rv.reversible
    def shift(x, i, j):
        x[i] += x[j] * 2.0
    np.testing.assert_array_equal(shift(np.ones(3), 0, 1)[0], [3.0, 1.0, 1.0])
    with pytest.raises(ReversibilityError, match=r"x\[i\] and x\[j\] are the same element"):
        shift(np.ones(3), 1, 1)


@rv.reversible
def _add_if(y, last):
    if last:
        y += 1.0


def test_a_truth_value_passed_to_a_call():
    """`g(y, i == n - 1)`: the value goes in a boolean ancilla (by ^=), and its type never shows an internal name."""
    @rv.reversible
    def count_last(y, n):
        for i in range(n):
            _add_if(y, i == n - 1)
            _add_if(y, not (i > 0))
    assert count_last(0.0, 3) == (2.0, 3)
    assert rv.invert(count_last)(2.0, 3) == (0.0, 3)


@rv.reversible
def _rotate_by_third(p, i, j, k):
    rv.rot(p[i], p[j], p[k])


def test_a_rotation_angle_from_the_rotated_array():
    """rv.rot(p[0], p[1], p[2]): the angle may be another element of the rotated array, checked at run time."""
    p = np.array([1.0, 2.0, 0.3])
    out = _rotate_by_third(p, 0, 1, 2)[0]
    c, s = np.cos(0.3), np.sin(0.3)
    np.testing.assert_allclose(out, [c - 2 * s, 2 * c + s, 0.3], rtol=1e-15)
    np.testing.assert_allclose(rv.invert(_rotate_by_third)(out, 0, 1, 2)[0], p, rtol=1e-15)
    w = np.array([0.3, -1.2, 0.7])
    plain = lambda p: anp.stack([p[0] * anp.cos(p[2]) - p[1] * anp.sin(p[2]),  # noqa: E731
                                 p[1] * anp.cos(p[2]) + p[0] * anp.sin(p[2]), p[2]])
    loss = lambda p: anp.dot(w, _rotate_by_third(p, 0, 1, 2)[0])  # noqa: E731
    np.testing.assert_allclose(ad.grad(loss)(p), ad.grad(lambda p: anp.dot(w, plain(p)))(p), rtol=1e-14)
    np.testing.assert_allclose(ad.hessian(loss)(p), ad.hessian(lambda p: anp.dot(w, plain(p)))(p), atol=1e-14)
    for k, clash in ((0, r"p\[i\] and p\[k\]"), (1, r"p\[j\] and p\[k\]")):
        with pytest.raises(ReversibilityError, match=clash + r" are the same element \(index " + str(k)):
            _rotate_by_third(p, 0, 1, k)

    def whole(p, q):
        rv.rot(p[0], p[1], anp.sum(p))
    rejected(whole, "the angle reads 'p', which the rotation updates")

    def same(p):
        rv.rot(p[0], p[1], p[1])
    rejected(same, "the angle reads p[1], which the rotation updates")

    def variable(a, b):
        rv.rot(a, b, a * 0.5)
    rejected(variable, "the angle reads 'a', which the rotation updates")


@rv.reversible
def _swap_rows(x, y):
    rv.swap(x[0], x[1])
    rv.swap(x[2], y)


def test_swapping_rows_of_an_array():
    """Rows are views: a swap copies them (the interpreter once lost a row: x[0], x[1] = x[1], x[0])."""
    x, y = np.arange(9.0).reshape(3, 3), np.array([-1.0, -2.0, -3.0])
    for mode in ["numpy"] + (["numba"] if importlib.util.find_spec("numba") else []):
        previous = rv.set_reversible_backend(mode)
        try:
            a, b = _swap_rows(x, y)
            np.testing.assert_array_equal(a, [[3, 4, 5], [0, 1, 2], [-1, -2, -3]])
            np.testing.assert_array_equal(b, [6, 7, 8])
            back = rv.invert(_swap_rows)(a, b)
            np.testing.assert_array_equal(back[0], x)
            np.testing.assert_array_equal(back[1], y)
        finally:
            rv.set_reversible_backend(previous)


def test_typing_errors_name_the_line():
    @rv.reversible
    def accumulate(k, x):
        k += x
    with pytest.raises(ReversibilityError, match="the integer 'k' cannot accumulate a float"):
        accumulate(1, 0.5)
    with pytest.raises(ReversibilityError, match="reduce it with sum"):
        accumulate(1.0, np.ones(3))


@rv.reversible
def _shifted(y, x, i):
    y += x
    x[i] += 1.0


def test_errors_of_the_generated_code_name_the_function_and_the_line():
    with pytest.raises(ad.ShapeError, match=rf"reversible '_shifted', line {_line(_shifted, 'y += x')}: `y \+= x`: "
                                            r"`x` has shape \(4,\), the target \(3,\)"):
        _shifted(np.zeros(3), np.ones(4), 0)  # on Numba too, whose in-place operations would not check
    previous = rv.set_reversible_backend("numpy")  # compiled code knows no source lines
    try:
        with pytest.raises(ad.ExecutionError, match=rf"reversible '_shifted', line {_line(_shifted, 'x[i] +=')}: "
                                                    "IndexError: index 5 is out of bounds"):
            _shifted(np.zeros(3), np.ones(3), 5)
    finally:
        rv.set_reversible_backend(previous)


# --- run-time checks ------------------------------------------------------------------------------------

@rv.reversible
def leaky(y, x):
    t = rv.alloc(0.0)
    t += x
    y += t
    rv.free(t, 0.0)


@rv.reversible(check=False)
def leaky_unchecked(y, x):
    t = rv.alloc(0.0)
    t += x
    y += t
    rv.free(t, 0.0)


@rv.reversible(atol=1e-3)
def slightly_leaky(y, x):
    t = rv.alloc(0.0)
    t += x
    t -= x * 0.9999
    rv.free(t, 0.0)


def test_ancilla_not_restored():
    with pytest.raises(ReversibilityError) as info:
        leaky(0.0, 0.25)
    message = str(info.value)
    line = _line(leaky.fn, "rv.free")
    assert f"reversible 'leaky', line {line}" in message and "'t' is not restored" in message
    assert "0.25" in message and "atol 1e-08" in message
    assert leaky_unchecked(0.0, 0.25)[0] == 0.25  # check=False: no check
    slightly_leaky(0.0, 1.0)  # within atol
    with pytest.raises(ReversibilityError):
        slightly_leaky(0.0, 100.0)


@rv.reversible
def bad_branch(y, x):
    if rv.if_(y > 0.0, y > 0.0):
        y -= x


def test_if_post_condition_disagrees_with_pre_condition():
    assert bad_branch(1.0, 0.5)[0] == 0.5
    with pytest.raises(ReversibilityError) as info:
        bad_branch(1.0, 2.0)
    message = str(info.value)
    assert f"line {_line(bad_branch.fn, 'rv.if_')}" in message
    assert "the post-condition `(y > 0.0)` is False after the branch, but the pre-condition `(y > 0.0)` was True" \
        in message


@rv.reversible
def counter_loop(y, c, n):
    while rv.while_(c < n, c > 0):
        c += 1
        y += 1.0


def test_while_post_condition_on_entry_and_after_iterations():
    assert counter_loop(0.0, 0, 4)[:2] == (4.0, 4)
    with pytest.raises(ReversibilityError, match=r"post-condition `\(c > 0\)` already holds on entry"):
        counter_loop(0.0, 2, 4)
    back = rv.invert(counter_loop)(4.0, 4, 4)
    assert back[:2] == (0.0, 0)


def test_a_bound_changed_during_the_loop():
    # The language rejects a body that writes its bounds; the run-time check guards programs built otherwise
    # (here straight in the IR: the body increments n, the bound).
    program = (("f", ("y", "n"), (("y", "f", 0), ("n", "i", 0), ("i", "i", 0)), True, 1e-8,
                (("for", 7, "i", 0, "n", 1, False, (("inc", 8, "n", 1),)),)),)
    with pytest.raises(ReversibilityError, match=r"line 7: a bound of range\(0, n, 1\) changed during the loop: "
                                                 r"range\(0, 3, 1\) became range\(0, 6, 1\)"):
        rv.reversible_p.bind(np.float64(0.0), np.int64(3), program=program, batch=0)


def test_reversible_functions_print_as_the_language():
    text = str(rv.invert(leaky))
    assert text.splitlines()[0] == "def ~leaky(y, x):"
    assert "y -= t" in text and "t -= x" in text
