"""ad.tree_util: pytrees for users (as jax.tree_util), NamedTuples and registered dataclasses and
classes as arguments and results of every transformation."""
import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
import adarray.tree_util as tu
from adarray.testing import numerical_gradient

rng = np.random.default_rng(0)


class Point(NamedTuple):
    x: object
    y: object


@tu.register_dataclass
@dataclasses.dataclass
class Layer:
    w: object
    b: object
    activation: str = dataclasses.field(default="tanh", metadata=dict(static=True))


@tu.register_pytree_node_class
class Affine:
    """A registered class whose aux data (the name) is part of its structure."""

    def __init__(self, scale, shift, name="affine"):
        self.scale, self.shift, self.name = scale, shift, name

    def tree_flatten(self):
        return (self.scale, self.shift), self.name

    @classmethod
    def tree_unflatten(cls, name, children):
        return cls(*children, name=name)


class Pair:
    def __init__(self, first, second):
        self.first, self.second = first, second


tu.register_pytree_node(Pair, lambda p: ((p.first, p.second), None), lambda aux, children: Pair(*children))


# --- the tree functions ---------------------------------------------------------------------------

def test_flatten_unflatten_round_trip_over_every_node_kind():
    tree = {"p": Point(1.0, (2.0, None)), "l": Layer(3.0, [4.0, 5.0], "relu"), "a": Affine(6.0, 7.0, "n"),
            "q": Pair(8.0, {"z": 9.0})}
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [6.0, 7.0, 3.0, 4.0, 5.0, 1.0, 2.0, 8.0, 9.0]  # dict keys sorted: a, l, p, q
    assert tu.tree_leaves(tree) == leaves
    assert tu.tree_structure(tree) == treedef and treedef.num_leaves == 9
    rebuilt = tu.tree_unflatten(treedef, [v * 10 for v in leaves])
    assert isinstance(rebuilt["p"], Point) and rebuilt["p"] == Point(10.0, (20.0, None))
    assert isinstance(rebuilt["l"], Layer) and rebuilt["l"] == Layer(30.0, [40.0, 50.0], "relu")
    assert isinstance(rebuilt["a"], Affine) and (rebuilt["a"].scale, rebuilt["a"].name) == (60.0, "n")
    assert isinstance(rebuilt["q"], Pair) and rebuilt["q"].second == {"z": 90.0}


def test_static_fields_and_aux_data_are_part_of_the_structure():
    assert tu.tree_structure(Layer(1.0, 2.0, "tanh")) != tu.tree_structure(Layer(1.0, 2.0, "relu"))
    assert tu.tree_structure(Affine(1.0, 2.0, "a")) != tu.tree_structure(Affine(1.0, 2.0, "b"))
    assert tu.tree_structure(Point(1.0, 2.0)) != tu.tree_structure((1.0, 2.0))
    assert tu.tree_structure(Point(1.0, 2.0)) == tu.tree_structure(Point(3.0, 4.0))
    assert "Layer" in repr(tu.tree_structure(Layer(1.0, 2.0))) and "Point(x=*, y=*)" == repr(
        tu.tree_structure(Point(1.0, 2.0)))


def test_tree_map_with_several_trees_prefixes_and_is_leaf():
    a = {"w": np.ones(2), "b": Point(1.0, 2.0)}
    b = {"w": np.full(2, 3.0), "b": Point(10.0, 20.0)}
    summed = tu.tree_map(lambda u, v: u + v, a, b)
    assert isinstance(summed["b"], Point) and summed["b"] == Point(11.0, 22.0)
    np.testing.assert_array_equal(summed["w"], [4.0, 4.0])
    # A prefix: the first tree's leaves meet whole subtrees of the second.
    assert tu.tree_map(lambda scale, sub: tu.tree_map(lambda s: s * scale, sub), (2.0, 3.0),
                       ((1.0, 2.0), {"k": 4.0})) == ((2.0, 4.0), {"k": 12.0})
    # is_leaf stops the descent: each Point is one leaf here.
    points = [Point(1.0, 2.0), Point(3.0, 4.0)]
    lengths = tu.tree_map(lambda p: p.x + p.y, points, is_leaf=lambda n: isinstance(n, Point))
    assert lengths == [3.0, 7.0]
    with pytest.raises(ad.ArgumentError, match="do not match"):
        tu.tree_map(lambda u, v: u, {"a": 1.0}, {"b": 1.0})


def test_tree_reduce_and_tree_all():
    tree = {"a": 1.0, "b": (2.0, Point(3.0, 4.0))}
    assert tu.tree_reduce(lambda s, v: s + v, tree) == 10.0
    assert tu.tree_reduce(lambda s, v: s * v, tree, 1.0) == 24.0
    assert tu.tree_all({"a": True, "b": (1, Point(True, 2.0))}) and not tu.tree_all((True, 0))
    assert tu.tree_all(()) and tu.tree_reduce(max, (), 5) == 5
    with pytest.raises(ad.ArgumentError, match="initializer"):
        tu.tree_reduce(max, ())


def test_registration_errors():
    with pytest.raises(ad.ArgumentError, match="already a pytree node"):
        tu.register_pytree_node(Pair, lambda p: ((), None), lambda aux, c: Pair(0, 0))
    with pytest.raises(ad.ArgumentError, match="needs a dataclass"):
        tu.register_dataclass(Pair)
    with pytest.raises(ad.ArgumentError, match="tree_flatten"):
        tu.register_pytree_node_class(type("Plain", (), {}))

    @dataclasses.dataclass
    class Partial:
        a: object
        b: object

    with pytest.raises(ad.ArgumentError, match="each field"):
        tu.register_dataclass(Partial, data_fields=["a"], meta_fields=[])
    assert tu.register_dataclass(Partial, data_fields=["a"], meta_fields=["b"]) is Partial
    assert tu.tree_leaves(Partial(1.0, "static")) == [1.0]


# --- transformations take and return them ---------------------------------------------------------

def layer_loss(layer, x):
    act = anp.tanh if layer.activation == "tanh" else (lambda v: anp.maximum(v, 0.0))
    return anp.sum(act(x @ layer.w + layer.b) ** 2)


def test_grad_returns_the_dataclass_and_matches_finite_differences():
    layer, x = Layer(rng.normal(size=(3, 2)), rng.normal(size=2)), rng.normal(size=(4, 3))
    g = ad.grad(layer_loss)(layer, x)
    assert isinstance(g, Layer) and g.activation == "tanh"
    numeric = numerical_gradient(lambda moved: layer_loss(moved, x), layer)  # a Layer too, each leaf moved alone
    assert isinstance(numeric, Layer) and numeric.activation == "tanh"
    for name in ("w", "b"):
        np.testing.assert_allclose(getattr(g, name), getattr(numeric, name), rtol=1e-6, atol=1e-9)
    relu = ad.grad(layer_loss)(dataclasses.replace(layer, activation="relu"), x)  # another structure: retraced
    assert relu.activation == "relu" and not np.allclose(relu.w, g.w)


def test_every_transformation_accepts_and_returns_named_tuples():
    def f(p):
        return Point(anp.sin(p.x) * p.y, p.x ** 2)

    p = Point(np.array([0.3, 1.2]), np.array([2.0, -1.0]))
    out = ad.jit(f)(p)
    assert isinstance(out, Point) and np.allclose(out.x, np.sin(p.x) * p.y)
    g = ad.grad(lambda q: anp.sum(f(q).x) + anp.sum(f(q).y))(p)
    assert isinstance(g, Point)
    np.testing.assert_allclose(g.x, np.cos(p.x) * p.y + 2 * p.x)
    np.testing.assert_allclose(g.y, np.sin(p.x))
    value, pullback = ad.vjp(f, p)
    (cotangent,) = pullback(Point(np.ones(2), np.zeros(2)))
    assert isinstance(value, Point) and isinstance(cotangent, Point)
    np.testing.assert_allclose(cotangent.x, np.cos(p.x) * p.y)
    _, tangent = ad.jvp(f, (p,), (Point(np.ones(2), np.zeros(2)),))
    assert isinstance(tangent, Point) and np.allclose(tangent.y, 2 * p.x)
    jacobian = ad.jacrev(f)(p)
    assert isinstance(jacobian, Point) and isinstance(jacobian.x, Point)
    np.testing.assert_allclose(jacobian.x.y, np.diag(np.sin(p.x)))
    np.testing.assert_allclose(ad.jacfwd(f)(p).y.x, np.diag(2 * p.x))
    batched = ad.vmap(f)(Point(np.ones((3, 2)), np.ones((3, 2))))
    assert isinstance(batched, Point) and batched.x.shape == (3, 2)
    batched = ad.vmap(lambda q, s: q.x * s, in_axes=(Point(0, None), None))(Point(np.ones((3, 2)), 5.0), 2.0)
    assert batched.shape == (3, 2)


def test_registered_classes_through_grad_hessian_and_vmap():
    def f(a, x):
        return anp.sum(anp.tanh(a.scale * x + a.shift))

    a, x = Affine(np.array([0.5, 2.0]), np.array([0.1, -0.3]), "t"), np.array([1.0, 2.0])
    g = ad.grad(f)(a, x)
    assert isinstance(g, Affine) and g.name == "t"
    inner = np.cosh(a.scale * x + a.shift) ** -2
    np.testing.assert_allclose(g.scale, inner * x)
    np.testing.assert_allclose(g.shift, inner)
    h = ad.hessian(f, argnums=1)(a, x)
    np.testing.assert_allclose(h, np.diag(-2 * np.tanh(a.scale * x + a.shift) * inner * a.scale ** 2))
    pairs = ad.vmap(lambda p: p.first * p.second)(Pair(np.ones((4, 2)), np.full((4, 2), 3.0)))
    np.testing.assert_array_equal(pairs, np.full((4, 2), 3.0))
