"""Issue 13: an entrant that cannot start stops the run before its first game with a clear error and
nothing recorded; the arena's own failure to start a bot is never a bot's loss."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.referee import MatchConfig
from arena.service.match_manager import PlayerSpec
from arena.service.server import create_server

pytestmark = pytest.mark.slow

TOURNAMENT = textwrap.dedent(
    """\
    name = "Doomed"
    variant = "rubicon"
    deals_per_pairing = 2
    [[entrants]]
    name = "fine"
    command = "{python} -m arena_bot.first_bot"
    [[entrants]]
    name = "typo"
    command = "{python} bots/mybot.py"
    """
)


def test_an_entrant_that_cannot_start_stops_the_run_before_any_game(tmp_path: Path) -> None:
    toml = tmp_path / "doomed.toml"
    toml.write_text(TOURNAMENT)
    ledger = tmp_path / "ledger.sqlite"
    started = time.monotonic()
    result = CliRunner().invoke(app, ["run", str(toml), "--ledger", str(ledger)])
    took = time.monotonic() - started
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert "entrant 'typo'" in message and "nothing recorded" in message
    # Its script is missing: said before it starts, naming the path as the file wrote it.
    assert "its script 'bots/mybot.py' does not exist" in message
    assert took < 60, "noticed at once, not after the connect timeout"
    conn = sqlite3.connect(ledger)
    try:
        assert conn.execute("SELECT count(*) FROM tournaments").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM games").fetchone() == (0,)
    finally:
        conn.close()
    # Fixed (the bot written where the file says), the same file runs from the start.
    (tmp_path / "bots").mkdir(mode=0o755)
    (tmp_path / "bots" / "mybot.py").write_text("from arena_bot.first_bot import main\nmain()\n")
    tmp_path.chmod(0o755)
    again = CliRunner().invoke(app, ["run", str(toml), "--ledger", str(ledger)])
    assert again.exit_code == 0, again.output


def test_an_entrant_that_dies_at_start_stops_the_run_with_its_last_words(tmp_path: Path) -> None:
    toml = tmp_path / "doomed.toml"
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mybot.py").write_text("raise SystemExit('cannot find my weights')\n")
    toml.write_text(TOURNAMENT)
    result = CliRunner().invoke(app, ["run", str(toml), "--ledger", str(tmp_path / "l.sqlite")])
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert "entrant 'typo'" in message and "before connecting" in message
    assert "nothing recorded" in message and "cannot find my weights" in message


def test_a_token_on_a_command_line_is_refused_in_the_file(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text(TOURNAMENT.replace("bots/mybot.py", "bot.py --token {token}"))
    result = CliRunner().invoke(app, ["run", str(toml), "--ledger", str(tmp_path / "l.sqlite")])
    assert result.exit_code == 2
    assert "entrants[1].command" in result.stderr and "ARENA_TOKEN" in result.stderr


def test_a_bot_the_arena_cannot_start_is_no_ones_loss() -> None:
    """A launch failure (here: no such program) plays no game: the match ends with no record and an
    error, so that the runner records nothing and a rerun plays it."""

    async def go() -> tuple[object, str]:
        server, _, manager = await create_server()
        try:
            entry = manager.create(
                MatchConfig(seed=1),
                [
                    [PlayerSpec("fine", f"{sys.executable} -m arena_bot.first_bot")],
                    [PlayerSpec("ghost", "/no/such/program --flag")],
                ],
                10.0,
            )
            await manager.start(entry)
            await asyncio.wait_for(entry.done.wait(), 60)
            return entry.record, entry.error
        finally:
            await manager.close()
            await server.stop(None)

    record, error = asyncio.run(go())
    assert record is None
    assert "/no/such/program" in error
