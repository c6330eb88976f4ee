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

test: venv
	$(BIN)/python -m pytest -q

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

check: lint test

bench: venv
	$(BIN)/python benchmarks/bench_fan.py
	$(BIN)/python benchmarks/bench_shanten.py
	$(BIN)/python benchmarks/bench_wilds.py
