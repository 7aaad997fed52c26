"""The table of elementwise operations, written once: how each elementwise primitive is named in
the kernel language and in NumPy, how one element of it is written as Python source, and the
algebra the simplifier may use.

Every table that names elementwise operations is built from `OPERATIONS` (one row per primitive):
  * the kernel language (kernels/language.py: the functions a kernel may call and their arities;
    kernels/lower.py: the adarray.numpy function a call binds, and the function of an operator);
  * the reversible language (reversible/ir.py: the operations of its expressions and how they print;
    reversible/language.py: the functions and operators it parses; the reversible runners of the NumPy
    and JAX backends: how each operation runs), by the rows' `reversible` names;
  * the Numba backend (backends/numba/scalar.py: the scalar source of one element, and which
    operations call a transcendental function, which the cost model counts as expensive);
  * the simplifier (passes/simplify.py: the exact units).

    >>> OPERATIONS[ew.exp_p].source
    'np.exp({0})'
    >>> BY_KERNEL_NAME["asin"].prim is ew.arcsin_p
    True
    >>> BY_REVERSIBLE_NAME["mod"].prim is ew.rem_p
    True
"""
from __future__ import annotations

from . import elementwise as ew


class Operation:
    """One elementwise primitive's names and facts.

    kernel_names: the names a kernel may call it by (math's, NumPy's); numpy: the adarray.numpy
    (and NumPy) function; symbol: the Python operator that writes it (kernels parse it, generated
    source uses it); source: one element as Python source over the operands {0}, {1} (`np` is
    NumPy; None when a backend must write it itself); transcendental: it calls a libm function;
    boolean: its result is a truth value (never cast); unit/left_unit/right_unit: x op unit == x
    for every IEEE x of a real dtype, NaN, inf and the sign of zero included (so the unit of add is
    -0.0: -0.0 + 0.0 is 0.0); reversible: its name in the reversible language's statement IR, or None
    where that language lacks it (True: the primitive's name)."""

    def __init__(self, prim, numpy, *, arity=1, kernel_names=(), symbol=None, source=None, transcendental=False,
                 boolean=False, unit=None, left_unit=None, right_unit=None, reversible=None):
        self.prim, self.numpy, self.arity = prim, numpy, arity
        self.reversible = prim.name if reversible is True else reversible
        self.kernel_names, self.symbol, self.source = tuple(kernel_names), symbol, source
        self.transcendental, self.boolean = transcendental, boolean
        self.left_unit = unit if left_unit is None else left_unit
        self.right_unit = unit if right_unit is None else right_unit

    def __repr__(self):
        return f"Operation({self.prim.name})"


_NUMPY_CALL = object()  # the default source: np.<numpy name>(operands)


def _function(prim, numpy, *names, arity=1, transcendental=True, source=_NUMPY_CALL, **facts):
    operands = ", ".join(f"{{{k}}}" for k in range(arity))
    if source is _NUMPY_CALL:
        source = f"np.{numpy}({operands})"
    return Operation(prim, numpy, arity=arity, kernel_names=names, source=source, transcendental=transcendental,
                     **facts)


def _infix(prim, numpy, symbol, **facts):
    return Operation(prim, numpy, arity=2, symbol=symbol, source=f"({{0}} {symbol} {{1}})", **facts)


_ROWS = [
    Operation(ew.neg_p, "negative", symbol="-", source="(-{0})", reversible=True),
    _infix(ew.add_p, "add", "+", unit=-0.0, reversible=True),
    _infix(ew.sub_p, "subtract", "-", right_unit=0.0, reversible=True),
    _infix(ew.mul_p, "multiply", "*", unit=1, reversible=True),
    _infix(ew.div_p, "divide", "/", right_unit=1, reversible=True),
    _infix(ew.floor_divide_p, "floor_divide", "//", reversible="floordiv"),
    Operation(ew.rem_p, "remainder", arity=2, symbol="%", source="np.remainder({0}, {1})", transcendental=True,
              reversible="mod"),
    Operation(ew.pow_p, "power", arity=2, symbol="**", kernel_names=("pow", "power"), source="np.power({0}, {1})",
              transcendental=True, reversible=True),
    _infix(ew.eq_p, "equal", "==", boolean=True, reversible=True),
    _infix(ew.ne_p, "not_equal", "!=", boolean=True, reversible=True),
    _infix(ew.lt_p, "less", "<", boolean=True, reversible=True),
    _infix(ew.le_p, "less_equal", "<=", boolean=True, reversible=True),
    _infix(ew.gt_p, "greater", ">", boolean=True, reversible=True),
    _infix(ew.ge_p, "greater_equal", ">=", boolean=True, reversible=True),
    _infix(ew.logical_and_p, "logical_and", "and", boolean=True, reversible="and"),
    _infix(ew.logical_or_p, "logical_or", "or", boolean=True, reversible="or"),
    Operation(ew.logical_xor_p, "logical_xor", arity=2, source="({0} != {1})", boolean=True),
    Operation(ew.logical_not_p, "logical_not", source="(not {0})", boolean=True, reversible="not"),
    _function(ew.isfinite_p, "isfinite", "isfinite", transcendental=False, boolean=True),
    _function(ew.exp_p, "exp", "exp", reversible=True), _function(ew.expm1_p, "expm1", "expm1", reversible=True),
    _function(ew.exp2_p, "exp2", "exp2"),
    _function(ew.log_p, "log", "log", reversible=True), _function(ew.log1p_p, "log1p", "log1p", reversible=True),
    _function(ew.log2_p, "log2", "log2"), _function(ew.log10_p, "log10", "log10"),
    _function(ew.sqrt_p, "sqrt", "sqrt", transcendental=False, reversible=True),
    _function(ew.sin_p, "sin", "sin", reversible=True), _function(ew.cos_p, "cos", "cos", reversible=True),
    _function(ew.tan_p, "tan", "tan", reversible=True),
    _function(ew.arcsin_p, "arcsin", "asin", "arcsin", reversible=True),
    _function(ew.arccos_p, "arccos", "acos", "arccos", reversible=True),
    _function(ew.arctan_p, "arctan", "atan", "arctan", reversible=True),
    _function(ew.arctan2_p, "arctan2", "atan2", "arctan2", arity=2, reversible=True),
    _function(ew.sinh_p, "sinh", "sinh", reversible=True), _function(ew.cosh_p, "cosh", "cosh", reversible=True),
    _function(ew.tanh_p, "tanh", "tanh", reversible=True),
    _function(ew.arcsinh_p, "arcsinh", "asinh", "arcsinh"), _function(ew.arccosh_p, "arccosh", "acosh", "arccosh"),
    _function(ew.arctanh_p, "arctanh", "atanh", "arctanh"),
    # scipy's expit, 1 / (1 + exp(-x)); adarray.numpy calls it sigmoid
    _function(ew.logistic_p, "sigmoid", "sigmoid", source="(1.0 / (1.0 + np.exp(-{0})))", reversible=True),
    _function(ew.erf_p, "erf", "erf", source="math.erf({0})"),
    _function(ew.logaddexp_p, "logaddexp", "logaddexp", arity=2, reversible=True),
    _function(ew.hypot_p, "hypot", "hypot", arity=2, reversible=True),
    _function(ew.sinc_p, "sinc", source=None),  # a branch at 0 (backends write it); not math's unnormalised sinc
    _function(ew.abs_p, "abs", "abs", "absolute", transcendental=False, reversible=True),
    _function(ew.sign_p, "sign", "sign", transcendental=False, reversible=True),
    _function(ew.floor_p, "floor", "floor", transcendental=False, reversible=True),
    _function(ew.ceil_p, "ceil", "ceil", transcendental=False, reversible=True),
    # half to even, as NumPy
    _function(ew.round_p, "round", source="np.rint({0})", transcendental=False, reversible=True),
    # NumPy's NaN and tie conventions (backends write them)
    _function(ew.maximum_p, "maximum", "maximum", arity=2, transcendental=False, source=None, reversible=True),
    _function(ew.minimum_p, "minimum", "minimum", arity=2, transcendental=False, source=None, reversible=True),
    Operation(ew.safe_mul_p, "safe_mul", arity=2, source="({0} * {1} if {0} != 0 else {zero})", unit=1),
    Operation(ew.stop_gradient_p, "stop_gradient", source="{0}"),
    # written by each backend: a choice of branches, a dtype parameter, an exponent parameter
    Operation(ew.select_p, "where", arity=3), Operation(ew.convert_p, "astype"), Operation(ew.integer_pow_p, "power"),
]
OPERATIONS: dict = {row.prim: row for row in _ROWS}
BY_KERNEL_NAME: dict = {name: row for row in _ROWS for name in row.kernel_names}
BY_SYMBOL: dict = {row.symbol: row for row in _ROWS if row.symbol and row.prim is not ew.neg_p}
BY_REVERSIBLE_NAME: dict = {row.reversible: row for row in _ROWS if row.reversible}
TRANSCENDENTAL = frozenset(row.prim for row in _ROWS if row.transcendental)
BOOLEAN = frozenset(row.prim for row in _ROWS if row.boolean)
