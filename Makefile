# make demo: create .venv, install adarray (editable, with test tools), run the demo
# make test: the same venv, then ruff and the whole pytest suite
# The venv is (re)installed only when pyproject.toml is newer than .venv/.installed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LINT_PATHS := src tests docs $(wildcard benchmarks)

.PHONY: venv demo test lint check clean

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

test: lint
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .ruff_cache .hypothesis
