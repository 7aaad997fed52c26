"""SciPy's optimisers with exact derivatives and pytree parameters.

    minimize(f, x0, method="BFGS")          gradients (and Hessian-vector products for Newton-CG,
                                            trust-ncg, trust-krylov) handed to scipy.optimize.minimize
    least_squares(residual, x0, ...)        scipy.optimize.least_squares with our Jacobian: sparse CSR
                                            (trf, dogbox with lsmr), dense (lm, tr_solver="exact"), a
                                            LinearOperator of jvp/vjp (jac="operator"), or SciPy's finite
                                            differences grouped by our sparsity pattern (jac="2-point")
Both return SciPy's OptimizeResult with `x` in the pytree structure of x0 (the flat vector is
`x_flat`). Every derivative program is traced once per signature and reused across iterations.
"""
from __future__ import annotations

import numpy as np
import scipy.optimize
import scipy.sparse.linalg as spla

from ..api.grad import grad, jit, jvp, value_and_grad, vjp
from ..api.jacobians import linearize
from ..core.errors import ArgumentError
from ..sparse_jacobians import jacobian_sparsity, sparse_jacobian
from ..tree_util import tree_flatten, tree_map, tree_unflatten
from .parameters import Parameters

HESSIAN_VECTOR_METHODS = ("newton-cg", "trust-ncg", "trust-krylov")
GRADIENT_METHODS = ("bfgs", "l-bfgs-b", "cg", "slsqp", "tnc", "trust-constr") + HESSIAN_VECTOR_METHODS


def _result(result, flat):
    result.x_flat = result.x
    result.x = flat.tree(result.x)
    return result


def minimize(f, x0, args=(), method="BFGS", *, callback=None, **options):
    """scipy.optimize.minimize of the scalar f(x, *args) with its exact gradient (and exact Hessian-vector
    products for Newton-CG, trust-ncg and trust-krylov); x0 a pytree of float arrays. Other keywords
    (bounds for L-BFGS-B as a flat list, tol, options) go to SciPy. `callback(x)` receives x as a pytree.

    >>> minimize(lambda p: (1 - p["a"]) ** 2 + 100 * (p["b"] - p["a"] ** 2) ** 2,
    ...          {"a": 0.0, "b": 0.0}, method="trust-krylov").x  # doctest: +SKIP
    {'a': array(1.), 'b': array(1.)}
    """
    what = "minimize"
    if not isinstance(method, str) or method.lower() not in GRADIENT_METHODS:
        raise ArgumentError(f"{what}: method must be one of BFGS, L-BFGS-B, CG, SLSQP, TNC, trust-constr, Newton-CG, "
                            f"trust-ncg, trust-krylov (methods that use derivatives), got {method!r}")
    flat = Parameters(what, x0)
    args = tuple(args)
    gradient_fn = value_and_grad(f)

    def fun(vector, *extra):
        value, gradient = gradient_fn(flat.tree(vector), *extra)
        if np.size(value) != 1:
            raise ArgumentError(f"{what}: f must return a scalar, got shape {np.shape(value)}")
        return float(np.asarray(value).reshape(())), flat.flat(gradient)

    keywords = dict(options)
    if method.lower() in HESSIAN_VECTOR_METHODS:
        def hessian_vector(x, v, *extra):
            return jvp(lambda y: grad(f)(y, *extra), (x,), (v,))[1]

        hessian_vector_fn = jit(hessian_vector)
        keywords["hessp"] = lambda vector, p, *extra: flat.flat(hessian_vector_fn(flat.tree(vector), flat.tree(p),
                                                                                  *extra))
    if callback is not None:
        keywords["callback"] = lambda vector, *rest: callback(flat.tree(vector))
    return _result(scipy.optimize.minimize(fun, flat.x0, args=args, method=method, jac=True, **keywords), flat)


def least_squares(residual, x0, args=(), *, jac="exact", method="trf", **options):
    """scipy.optimize.least_squares of residual(x, *args) (any pytree of arrays, flattened) with x0 a pytree.

    jac: "exact" (ours, by ad.sparse_jacobian: a CSR matrix for trf and dogbox, dense for lm and
    tr_solver="exact"), "operator" (a LinearOperator whose products are one jvp or vjp each; trf or
    dogbox with tr_solver="lsmr"), or SciPy's "2-point", "3-point" (finite differences; for trf and
    dogbox with tr_solver="lsmr", our sparsity pattern is passed as jac_sparsity, so SciPy groups the columns).
    Other keywords
    go to SciPy.

    >>> least_squares(lambda p, t, y: p[0] * anp.exp(p[1] * t) - y, np.ones(2), args=(t, y)).x  # doctest: +SKIP
    """
    what = "least_squares"
    flat = Parameters(what, x0)
    args = tuple(args)
    value_fn = jit(residual)

    def fun(vector):
        return flat.flat(value_fn(flat.tree(vector), *args))

    dense = method == "lm" or options.get("tr_solver") == "exact"
    if jac == "exact":
        jacobian_fn = sparse_jacobian(residual)

        def jacobian(vector):
            matrix = jacobian_fn(flat.tree(vector), *args)
            return matrix.toarray() if dense else matrix
    elif jac == "operator":
        if dense:
            raise ArgumentError(f"{what}: jac='operator' needs method 'trf' or 'dogbox' with tr_solver 'lsmr', got "
                                f"method {method!r}")
        options.setdefault("tr_solver", "lsmr")
        jacobian = _operator(residual, flat, args, fun(flat.x0).size)
    elif jac in ("2-point", "3-point", "cs"):
        jacobian = jac
        if not dense and "jac_sparsity" not in options:
            options["jac_sparsity"] = jacobian_sparsity(residual, flat.tree(flat.x0), *args)
    else:
        raise ArgumentError(f"{what}: jac must be 'exact', 'operator', '2-point', '3-point' or 'cs', got {jac!r}")
    return _result(scipy.optimize.least_squares(fun, flat.x0, jac=jacobian, method=method, **options), flat)


def _operator(residual, flat, args, size):
    """J(x) as a LinearOperator: matvec is one jvp, rmatvec one vjp, both reusing the primal computation
    (linearize and vjp of the residual itself, so their programs are traced once)."""
    zero_args = [tree_map(np.zeros_like, a) for a in args]

    def jacobian(vector):
        x = flat.tree(vector)
        _, forward = linearize(residual, x, *args)
        outputs, pullback = vjp(residual, x, *args)
        out_leaves, out_tree = tree_flatten(outputs)
        out_shapes = [np.shape(leaf) for leaf in out_leaves]
        out_splits = np.cumsum([int(np.prod(s)) for s in out_shapes])[:-1]

        def matvec(v):
            return flat.flat(forward(flat.tree(np.ravel(v)), *zero_args))

        def rmatvec(u):
            pieces = np.split(np.ravel(u), out_splits)
            return flat.flat(pullback(tree_unflatten(out_tree, [p.reshape(s) for p, s in zip(pieces, out_shapes)]))[0])

        return spla.LinearOperator((size, flat.size), matvec=matvec, rmatvec=rmatvec, dtype=np.float64)

    return jacobian
