"""Fixtures of the CLI tests: a tournament played once per module, and a copy of its ledger per test."""

from __future__ import annotations

from pathlib import Path

import pytest
from tournament_helpers import TINY, invoke
from typer.testing import Result


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Result]:
    """``arena run`` on a two-game tournament, once for the module."""
    d = tmp_path_factory.mktemp("cli")
    toml = d / "tiny.toml"
    toml.write_text(TINY)
    ledger = d / "ledger.sqlite"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "250")
        result = invoke("run", str(toml), "--ledger", str(ledger))
    return toml, ledger, result


@pytest.fixture
def ledger(played: tuple[Path, Path, Result], tmp_path: Path) -> Path:
    """A copy of the played ledger, for a test to use as it likes."""
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(played[1].read_bytes())
    return copy
