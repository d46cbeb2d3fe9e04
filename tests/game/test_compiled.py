"""The guard against compiled engine modules (mypyc, ``make engine-compiled``) older than their
sources: such a module would be imported instead of the edited source and play stale rules."""

from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from arena.game.compiled import compiled_modules, stale_compiled_modules

SUFFIX = EXTENSION_SUFFIXES[0]


def _touch(path: Path, mtime: float) -> None:
    path.write_bytes(b"")
    os.utime(path, (mtime, mtime))


def test_a_compiled_module_older_than_its_source_is_stale(tmp_path: Path) -> None:
    _touch(tmp_path / "state.py", 2_000_000)
    _touch(tmp_path / f"state{SUFFIX}", 1_000_000)
    _touch(tmp_path / f"state__mypyc{SUFFIX}", 1_000_000)
    _touch(tmp_path / "scoring.py", 1_000_000)
    _touch(tmp_path / f"scoring{SUFFIX}", 2_000_000)
    assert compiled_modules(str(tmp_path)) == sorted(
        [f"state{SUFFIX}", f"state__mypyc{SUFFIX}", f"scoring{SUFFIX}"]
    )
    assert stale_compiled_modules(str(tmp_path)) == sorted(
        [f"state{SUFFIX}", f"state__mypyc{SUFFIX}"]
    )


def test_pure_sources_and_fresh_builds_are_not_stale(tmp_path: Path) -> None:
    _touch(tmp_path / "state.py", 2_000_000)
    assert stale_compiled_modules(str(tmp_path)) == []
    _touch(tmp_path / f"state{SUFFIX}", 3_000_000)
    assert stale_compiled_modules(str(tmp_path)) == []
