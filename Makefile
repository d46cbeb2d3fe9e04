# Bezique Arena: developer entry points.
#   make demo   set up (.venv, and the JavaScript client's packages when npm is there), then run the
#               quickstart tournament into arena.sqlite
#   make test   ruff, ruff format --check, mypy --strict, lint-imports (the layers of arena/), pytest,
#               test-compiled (CI runs this via .ci/run)
#   make test-fast  the tests not marked slow, for the edit-test loop (make test and CI run them all)
#   make bench  engine throughput benchmark
#   make engine-compiled  compile the hot modules of the engine and the referee's path with mypyc
#                         (optional; see setup.py)
#   make engine-pure      remove the compiled modules: back to the pure-Python engine
#   make test-compiled    build them in a scratch copy and run the engine's exact-count tests there

SHELL := /bin/bash

VENV  := .venv
STAMP := $(VENV)/.installed
BIN   := $(VENV)/bin
# The file npm ci writes last into node_modules (npm's hidden lockfile): missing or older than the lock
# when the installed packages are not the locked ones.
JS_STAMP := clients/javascript/node_modules/.package-lock.json
SETUP := $(STAMP) $(JS_STAMP)

.PHONY: all venv .venv demo test test-fast bench clean engine-compiled engine-pure test-compiled

all: test

# Create the virtualenv and install the project with its dev extras, with python3.11 (or
# $ARENA_PYTHON, an interpreter's path: .ci/run picks the oldest 3.11 the machine has).
# Re-runs whenever pyproject.toml changes.
# Editable as a plain path in a .pth file (pyproject.toml's package-dir names the root folder as the
# packages' folder, which setuptools then adds to the path as it is): for a flat layout its default is
# an import hook that costs every Python process of the environment about 15 ms at start, and the
# tests start a thousand (bots, arena commands); a bot's sandbox shows only the project's packages
# either way. (setuptools' "compat" mode did the same and is deprecated.)
$(STAMP): pyproject.toml clients/python/pyproject.toml
	@if [ -n "$$ARENA_PYTHON" ]; then \
		echo "$$ARENA_PYTHON -m venv $(VENV)"; "$$ARENA_PYTHON" -m venv $(VENV); \
	elif command -v python3.11 >/dev/null 2>&1; then \
		echo "python3.11 -m venv $(VENV)"; python3.11 -m venv $(VENV); \
	else \
		echo "python3 -m venv $(VENV)"; python3 -m venv $(VENV); \
	fi
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/pip install -e '.[dev]' -e clients/python
	touch $@

# The JavaScript client's packages, exactly as locked: the arena gives Node bots its SDK only once they
# are installed (arena/sandbox/runtime.py), so without them every JavaScript bot fails to start. Not
# part of $(STAMP), whose pip install a changed lock need not repeat. Without npm the set-up goes on
# (it promises only Python, make and git) and says so each time; .ci/run requires npm.
$(JS_STAMP): clients/javascript/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		echo "npm ci --prefix clients/javascript"; \
		npm ci --prefix clients/javascript --no-audit --no-fund --loglevel=error || \
			{ echo "npm ci --prefix clients/javascript failed" >&2; exit 1; }; \
	else \
		echo "npm not found: JavaScript bots need Node.js and npm; install them, then run make .venv again" \
			"(or npm ci --prefix clients/javascript)"; \
	fi

venv .venv: $(SETUP)

demo: $(SETUP)
	$(BIN)/arena run tournaments/quickstart.toml --ledger arena.sqlite
	@echo
	@echo "See it in a browser (leaderboard, entrants, replays): $(BIN)/arena web --ledger arena.sqlite"
	@echo "then open http://127.0.0.1:8000/"

# The tests start some hundreds of Python processes (bots, arena commands, pytest's workers). With
# PYTHONDONTWRITEBYTECODE set in the environment, each would compile the project's modules from source
# again, and each pytest worker would rewrite every test module's asserts again: for the tests the
# bytecode is written (into the ignored __pycache__ folders).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/pytest

test: $(SETUP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(PYTEST)
	$(MAKE) --no-print-directory test-compiled

test-fast: $(SETUP)
	$(PYTEST) -m "not slow"

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py --variant two-handed --seconds 5

# The compiled modules (setup.py's ENGINE_MODULES: the engine's, a seat's view and the wire encoder)
# sit beside their sources and are imported instead of them; importing the engine refuses one older
# than its source (arena/game/compiled.py), so rebuild after editing them.
COMPILED := arena/game/*.so arena/wire/*.so
# A module's small loader is not rebuilt when only its source changed (the compiled code is in its
# *__mypyc library): touch them all after a build so that the staleness check sees the new build.
engine-compiled: $(STAMP)
	ARENA_MYPYC=1 $(BIN)/python setup.py build_ext --inplace
	touch $(COMPILED)

engine-pure:
	rm -f $(COMPILED) $(COMPILED:.so=.pyd)
	rm -rf build

# The compiled engine against the pure one's exact figures (perft counts, golden playthroughs, the
# property tests, and the encoder's bytes against the protobuf library's at every decision of whole
# games), in a scratch copy of the tree so that the working tree stays as it is. About two minutes
# of CPU (most of it the C build): the whole of tests/game compiled would cost three more.
COMPILED_TESTS := tests/game/test_perft.py tests/game/test_golden.py tests/game/test_properties.py \
	tests/wire/test_request_bytes.py

test-compiled: $(STAMP)
	@scratch="$$(mktemp -d)"; trap 'rm -rf "$$scratch"' EXIT; \
	cp -r arena tests setup.py pyproject.toml "$$scratch"/ && \
	(cd "$$scratch" && rm -f $(COMPILED) $(COMPILED:.so=.pyd)) && \
	python="$$(pwd)/$(BIN)/python"; cd "$$scratch" && \
	ARENA_MYPYC=1 "$$python" setup.py -q build_ext --inplace --parallel 2 >build.log 2>&1 || { cat build.log; exit 1; }; \
	"$$python" -c 'import sys, arena.game.state as s, arena.wire.encode as e; sys.exit(next((f"not compiled: {m.__name__}" for m in (s, e) if getattr(m, "__file__", "").endswith(".py")), 0))' && \
	"$$python" -m pytest -q -p no:cacheprovider $(COMPILED_TESTS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist
	rm -f $(COMPILED) $(COMPILED:.so=.pyd)
	find . -name '*.egg-info' -prune -exec rm -rf {} +
	find . -name '__pycache__' -type d -prune -exec rm -rf {} +
