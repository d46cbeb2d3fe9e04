"""Compiled engine modules: the hot modules of the rules engine, and of the referee's path for every
decision (a seat's view, the wire encoder in ``arena/wire``), may be compiled with mypyc (``make
engine-compiled``, see setup.py). A compiled module is an extension module beside its source and is
imported instead of it; ``make engine-pure`` removes them.

Importing this module (the package does, before any engine module; the encoder imports the engine)
refuses a compiled module older than its source: after an edit, a checkout or a merge it would play
rules, or write requests, that are no longer the code's, silently.
"""

from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES

HERE = os.path.dirname(os.path.abspath(__file__))
# Every folder that may hold compiled modules (setup.py's ENGINE_MODULES).
FOLDERS = (HERE, os.path.join(os.path.dirname(HERE), "wire"))


def compiled_modules(folder: str = HERE) -> list[str]:
    """The extension files beside the engine's sources (mypyc's ``*__mypyc`` libraries included)."""
    return sorted(n for n in os.listdir(folder) if n.endswith(tuple(EXTENSION_SUFFIXES)))


def stale_compiled_modules(folder: str = HERE) -> list[str]:
    """The extension files older than the source they were compiled from."""
    stale = []
    for name in compiled_modules(folder):
        suffix = next(s for s in EXTENSION_SUFFIXES if name.endswith(s))
        source = os.path.join(folder, name[: -len(suffix)].removesuffix("__mypyc") + ".py")
        if os.path.exists(source) and os.path.getmtime(source) > os.path.getmtime(
            os.path.join(folder, name)
        ):
            stale.append(name)
    return stale


_stale = [
    os.path.relpath(os.path.join(folder, name), os.path.dirname(os.path.dirname(HERE)))
    for folder in FOLDERS
    for name in stale_compiled_modules(folder)
]
if _stale:
    raise ImportError(
        f"compiled modules older than their sources: {', '.join(_stale)}; "
        "rebuild them (make engine-compiled) or remove them (make engine-pure)"
    )
