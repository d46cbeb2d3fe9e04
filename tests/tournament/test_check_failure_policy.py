"""Red team, issue 47 item 5: one entrant that starts but never dials in stopped ``arena run`` before
its first game (exit 2, 0 of 6 games, the honest pairings included). ``[policies] on_check_failure``:
``stop`` (the default) keeps that; ``exclude`` has the failing entrant forfeit each of its own games,
recorded with the check's reason, while everyone else plays."""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.tournament import runner
from arena.tournament.spec import TournamentFileError, parse

pytestmark = pytest.mark.slow

TOURNAMENT = textwrap.dedent(
    """\
    name = "Spoiled"
    variant = "rubicon"
    {policies}
    [[entrants]]
    name = "first"
    command = "{{python}} -m arena_bot.first_bot"
    [[entrants]]
    name = "random"
    command = "{{python}} -m arena_bot.random_bot"
    [[entrants]]
    name = "mute"
    command = "{{python}} -c 'import time; time.sleep(600)'"
    """
)


def _run(tmp_path: Path, policies: str) -> tuple[int, str, Path]:
    toml = tmp_path / "spoiled.toml"
    toml.write_text(TOURNAMENT.format(policies=policies))
    ledger = tmp_path / "ledger.sqlite"
    result = CliRunner().invoke(app, ["run", str(toml), "--ledger", str(ledger)])
    return result.exit_code, " ".join((result.output + result.stderr).split()), ledger


def test_by_default_an_entrant_that_never_dials_in_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", 3.0)
    code, output, _ = _run(tmp_path, "")
    assert code == 2, output
    assert "entrant 'mute'" in output and "nothing recorded" in output
    assert 'on_check_failure = "exclude"' in output


def test_with_exclude_the_others_play_and_it_forfeits_its_own_games(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", 3.0)
    code, output, ledger = _run(tmp_path, '[policies]\non_check_failure = "exclude"')
    assert code == 0, output
    assert "entrant 'mute' forfeited its games, excluded by the pre-run check" in output
    conn = sqlite3.connect(ledger)
    try:
        rows = conn.execute(
            "SELECT g.outcome, g.detail, g.culprit, group_concat(e.name || ':' || s.seat || ':' "
            "|| s.place, ' ') FROM games g JOIN game_seats s ON s.game_id = g.id "
            "JOIN entrants e ON e.id = s.entrant_id GROUP BY g.id ORDER BY g.id"
        ).fetchall()
    finally:
        conn.close()
    assert len(rows) == 6, rows  # three pairings, two games each: none left out
    muted = [r for r in rows if "mute:" in r[3]]
    honest = [r for r in rows if "mute:" not in r[3]]
    assert len(muted) == 4 and len(honest) == 2
    for outcome, detail, culprit, seats in muted:
        assert outcome == "crash"
        assert f"mute:{culprit}:1" in seats.split(), "the excluded entrant is the one that loses"
        assert "(mute): excluded by the pre-run check: " in detail, detail
        assert detail.endswith("it did not dial in within 3 s"), detail
    assert all(r[0] == "normal" for r in honest), honest


def test_the_policy_is_checked_in_the_file() -> None:
    entrants = [{"name": "a", "command": "x"}, {"name": "b", "command": "y"}]
    spec = parse({"name": "t", "entrants": entrants, "policies": {"on_check_failure": "exclude"}})
    assert spec.on_check_failure == "exclude"
    assert spec.to_dict()["policies"]["on_check_failure"] == "exclude"
    default = parse({"name": "t", "entrants": entrants})
    assert default.on_check_failure == "stop"
    assert "on_check_failure" not in default.to_dict()["policies"], "old identities unchanged"
    with pytest.raises(TournamentFileError, match="on_check_failure: expected one of stop or"):
        parse({"name": "t", "entrants": entrants, "policies": {"on_check_failure": "skip"}})
