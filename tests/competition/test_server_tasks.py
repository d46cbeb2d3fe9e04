"""The competition server's background tasks: one that dies on an exception is said, with why, and
stops the server (its wait raises TaskDied; compete serve exits with status 2, as for a lost
ledger), rather than leaving it running half-dead (issue 45: the matchmaker once died on a KeyError
and no game was paired again, silently)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from test_challenges import TIMEOUT, Arena, run
from typer.testing import CliRunner

from arena.cli.main import app
from arena.competition.server import CompetitionServer, TaskDied
from arena.ledger import LedgerError

ROOT = Path(__file__).resolve().parents[2]


def test_a_matchmaker_that_dies_is_said_and_stops_the_server(tmp_path: Path) -> None:
    def prepare(arena: Arena) -> None:
        def broken(*args: Any) -> None:
            raise KeyError(404)

        arena.server.pool.pick = broken  # type: ignore[method-assign]

    async def body(arena: Arena) -> None:
        with pytest.raises(TaskDied) as raised:
            await asyncio.wait_for(arena.server.wait(), TIMEOUT / 2)
        assert str(raised.value) == "the matchmaker died: KeyError: 404"
        said = [line for line in arena.said if "died" in line]
        assert said == ["error: the matchmaker died: KeyError: 404; stopping the server"]

    run(tmp_path, {"ann": ["a1"], "bob": ["b1"]}, body, prepare=prepare)


def test_a_refresher_that_loses_the_ledger_stops_the_server_with_the_ledgers_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("arena.competition.roster.REFRESH_SECONDS", 0.01)

    async def body(arena: Arena) -> None:
        async def lost() -> None:
            raise LedgerError("the ledger is gone")

        arena.server._refresh = lost  # type: ignore[method-assign]
        with pytest.raises(LedgerError, match="the ledger is gone"):
            await asyncio.wait_for(arena.server.wait(), TIMEOUT / 2)
        assert any("the refresher died: LedgerError" in line for line in arena.said)

    run(tmp_path, {"ann": ["a1"], "bob": ["b1"]}, body)


def test_compete_serve_says_which_task_died_and_exits_non_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: CompetitionServer) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(CompetitionServer, "_refresher", broken)
    text = (ROOT / "competitions" / "example.toml").read_text()
    text = text.replace('submissions = "127.0.0.1:50061"', 'submissions = "127.0.0.1:0"')
    text = text.replace('bots = "127.0.0.1:50062"', 'bots = "127.0.0.1:0"')
    file = tmp_path / "c.toml"
    file.write_text(text)
    ledger = tmp_path / "l.sqlite"
    result = CliRunner().invoke(app, ["compete", "serve", str(file), "--ledger", str(ledger)])
    message = " ".join(result.output.split())
    assert result.exit_code == 2, message
    assert "error: the refresher died: RuntimeError: boom; stopping the server" in message
    assert "stopping: ending the games in play" in message
    assert message.rstrip().endswith("error: the refresher died: RuntimeError: boom"), message
