"""Build hook: the package is pure Python; with ``ARENA_MYPYC=1`` the rules engine's hot modules are
also compiled with mypyc (they are mypy --strict code), which makes them about three times as fast.

    ARENA_MYPYC=1 python setup.py build_ext --inplace   # compiled modules beside the sources
    make engine-compiled                                 # the same, from the Makefile
    make engine-pure                                     # remove them: back to pure Python

A compiled module is an extension module next to its source file and takes precedence over it on
import; removing the extension files returns to the pure-Python package, which is what a plain
install (no compiler needed) runs. Everything else about the package is in pyproject.toml.
"""

from __future__ import annotations

import os

from setuptools import setup

# The modules on the engine's path for every step (state, tricks, declaring, hands, scoring,
# enumeration, the events it logs), and on the referee's path for every decision: a seat's view
# (observe) and the request's bytes (the wire encoder).
ENGINE_MODULES = [
    "arena/game/fields.py",
    "arena/game/scoring.py",
    "arena/game/hands.py",
    "arena/game/claims.py",
    "arena/game/declaring_turn.py",
    "arena/game/declarations.py",
    "arena/game/tricks.py",
    "arena/game/state.py",
    "arena/game/events.py",
    "arena/game/observe.py",
    "arena/wire/encode.py",
]

ext_modules = []
if os.environ.get("ARENA_MYPYC") == "1":
    try:
        from mypyc.build import mypycify
    except ImportError as exc:  # mypyc comes with mypy (the dev extras); a C compiler is needed too
        raise SystemExit(
            "ARENA_MYPYC=1 compiles the engine with mypyc, which is not installed here: "
            "install the dev extras (pip install -e '.[dev]') and build with "
            "`python setup.py build_ext --inplace` (or `make engine-compiled`)"
        ) from exc

    # separate: one library per module, each beside its source (nothing at the top level).
    ext_modules = mypycify(ENGINE_MODULES, opt_level="3", separate=True)

setup(ext_modules=ext_modules)
