"""A competition board's rank change over the last 24 hours (arena.ledger.competition_board): the
ranks a day ago read back from the ratings now through the last day's history alone, agreeing with
the ranks the whole history gives, and at a cost that follows the last day's games, not all of them."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from arena.competition.spec import parse
from arena.ledger import Ledger
from arena.ledger.competitions import Competitions
from arena.ledger.leaderboard import competition_board
from arena.ledger.rows import FinishedGame, ScheduledGame

BASE = datetime(2026, 3, 1, tzinfo=UTC)
BOTS = "abcdef"


def _record(winner: int) -> dict[str, object]:
    ranking = [0, 1] if winner == 0 else [1, 0]
    result = {"sides": [[0], [1]], "ranking": ranking, "scores": [1000, 500]}
    return {"games": [{"outcome": "normal", "detail": "", "culprit": -1, "result": result}]}


def ladder(path: Path, games: int, old: int = 0, seed: int = 3) -> tuple[Ledger, int]:
    """A competition of six bots: ``old`` games two days before :data:`BASE`, then ``games`` games
    ten minutes apart from it, between random pairs with random winners."""
    led = Ledger(path)
    cid = led.register(parse({"name": "Ladder"}, "c.toml"), kind="competition").id
    store = Competitions(led)
    ids = {}
    for bot in BOTS:
        who = store.author_of(cid, store.add_author(cid, f"author-{bot}"))
        assert who is not None
        sid, _ = store.submit(cid, who.id, bot, "1", "python", bundle=bot * 64, run="r")
        ids[bot] = store.activate(sid, f"bundle:{bot}")
    rng = random.Random(seed)
    times = [BASE - timedelta(days=2, minutes=old - i) for i in range(old)]
    times += [BASE + timedelta(minutes=10 * i) for i in range(games)]
    for n, at in enumerate(times):
        a, b = rng.sample(BOTS, 2)
        g = ScheduledGame(f"c{n:09d}", n, 0, n, 0, 0, n, ((a,), (b,)), (a, b))
        led.plan(cid, [g])
        led.record_game(
            cid,
            "two-handed",
            g,
            {a: ids[a], b: ids[b]},
            FinishedGame.from_data(_record(rng.randrange(2))),
        )
        led.conn.execute(
            "UPDATE games SET finished_at = ? WHERE key = ? AND tournament_id = ?",
            (at.isoformat(timespec="seconds"), g.key, cid),
        )
    led.conn.commit()
    return led, cid


def ranks_by_whole_history(led: Ledger, cid: int, cutoff: str) -> dict[int, int]:
    """The ranks after the last game rated that finished before ``cutoff``, from every history row
    (how the board read them before: its definition)."""
    rows = led.conn.execute(
        "SELECT h.entrant_id, h.mu_after, h.sigma_after, g.rating_seq FROM rating_history h "
        "JOIN boards b ON b.id = h.board_id AND b.kind = 'competition' AND b.tournament_id = ? "
        "JOIN games g ON g.id = h.game_id WHERE g.finished_at < ? AND g.rating_seq IS NOT NULL",
        (cid, cutoff),
    ).fetchall()
    latest: dict[int, tuple[int, float]] = {}
    for entrant, mu, sigma, seq in rows:
        if entrant not in latest or seq > latest[entrant][0]:
            latest[entrant] = (seq, mu - 3 * sigma)
    order = sorted(latest, key=lambda e: (-latest[e][1], e))
    return {entrant: rank for rank, entrant in enumerate(order, start=1)}


def test_the_rank_change_agrees_with_the_whole_history(tmp_path: Path) -> None:
    led, cid = ladder(tmp_path / "l.sqlite", games=60)
    try:
        store = Competitions(led)
        board = competition_board(led.conn, cid)
        assert board is not None
        seen = set()
        for minutes in (-30, 0, 5, 95, 200, 355, 590, 700):
            now = BASE + timedelta(days=1, minutes=minutes)
            cutoff = (now - timedelta(days=1)).isoformat(timespec="seconds")
            expected = ranks_by_whole_history(led, cid, cutoff)
            lines = store.board(cid, now=now)
            got = {r.entrant_id: r.rank + r.rank_change for r in lines if r.rank_change is not None}
            assert got == expected, minutes
            seen.add(len(expected))
        assert {0, len(BOTS)} <= seen, "before any game, and after every bot played"
    finally:
        led.close()


def test_the_rank_change_reads_the_last_days_history_only(tmp_path: Path) -> None:
    """A board with ten times the old games costs about the same to read: the history before the
    last day is not read, nor the competition's games for when each bot last played."""

    def cost(old: int) -> int:
        led, cid = ladder(tmp_path / f"l{old}.sqlite", games=30, old=old)
        board = competition_board(led.conn, cid)
        assert board is not None
        steps = [0]

        def step() -> int:
            steps[0] += 1
            return 0

        store = Competitions(led)
        now = BASE + timedelta(days=1, minutes=150)
        try:
            led.conn.set_progress_handler(step, 100)
            lines = store.board(cid, now=now)
            led.conn.set_progress_handler(None, 100)
        finally:
            led.close()
        assert len(lines) == len(BOTS) and all(r.last_played for r in lines)
        return steps[0]

    few, many = cost(50), cost(500)
    assert many < 1.5 * few + 10, (few, many)
