"""An A/B test in the ledger: games recorded as they finish, the pairs read back on resume (a pair cut
in half keeps its recorded game), its secret kept, a changed definition refused (real bots: see
tests/cli/test_sprt.py)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.abtest.duplicate_pairs import NEW, OLD, Seating, pair_seatings
from arena.abtest.ledger_store import AbTestLedger, AbTestSpec, game_key
from arena.game import variant
from arena.ledger import Ledger, LedgerError, TournamentChanged
from arena.referee import GameRecord, MatchRecord
from arena.stats import Sprt
from arena.tournament.spec import parse
from arena.web import head_to_head, queries

V = variant("two-handed")


def spec(**changes: Any) -> AbTestSpec:
    fields: dict[str, Any] = {
        "name": "sprt new vs old",
        "variant": "two-handed",
        "options": (),
        "players": ((NEW, "new", "bot --new"), (OLD, "old", "bot --old")),
        "sprt": Sprt(0.0, 5.0),
        "deals": (("seed", "1"),),
        "concurrency": 2,
    }
    fields.update(changes)
    return AbTestSpec(**fields)


def record(seats: Seating, winner: str, outcome: str = "normal", culprit: int = -1) -> MatchRecord:
    """A one-game record in which the ``winner`` role's seat places first."""
    ranking = [0 if seats[s][0] == winner else 1 for s in range(2)]
    scores = [1000 if r == 0 else 500 for r in ranking]
    game = GameRecord(
        index=0,
        seed=7,
        dealer=0,
        outcome=outcome,
        detail="it crashed" if outcome != "normal" else "",
        culprit=culprit,
        result={"sides": [[0], [1]], "ranking": ranking, "scores": scores, "side_scores": scores},
    )
    return MatchRecord("m", V.name, {}, 7, [[r] for (r,) in seats], {}, {}, games=[game])


async def play(led: Ledger, s: AbTestSpec, games: dict[tuple[int, int], MatchRecord]) -> None:
    """Record these games (by pair index and game number), as RefereePairs would hand them over."""
    rec = AbTestLedger(led, s, V)
    await rec.open()
    try:
        for index in sorted({i for i, _ in games}):
            seatings = pair_seatings(V, index)
            await rec.plan(index, 1000 + index, seatings)
            for number in (0, 1):
                if (index, number) in games:
                    await rec.record(index, number, seatings[number], games[(index, number)])
    finally:
        await rec.close()


def test_pairs_are_read_back_and_a_pair_cut_in_half_keeps_its_game(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.db")
    s0, s1 = pair_seatings(V, 0)
    t0, _ = pair_seatings(V, 1)
    games = {
        (0, 0): record(s0, NEW),
        (0, 1): record(s1, NEW),  # the pair won twice: 2 points
        (1, 0): record(t0, OLD, "crash", culprit=0),  # the new version (seat 0) crashed
    }
    asyncio.run(play(led, spec(), games))

    async def reopen() -> Any:
        rec = AbTestLedger(led, spec(concurrency=4), V)  # concurrency changes no game
        try:
            return await rec.open()
        finally:
            await rec.close()

    resumed = asyncio.run(reopen())
    assert resumed.resumed and len(resumed.deal_key) == 32
    assert [(p.index, p.seed, p.points) for p in resumed.pairs] == [(0, 1000, 2.0)]
    assert list(resumed.partial) == [(1, 0)]
    crashed = resumed.partial[(1, 0)]
    assert crashed.failed == NEW and crashed.points == 0.0 and crashed.detail == "it crashed"
    # Every recorded game is in the ledger under its pair's key; the game never played is not planned.
    keys = {g["key"] for g in led.games(resumed.test_id, limit=-1)}
    assert keys == {game_key(0, 0), game_key(0, 1), game_key(1, 0)}
    planned = {g.key for g in led.planned(resumed.test_id, 0)}
    assert planned == keys
    # Ratings are written for the games recorded (a game not played blocks none of them).
    board = led.leaderboard(tournament="sprt new vs old")
    assert {row.entrant: row.games for row in board} == {"new": 3, "old": 3}
    assert asyncio.run(reopen()).deal_key == resumed.deal_key  # the secret stays the test's


def test_a_new_test_takes_the_given_secret(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.db")

    async def open_with(key: bytes) -> bytes:
        rec = AbTestLedger(led, spec(), V)
        try:
            return (await rec.open(key)).deal_key
        finally:
            await rec.close()

    assert asyncio.run(open_with(b"k" * 16)) == b"k" * 16
    assert asyncio.run(open_with(b"x" * 16)) == b"k" * 16  # resumed: its own secret


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"sprt": Sprt(0.0, 10.0)}, "sprt.elo1"),
        ({"deals": (("seed", "2"),)}, "deals.seed"),
        ({"players": ((NEW, "new", "bot --newer"), (OLD, "old", "bot --old"))}, "command"),
    ],
)
def test_a_changed_test_is_refused_with_the_field(
    tmp_path: Path, change: dict[str, Any], field: str
) -> None:
    led = Ledger(tmp_path / "l.db")
    asyncio.run(play(led, spec(), {}))
    with pytest.raises(TournamentChanged, match=field):
        asyncio.run(play(led, spec(**change), {}))


def test_a_tournaments_name_is_not_taken_over(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.db")
    led.register(
        parse(
            {"name": "sprt new vs old", "entrants": [{"name": n, "command": "bot"} for n in "ab"]},
            "t.toml",
        )
    )
    with pytest.raises(LedgerError, match="name of a tournament"):
        asyncio.run(play(led, spec(), {}))


def test_the_web_shows_a_tests_board_and_its_pair(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.db")
    s0, s1 = pair_seatings(V, 0)
    asyncio.run(play(led, spec(), {(0, 0): record(s0, NEW), (0, 1): record(s1, OLD)}))
    test_id = led.find_tournament("sprt new vs old").id
    led.close()
    conn = sqlite3.connect(tmp_path / "l.db")
    conn.row_factory = sqlite3.Row
    try:
        board = queries.event_board(conn, test_id)
        assert board is not None and board["kind"] == "tournament"
        [head] = head_to_head.pairings(conn, test_id)
    finally:
        conn.close()
    assert (head["entrant"], head["opponent"], head["wins"], head["losses"]) == ("new", "old", 1, 1)
    assert head["counts"] == {"model": "pentanomial", "values": [0, 0, 1, 0, 0]}
