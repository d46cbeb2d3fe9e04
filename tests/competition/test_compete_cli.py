"""arena compete's commands as an author or organiser meets them: their errors name the problem."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from arena.cli.main import app
from arena.ledger import Ledger


def test_submitting_a_folder_without_a_manifest_names_the_folder_once(tmp_path: Path) -> None:
    folder = tmp_path / "nomanifest"
    folder.mkdir()
    result = CliRunner().invoke(
        app, ["compete", "submit", str(folder), "--server", "127.0.0.1:1", "--token", "t"]
    )
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert f"error: {folder}: no arena-bot.toml (the manifest" in message
    assert message.count(str(folder)) == 1


def test_a_ledger_without_a_competition_says_so(tmp_path: Path) -> None:
    Ledger(tmp_path / "l.sqlite").close()
    for command in ("status", "leaderboard"):
        result = CliRunner().invoke(
            app, ["compete", command, "--ledger", str(tmp_path / "l.sqlite")]
        )
        assert result.exit_code == 2
        assert "no competition in" in result.output and "arena compete serve FILE" in result.output
