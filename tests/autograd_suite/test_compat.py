"""The parts of tests/autograd_compat that autograd's own tests do not reach: each against adarray or a
closed form, the promise that a missing name says what is missing instead of falling back to NumPy, our
optimizers, and how autograd's files are fetched and renamed."""
import pathlib
import subprocess

import numpy as onp
import pytest

import autograd_compat as ag
import autograd_compat.numpy as np
from autograd_compat.misc import flatten, optimizers
from autograd_compat.misc.flatten import flatten_func
from autograd_compat.scipy.integrate import odeint

from . import autograd_source


def _fun(a, b, scale=2.0):
    return scale * np.sum(np.sin(a) * b)


A, B = onp.array([0.3, -1.2]), onp.array([1.5, 0.5])


def test_gradients_by_name_keyword_and_dict():
    onp.testing.assert_allclose(ag.grad_named(_fun, "b")(A, B), 2.0 * onp.sin(A))
    onp.testing.assert_allclose(ag.grad(_fun, 1)(A, B, scale=3.0), 3.0 * onp.sin(A))
    grads = ag.multigrad_dict(_fun)(A, B)
    onp.testing.assert_allclose(grads["a"], 2.0 * onp.cos(A) * B)
    onp.testing.assert_allclose(grads["b"], 2.0 * onp.sin(A))
    onp.testing.assert_allclose(ag.deriv(np.sin)(A), onp.cos(A))
    onp.testing.assert_allclose(ag.elementwise_grad(np.sin)(A), onp.cos(A))
    value, gradient = ag.value_and_grad(_fun, [1, 0])(A, B)
    onp.testing.assert_allclose(gradient[1], 2.0 * onp.cos(A) * B)


def test_flatten_round_trip_and_flatten_func():
    params = {"w": onp.arange(6.0).reshape(2, 3), "b": (onp.ones(2), 3.0)}
    flat, unflatten = flatten(params)
    assert flat.shape == (9,)
    rebuilt = unflatten(flat)
    onp.testing.assert_array_equal(rebuilt["w"], params["w"])
    onp.testing.assert_array_equal(rebuilt["b"][0], params["b"][0])
    flat_fun, unflatten, example = flatten_func(lambda p: {"s": np.sum(p["w"]) * p["b"][1]}, params)
    onp.testing.assert_allclose(flat_fun(example), [45.0])


def test_odeint_takes_autograd_args_tuple():
    t = onp.linspace(0.0, 1.0, 3)
    ys = odeint(lambda y, t, k, c: -k * y + c, onp.array([1.0]), t, args=(2.0, 0.0))
    onp.testing.assert_allclose(ys[:, 0], onp.exp(-2.0 * t), rtol=1e-7)


def test_missing_names_say_what_adarray_lacks():
    with pytest.raises(AttributeError, match="adarray.numpy has no 'definitely_not_a_function'"):
        np.definitely_not_a_function  # noqa: B018
    from autograd_compat.core import primitive

    with pytest.raises(NotImplementedError, match="custom_vjp"):
        primitive(onp.sin)


@pytest.mark.parametrize("name", ["sgd", "rmsprop", "adam"])
def test_optimizers_take_pytrees_and_lower_a_quadratic(name):
    optimizer = getattr(optimizers, name)
    target = {"w": onp.array([[1.0, -2.0], [0.5, 3.0]]), "b": (onp.array([0.25]), 2.0)}
    start = {"w": onp.zeros((2, 2)), "b": (onp.zeros(1), 0.0)}
    flat_target, _ = flatten(target)

    def loss(params):
        return np.sum((flatten(params)[0] - flat_target) ** 2)

    seen = []
    result = optimizer(lambda params, i: ag.grad(loss)(params), start, callback=lambda x, i, g: seen.append((i, g)),
                       num_iters=300, step_size=0.05)
    assert [i for i, _ in seen] == list(range(300)) and set(seen[0][1]) == {"w", "b"}
    assert result["w"].shape == (2, 2) and isinstance(result["b"], tuple)
    assert loss(result) < 1e-3 * loss(start)


def test_adam_first_step_is_the_step_size_against_the_gradient_sign():
    """After one step the bias-corrected averages are g and g^2: the step is step_size g / (|g| + eps)."""
    gradient = onp.array([3.0, -0.2, 0.0])
    moved = optimizers.adam(lambda x, i: gradient, onp.ones(3), num_iters=1, step_size=0.1)
    onp.testing.assert_allclose(moved, onp.ones(3) - 0.1 * gradient / (onp.abs(gradient) + 1e-8))


def test_renaming_touches_imports_only():
    text = ("import matplotlib.pyplot as plt\nimport autograd.numpy as np\nfrom autograd import grad\n"
            "from rnn import build_dataset\n\nx = 'autograd'\n\nif __name__ == \"__main__\":\n    plt.plot(x)\n")
    assert autograd_source.rename(text, "example.py") == (
        "import autograd_compat.numpy as np\nfrom autograd_compat import grad\nfrom .rnn import build_dataset\n\n"
        "x = 'autograd'\n\nif __name__ == \"__main__\":\n    import matplotlib.pyplot as plt\n    plt.plot(x)\n")
    with pytest.raises(RuntimeError, match="no single __main__ block"):
        autograd_source.rename("import matplotlib\n", "plots.py")


def test_download_failures_skip_or_stop(tmp_path, monkeypatch):
    """No network: Unavailable (the suite is skipped, saying why). A file with another sha256: an error."""
    def offline(command, **options):
        return subprocess.CompletedProcess(command, 1, "", "ERROR: Could not find a version (no network)")

    monkeypatch.setattr(autograd_source.subprocess, "run", offline)
    with pytest.raises(autograd_source.Unavailable, match="no network"):
        autograd_source.download(tmp_path)

    def foreign(command, **options):
        pathlib.Path(command[command.index("--dest") + 1], autograd_source.SDIST).write_bytes(b"not autograd")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(autograd_source.subprocess, "run", foreign)
    with pytest.raises(RuntimeError, match="sha256"):
        autograd_source.download(tmp_path)
    (tmp_path / autograd_source.SDIST).write_bytes(b"a partial download")  # a cached file is checked too
    with pytest.raises(RuntimeError, match="sha256"):
        autograd_source.download(tmp_path)
    assert not (tmp_path / autograd_source.SDIST).exists()
