"""The web pages' response time on a large ledger: the leaderboard page and an entrant's page.

    python benchmarks/web.py --entrants 1000 --games 100000

Builds a fresh ledger in a temporary directory (the schema through ``arena.ledger.Ledger``, then the
rows by direct inserts in one transaction: one tournament of ``--games`` two-handed games between
random pairs of ``--entrants`` entrants, each game's seats, its two boards' ratings and rating history;
the ratings follow a cheap random walk, not TrueSkill, since only their volume matters here). Then it
times full responses of the web app (routing, queries, template rendering, the whole body read) through
Starlette's test client, in-process: the leaderboard page of the tournament and the page of a median
entrant (about 2 * games / entrants games), each requested ``--repeat`` times after a first request.
The app counts every board's games once when it starts (in the background; the first request waits
for it) and then only the games added since: the first request's time is printed apart. For each page
it prints the median and slowest wall-clock time, and the median CPU time of this process (all its
threads), which a loaded machine inflates far less than wall-clock time. The last line is

    leaderboard_ms <N> entrant_ms <M> leaderboard_cpu_ms <A> entrant_cpu_ms <B>

(medians). Target: each under 100 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from starlette.testclient import TestClient

from arena.ledger import Ledger
from arena.web.app import create_app

VARIANT = "two-handed"
OUTCOMES = ("normal",) * 97 + ("timeout", "crash", "illegal-action")


def build(path: Path, entrants: int, games: int, seed: int) -> int:
    """Fill a fresh ledger; return the tournament's id."""
    rng = random.Random(seed)
    Ledger(path).close()  # the schema, by the ledger's own migrations
    led = Ledger(path)
    conn = led.conn
    now = "2026-01-01T00:00:00+00:00"
    with led.transaction():
        cur = conn.execute(
            "INSERT INTO tournaments (name, spec_hash, spec, variant, source, created_at, deal_key) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            ("Web benchmark", "0" * 64, "{}", VARIANT, "benchmarks/web.py", now, "ab" * 32),
        )
        tid = int(cur.lastrowid or 0)
        conn.executemany(
            "INSERT INTO entrants (id, name, command, command_hash, language, version, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (i, f"bot{i:05d}", f"bot --id {i}", f"{i:064x}", "python", "1", now)
                for i in range(1, entrants + 1)
            ],
        )
        boards = []
        for kind, name in (("tournament", "Web benchmark"), ("pooled", VARIANT)):
            cur = conn.execute(
                "INSERT INTO boards (kind, name, variant, tournament_id) VALUES (?, ?, ?, ?)",
                (kind, name, VARIANT, tid if kind == "tournament" else None),
            )
            boards.append(int(cur.lastrowid or 0))
        rating = {e: (25.0, 25.0 / 3, 0) for e in range(1, entrants + 1)}
        planned, rows, seats, history = [], [], [], []
        for i in range(1, games + 1):
            a, b = rng.sample(range(1, entrants + 1), 2)
            winner = rng.randrange(2)
            outcome = rng.choice(OUTCOMES)
            key = f"g{i:09d}"
            planned.append((tid, key, i, 0, i, 0, 0, i, "[]", "[]"))
            rows.append((i, tid, key, i, 0, i, 0, 0, VARIANT, i, outcome, "", -1, now, i))
            for seat, entrant in enumerate((a, b)):
                place = 0 if seat == winner else 1
                score = 1000 if place == 0 else rng.randrange(200, 1000)
                seats.append((i, seat, 0, entrant, seat, place, score))
                mu, sigma, n = rating[entrant]
                after = (mu + (1.0 if place == 0 else -1.0) * sigma * 0.1, max(1.0, sigma * 0.99))
                rating[entrant] = (*after, n + 1)
                for board in boards:
                    history.append((board, i, entrant, mu, sigma, *after))
        conn.executemany("INSERT INTO planned_games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", planned)
        conn.executemany(
            "INSERT INTO games (id, tournament_id, key, ord, round, pairing, deal, rotation, "
            "variant, seed, outcome, detail, culprit, finished_at, rating_seq) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.executemany("INSERT INTO game_seats VALUES (?, ?, ?, ?, ?, ?, ?)", seats)
        conn.executemany("INSERT INTO rating_history VALUES (?, ?, ?, ?, ?, ?, ?)", history)
        conn.executemany(
            "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?)",
            [
                (board, e, mu, sigma, mu - 3 * sigma, n)
                for board in boards
                for e, (mu, sigma, n) in rating.items()
                if n
            ],
        )
    conn.execute("ANALYZE")
    led.close()
    return tid


def timed(client: TestClient, url: str, repeat: int) -> tuple[float, list[float], list[float]]:
    """(first request's ms, the later requests' wall-clock ms, their CPU ms)."""
    wall, cpu = [], []
    for _ in range(repeat + 1):
        start, start_cpu = time.perf_counter(), time.process_time()
        response = client.get(url)
        body = response.content
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        if response.status_code != 200 or not body:
            sys.exit(f"{url}: status {response.status_code}")
    return wall[0], wall[1:], cpu[1:]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="Write the ledger here (default: a temp file).")
    args = parser.parse_args()
    if args.entrants < 2 or args.games < 1 or args.repeat < 1:
        parser.error("needs at least 2 entrants, 1 game and 1 repeat")

    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "ledger.sqlite"
        if path.exists():
            parser.error(f"{path} exists; the benchmark needs a fresh ledger")
        start = time.perf_counter()
        tid = build(path, args.entrants, args.games, args.seed)
        print(f"built the ledger in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        with TestClient(create_app(path)) as client:
            rows = client.get(f"/api/events/{tid}").json()["leaderboard"]
            median_entrant = rows[len(rows) // 2]["entrant_id"]
            results = {
                "leaderboard": timed(client, f"/events/{tid}", args.repeat),
                "entrant": timed(client, f"/entrants/{median_entrant}", args.repeat),
            }
    for name, (first, later, cpu) in results.items():
        print(
            f"{name}: first {first:.1f} ms, then median {statistics.median(later):.1f} ms, "
            f"slowest {max(later):.1f} ms over {len(later)} requests; median CPU "
            f"{statistics.median(cpu):.1f} ms"
        )
    board, entrant = (statistics.median(results[k][1]) for k in ("leaderboard", "entrant"))
    board_cpu, entrant_cpu = (statistics.median(results[k][2]) for k in ("leaderboard", "entrant"))
    met = "met" if max(board, entrant) < 100 else "MISSED"
    print(f"entrants {args.entrants} games {args.games}; target 100 ms: {met}")
    print(
        f"leaderboard_ms {board:.1f} entrant_ms {entrant:.1f} "
        f"leaderboard_cpu_ms {board_cpu:.1f} entrant_cpu_ms {entrant_cpu:.1f}"
    )


if __name__ == "__main__":
    main()
