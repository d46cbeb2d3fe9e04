"""arena run: options that cannot be used are refused before the ledger is opened or a bot started."""

from __future__ import annotations

from pathlib import Path

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
