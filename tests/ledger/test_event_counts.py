"""Each event's counts (games planned, played, failed, voided) are kept by triggers as rows come and
go (migration 15), so that `arena tournaments` and `arena compete status` read a row an event instead
of counting every game of every event; they must always equal the counts themselves."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ledger_helpers import Fixture, make_spec, synthetic_record

from arena.competition.spec import parse
from arena.ledger import Ledger
from arena.ledger.competitions import Competitions
from arena.ledger.rows import FinishedGame
from arena.ledger.schema import MIGRATIONS


def counted(conn: sqlite3.Connection) -> list[tuple[int, int, int, int, int]]:
    """Each event's counts, counted from the games (what the triggers must keep)."""
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT t.id, "
            "(SELECT count(*) FROM planned_games p WHERE p.tournament_id = t.id), "
            "(SELECT count(*) FROM games g WHERE g.tournament_id = t.id), "
            "(SELECT count(*) FROM games g WHERE g.tournament_id = t.id "
            "AND g.outcome != 'normal'), "
            "(SELECT count(*) FROM voided_games v WHERE v.tournament_id = t.id) "
            "FROM tournaments t ORDER BY t.id"
        )
    ]


def kept(led: Ledger) -> list[tuple[int, int, int, int, int]]:
    return [(t.id, t.planned, t.played, t.failures, t.voided) for t in led.tournaments()]


def test_the_kept_counts_follow_planning_recording_voiding_and_unplanning(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    f = Fixture(led, make_spec(3))
    assert kept(led) == counted(led.conn) and kept(led)[0][1] == len(f.games)
    led.plan(f.tid, f.games)  # planned again: nothing new
    assert kept(led) == counted(led.conn)
    ids = []
    for n, game in enumerate(f.games[:5]):
        record = synthetic_record(game, f.spec.variant)
        if n % 2:
            record["games"][0].update(outcome="crash", culprit=0, detail="crash: boom")
        ids.append(
            led.record_game(f.tid, f.spec.variant, game, f.ids, FinishedGame.from_data(record))
        )
    assert kept(led) == counted(led.conn)
    assert kept(led)[0][2:4] == (5, 2)
    led.void_games(f.tid, "a test", ids[:2])  # one normal, one crash
    assert kept(led) == counted(led.conn)
    assert kept(led)[0][2:] == (3, 1, 2)
    # A competition's unplayed games unplanned; a second event beside the first.
    cid = led.register(parse({"name": "Ladder"}, "c.toml"), kind="competition").id
    comp = Competitions(led)
    assert kept(led) == counted(led.conn) and kept(led)[-1][0] == cid
    comp.unplan_unplayed(f.tid, tuple(g.key for g in f.games[5:7]))
    assert kept(led) == counted(led.conn)
    led.close()


def test_a_ledger_made_before_is_counted_once_as_it_is_opened(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    led = Ledger(path)
    f = Fixture(led, make_spec(3))
    for game in f.games[:4]:
        f.record(game)
    expected = counted(led.conn)
    led.close()
    # As a ledger of schema 14 would be: no kept counts (nor the index of migration 16).
    conn = sqlite3.connect(path)
    conn.executescript(
        "DROP TABLE event_counts; DROP TRIGGER event_counts_opened; "
        "DROP TRIGGER event_counts_planned; DROP TRIGGER event_counts_unplanned; "
        "DROP TRIGGER event_counts_played; DROP TRIGGER event_counts_unplayed; "
        "DROP TRIGGER event_counts_outcome; DROP TRIGGER event_counts_voided; "
        f"DELETE FROM _migrations WHERE version >= {len(MIGRATIONS) - 1};"
        "DROP INDEX games_by_event;"
    )
    conn.close()
    led = Ledger(path)
    assert kept(led) == expected
    f2 = Fixture(led, make_spec(2, name="Second"))
    f2.record(f2.games[0])
    assert kept(led) == counted(led.conn)
    led.close()


def test_an_events_newest_games_are_read_from_its_own_index(tmp_path: Path) -> None:
    """An event's last games (the organiser's status, an event's games page) cost the games shown:
    without an index in the order games are recorded, every game of the event was sorted (or, with
    the planner's statistics, every game of the ledger walked back from the newest)."""
    led = Ledger(tmp_path / "l.sqlite")
    first = Fixture(led, make_spec(30, name="First"))  # 870 games
    for game in first.games:
        first.record(game)
    later = Fixture(led, make_spec(3, name="Later"))
    for game in later.games:
        later.record(game)
    comp = Competitions(led)
    steps = 0

    def step() -> int:
        nonlocal steps
        steps += 1
        return 0

    for analyzed in (False, True):
        if analyzed:
            led.conn.execute("ANALYZE")
        steps = 0
        led.conn.set_progress_handler(step, 100)
        shown = comp.last_games(first.tid, 10)
        led.conn.set_progress_handler(None, 100)
        ids = [g.game_id for g in shown]
        assert (
            len(ids) == 10
            and ids == sorted(ids, reverse=True)
            and ids[0]
            == max(
                r[0]
                for r in led.conn.execute(
                    "SELECT id FROM games WHERE tournament_id = ?", (first.tid,)
                )
            )
        )
        assert steps < 20, f"{steps * 100} steps for 10 games (analyzed: {analyzed})"
    led.close()
