"""Options that cannot be used are refused before the ledger is opened or a bot started."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app

runner = CliRunner()

FILE = """name = "T"
[[entrants]]
name = "a"
command = "{python} -m arena_bot.random_bot"
[[entrants]]
name = "b"
command = "{python} -m arena_bot.first_bot"
"""


def test_logs_naming_a_file_is_refused(tmp_path: Path) -> None:
    # The folder was made when the first bot started: a FileExistsError traceback.
    tournament = tmp_path / "t.toml"
    tournament.write_text(FILE)
    taken = tmp_path / "taken"
    taken.write_text("not a folder")
    ledger = tmp_path / "l.sqlite"
    result = runner.invoke(
        app, ["run", str(tournament), "--ledger", str(ledger), "--logs", str(taken)]
    )
    assert result.exit_code == 2, result.output
    assert "--logs" in result.output
    assert not ledger.exists()
    assert taken.read_text() == "not a folder"


@pytest.mark.parametrize("command", ["match", "sprt", "serve", "compete serve"])
def test_logs_naming_a_file_is_refused_by_every_command_that_starts_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    # The folder was made when the server started: "[Errno 17] File exists", exit status 1.
    def start(*args: object) -> None:
        raise AssertionError("started with a --logs it cannot use")

    monkeypatch.setattr("asyncio.run", start)
    taken = tmp_path / "taken"
    taken.write_text("not a folder")
    ledger = tmp_path / "l.sqlite"
    competition = tmp_path / "c.toml"
    competition.write_text('name = "c"\n')
    bots = ["--bot", "{python} -m arena_bot.first_bot"] * 2
    args = {
        "match": [*bots, "--games", "2"],
        "sprt": [*bots, "--ledger", str(ledger)],
        "serve": [],
        "compete serve": [str(competition), "--ledger", str(ledger)],
    }[command]
    result = runner.invoke(app, [*command.split(), *args, "--logs", str(taken)])
    assert result.exit_code == 2, result.output
    assert "--logs: cannot use" in " ".join(result.output.split())
    assert not ledger.exists()
    assert taken.read_text() == "not a folder"
