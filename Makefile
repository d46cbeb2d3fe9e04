# Bezique Arena: developer entry points.
#   make demo   create .venv when missing, then run the quickstart tournament into arena.sqlite
#   make test   ruff, ruff format --check, mypy --strict, pytest (CI runs this via .ci/run)
#   make bench  engine throughput benchmark

SHELL := /bin/bash

VENV  := .venv
STAMP := $(VENV)/.installed
BIN   := $(VENV)/bin

.PHONY: all venv .venv demo test bench clean

all: test

# Create the virtualenv and install the project with its dev extras.
# Re-runs whenever pyproject.toml changes.
$(STAMP): pyproject.toml clients/python/pyproject.toml
	@if command -v python3.11 >/dev/null 2>&1; then \
		echo "python3.11 -m venv $(VENV)"; python3.11 -m venv $(VENV); \
	else \
		echo "python3 -m venv $(VENV)"; python3 -m venv $(VENV); \
	fi
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/pip install -e '.[dev]' -e clients/python
	touch $@

venv .venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/arena run tournaments/quickstart.toml --ledger arena.sqlite
	@echo
	@echo "See it in a browser (leaderboard, entrants, replays): $(BIN)/arena web --ledger arena.sqlite"
	@echo "then open http://127.0.0.1:8000/"

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py --variant two-handed --seconds 5

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist
	find . -name '*.egg-info' -prune -exec rm -rf {} +
	find . -name '__pycache__' -type d -prune -exec rm -rf {} +
