"""The guard against compiled engine modules (mypyc, ``make engine-compiled``) older than their
sources: such a module would be imported instead of the edited source and play stale rules."""

from __future__ import annotations

import ast
import os
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from arena.game.compiled import FOLDERS, compiled_modules, stale_compiled_modules

ROOT = Path(__file__).resolve().parents[2]

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


def test_every_folder_setup_compiles_into_is_guarded() -> None:
    """setup.py compiles modules outside arena/game too (the wire encoder): a stale one there is
    refused on import like the engine's."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    modules = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == "ENGINE_MODULES"
    )
    assert "arena/wire/encode.py" in modules
    assert {(ROOT / os.path.dirname(m)).resolve() for m in modules} == {
        Path(f).resolve() for f in FOLDERS
    }
