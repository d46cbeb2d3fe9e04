"""``arena run`` through typer's CliRunner: its tables, resuming, bad and changed files, a read-only
ledger; and every ledger command's help and place in the README. (The commands that read the
ledger: test_ledger_cli.py.)"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from tournament_helpers import REAL_CONNECT, TINY, flat, invoke, rows
from typer.testing import Result

from arena.cli.main import app

pytestmark = pytest.mark.xdist_group("tournament-cli")  # one played tournament for the module

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")


# ---------------------------------------------------------------- arena run


def test_run_prints_the_leaderboard_and_the_pairings(played: tuple[Path, Path, Result]) -> None:
    _, ledger, result = played
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Leaderboard: Tiny" in out, "the tournament's own board"
    assert "Pairings: Tiny" in out
    # what the first seconds wait for: the entrants' check, which prints no progress
    check = "checking 2 entrants before the first game: each must start, dial in and say Hello"
    assert out.index(check) < out.index("Tiny: 2/2 games")
    # without a terminal, progress comes as plain lines
    assert re.search(r"^\[0:00:\d\d\] Tiny: 2/2 games, 0 running, 0 bot failures", out, re.M)
    for header in ("mu - 3 sigma", "W-L-D", "avg points", "duplicate sets W-L-T"):
        assert header in out
    board = [line for line in out.splitlines() if "rnd" in line or "fst" in line]
    assert len(board) >= 3, "two leaderboard lines and a pairing line"
    assert rows(ledger, "SELECT count(*) FROM games") == [(2,)]
    # the pairing line: fst against rnd over the two games of the duplicate set
    pairing = next(line for line in out.splitlines() if "fst" in line and "rnd" in line)
    score = re.search(r"(\d+)-(\d+)-(\d+)", pairing)
    assert score is not None, pairing
    wins, losses, draws = map(int, score.groups())
    assert wins + losses + draws == 2
    # One duplicate pair: no spread, so no Elo interval (it would be the regularization's: one pair
    # won twice would read +1041 and 100%). Split, it is all alike, with no LOS; won twice by one
    # side (the random bot's luck), a clean sweep: its one-sided bound and a LOS of 100% or 0%.
    if wins == 1:
        assert "- (all alike), 1 pair" in pairing and "%" not in pairing.split("alike")[1]
    else:
        side, los = (">", "100%") if wins == 2 else ("<", "0%")
        assert re.search(rf"{side} [+-]\d+ \(95%, a clean sweep\), 1 pair │ {los} ", pairing)


def test_run_again_resumes_and_plays_nothing(
    played: tuple[Path, Path, Result], ledger: Path
) -> None:
    toml = played[0]
    before = rows(ledger, "SELECT id, key, outcome FROM games ORDER BY id")
    result = invoke("run", str(toml), "--ledger", str(ledger))
    assert result.exit_code == 0, result.output
    assert "resumed: 2 game(s)" in result.stdout
    assert "checking" not in result.stdout, "a finished tournament checks no entrant"
    assert rows(ledger, "SELECT id, key, outcome FROM games ORDER BY id") == before
    progress = [line for line in result.stdout.splitlines() if "2/2 games" in line]
    assert len(progress) == 1, progress  # not the same line again at the end


@pytest.mark.parametrize(
    ("old", "new", "field", "expected"),
    [
        ("deals_per_pairing = 1", "deals_per_pairing = 0", "deals_per_pairing", "integer >= 1"),
        ('format = "round-robin"', 'format = "ko"', "format", "expected one of round-robin"),
        ('variant = "two-handed"', 'variant = "5"', "variant", "expected one of two-handed"),
        (
            "[time_control]",
            "[policies]\non_timeout = 1\n[time_control]",
            "policies.on_timeout",
            "forfeit",
        ),
    ],
    ids=["games", "format", "variant", "policy"],
)
def test_run_a_bad_file(tmp_path: Path, old: str, new: str, field: str, expected: str) -> None:
    toml = tmp_path / "bad.toml"
    assert old in TINY
    toml.write_text(TINY.replace(old, new))
    ledger = tmp_path / "l.sqlite"
    result = invoke("run", str(toml), "--ledger", str(ledger))
    assert result.exit_code == 2, result.output
    message = flat(result.stderr)
    assert f"{toml}: {field}: " in message
    assert expected in message
    assert not ledger.exists(), "nothing is created for a bad file"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('name = "T"\n', "expected at least one [[entrants]] table"),
        (
            TINY.replace("[time_control]", "options = 3\n[time_control]"),
            "expected a table ([options])",
        ),
    ],
    ids=["no-entrants", "options-not-a-table"],
)
def test_run_prints_the_error_message_verbatim(tmp_path: Path, text: str, expected: str) -> None:
    """The messages quote TOML syntax in brackets; the console must not take them for markup."""
    toml = tmp_path / "bad.toml"
    toml.write_text(text)
    result = invoke("run", str(toml), "--ledger", str(tmp_path / "l.sqlite"))
    assert result.exit_code == 2, result.output
    assert expected in flat(result.stderr)


def test_without_duplicate_deals_the_pairings_have_no_duplicate_sets(tmp_path: Path) -> None:
    toml = tmp_path / "single.toml"
    toml.write_text(TINY.replace('name = "Tiny"', 'name = "Single"\nduplicate = false'))
    result = invoke("run", str(toml), "--ledger", str(tmp_path / "l.sqlite"))
    assert result.exit_code == 0, result.output
    assert "Pairings: Single" in result.output and "W-L-D" in result.output
    assert "duplicate sets" not in result.output


def test_run_a_missing_file(tmp_path: Path) -> None:
    result = invoke("run", str(tmp_path / "none.toml"), "--ledger", str(tmp_path / "l.sqlite"))
    assert result.exit_code == 2
    assert "cannot read the file" in flat(result.stderr)


def test_run_into_a_damaged_ledger_says_so_first(tmp_path: Path) -> None:
    """A newcomer read the sandbox line, printed before the ledger was opened, as the start of the
    ledger's error: the ledger is opened first, and its error is all a damaged ledger gets."""
    toml = tmp_path / "tiny.toml"
    toml.write_text(TINY)
    ledger = tmp_path / "garbage.sqlite"
    ledger.write_bytes(bytes(range(256)) * 64)
    result = invoke("run", str(toml), "--ledger", str(ledger))
    assert result.exit_code == 2, result.output
    assert "not a usable SQLite ledger" in flat(result.stderr)
    assert "sandbox:" not in result.output, result.output


def test_run_into_a_read_only_ledger(
    played: tuple[Path, Path, Result], ledger: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A ledger that cannot be written (opened read-only, as SQLite opens a file it may not write):
    a clear error and exit 2, not a traceback."""
    toml = tmp_path / "other.toml"
    toml.write_text(played[0].read_text().replace('name = "Tiny"', 'name = "Other"'))
    data = ledger.read_bytes()

    def read_only(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        kwargs["uri"] = True
        return REAL_CONNECT(f"file:{database}?mode=ro", *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only)
    result = invoke("run", str(toml), "--ledger", str(ledger))
    assert result.exit_code == 2, result.output
    assert str(ledger) in flat(result.stderr)
    assert ledger.read_bytes() == data


def test_a_changed_file_is_refused_and_can_run_under_a_new_name(
    played: tuple[Path, Path, Result], ledger: Path, tmp_path: Path
) -> None:
    """Issue 14: the same name with another seed would replay and rate the same deals again."""
    toml = tmp_path / "changed.toml"
    toml.write_text(played[0].read_text().replace("seed = 5", "seed = 6"))
    before = rows(ledger, "SELECT id, key FROM games")
    refused = invoke("run", str(toml), "--ledger", str(ledger))
    assert refused.exit_code == 2
    message = flat(refused.stderr)
    assert "seed changed" in message and "--name" in message
    assert rows(ledger, "SELECT id, key FROM games") == before
    harmless = tmp_path / "harmless.toml"
    harmless.write_text(played[0].read_text().replace("concurrency = 2", "concurrency = 1"))
    resumed = invoke("run", str(harmless), "--ledger", str(ledger))
    assert resumed.exit_code == 0 and "resumed: 2 game(s)" in resumed.stdout
    renamed = invoke("run", str(toml), "--ledger", str(ledger), "--name", "Tiny 2")
    assert renamed.exit_code == 0, renamed.output
    assert [r[0] for r in rows(ledger, "SELECT name FROM tournaments ORDER BY id")] == [
        "Tiny",
        "Tiny 2",
    ]


def test_relative_paths_in_commands_start_from_the_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13: an entrant's bot next to the tournament file runs whatever folder arena runs in."""
    season = tmp_path / "mybot"
    season.mkdir()
    (season / "mine.py").write_text(
        "from arena_bot.first_bot import main\nif __name__ == '__main__':\n    main()\n"
    )
    (season / "season.toml").write_text(
        TINY.replace("{python} -m arena_bot.first_bot", "{python} mine.py")
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = invoke("run", "../mybot/season.toml", "--ledger", "l.sqlite")
    assert result.exit_code == 0, result.output
    assert rows(elsewhere / "l.sqlite", "SELECT outcome FROM games") == [("normal",), ("normal",)]


# ---------------------------------------------------------------- help and README


def commands() -> Iterator[tuple[str, typer.models.CommandInfo]]:
    for info in app.registered_commands:
        yield info.name or "", info
    for group in app.registered_groups:
        sub = group.typer_instance
        assert sub is not None
        callback = sub.registered_callback
        if callback is not None and sub.info.invoke_without_command:
            yield group.name or "", typer.models.CommandInfo(callback=callback.callback)
        for info in sub.registered_commands:
            yield f"{group.name} {info.name}", info


LEDGER_COMMANDS = [
    "run",
    "tournaments",
    "leaderboard",
    "games",
    "games void",
    "replay",
    "export",
    "ratings rebuild",
]


def test_every_command_has_help_and_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    names = dict(commands())
    assert set(LEDGER_COMMANDS) <= set(names)
    for name in names:
        result = invoke(*name.split(), "--help")
        assert result.exit_code == 0, name
        summary = (names[name].callback.__doc__ or "").strip()
        assert summary, f"arena {name} has no help text"
        assert summary.split()[0] in result.stdout
        assert f"arena {name}" in readme, f"arena {name} is not in the README"
