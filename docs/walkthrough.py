"""A walkthrough of adarray: one function, f(x) = sin(x) * x, from Python to derivative programs.

Every derivative in adarray is a program transformation. This file follows
f(x) = sin(x) * x through the whole pipeline and shows each stage as text:

    1. trace       Python function -> Program (typed SSA IR)
    2. print       the Program's canonical text form
    3. jvp         Program -> forward-mode Program (primals, tangents) -> (outputs, output tangents)
    4. vjp         Program -> reverse-mode Program (primals, cotangents) -> (outputs, input cotangents)
    5. simplify    Program -> an equivalent, smaller Program
    6. run         compile_program(Program) -> a callable on NumPy arrays
    7. parse       text -> Program, the round trip of step 2
    8. the same through the user API: ad.grad, ad.jvp, ad.make_ir

The exact derivative is f'(x) = cos(x) * x + sin(x); every stage is checked
against it.

Run it as a script (`python docs/walkthrough.py`) to see every program printed,
or under pytest, which collects the `test_*` functions (pyproject.toml lists
walkthrough.py in python_files and docs in testpaths).
"""
from __future__ import annotations

import numpy as np

import adarray as ad
import adarray.numpy as anp
from adarray.backends.numpy import compile_program
from adarray.core.types import Aval
from adarray.passes import simplify
from adarray.tracing import trace_program
from adarray.transforms.jvp import jvp_program
from adarray.transforms.vjp import vjp_program


def f(x):
    """The function of this walkthrough. `anp` is adarray.numpy: NumPy on plain arrays,
    primitive binders on traced values."""
    return anp.sin(x) * x


def exact_derivative(x):
    return np.cos(x) * x + np.sin(x)


X = np.linspace(-2.0, 2.0, 5)  # the point we evaluate at: five values at once (f is elementwise)
AVAL = Aval(X.shape, X.dtype)  # what tracing sees: only the shape and dtype, printed f64[5]


# --- 1 and 2. Trace, then print ----------------------------------------------------------------
# trace_program calls f once on a tracer of type f64[5]. Every adarray.numpy call binds a
# primitive, which appends one equation. The result is closed: f's inputs become the program's
# inputs (values f closed over would become extra inputs, listed in `closure`).

def traced():
    program, out_tree, closure = trace_program(f, [AVAL], "f")
    return program, out_tree, closure


TRACED_TEXT = """\
{ lambda a:f64[5] .
    b:f64[5] = sin a
    c:f64[5] = mul b a
  in (c) }"""


def test_trace_prints_the_program():
    program, out_tree, closure = traced()
    assert str(program) == TRACED_TEXT
    assert closure == []  # f closes over no traced values
    assert [str(a) for a in program.in_avals] == ["f64[5]"]
    assert [eqn.prim.name for eqn in program.eqns] == ["sin", "mul"]


# --- 3. Forward mode: jvp_program --------------------------------------------------------------
# jvp_program(program, wrt) adds one tangent input per input flagged in `wrt` and one tangent
# output per output. Each equation's tangent comes from its primitive's jvp rule; for sin and
# mul those rules read the table of scalar partials (primitives/scalar.py):
#     d sin(a) = cos(a) * da,      d (b * a) = a * db + b * da.
# The new program is (x, dx) -> (f(x), f'(x) dx).

JVP_TEXT = """\
{ lambda a:f64[5] b:f64[5] .
    c:f64[5] = sin a
    d:f64[5] = cos a
    e:f64[5] = mul b d
    f:f64[5] = mul c a
    g:f64[5] = mul e a
    h:f64[5] = mul b c
    i:f64[5] = add g h
  in (f, i) }"""


def forward_program():
    program, _, _ = traced()
    return jvp_program(program, [True])


def test_jvp_program():
    assert str(forward_program()) == JVP_TEXT
    tangent = np.ones_like(X)  # a tangent of ones gives the elementwise derivative
    value, derivative = compile_program(forward_program())(X, tangent)
    np.testing.assert_allclose(value, np.sin(X) * X)
    np.testing.assert_allclose(derivative, exact_derivative(X), rtol=1e-12)


# --- 4. Reverse mode: vjp_program --------------------------------------------------------------
# vjp_program(program, wrt) is (x, output cotangent) -> (f(x), input cotangent). In the program
# below, a is x and b is the output cotangent. The forward sweep recomputes c = sin a and
# d = c * a; the backward sweep visits the equations in reverse, calling each primitive's vjp
# rule and accumulating cotangents:
#     from d = c * a:   e = b * a   (the cotangent of c)   and   f = b * c   (a's first share)
#     from c = sin a:   h = e * cos a                                          (a's second share)
#     i = f + h is the cotangent of a: b * (sin(a) + a cos(a)).

VJP_TEXT = """\
{ lambda a:f64[5] b:f64[5] .
    c:f64[5] = sin a
    d:f64[5] = mul c a
    e:f64[5] = mul b a
    f:f64[5] = mul b c
    g:f64[5] = cos a
    h:f64[5] = mul e g
    i:f64[5] = add f h
  in (d, i) }"""


def reverse_program():
    program, _, _ = traced()
    return vjp_program(program, [True])


def test_vjp_program():
    assert str(reverse_program()) == VJP_TEXT
    cotangent = np.ones_like(X)
    value, input_cotangent = compile_program(reverse_program())(X, cotangent)
    np.testing.assert_allclose(input_cotangent, exact_derivative(X), rtol=1e-12)


# --- 5. Simplify --------------------------------------------------------------------------------
# grad seeds the output cotangent with a constant instead of taking it as an input:
# vjp_program(program, wrt, seeds=[ones]). The seed appears as the literal 1.0:f64[5], and the
# rules multiply by it. simplify removes `x * 1` (and folds constants, removes `x + 0`, `x * 0`,
# common subexpressions and dead code), leaving exactly cos(x) * x + sin(x).

SEEDED_TEXT = """\
{ lambda a:f64[5] .
    b:f64[5] = sin a
    c:f64[5] = mul b a
    d:f64[5] = mul 1.0:f64[5] a
    e:f64[5] = mul 1.0:f64[5] b
    f:f64[5] = cos a
    g:f64[5] = mul d f
    h:f64[5] = add e g
  in (c, h) }"""

SIMPLIFIED_TEXT = """\
{ lambda a:f64[5] .
    b:f64[5] = sin a
    c:f64[5] = mul b a
    d:f64[5] = cos a
    e:f64[5] = mul a d
    f:f64[5] = add b e
  in (c, f) }"""


def seeded_program():
    program, _, _ = traced()
    return vjp_program(program, [True], seeds=[np.ones(X.shape)])


def test_simplify_removes_the_seed():
    assert str(seeded_program()) == SEEDED_TEXT
    assert str(simplify(seeded_program())) == SIMPLIFIED_TEXT


# --- 6. Run -------------------------------------------------------------------------------------
# compile_program resolves each equation to its NumPy function once; the callable takes and
# returns plain NumPy arrays. Both programs compute the same values; the simplified one does
# fewer operations.

def test_run_matches_the_exact_derivative():
    for program in (seeded_program(), simplify(seeded_program())):
        value, derivative = compile_program(program)(X)
        np.testing.assert_allclose(value, np.sin(X) * X, rtol=1e-12)
        np.testing.assert_allclose(derivative, exact_derivative(X), rtol=1e-12)


# --- 7. Parse: the text form round-trips --------------------------------------------------------
# ad.parse_program reads the printed text back into a Program (primitives are looked up by
# name in the registry), so programs can be stored, diffed, and written by hand.

def test_parse_round_trip():
    text = str(simplify(seeded_program()))
    parsed = ad.parse_program(text)
    assert str(parsed) == text
    value, derivative = compile_program(parsed)(X)
    np.testing.assert_allclose(derivative, exact_derivative(X), rtol=1e-12)


def test_parse_a_program_written_by_hand():
    # The derivative written directly, with the variable names of our choice.
    derivative = ad.parse_program("""
        { lambda x:f64[5] .
            s:f64[5] = sin x
            c:f64[5] = cos x
            xc:f64[5] = mul x c
            d:f64[5] = add xc s
          in (d) }""")
    (result,) = compile_program(derivative)(X)
    np.testing.assert_allclose(result, exact_derivative(X), rtol=1e-12)


# --- 8. The same through the user API -----------------------------------------------------------
# Users rarely call the transformations directly: ad.grad traces, transforms (vjp with a seed),
# simplifies, compiles and caches in one call; ad.make_ir returns the program it would run.
# grad needs a scalar output, so we differentiate sum(f(x)), whose gradient is f'(x) elementwise.

def total(x):
    return anp.sum(f(x))


GRAD_TEXT = """\
{ lambda a:f64[5] .
    b:f64[5] = sin a
    c:f64[5] = cos a
    d:f64[5] = mul a c
    e:f64[5] = add b d
  in (e) }"""


def test_user_api():
    assert str(ad.make_ir(ad.grad(total))(X)) == GRAD_TEXT
    np.testing.assert_allclose(ad.grad(total)(X), exact_derivative(X), rtol=1e-12)
    value, tangent = ad.jvp(f, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(tangent, exact_derivative(X), rtol=1e-12)
    # Second derivative by composition: f''(x) = 2 cos(x) - x sin(x).
    second = ad.grad(ad.grad(f))(0.5)
    np.testing.assert_allclose(second, 2 * np.cos(0.5) - 0.5 * np.sin(0.5), rtol=1e-12)


def main():
    stages = [
        ("1-2. traced program: x -> sin(x) * x", traced()[0]),
        ("3. jvp program: (x, dx) -> (f(x), f'(x) dx)", forward_program()),
        ("4. vjp program: (x, ct) -> (f(x), ct f'(x))", reverse_program()),
        ("5a. vjp program seeded with ones (as grad builds it)", seeded_program()),
        ("5b. ... after simplify", simplify(seeded_program())),
        ("8. ad.make_ir(ad.grad(lambda x: anp.sum(f(x))))", ad.make_ir(ad.grad(total))(X)),
    ]
    for title, program in stages:
        print(f"# {title}\n{program}\n")
    value, derivative = compile_program(simplify(seeded_program()))(X)
    print("6. run at x =", X)
    print("   f(x)              =", value)
    print("   derivative        =", derivative)
    print("   cos(x) x + sin(x) =", exact_derivative(X))
    tests = [value for name, value in globals().items() if name.startswith("test_") and callable(value)]
    for test in tests:
        test()
    print(f"\nall {len(tests)} checks passed")


if __name__ == "__main__":
    main()
