# make demo: create .venv, install adarray (editable, with test tools), run the demo
# make test: the same venv, then ruff and the whole pytest suite, one worker per core (pytest-xdist)
# make test-quick: ruff and the core of the suite, for the inner loop (about 40 s of CPU)
# The venv is (re)installed only when pyproject.toml is newer than .venv/.installed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LINT_PATHS := src tests docs $(wildcard benchmarks)

.PHONY: venv demo test test-quick lint check clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: venv
	$(BIN)/adarray demo

check: venv
	$(BIN)/adarray check

lint: venv
	$(BIN)/ruff check $(LINT_PATHS)

# The registry's agreement tests of the Numba backend (tests/test_backend_numba.py) and the special-function
# library's (tests/test_numba_special.py) check what the generated code computes, which LLVM's optimisation level
# does not change; they compile about 150 programs and the special-function library, 3-4x faster at -O0. They run
# apart, at -O0, with caches of their own (removed first), so that no unoptimised machine code reaches the caches a
# user's programs load; every other test compiles at Numba's default.
# XLA's backend optimisation is off for the same reason (JAX keeps compiled code in memory only), and so are its
# newer CPU fusion emitters: the classic ones compile our special-function lowerings in about 0.7x the time
# (the JAX test files: 599 s of CPU before, 442 s after).
O0_CACHE := $(or $(TMPDIR),/tmp)/adarray-tests-O0
O0_TESTS := tests/test_backend_numba.py tests/test_numba_special.py
test: export XLA_FLAGS ?= --xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true \
	--xla_cpu_use_fusion_emitters=false

test: lint
	$(BIN)/python -m pytest -n auto --dist worksteal $(addprefix --ignore=,$(O0_TESTS))
	rm -rf $(O0_CACHE)
	NUMBA_OPT=0 NUMBA_CACHE_DIR=$(O0_CACHE)/numba ADARRAY_CACHE_DIR=$(O0_CACHE)/kernels \
		$(BIN)/python -m pytest -n auto --dist worksteal $(O0_TESTS)

# The IR, the API and its errors, control flow, pytrees, custom rules, vmap and Jacobians, NumPy functions,
# gradient checks, the layout, the README and the walkthrough, and the first-order registry tests of every
# primitive (jvp against differences, the adjoint test, the coverage checks); not the second-order, vmap and
# IR-contract registry tests, the compiled backends, the benchmarks or the docs pages.
QUICK_TESTS := docs/walkthrough.py $(addprefix tests/test_,$(addsuffix .py,ir api api_habits errors tree_util \
	control_flow custom_rules vmap_jacobians numpy_api check_grads layout guards fixed_point kernels_language \
	parallel simplify_temporaries readme rules differences progress))
QUICK_FILTER := not (test_rules and (second_order or vmap or ir_contracts)) and not test_docs_python_blocks

test-quick: lint
	$(BIN)/python -m pytest $(QUICK_TESTS) -k "$(QUICK_FILTER)"

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .ruff_cache .hypothesis
