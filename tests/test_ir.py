"""The IR contracts: printer/parser round trip, parse errors, the verifier, and a golden vjp."""
from __future__ import annotations

import numpy as np
import pytest

import adarray.backends.numpy  # noqa: F401  (the implementations of every primitive)
import adarray.primitives  # noqa: F401  (registers primitives)
from adarray.backends.numpy import compile_program
from adarray.core.errors import ParseError, ShapeError, VerifyError
from adarray.core.ir import Eqn, Literal, Program, Var
from adarray.core.parser import parse_program
from adarray.core.primitive import REGISTRY
from adarray.core.printer import format_program
from adarray.core.types import Aval
from adarray.core.verify import verify
from adarray.passes import simplify
from adarray.primitives.elementwise import mul
from adarray.primitives.reduce import reduce_sum
from adarray.testing import check_passes
from adarray.tracing import trace_program
from adarray.transforms.vjp import vjp_program

F64_3 = Aval((3,), np.float64)

LITERALS = """{ lambda a:f64[3] b:i64[2] c:bool[3] .
    d:f64[3] = mul a 2.0:f64[3]
    e:f64[3] = add d [1.0, 2.5, -3.0]:f64[3]
    f:bool[3] = lt e [nan, inf, -inf]:f64[3]
    g:bool[3] = logical_and f [True, False, True]:bool[3]
    h:bool[3] = logical_or g c
    i:f64[3] = select h e nan:f64[3]
    j:f64[2] = gather[spec=((array,),)] i b
    k:f64[2] = gather[spec=((array,),)] i [0, 2]:i64[2]
    l:f64[2] = add j k
    m:f64[2,2] = broadcast_in_dim[dims=(1,), shape=(2, 2)] l
    n:f64[2,2] = mul m [[1.0, 2.0], [3.0, 4.0]]:f64[2,2]
    o:f64[] = reduce[axes=(0, 1), op=add] n
    p:f64[] = add o -inf:f64[]
    q:bool[3] = logical_and True:bool[3] c
  in (n, o, p, q, 1e-20:f64[], 7:i64[]) }"""

PARAMS = """{ lambda a:f64[5] b:f64[2,3] c:f64[3,4] .
    d:f64[5] = slice[starts=(4,), steps=(-1,), stops=(None,)] a
    e:f32[5] = convert[dtype=f32] d
    f:f64[2,4] = einsum[spec='ij,jk->ik'] b c
    g:f64[5] = scan[axis=0, op=mul, reverse=False] a
    h:f64[2] = gather[spec=((slice, 0, 3, 2),)] a
    i:i64[] = argmax[axis=0] a
    j:f64[4] = integer_pow[n=-2] [1.0, 2.0, 3.0, 4.0]:f64[4]
  in (e, f, g, h, i, j) }"""

EXTREME_NUMBERS = """{ lambda a:f64[] .
    b:f64[] = add a -0.0:f64[]
  in (b, 5e-324:f64[], 1.5e+300:f64[], -2.5e-08:f64[], [1e-300, -1.7976931348623157e+308]:f64[2]) }"""

OTHER_DTYPES = """{ lambda a:f32[2] .
    b:f32[2] = add a [0.10000000149011612, 0.20000000298023224]:f32[2]
  in (b, 4611686018427387904:i64[], [1, 255]:u8[2], False:bool[], [-1, 3]:i32[2], 0.5:f16[2]) }"""

EMPTY_1D = """{ lambda .
  in ([]:f64[0], [[], []]:f64[2,0]) }"""

OUTPUTS_REPEATED = """{ lambda a:f64[3] .
    b:f64[3] = exp a
  in (b, b, a, 2.0:f64[]) }"""


@pytest.mark.parametrize(
    "text",
    [LITERALS, PARAMS, EXTREME_NUMBERS, OTHER_DTYPES, EMPTY_1D, OUTPUTS_REPEATED],
    ids=["literals", "params", "extreme-numbers", "other-dtypes", "empty", "outputs"],
)
def test_round_trip_of_hand_written_programs(text):
    program = parse_program(text)
    assert format_program(program, full=True) == text
    verify(program)


def test_round_trip_gives_the_same_values_and_types():
    program = parse_program(LITERALS)
    args = [np.array([0.5, -1.0, 2.0]), np.array([2, 0]), np.array([True, True, False])]
    check_passes(program, args)
    n, o, p, q, tiny, seven = compile_program(program)(*args)
    # e = 2a + [1, 2.5, -3] = [2, 0.5, 1]; i = where(c, e, nan) has a nan, which reaches n, o, p
    assert np.isnan(o) and np.isnan(p)
    assert tiny == 1e-20 and seven == 7 and np.asarray(seven).dtype == np.int64
    np.testing.assert_array_equal(q, [True, True, False])
    args[2] = np.array([True, True, True])
    n, o, p, *_ = compile_program(program)(*args)
    np.testing.assert_array_equal(n, [[3.0, 6.0], [9.0, 12.0]])
    assert o == 30.0 and np.isneginf(p)


def test_parsed_literals_and_params():
    program = parse_program(LITERALS)
    literals = {str(a.aval) + repr(a.value.tolist()): a for e in program.eqns for a in e.inputs
                if isinstance(a, Literal)}
    assert literals["f64[3][2.0, 2.0, 2.0]"].uniform == 2.0
    assert literals["f64[3][2.0, 2.0, 2.0]"].value.strides == (0,)  # uniform literals stay zero-strided
    special = next(a for a in program.eqns[2].inputs if isinstance(a, Literal)).value
    assert np.isnan(special[0]) and special[1] == np.inf and special[2] == -np.inf
    assert next(a for a in program.eqns[3].inputs if isinstance(a, Literal)).value.dtype == np.bool_
    assert next(a for a in program.eqns[7].inputs if isinstance(a, Literal)).value.dtype == np.int64

    params = [e.params for e in parse_program(PARAMS).eqns]
    assert params[0] == {"starts": (4,), "stops": (None,), "steps": (-1,)}
    assert params[1]["dtype"] == np.dtype(np.float32) and isinstance(params[1]["dtype"], np.dtype)
    assert params[2] == {"spec": "ij,jk->ik"}
    assert params[3] == {"axis": 0, "op": "mul", "reverse": False}
    assert params[4] == {"spec": (("slice", 0, 3, 2),)}
    assert params[6] == {"n": -2} and isinstance(params[6]["n"], int)


def test_traced_program_round_trip_and_elision():
    program, _, _ = trace_program(lambda x: mul(x, np.arange(20.0)), [Aval((20,), np.float64)], "f")
    assert "[...]:f64[20]" in format_program(program)
    full = format_program(program, full=True)
    assert "[0.0, 1.0, 2.0," in full
    check_passes(program, [np.linspace(-1.0, 1.0, 20)])


def test_empty_literals_of_any_shape_round_trip():
    """Derived programs hold empty zero literals, e.g. the vjp of tanh on a f64[0,2] input."""
    x = Var(Aval((0, 2), np.float64))
    y = Var(x.aval)
    program = Program((x,), (Eqn(REGISTRY["add"], (x, Literal(np.zeros((0, 2)))), {}, (y,)),), (y,))
    text = format_program(program, full=True)
    assert format_program(parse_program(text), full=True) == text


def test_the_sign_of_zero_survives_in_literals():
    text = """{ lambda a:f64[2] .
    b:f64[2] = div a [0.0, -0.0]:f64[2]
  in (b) }"""
    program = parse_program(text)
    assert format_program(program, full=True) == text
    np.testing.assert_array_equal(compile_program(program)(np.ones(2))[0], [np.inf, -np.inf])


@pytest.mark.parametrize("word", ["None", "True", "f32", "bool", "in", "a b", "it's"])
def test_string_params_read_back_as_strings(word):
    """A str param must not come back as None, a bool or a dtype because it looks like one."""
    x, y = Var(F64_3), Var(F64_3)
    program = Program((x,), (Eqn(REGISTRY["reduce"], (x,), {"op": word, "axes": (0,)}, (y,)),), (y,))
    # Not a valid reduce (the op is not a monoid): read without verification.
    params = parse_program(format_program(program), verify=False).eqns[0].params
    assert params["op"] == word and isinstance(params["op"], str)


# --- parse errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("text, message", [
    ("{ lambda a:f64[3] . b:f64[3] = exp c in (b) }", "'c' is used before it is assigned"),
    ("{ lambda a:f64[3] . a:f64[3] = exp a in (a) }", "'a' is assigned twice"),
    ("{ lambda a:f64[3] . b:f64[3] = frobnicate a in (b) }", "unknown primitive 'frobnicate'"),
    ("{ lambda a:f65[3] . in (a) }", "unknown dtype 'f65'"),
    ("{ lambda a:f64[3] . in (a) } extra", "unexpected text after the program"),
    ("{ lambda a:f64[3] @ in (a) }", "unexpected character"),
    ("{ lambda a:f64[3] . b:f64[3] = exp a (b) }", "expected"),
    ("{ lambda a:f64[3] . in (a) ", "expected '}'"),
], ids=["unbound", "double-assignment", "unknown-primitive", "unknown-dtype", "trailing-text",
        "bad-character", "missing-in", "unclosed"])
def test_parse_errors(text, message):
    with pytest.raises(ParseError, match=message.replace("(", r"\(")):
        parse_program(text)


def test_parsing_an_elided_program_is_a_parse_error():
    program, _, _ = trace_program(lambda x: mul(x, np.arange(20.0)), [Aval((20,), np.float64)], "f")
    with pytest.raises(ParseError):
        parse_program(format_program(program))


# --- the verifier --------------------------------------------------------------------------------


def _exp(x, out):
    return Eqn(REGISTRY["exp"], (x,), {}, (out,))


def test_verifier_accepts_a_good_program():
    a, b, c = Var(F64_3), Var(F64_3), Var(F64_3)
    program = Program((a,), (_exp(a, b), Eqn(REGISTRY["add"], (b, Literal(np.ones(3))), {}, (c,))), (c, a))
    assert verify(program) is program


def test_verifier_catches_double_assignment():
    a, b = Var(F64_3), Var(F64_3)
    with pytest.raises(VerifyError, match="assigned twice"):
        verify(Program((a,), (_exp(a, b), _exp(a, b)), (b,)))
    with pytest.raises(VerifyError, match="assigned twice"):
        verify(Program((a,), (_exp(a, a),), (a,)))
    with pytest.raises(VerifyError, match="assigned twice"):
        verify(Program((a, a), (), (a,)))


def test_verifier_catches_unbound_variables():
    a, b, c, stray = Var(F64_3), Var(F64_3), Var(F64_3), Var(F64_3)
    with pytest.raises(VerifyError, match="used before it is assigned"):
        verify(Program((a,), (Eqn(REGISTRY["add"], (a, stray), {}, (b,)),), (b,)))
    with pytest.raises(VerifyError, match="used before it is assigned"):
        verify(Program((a,), (_exp(b, c), _exp(a, b)), (c,)))  # used before its equation
    with pytest.raises(VerifyError, match="program output"):
        verify(Program((a,), (_exp(a, b),), (stray,)))


def test_verifier_catches_wrong_output_types():
    a = Var(F64_3)
    with pytest.raises(VerifyError, match="shape rule"):
        verify(Program((a,), (_exp(a, Var(Aval((2,), np.float64))),), ()))
    with pytest.raises(VerifyError, match="shape rule"):
        verify(Program((a,), (_exp(a, Var(Aval((3,), np.float32))),), ()))
    with pytest.raises(VerifyError, match="shape rule"):
        verify(Program((a,), (Eqn(REGISTRY["lt"], (a, a), {}, (Var(F64_3),)),), ()))


def test_verifier_catches_a_literal_that_does_not_match_its_type():
    a, b = Var(F64_3), Var(F64_3)
    literal = Literal(np.ones(3))
    literal.value = np.ones(2)
    with pytest.raises(VerifyError, match="literal"):
        verify(Program((a,), (Eqn(REGISTRY["add"], (a, literal), {}, (b,)),), (b,)))


def test_verifier_errors_are_assertion_errors():
    assert issubclass(VerifyError, AssertionError)


# --- golden --------------------------------------------------------------------------------------


def test_golden_gradient_of_sum_of_squares():
    program, _, _ = trace_program(lambda x: reduce_sum(mul(x, x), (0,)), [F64_3], "sum_of_squares")
    gradient = simplify(vjp_program(program, [True], seeds=[np.ones((), np.float64)]))  # as grad seeds
    assert format_program(gradient, full=True) == """{ lambda a:f64[3] .
    b:f64[3] = mul a a
    c:f64[] = reduce[axes=(0,), op=add] b
    d:f64[3] = add a a
  in (c, d) }"""
    value, grad = compile_program(gradient)(np.array([1.0, -2.0, 3.0]))
    assert value == 14.0
    np.testing.assert_array_equal(grad, [2.0, -4.0, 6.0])


def test_builder_assembles_typed_programs_that_print_parse_and_run():
    from adarray.extend import Aval, Builder
    from adarray.primitives.elementwise import mul_p, sin_p

    builder = Builder()
    x = builder.input(Aval((3,), np.dtype(np.float64)))
    (s,) = builder.emit(sin_p, [x])
    (y,) = builder.emit(mul_p, [s, np.full(3, 2.0)])
    program = builder.build([y])
    verify(program)
    assert str(parse_program(str(program))) == str(program)
    assert "mul b 2.0:f64[3]" in str(program)
    values = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(compile_program(program)(values)[0], 2 * np.sin(values))


def test_builder_applies_shape_rules_at_emit():
    from adarray.extend import Aval, Builder
    from adarray.primitives.elementwise import add_p

    builder = Builder()
    a, b = builder.input(Aval((3,), np.dtype(np.float64))), builder.input(Aval((4,), np.dtype(np.float64)))
    with pytest.raises(ShapeError, match=r"add: operands f64\[3\], f64\[4\]"):
        builder.emit(add_p, [a, b])
