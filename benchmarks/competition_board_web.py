"""The web's competition board with each line's last game and its rank change over 24 hours: the
event page's response time on a large competition, and what the two columns add to it.

    python benchmarks/competition_board_web.py [--entrants 1000] [--games 100000] [--repeat 20]

Prepares a competition's ledger in bulk (``benchmarks/competition.py``'s ``prepare``), its games
finished 20 s apart up to now (the last day about 4,300 of them, each with its two rating-history
rows), then serves the event page (first and last page of the board) through Starlette's test
client, ``--repeat`` times after a first request, and times the ledger reads of the two columns for
one page alone (``arena.ledger.competition_board.page_recent``). The last line is

    board_ms first=<median> last=<median> recent=<median>
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from competition import prepare  # a benchmark beside this one
from starlette.testclient import TestClient

from arena.ledger import Ledger
from arena.ledger.competition_board import page_recent
from arena.web import queries
from arena.web.app import create_app

SPACING = timedelta(seconds=20)  # between two games


def spread(path: Path, seed: int = 3) -> tuple[int, int]:
    """Games finished :data:`SPACING` apart up to now, each of the last day's with its rating
    history; returns the competition's id and its board's."""
    rng = random.Random(seed)
    led = Ledger(path)
    conn = led.conn
    now = datetime.now(UTC)
    with led.transaction():
        cid, board = conn.execute("SELECT tournament_id, id FROM boards").fetchone()
        ids = [r[0] for r in conn.execute("SELECT id FROM games ORDER BY id")]
        conn.executemany(
            "UPDATE games SET finished_at = ? WHERE id = ?",
            [
                ((now - SPACING * (len(ids) - n)).isoformat(timespec="seconds"), game)
                for n, game in enumerate(ids)
            ],
        )
        recent = int(timedelta(days=1, hours=2) / SPACING)
        seats = conn.execute(
            "SELECT game_id, entrant_id FROM game_seats WHERE game_id >= ?", (ids[-recent],)
        ).fetchall()
        conn.executemany(
            "INSERT INTO rating_history VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (board, game, entrant, mu, sigma, mu + rng.gauss(0, 0.3), sigma * 0.99)
                for game, entrant in seats
                for mu, sigma in [(rng.gauss(25, 4), rng.uniform(0.8, 3.0))]
            ],
        )
    led.close()
    return cid, board


def timed(client: TestClient, url: str, repeat: int) -> tuple[float, list[float]]:
    def once() -> float:
        start = time.perf_counter()
        answer = client.get(url)
        elapsed = time.perf_counter() - start
        assert answer.status_code == 200, (url, answer.status_code, answer.text[:300])
        assert ">24 h</th>" in answer.text
        return elapsed * 1000

    first = once()
    return first, [once() for _ in range(repeat)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "ledger.sqlite"
        start = time.perf_counter()
        prepare(path, folder / "data", args.entrants, args.games)
        cid, board = spread(path)
        print(
            f"ledger: {args.entrants} entrants, {args.games} games "
            f"({time.perf_counter() - start:.1f} s to prepare)"
        )
        pages = -(-args.entrants // queries.BOARD_PAGE)
        results: dict[str, tuple[float, list[float]]] = {}
        with TestClient(create_app(path)) as client:
            results["first"] = timed(client, f"/events/{cid}", args.repeat)
            results["last"] = timed(client, f"/events/{cid}?page={pages}", args.repeat)
            lines = client.get(f"/api/events/{cid}").json()["leaderboard"]
        shown = [(r["entrant_id"], r["rank"]) for r in lines]
        led = Ledger(path)
        try:

            def once() -> float:
                begin = time.perf_counter()
                page_recent(led.conn, board, cid, shown)
                return (time.perf_counter() - begin) * 1000

            first = once()
            results["recent"] = (first, [once() for _ in range(args.repeat)])
        finally:
            led.close()
    print(f"{'read':<8} {'first ms':>9} {'median ms':>10} {'max ms':>8}")
    for name, (first, times) in results.items():
        print(f"{name:<8} {first:9.1f} {statistics.median(times):10.1f} {max(times):8.1f}")
    print(
        "board_ms " + " ".join(f"{n}={statistics.median(t):.1f}" for n, (_, t) in results.items())
    )


if __name__ == "__main__":
    main()
