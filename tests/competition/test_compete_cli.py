"""arena compete's commands as an author or organiser meets them: their errors name the problem."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.ledger import Ledger

ROOT = Path(__file__).resolve().parents[2]


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


def test_a_missing_ledger_says_the_competition_is_to_be_started(tmp_path: Path) -> None:
    """An organiser who adds authors before serving is told what makes the ledger: the
    competition's server, not a tournament's run."""
    missing = tmp_path / "competition.sqlite"
    for command in (["author", "add", "ada"], ["author", "list"], ["status"], ["pause"]):
        result = CliRunner().invoke(app, ["compete", *command, "--ledger", str(missing)])
        assert result.exit_code == 2, result.output
        message = " ".join(result.output.split())
        assert f"no ledger at {missing} (start the competition first: arena compete serve" in (
            message
        )
        assert "arena run" not in message
    assert not missing.exists()


def test_a_competition_that_cannot_listen_is_refused_before_it_is_registered(
    tmp_path: Path,
) -> None:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    taken = f"127.0.0.1:{busy.getsockname()[1]}"
    text = (ROOT / "competitions" / "example.toml").read_text()
    text = text.replace('submissions = "127.0.0.1:50061"', f'submissions = "{taken}"')
    text = text.replace('bots = "127.0.0.1:50062"', 'bots = "127.0.0.1:0"')
    assert taken in text
    file = tmp_path / "c.toml"
    file.write_text(text)
    ledger = tmp_path / "l.sqlite"
    try:
        result = CliRunner().invoke(app, ["compete", "serve", str(file), "--ledger", str(ledger)])
    finally:
        busy.close()
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert f"error: cannot listen for submissions on {taken}: the address is in use" in message
    led = Ledger(ledger)
    try:
        assert led.conn.execute("SELECT COUNT(*) FROM tournaments").fetchone()[0] == 0
    finally:
        led.close()


def test_an_authors_leaderboard_with_a_token_asks_the_running_competition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An author has a token, not the ledger: `leaderboard --token T` asks the competition at
    submit's default address, not an ./arena.sqlite that has no competition."""
    from arena.cli.compete import shared

    asked: list[tuple[str, str]] = []

    def call(server: str, token: str, _: object) -> object:
        asked.append((server, token))
        raise shared.fail("stop here", 1)

    monkeypatch.setattr(shared, "call", call)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_LEDGER", raising=False)
    result = CliRunner().invoke(app, ["compete", "leaderboard", "--token", "t"])
    assert asked == [("127.0.0.1:50061", "t")]
    assert "no competition in" not in result.output
    # The organiser's --ledger is read as before, whatever token is in the environment.
    Ledger(tmp_path / "l.sqlite").close()
    result = CliRunner().invoke(
        app,
        ["compete", "leaderboard", "--ledger", str(tmp_path / "l.sqlite")],
        env={"ARENA_AUTHOR_TOKEN": "t"},
    )
    assert asked == [("127.0.0.1:50061", "t")]
    assert result.exit_code == 2 and "no competition in" in result.output


def test_a_submissions_log_is_printed_with_its_escape_sequences_shown_not_acted_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A build's output is its author's: printed raw, an escape sequence in it moved the cursor,
    set the terminal's title or wrote its clipboard (OSC 52) wherever the log was read."""
    from types import SimpleNamespace

    from arena.cli.compete import shared

    log = "step 1\n\x1b]52;c;cHduZWQ=\x07\x1b[1Aok\tdone\nlast"
    monkeypatch.setattr(shared, "call", lambda *_: SimpleNamespace(log=log))
    result = CliRunner().invoke(app, ["compete", "log", "3", "--token", "t"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert result.output == "step 1\n\ufffd]52;c;cHduZWQ=\ufffd\ufffd[1Aok\tdone\nlast\n"


@pytest.mark.parametrize(
    "args",
    [
        ["submit", "no-such-folder"],
        ["submissions"],
        ["log", "3"],
        ["withdraw", "bot"],
        ["remote", "bot", "--version", "1"],
    ],
)
def test_an_authors_command_without_a_token_asks_nothing(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each author's command (arena.cli.compete.author) wants the author's token before it packs or
    sends anything: refused with the one-line usage error, nothing asked of a competition."""
    from arena.cli.compete import shared

    def call(*_: object) -> object:
        raise AssertionError("a competition was asked without a token")

    monkeypatch.setattr(shared, "call", call)
    monkeypatch.delenv("ARENA_AUTHOR_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["compete", *args])
    assert result.exit_code == 2, result.output
    assert "give your author token: --token or $ARENA_AUTHOR_TOKEN" in result.output
