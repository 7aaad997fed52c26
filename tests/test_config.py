"""Settings in one object (core/config.py): the environment read once, checked values, the public setters."""
import os
import subprocess
import sys

import pytest

import adarray as ad
import adarray.reversible as rv
import adarray.sparse as sp
from adarray.core.config import SETTINGS, Config, config
from adarray.kernels import set_kernel_backend


def test_the_environment_sets_every_setting():
    environment = {"ADARRAY_BACKEND": "numba", "ADARRAY_KERNEL_BACKEND": "numpy", "ADARRAY_SPARSE_METHOD": "reversible",
                   "ADARRAY_NUMBA_KEEP_MEMORY": "1", "ADARRAY_NUMBA_PARALLEL": "0", "ADARRAY_CACHE_DIR": "/somewhere"}
    settings = Config(SETTINGS, environment)
    assert (settings.backend, settings.kernel_backend, settings.reversible_backend) == ("numba", "numpy", "auto")
    assert settings.sparse_method == "reversible" and settings.cache_dir == "/somewhere"
    assert settings.numba_keep_memory is True and settings.numba_parallel is False
    defaults = Config(SETTINGS, {})
    assert defaults.backend == "auto" and defaults.numba_keep_memory is False and defaults.numba_parallel is True


@pytest.mark.parametrize("variable, text", [("ADARRAY_BACKEND", "cuda"), ("ADARRAY_NUMBA_PARALLEL", "yes")])
def test_a_bad_environment_value_is_an_error_naming_it(variable, text):
    with pytest.raises(ad.ArgumentError, match=text):
        Config(SETTINGS, {variable: text})


def test_a_process_started_with_a_variable_sees_it():
    code = "import adarray as ad; print(ad.config.backend, ad.config.kernel_backend)"
    env = dict(os.environ, ADARRAY_BACKEND="numpy", ADARRAY_KERNEL_BACKEND="numba")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["numpy", "numba"]


def test_update_and_override_check_and_restore():
    previous = config.update("kernel_backend", "numpy")
    try:
        assert set_kernel_backend("auto") == "numpy" and config.kernel_backend == "auto"
    finally:
        config.update("kernel_backend", previous)
    with config.override(sparse_method="reversible"):
        assert sp.get_method() == "reversible"
    assert sp.get_method() == "index"
    with pytest.raises(ad.ArgumentError, match="no setting 'colour'"):
        config.update("colour", "red")
    with pytest.raises(AttributeError, match="config.update"):
        config.backend = "numba"


def test_the_public_setters_refuse_unknown_values_with_an_adarray_error():
    with pytest.raises(ad.Error, match="the kernel backend must be one of 'auto', 'numpy', 'numba', got 'cuda'"):
        set_kernel_backend("cuda")
    with pytest.raises(ad.Error, match="the reversible backend must be one of"):
        rv.set_reversible_backend("gpu")
    with pytest.raises(ad.Error, match="unknown backend 'cuda'"):
        ad.set_backend("cuda")
    with pytest.raises(ad.Error, match=r"ad.jit\(f, backend='jax'\)"):
        ad.set_backend("jax")
    assert config.kernel_backend == "auto" and config.reversible_backend == "auto"
