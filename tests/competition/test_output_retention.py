"""A game's bot output is kept for the competition's ``output_days`` after the game, then removed
(the game, its record and its time per decision stay): at a million games, 64 KiB per seat kept for
good would be tens of gigabytes. Removed in steps from where the last pass ended, so that a pass costs
the games that aged since, never the ledger."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_author_view import author, game, record

from arena.competition import retention
from arena.competition.spec import CompetitionFileError, parse
from arena.ledger import Ledger, seat_reports
from arena.ledger.competitions import Competitions
from arena.ledger.rows import FinishedGame


def _iso(days_ago: float) -> str:
    return (datetime.now(UTC) - timedelta(days=days_ago)).isoformat(timespec="seconds")


@pytest.fixture
def played(tmp_path: Path) -> tuple[Ledger, Competitions, int, list[int]]:
    """Six games of a competition with their bots' output, ended 40, 35, 31, 20, 2 and 0 days ago;
    the first seat of each wrote a line, the second (a silent bot) nothing."""
    led = Ledger(tmp_path / "l.sqlite")
    cid = led.register(parse({"name": "Ladder"}, "c.toml"), kind="competition").id
    store = Competitions(led)
    ids: dict[str, int] = {}
    for name in ("a", "b"):
        sid, _ = store.submit(
            cid,
            author(store, cid, f"author-{name}"),
            name,
            "1",
            "python",
            bundle=name * 64,
            run="r",
        )
        entrant = store.activate(sid, f"bundle:{name}")
        assert entrant is not None
        ids[name] = entrant
    games = []
    for n, days in enumerate((40, 35, 31, 20, 2, 0)):
        g = game(n, "a", "b")
        led.plan(cid, [g])
        finished = FinishedGame.from_data(record())
        game_id = led.record_game(cid, "two-handed", g, ids, finished)
        reports = seat_reports.from_game(
            finished, [[ids["a"]], [ids["b"]]], [(0, 0, f"game {n}\n".encode(), 7), (1, 0, b"", 0)]
        )
        store.record_reports(game_id, reports)
        with led.transaction():
            led.conn.execute("UPDATE games SET finished_at = ? WHERE id = ?", (_iso(days), game_id))
        games.append(game_id)
    return led, store, cid, games


def test_the_output_of_games_older_than_the_days_is_removed_and_the_rest_kept(
    played: tuple[Ledger, Competitions, int, list[int]],
) -> None:
    _, store, cid, games = played
    silent = store.game_outputs(games[0])[1].entrant_id
    use = store.time_use(cid, silent)
    step = store.prune_outputs(cid, _iso(30), after=0)
    assert (step.removed, step.last, step.caught_up) == (6, games[2], True)  # two seats each
    for n, game_id in enumerate(games):
        outs = store.game_outputs(game_id)
        if n < 3:
            assert [o.output for o in outs] == [seat_reports.REMOVED, seat_reports.REMOVED]
            assert [o.output_bytes for o in outs] == [7, 0]  # how much it wrote stays
        else:
            assert [o.output for o in outs] == [f"game {n}\n", ""]  # silent, not removed
    # The games and their times per decision stay.
    assert all(store.game(cid, g) is not None for g in games)
    assert store.time_use(cid, silent) == use
    # Again: nothing more to do, whatever the walk's start.
    assert store.prune_outputs(cid, _iso(30), after=0).removed == 0
    assert store.prune_outputs(cid, _iso(30), after=step.last).removed == 0


def test_a_step_examines_at_most_its_limit_and_the_next_starts_after_it(
    played: tuple[Ledger, Competitions, int, list[int]],
) -> None:
    _, store, cid, games = played
    first = store.prune_outputs(cid, _iso(10), after=0, limit=2)
    assert (first.removed, first.last, first.caught_up) == (4, games[1], False)
    second = store.prune_outputs(cid, _iso(10), after=first.last, limit=2)
    assert (second.removed, second.last, second.caught_up) == (4, games[3], False)
    third = store.prune_outputs(cid, _iso(10), after=second.last, limit=2)
    assert (third.removed, third.last, third.caught_up) == (0, games[3], True)
    assert store.game_outputs(games[4])[0].output == "game 4\n"


def test_the_servers_task_removes_them_in_passes_until_cancelled(
    played: tuple[Ledger, Competitions, int, list[int]],
) -> None:
    _, store, cid, games = played
    calls: list[tuple[Any, ...]] = []

    async def call(fn: Any, *args: Any) -> Any:
        calls.append(args)
        return fn(*args)

    async def run() -> None:
        task = asyncio.create_task(
            retention.remove_old_outputs(call, store.prune_outputs, cid, 25, every=0.01)
        )
        while len(calls) < 6:  # three passes: ranked games, then challenge games, each
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(run(), 60))
    assert [store.game_outputs(g)[0].output for g in games] == [
        seat_reports.REMOVED, seat_reports.REMOVED, seat_reports.REMOVED, "game 3\n",
        "game 4\n", "game 5\n",
    ]  # fmt: skip
    # Each pass starts where the last ended; ranked and challenge games walked apart.
    ranked = [args for args in calls if args[3] is False]
    assert ranked[0][2] == 0 and all(args[2] == games[2] for args in ranked[1:])


@pytest.mark.parametrize("days", [0, -1, 3651])
def test_output_days_out_of_range_is_refused_by_name(days: int) -> None:
    with pytest.raises(CompetitionFileError, match="output_days"):
        parse({"name": "Ladder", "submissions": {"output_days": days}}, "c.toml")
