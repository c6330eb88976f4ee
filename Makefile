# Developer tasks for guobiao. A fresh machine needs only Python >= 3.11 (with venv and pip),
# make and a C++ compiler (the test dependency pymahjonggb builds from source).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Touched after a successful install; reinstalls when pyproject.toml or setup.py changes.
STAMP := $(VENV)/.installed

.PHONY: venv test lint check bench

venv: $(STAMP)

$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -e '.[dev]'
	touch $@

# The tests run in parallel (pytest-xdist): most of their time is servers, browsers and
# clusters waiting on sockets, so four workers pay even on two cores. `make test
# TEST_WORKERS=0` runs them in one process; tests/conftest.py says what keeps them apart.
TEST_WORKERS ?= 4

test: venv
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

check: lint test

bench: venv
	$(BIN)/python benchmarks/bench_fan.py
	$(BIN)/python benchmarks/bench_shanten.py
	$(BIN)/python benchmarks/bench_wilds.py
