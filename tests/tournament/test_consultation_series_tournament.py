"""Issue 48: a tournament plays three-handed consultation as a series (docs/rules.md §3.2). 000: the
single player "continues to do so till the allies win a game, when the two cut as before to see who
shall be the single player". Each pairing's games are played in a row, seated by the referee's cuts;
the ledger's seats, places and records follow the series; a series interrupted part-way resumes from
its recorded games to exactly the games of an uninterrupted run; bad combinations are one line."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.competition import spec as competition
from arena.ledger import Ledger
from arena.ledger import records as ledger_records
from arena.play import game as play_game
from arena.play.game import Played
from arena.referee import MatchConfig
from arena.referee.series import allies_won, first_seating, next_seating
from arena.tournament import spec as tournament
from arena.tournament.runner import TournamentRunner
from arena.tournament.schedule import full_schedule

RUN_TIMEOUT = 300.0  # seconds, for a whole tournament on a loaded machine
BOTS = [("random", "random_bot", "1"), ("first", "first_bot", "1"), ("random-b", "random_bot", "b")]
BOTS.append(("first-b", "first_bot", "b"))


def series_file(
    directory: Path, entrants: int = 3, deals: int = 4, duplicate: bool = False, **top: Any
) -> Path:
    """A tournament of the example bots in the series, with a generous clock so that every game is
    decided by the bots alone (deterministic)."""
    lines = [
        'name = "Series"',
        'variant = "three-handed-consultation"',
        f"deals_per_pairing = {deals}",
        f"duplicate = {'true' if duplicate else 'false'}",
        "seed = 5",
        *(f"{k} = {json.dumps(v)}" for k, v in top.items()),
        "[options]",
        'consultation = "series"',
        "[time_control]",
        "budget_ms = 10000",
        "bank_ms = 120000",
        "grace_ms = 2000",
    ]
    for name, module, version in BOTS[:entrants]:
        lines += [
            "[[entrants]]",
            f'name = "{name}"',
            f'command = "{{python}} -m arena_bot.{module}"',
            f'version = "{version}"',
        ]
    path = directory / "series.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def query(path: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path, timeout=30.0)
    try:
        return [tuple(r) for r in conn.execute(sql, args).fetchall()]
    finally:
        conn.close()


def seats_by_key(path: Path) -> dict[str, list[tuple[int, int, str, int, int, int]]]:
    """Each game's seats: (seat, member, entrant, side, place, score)."""
    out: dict[str, list[tuple[int, int, str, int, int, int]]] = {}
    for key, *row in query(
        path,
        "SELECT g.key, s.seat, s.member, e.name, s.side, s.place, s.score FROM games g "
        "JOIN game_seats s ON s.game_id = g.id JOIN entrants e ON e.id = s.entrant_id "
        "ORDER BY g.ord, s.seat, s.member",
    ):
        out.setdefault(key, []).append(tuple(row))  # type: ignore[arg-type]
    return out


def game_records(path: Path) -> dict[str, dict[str, Any]]:
    return {
        key: ledger_records.decode(encoding, blob)
        for key, encoding, blob in query(
            path,
            "SELECT g.key, r.encoding, r.record FROM games g JOIN game_records r "
            "ON r.game_id = g.id",
        )
    }


def ratings(path: Path) -> dict[str, tuple[float, float, int]]:
    rows = query(
        path,
        "SELECT e.name, r.mu, r.sigma, r.games FROM ratings r JOIN entrants e ON e.id = r.entrant_id "
        "JOIN boards b ON b.id = r.board_id AND b.kind = 'pooled'",
    )
    return {name: (mu, sigma, games) for name, mu, sigma, games in rows}


def deal_key_of(path: Path) -> bytes:
    return bytes.fromhex(query(path, "SELECT deal_key FROM tournaments")[0][0])


def check_series(path: Path, spec: tournament.TournamentSpec) -> None:
    """Every pairing's games follow the rule from the first: the cut before the first game and after
    each game the allies won, drawn from the seed of the game it comes before (keyed by the ledger's
    secret), and nothing else; each game's seats in the ledger are its seating's players, the single
    player on side 0, the two allies sharing side 1 and its place."""
    key = deal_key_of(path)
    seats = seats_by_key(path)
    recs = game_records(path)
    planned = full_schedule(spec)
    assert sorted(seats) == sorted(g.key for g in planned), "every planned game, once"
    seating: tuple[tuple[int, ...], ...] = ()
    won = False
    cuts = 0
    for game in planned:
        roster = game.group
        assert game.players == roster, "planned in the pairing's base order"
        seed = MatchConfig(game_seeds=(game.seed,), deal_key=key).deal_seed(0)
        if game.deal == 0:
            seating, cut = first_seating(seed)
        else:
            seating, cut = next_seating(seating, won, seed)
        g = recs[game.key]["games"][0]
        assert g["seating"] == [list(s) for s in seating], game.key
        assert g["single_cut"] == (cut.text if cut is not None else ""), game.key
        cuts += cut is not None
        single, allies = (roster[i] for i in seating[0]), [roster[i] for i in seating[1]]
        rows = seats[game.key]
        assert [(s, m, n, side) for s, m, n, side, _, _ in rows] == [
            (0, 0, *single, 0),
            (1, 0, allies[0], 1),
            (1, 1, allies[1], 1),
        ], game.key
        assert rows[1][4:] == rows[2][4:], "the allies share their place and score"
        assert [rows[0][4], rows[1][4]] == g["result"]["ranking"]
        won = allies_won(g["result"]["ranking"])
    assert cuts >= len({(g.round, g.pairing) for g in planned}), "a first cut in every series"


def run(spec: tournament.TournamentSpec, path: Path, deal_key: bytes | None = None) -> Any:
    led = Ledger(path)
    runner = TournamentRunner(spec, led, deal_key=deal_key)
    try:
        asyncio.run(asyncio.wait_for(runner.run(), RUN_TIMEOUT))
    finally:
        led.close()
    return runner.progress


# ---------------------------------------------------------------- the file


def test_a_series_tournament_plans_each_pairing_in_its_base_order(tmp_path: Path) -> None:
    spec = tournament.load(series_file(tmp_path, entrants=4, deals=3))
    assert dict(spec.options)["consultation"] == "series"
    games = full_schedule(spec)
    assert len(games) == 4 * 3, "four groups of three, three games each: no rotations"
    for g in games:
        assert g.rotation == 0 and g.seats == ((g.group[0],), g.group[1:]) and not g.series_before


def test_a_series_with_duplicate_deals_is_one_line(tmp_path: Path) -> None:
    path = series_file(tmp_path, duplicate=True)
    with pytest.raises(tournament.TournamentFileError) as info:
        tournament.load(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: duplicate: consultation = 'series' "), message
    assert "set duplicate = false" in message


def test_a_series_in_swiss_is_one_line(tmp_path: Path) -> None:
    path = series_file(tmp_path, entrants=4, format="swiss", rounds=2)
    with pytest.raises(tournament.TournamentFileError, match=r"format: swiss pairs two players"):
        tournament.load(path)


def test_a_competition_refuses_the_series_saying_why(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        'name = "C"\nvariant = "three-handed-consultation"\n[options]\nconsultation = "series"\n'
    )
    with pytest.raises(competition.CompetitionFileError) as info:
        competition.load(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: options: consultation = 'series' "), message
    assert "competition pairs the entrants anew for each game" in message
    path.write_text(
        'name = "C"\nvariant = "three-handed-consultation"\n[options]\nconsultation = "per-game"\n'
    )
    assert dict(competition.load(path).options)["consultation"] == "per-game"


# ---------------------------------------------------------------- played


@pytest.mark.slow
def test_arena_run_plays_the_series_seated_by_its_rule(tmp_path: Path) -> None:
    toml = series_file(tmp_path, deals=5)
    ledger = tmp_path / "l.sqlite"
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "run", str(toml), "--ledger", str(ledger)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    spec = tournament.load(toml)
    check_series(ledger, spec)
    assert query(ledger, "SELECT count(*) FROM games WHERE rating_seq IS NULL") == [(0,)]
    assert {g for _, _, g in ratings(ledger).values()} == {5}
    # the records replay: each names its series option and the players as planned
    for rec in game_records(ledger).values():
        assert rec["options"]["consultation"] == "series"
        assert [n for seat in rec["players"] for n in seat] == [b[0] for b in BOTS[:3]]


@pytest.mark.slow
def test_an_interrupted_series_resumes_from_its_recorded_games(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The arena fails a game in the middle of two series: those series stop there (their later
    games wait, since their seating depends on it); the next run plays on from the recorded games,
    to exactly the seats, results and ratings of an uninterrupted run with the same secret."""
    spec = tournament.load(series_file(tmp_path, entrants=4, deals=3, concurrency=2))
    failing = {"r000-p000000-d0001-s0", "r000-p000002-d0002-s0"}
    real_play = play_game.GamePlayer.play

    async def play(self: play_game.GamePlayer, game: Any, commands: Any) -> Played:
        if game.key in failing:
            return Played(None, "the arena could not play it (the test)")
        return await real_play(self, game, commands)

    ledger = tmp_path / "resumed.sqlite"
    with monkeypatch.context() as mp:
        mp.setattr(play_game.GamePlayer, "play", play)
        first = run(spec, ledger)
    assert first.errors == 2
    keys = {k for (k,) in query(ledger, "SELECT key FROM games")}
    assert not any(
        k.startswith("r000-p000000-d0001") or k.startswith("r000-p000000-d0002") for k in keys
    ), "the series stops at the game that failed"
    assert len(keys) == 12 - 2 - 1
    assert query(ledger, "SELECT finished_at IS NULL FROM tournaments") == [(1,)]

    second = run(spec, ledger)
    assert (second.errors, second.resumed, second.done) == (0, 9, 12)
    check_series(ledger, spec)

    fresh = tmp_path / "fresh.sqlite"
    run(spec, fresh, deal_key_of(ledger))
    check_series(fresh, spec)
    assert seats_by_key(ledger) == seats_by_key(fresh), "the same games, seat by seat"
    assert ratings(ledger) == ratings(fresh), "exactly the ratings of an uninterrupted run"
