"""Head to head kept in the ledger as games are recorded (arena.ledger.head_to_head): the same counts
as the summary's pairing lines computed from every game (their definition), whatever the order the
games finish in, after voiding, and when a ledger made before the tables is opened."""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from ledger_helpers import Fixture, make_spec, sides_of

from arena.ledger import Ledger, head_to_head
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.ledger.schema import MIGRATIONS
from arena.stats import Pentanomial, Trinomial
from arena.tournament.summary import pairing_lines

FAILURES = ("timeout", "crash", "illegal-action")


def varied_record(game: ScheduledGame, variant: str) -> dict[str, Any]:
    """A result drawn from the game's seed: wins, draws, forfeits by either seat, adjudications."""
    rng = random.Random(game.key)  # not the seed: a deal's rotations share it
    sides = sides_of(variant)
    outcome = rng.choice(("normal",) * 4 + ("adjudicated", *FAILURES))
    culprit = rng.randrange(len(game.seats)) if outcome in FAILURES else -1
    if culprit >= 0:
        ranking = [0 if culprit not in seats else 1 for seats in sides]
    else:
        ranking = [rng.choice((0, 0, 1)) for _ in sides]
    scores = [rng.choice((500, 500, 980)) for _ in game.seats]  # ties too
    return {
        "match_id": game.key,
        "games": [
            {
                "outcome": outcome,
                "detail": "",
                "culprit": culprit,
                "result": {"sides": sides, "ranking": ranking, "scores": scores},
            }
        ],
    }


def record_all(led: Ledger, order_seed: int, **fields: Any) -> Fixture:
    spec = make_spec(**{"n": 4, "deals_per_pairing": 3, **fields})
    f = Fixture(led, spec)
    games = list(f.games)
    random.Random(order_seed).shuffle(games)  # finished in any order
    for g in games:
        led.record_game(
            f.tid, spec.variant, g, f.ids, FinishedGame.from_data(varied_record(g, spec.variant))
        )
    return f


def stored_lines(led: Ledger, tid: int) -> dict[tuple[str, str], dict[str, Any]]:
    """The stored lines turned as the summary turns them (by name), as comparable fields."""
    names = {int(r[0]): r[1] for r in led.conn.execute("SELECT id, name FROM entrants")}
    out = {}
    for p in head_to_head.pairs(led.conn, tid):
        line = p if names[p.a] <= names[p.b] else p.turned()
        counts = (
            Pentanomial(line.pairs)
            if sum(line.pairs)
            else Trinomial(line.losses, line.draws, line.wins)
        )
        out[(names[line.a], names[line.b])] = {
            "games": line.games,
            "wdl": (line.wins, line.losses, line.draws),
            "forfeits": (line.forfeits_a, line.forfeits_b),
            "points": (
                line.points_a / line.played if line.played else None,
                line.points_b / line.played if line.played else None,
            ),
            "sets": (line.sets_won, line.sets_lost, line.sets_tied),
            "counts": counts,
        }
    return out


def oracle_lines(led: Ledger, tid: int) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (x.a, x.b): {
            "games": x.games,
            "wdl": (x.wins, x.losses, x.draws),
            "forfeits": (x.forfeits_a, x.forfeits_b),
            "points": (x.points_a, x.points_b),
            "sets": (x.sets_won, x.sets_lost, x.sets_tied),
            "counts": x.counts,
        }
        for x in pairing_lines(led.seat_rows(tid))
    }


def table(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return [
        *conn.execute("SELECT 'pair', * FROM head_to_head ORDER BY 2, 3, 4"),
        *conn.execute("SELECT 'set', * FROM head_to_head_sets ORDER BY 2, 3, 4, 5, 6"),
    ]


def test_recorded_game_by_game_it_equals_the_pairing_lines(tmp_path: Path) -> None:
    with closing(Ledger(tmp_path / "l.sqlite")) as led:
        for seed in range(3):
            f = record_all(led, seed, name=f"T{seed}", seed=seed)
            expected = oracle_lines(led, f.tid)
            assert len(expected) == 6  # four entrants: every two of them
            assert stored_lines(led, f.tid) == expected
        # Duplicate pairs, forfeits and every class of set occurred (the fixture tests something).
        lines = [v for t in range(1, 4) for v in stored_lines(led, t).values()]
        assert any(isinstance(v["counts"], Pentanomial) for v in lines)
        assert any(sum(v["forfeits"]) for v in lines)
        assert all(any(v["sets"][k] for v in lines) for k in range(3))


def test_without_duplicate_deals_every_game_is_a_set_and_no_pair(tmp_path: Path) -> None:
    with closing(Ledger(tmp_path / "l.sqlite")) as led:
        f = record_all(led, 1, duplicate=False)
        stored = stored_lines(led, f.tid)
        assert stored == oracle_lines(led, f.tid)
        assert all(isinstance(v["counts"], Trinomial) for v in stored.values())


def test_games_of_three_seats_count_nowhere(tmp_path: Path) -> None:
    with closing(Ledger(tmp_path / "l.sqlite")) as led:
        f = record_all(led, 2, variant="three-handed")
        assert f.games and head_to_head.pairs(led.conn, f.tid) == []
        assert oracle_lines(led, f.tid) == {}


def test_rebuilt_from_the_games_it_is_the_same_table(tmp_path: Path) -> None:
    with closing(Ledger(tmp_path / "l.sqlite")) as led:
        for seed in range(2):
            record_all(led, seed, name=f"T{seed}", seed=seed + 7)
        kept = table(led.conn)
        with led.transaction():
            head_to_head.rebuild(led.conn, 1)
        assert table(led.conn) == kept
        with led.transaction():
            head_to_head.rebuild(led.conn)
        assert table(led.conn) == kept
        assert len(kept) > 12


def test_voided_games_leave_head_to_head(tmp_path: Path) -> None:
    with closing(Ledger(tmp_path / "l.sqlite")) as led:
        f = record_all(led, 3)
        before = stored_lines(led, f.tid)
        ids = [int(r[0]) for r in led.conn.execute("SELECT id FROM games ORDER BY id LIMIT 5")]
        led.void_games(f.tid, "test", ids)
        after = stored_lines(led, f.tid)
        assert after == oracle_lines(led, f.tid)
        assert sum(v["games"] for v in after.values()) == sum(
            v["games"] for v in before.values()
        ) - len(ids)


def test_a_ledger_made_before_head_to_head_gets_it_from_its_games(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with closing(Ledger(path)) as led:
        f = record_all(led, 4)
        expected = table(led.conn)
        led.conn.execute("DROP TABLE head_to_head")
        led.conn.execute("DROP TABLE head_to_head_sets")
        # The head to head's migration (not the last one since the submissions' change numbers).
        version = MIGRATIONS.index(head_to_head.SCHEMA) + 1
        led.conn.execute("DELETE FROM _migrations WHERE version = ?", (version,))
    with closing(Ledger(path)) as led:
        assert table(led.conn) == expected
        assert stored_lines(led, f.tid) == oracle_lines(led, f.tid)


def test_an_entrants_opponents_are_turned_to_its_side_and_paged(tmp_path: Path) -> None:
    with closing(Ledger(tmp_path / "l.sqlite")) as led:
        f = record_all(led, 5)
        everyone = head_to_head.pairs(led.conn, f.tid)
        for entrant in f.ids.values():
            mine, total = head_to_head.opponents(led.conn, f.tid, entrant)
            assert total == 3 and len(mine) == 3
            assert all(p.a == entrant for p in mine)
            assert [p.games for p in mine] == sorted((p.games for p in mine), reverse=True)
            for p in mine:
                stored = next(q for q in everyone if {q.a, q.b} == {p.a, p.b})
                assert p == (stored if stored.a == entrant else stored.turned())
            page, total = head_to_head.opponents(led.conn, f.tid, entrant, offset=1, limit=1)
            assert (page, total) == ([mine[1]], 3)
        assert head_to_head.entrants(led.conn, f.tid) == 4
