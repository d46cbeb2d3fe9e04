"""An entrant that leaves play while the matchmaker is planning its pairing (the plan is a ledger write,
awaited): the pairing is dropped and matchmaking goes on. Before, the matchmaker looked the leaver's
entry up after the write, and the KeyError ended its task for good, silently: the competition never
paired a game again (found by test_challenges' withdrawal under load)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from test_challenges import Arena, run, until

from arena.ledger import competitions as store
from arena.ledger.rows import ScheduledGame


def test_a_pairing_whose_entrant_left_during_its_planning_is_dropped(tmp_path: Path) -> None:
    started, go_on = threading.Event(), threading.Event()
    first: list[tuple[ScheduledGame, ...]] = []

    def prepare(arena: Arena) -> None:
        real = arena.server.ledger.plan

        def plan(cid: int, games: Any) -> None:
            if not started.is_set():  # the first pairing waits, mid-plan, for the test
                first.append(tuple(games))
                started.set()
                go_on.wait(60)
            real(cid, games)

        arena.server.ledger.plan = plan  # type: ignore[method-assign]

    async def body(arena: Arena) -> None:
        s, comp = arena.server, arena.comp
        await until(started.is_set, "the first pairing's plan")
        # One of its entrants leaves play now (its author withdraws it; the ledger's worker is
        # busy with the plan, so the change is made and applied from here).
        name = first[0][0].group[0]
        leaver = next(sub for sub in comp.submissions(s.cid) if sub.bot == name)
        comp.set_status(leaver.id, store.WITHDRAWN, "withdrawn by its author")
        await s._apply(comp.submission(leaver.id), None)
        assert leaver.entrant_id not in s.entries
        go_on.set()
        # Matchmaking goes on between the others, and the dropped pairing is planned no more.
        await until(lambda: len(arena.ranked.games) >= 4, "games after the drop")
        assert all(leaver.bot not in g.group for g in arena.ranked.games)
        keys = {g.key for g in first[0]}
        planned = {
            str(row[0])
            for row in comp.conn.execute(
                "SELECT key FROM planned_games WHERE tournament_id = ?", (s.cid,)
            )
        }
        assert not keys & planned
        assert not any(t.done() for t in s._background)
        await asyncio.sleep(0)

    run(
        tmp_path,
        {"ada": ["a1"], "bob": ["b1"], "cid": ["c1"], "dan": ["d1"]},
        body,
        prepare=prepare,
    )
