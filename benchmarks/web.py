"""The web pages' response time and the web process's peak memory on a large ledger.

    python benchmarks/web.py --entrants 5000 --games 1000000

Builds a fresh ledger in a temporary directory, in a child process (the schema through
``arena.ledger.Ledger``, then the rows by bulk inserts in one transaction), holding two events:

- "Web benchmark": ``--games`` two-handed games between random pairs of ``--entrants`` entrants, each
  game's seats, its two boards' ratings and rating history (the ratings follow a cheap random walk,
  not TrueSkill: only their volume matters here);
- "Head to head": ``--h2h-games`` games of 32 of them (a tournament's field, whose page shows the whole
  head-to-head table and the crosstable), on duplicate deals (each deal twice, the seats swapped);
- "Competition": a standing competition of ``--entrants`` versions of their own (one author for
  each 50), every 20th withdrawn, rated on its board as the first event's entrants are (its page
  ranks the versions in play and lists those out of play apart).

``--cache DIR`` keeps the built ledger in DIR, named by the parameters and the ledger's schema
version, and serves it again on the next run with the same ones (a million games take minutes to
build on a loaded machine).

Head to head is then counted from the games as a ledger made before it gets it when opened (the
ledger's own code; skipped by an arena that has none). Then this process, which built nothing, serves
the ledger through the web app in-process (Starlette's test client: routing, queries, templates, the
whole body read) and times each page ``--repeat`` times after a first request: the app counts every
board's games once when it starts (in the background; the first request waits for it), so the first
request's time is printed apart. For each page: the first request's time, the median and slowest
wall-clock time of the others, their median CPU time (all of this process's threads; a loaded machine
inflates it far less than wall-clock time) and the body's size. Then the process's peak resident memory
(the web app and the test client; Python's own start is about 60 MB of it). The last lines are

    page_ms <page>=<median> ...
    peak_mb <N>

Targets: each page under 100 ms, the process under 300 MB.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VARIANT = "two-handed"
OUTCOMES = ("normal",) * 97 + ("timeout", "crash", "illegal-action")
FIELD = 32  # entrants of the head-to-head event
BUILD = 2  # what --cache names its ledgers by: raised when the ledger built changes
NOW = "2026-01-01T00:00:00+00:00"


class Builder:
    """Rows of one ledger, inserted in batches."""

    def __init__(self, path: Path, entrants: int, seed: int) -> None:
        from arena.ledger import Ledger

        Ledger(path).close()  # the schema, by the ledger's own migrations
        self.led = Ledger(path)
        self.conn = self.led.conn
        # A fresh file built in one go: no fsync (a crash leaves a ledger no one uses), a page cache
        # of 256 MB for the indexes being filled, temporary tables in memory.
        for pragma in ("synchronous = OFF", "cache_size = -262144", "temp_store = MEMORY"):
            self.conn.execute(f"PRAGMA {pragma}")
        self.rng = random.Random(seed)
        self.entrants = entrants
        self.game_id = 0
        self.conn.executemany(
            "INSERT INTO entrants (id, name, command, command_hash, language, version, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (i, f"bot{i:05d}", f"bot --id {i}", f"{i:064x}", "python", "1", NOW)
                for i in range(1, entrants + 1)
            ],
        )

    def event(self, name: str) -> tuple[int, list[int]]:
        cur = self.conn.execute(
            "INSERT INTO tournaments (name, spec_hash, spec, variant, source, created_at, deal_key) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                name,
                hashlib.sha256(name.encode()).hexdigest(),
                "{}",
                VARIANT,
                "web.py",
                NOW,
                "ab" * 32,
            ),
        )
        tid = int(cur.lastrowid or 0)
        boards = []
        for kind, board in (("tournament", name), ("pooled", VARIANT)):
            row = self.conn.execute(
                "SELECT id FROM boards WHERE kind = ? AND name = ?", (kind, board)
            ).fetchone()
            if row is None:
                row = (
                    self.conn.execute(
                        "INSERT INTO boards (kind, name, variant, tournament_id) VALUES (?, ?, ?, ?)",
                        (kind, board, VARIANT, tid if kind == "tournament" else None),
                    ).lastrowid,
                )
            boards.append(int(row[0] or 0))
        return tid, boards

    def games(self, tid: int, boards: list[int], count: int, field: int, duplicate: bool) -> None:
        """``count`` games of entrants 1..``field`` written by SQL alone: who plays, who wins and how
        are drawn from the game's number by a multiplicative hash; with ``duplicate`` each deal is
        played twice, the seats swapped. The ratings are not a TrueSkill walk: the history's volume
        is what the pages read."""
        c = self.conn
        first = self.game_id + 1
        c.execute("DROP TABLE IF EXISTS temp.duel")
        c.execute(
            "CREATE TEMP TABLE duel AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL "
            "SELECT i + 1 FROM n WHERE i + 1 < :count), "
            "h(i, p, r, x, y) AS (SELECT i, p, r, (p * 2654435761 + :seed) % 4294967296, "
            "(i * 40503 + 12345 + :seed) % 65536 FROM "
            "(SELECT i, CASE WHEN :dup THEN i / 2 ELSE i END AS p, "
            "CASE WHEN :dup THEN i % 2 ELSE 0 END AS r FROM n)) "
            "SELECT i, p, r, 1 + x % :field AS a, "
            "1 + ((x % :field) + 1 + (x / :field) % (:field - 1)) % :field AS b, "
            "y % 2 AS winner, CASE WHEN y % 100 < 97 THEN 'normal' WHEN y % 100 = 97 THEN 'timeout' "
            "WHEN y % 100 = 98 THEN 'crash' ELSE 'illegal-action' END AS outcome, "
            "200 + y % 800 AS loser_score FROM h",
            {"count": count, "seed": self.rng.randrange(1 << 20), "dup": duplicate, "field": field},
        )
        c.execute(
            "INSERT INTO planned_games SELECT :tid, printf('g%09d', i), i, 0, p, 0, r, p, '[]', '[]' "
            "FROM duel",
            {"tid": tid},
        )
        c.execute(
            "INSERT INTO games (id, tournament_id, key, ord, round, pairing, deal, rotation, "
            "variant, seed, outcome, detail, culprit, finished_at, rating_seq) "
            "SELECT :first + i, :tid, printf('g%09d', i), i, 0, p, 0, r, :variant, p, outcome, '', "
            "CASE WHEN outcome = 'normal' THEN -1 ELSE 1 - winner END, :now, :first + i FROM duel",
            {"first": first, "tid": tid, "variant": VARIANT, "now": NOW},
        )
        # Seat 0 plays a in rotation 0 and b in rotation 1.
        seat_sql = (
            "SELECT :first + i AS g, {seat} AS seat, CASE WHEN r = {seat} THEN a ELSE b END AS e, "
            "CASE WHEN winner = {seat} THEN 0 ELSE 1 END AS place, "
            "CASE WHEN winner = {seat} THEN 1000 ELSE loser_score END AS score FROM duel"
        )
        seats = f"{seat_sql.format(seat=0)} UNION ALL {seat_sql.format(seat=1)}"
        c.execute(
            f"INSERT INTO game_seats SELECT g, seat, 0, e, seat, place, score FROM ({seats})",
            {"first": first},
        )
        for board in boards:
            c.execute(
                "INSERT INTO rating_history SELECT :board, s.game_id, s.entrant_id, "
                "25.0 - (s.game_id % 97) / 10.0, 8.0 - (s.game_id % 89) / 20.0, "
                "25.0 - ((s.game_id + 1) % 97) / 10.0, 8.0 - ((s.game_id + 1) % 89) / 20.0 "
                "FROM game_seats s WHERE s.game_id >= :first",
                {"board": board, "first": first},
            )
            c.execute(
                "INSERT INTO ratings SELECT :board, entrant_id, 25.0 + (entrant_id % 37) / 4.0, "
                "1.0 + 5.0 / (1 + count(*)), 25.0 + (entrant_id % 37) / 4.0 - 15.0 / (1 + count(*)), "
                "count(*) FROM game_seats WHERE game_id >= :first GROUP BY entrant_id "
                "ON CONFLICT (board_id, entrant_id) DO UPDATE SET games = games + excluded.games",
                {"board": board, "first": first},
            )
        self.game_id += count

    def competition(self, name: str, versions: int, like: int) -> None:
        """A competition of ``versions`` entrants of its own (after those of :meth:`__init__`), each
        an author's submission (an author for each 50), every 20th withdrawn, rated on the
        competition's board as the entrants are on board ``like``."""
        c = self.conn
        first = c.execute("SELECT max(id) FROM entrants").fetchone()[0]
        c.executemany(
            "INSERT INTO entrants (id, name, command, command_hash, language, version, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (first + i, f"comp{i:05d}", f"bundle {i}", f"{first + i:064x}", "python", "1", NOW)
                for i in range(1, versions + 1)
            ],
        )
        cid = int(
            c.execute(
                "INSERT INTO tournaments (name, spec_hash, spec, variant, source, created_at, "
                "deal_key, kind) VALUES (?, ?, '{}', ?, 'web.py', ?, ?, 'competition')",
                (name, hashlib.sha256(name.encode()).hexdigest(), VARIANT, NOW, "cd" * 32),
            ).lastrowid
            or 0
        )
        board = int(
            c.execute(
                "INSERT INTO boards (kind, name, variant, tournament_id) "
                "VALUES ('competition', ?, ?, ?)",
                (name, VARIANT, cid),
            ).lastrowid
            or 0
        )
        authors = -(-versions // 50)
        c.executemany(
            "INSERT INTO authors (id, competition_id, name, token_hash, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [(a, cid, f"author{a:04d}", f"{cid}-{a:060x}", NOW) for a in range(1, authors + 1)],
        )
        c.executemany(
            "INSERT INTO submissions (competition_id, author_id, bot, version, language, kind, "
            "entrant_id, status, submitted_at, updated_at) "
            "VALUES (?, ?, ?, '1', 'python', 'bundle', ?, ?, ?, ?)",
            [
                (cid, 1 + (i - 1) // 50, f"comp{i:05d}", first + i,
                 "withdrawn" if i % 20 == 0 else "active", NOW, NOW)
                for i in range(1, versions + 1)
            ],
        )  # fmt: skip
        c.execute(
            "INSERT INTO ratings SELECT :board, :first + entrant_id, mu, sigma, exposed, games "
            "FROM ratings WHERE board_id = :like AND entrant_id <= :versions",
            {"board": board, "first": first, "like": like, "versions": versions},
        )

    def finish(self) -> None:
        try:
            from arena.ledger import head_to_head
        except ImportError:  # an arena from before head to head was kept
            pass
        else:
            head_to_head.rebuild(self.conn)


def build(path: Path, entrants: int, games: int, h2h_games: int, seed: int) -> None:
    b = Builder(path, entrants, seed)
    with b.led.transaction():
        tid, boards = b.event("Web benchmark")
        b.games(tid, boards, games, entrants, duplicate=False)
        big = boards[0]
        tid, boards = b.event("Head to head")
        b.games(tid, boards, h2h_games, FIELD, duplicate=True)
        b.competition("Competition", entrants, big)
        b.finish()
    b.conn.execute("ANALYZE")
    b.led.close()


def timed(client: object, url: str, repeat: int) -> tuple[float, list[float], list[float], int]:
    """(first request's ms, the later requests' wall-clock ms, their CPU ms, body bytes)."""
    wall, cpu = [], []
    size = 0
    for _ in range(repeat + 1):
        start, start_cpu = time.perf_counter(), time.process_time()
        response = client.get(url)  # type: ignore[attr-defined]
        size = len(response.content)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        if response.status_code != 200:
            return wall[0], [float("nan")], [float("nan")], -response.status_code
    return wall[0], wall[1:], cpu[1:], size


def serve(path: Path, repeat: int) -> None:
    from starlette.testclient import TestClient

    from arena.web.app import create_app

    with TestClient(create_app(path)) as client:
        events = {e["name"]: e["id"] for e in client.get("/api/events").json()["events"]}
        big, h2h = events["Web benchmark"], events["Head to head"]
        competition = events.get("Competition")  # absent from a ledger built before it was
        board = client.get(f"/api/events/{big}").json()
        rows = board.get("leaderboard") or []
        total = board.get("total", len(rows))
        median = rows[len(rows) // 2]["entrant_id"] if len(rows) > 1 else 1 + total // 2
        # Its opponents' last page (an arena from before they were shown has none: its first).
        opponents = client.get(f"/api/entrants/{median}").json().get("opponents") or {}
        pages = {
            "leaderboard": f"/events/{big}",
            "board_page_last": f"/events/{big}?page={max(1, -(-total // 100))}",
            "board_search": f"/events/{big}?q=bot012",
            "board_own_rank": f"/events/{big}?entrant={median}",
            "entrant": f"/entrants/{median}",
            "entrant_opponents_last": f"/entrants/{median}?opponents={opponents.get('pages', 1)}",
            "games": "/games",
            "games_of_entrant": f"/games?entrant={median}",
            "entrant_search_api": "/api/entrants?q=bot012",
            "head_to_head_32": f"/events/{h2h}",
            "event_api": f"/api/events/{big}",
        }
        if competition is not None:
            pages["competition_board"] = f"/events/{competition}"
            pages["competition_last"] = f"/events/{competition}?page={max(1, -(-total // 100))}"
            pages["competition_search"] = f"/events/{competition}?q=comp012"
        results = {name: timed(client, url, repeat) for name, url in pages.items()}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{'page':22} {'first ms':>9} {'median ms':>10} {'slowest ms':>11} {'cpu ms':>7} {'bytes':>9}"
    )
    for name, (first, later, cpu, size) in results.items():
        if size < 0:
            print(f"{name:22} {'':>9} status {-size}")
            continue
        print(
            f"{name:22} {first:9.1f} {statistics.median(later):10.1f} {max(later):11.1f} "
            f"{statistics.median(cpu):7.1f} {size:9d}"
        )
    medians = {k: statistics.median(v[1]) for k, v in results.items() if v[3] >= 0}
    met = "met" if max(medians.values()) < 100 and peak < 300 else "MISSED"
    print(f"peak memory of the web process {peak:.0f} MB; targets 100 ms a page, 300 MB: {met}")
    print("page_ms " + " ".join(f"{k}={v:.1f}" for k, v in medians.items()))
    print(f"peak_mb {peak:.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument(
        "--h2h-games",
        type=int,
        default=None,
        help="games of the 32-entrant event (default --games)",
    )
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="Write the ledger here (default: a temp file).")
    parser.add_argument(
        "--cache", type=Path, help="Keep the built ledger in this folder and reuse it (see above)."
    )
    parser.add_argument("--ledger", type=Path, help="Serve this ledger built before (no build).")
    parser.add_argument("--build-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.entrants < FIELD or args.games < 1 or args.repeat < 1:
        parser.error(f"needs at least {FIELD} entrants, 1 game and 1 repeat")
    h2h_games = args.games if args.h2h_games is None else args.h2h_games
    if args.build_only:
        build(args.build_only, args.entrants, args.games, h2h_games, args.seed)
        return
    if args.ledger:
        serve(args.ledger, args.repeat)
        return
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)
        from arena.ledger.schema import MIGRATIONS  # a ledger of an older schema is built again

        name = (
            f"web-{BUILD}-v{len(MIGRATIONS)}-e{args.entrants}-g{args.games}-h{h2h_games}"
            f"-s{args.seed}.sqlite"
        )
        cached = args.cache / name
        if not cached.exists():
            building = cached.with_suffix(".building")  # renamed once whole: never half reused
            building.unlink(missing_ok=True)
            prepare(building, args.entrants, args.games, h2h_games, args.seed)
            building.rename(cached)
        else:
            print(f"serving the ledger built before: {cached}", file=sys.stderr)
        serve(cached, args.repeat)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "ledger.sqlite"
        if path.exists():
            parser.error(f"{path} exists; the benchmark needs a fresh ledger")
        prepare(path, args.entrants, args.games, h2h_games, args.seed)
        serve(path, args.repeat)


def prepare(path: Path, entrants: int, games: int, h2h_games: int, seed: int) -> None:
    """Build the ledger at ``path`` in a child process (this process's peak memory is then the
    web's alone)."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, __file__, "--entrants", str(entrants), "--games", str(games),
         "--h2h-games", str(h2h_games), "--seed", str(seed), "--build-only", str(path)],
        check=True,
        timeout=3600,
    )  # fmt: skip
    print(
        f"built the ledger ({entrants} entrants, {games} + {h2h_games} games) in "
        f"{time.perf_counter() - start:.1f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
