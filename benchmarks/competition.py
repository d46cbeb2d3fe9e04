"""A standing competition's throughput, its matchmaker's cost and its refresh's cost at scale.

    python benchmarks/competition.py [--entrants 50] [--seconds 60] [--intake-timeout 900]
    python benchmarks/competition.py --entrants 5000 --games 1000000 [--refreshes 40] [--ledger PATH]

1. The matchmaker alone: a pool of 50, 500 and 5,000 entrants (two bots per author, random ratings),
   paired again and again with the ratings and game counts updated after each pairing, as the server
   does. Prints ``pairing_ms_50``, ``pairing_ms_500``, ``pairing_ms_5000``: milliseconds per pairing.
2. Without ``--games``: the whole competition in this process. ``--entrants`` trivial bots
   (``benchmarks/trivial_bot.py``) are submitted as bundles over gRPC by as many authors, built and
   checked; once they are all in play (within ``--intake-timeout`` seconds, else it says which are
   not), the games recorded over ``--seconds`` give ``games_per_minute`` (the last line).
3. With ``--games``: a prepared ledger (written directly in bulk: ``--entrants`` active entrants, two
   per author, each with a build folder, and ``--games`` games planned, recorded and rated on the
   competition's board, with their seats; no records or rating history, which a refresh never reads),
   kept at ``--ledger`` to be used again. The competition's server starts on it, paused (no bot is
   run), and ``--refreshes`` refreshes are made, each after what a running competition changes between
   two: a game recorded and rated, and an entrant suspended or put back by the organiser from another
   connection. Prints ``start_seconds``, ``refresh_ms_median``, ``refresh_ms_p90``, ``refresh_ms_max``,
   ``loop_block_ms_max``: the event loop's longest block meanwhile (a task that sleeps 1 ms at a time
   measures how late it wakes: on a loaded machine that includes the time the process waited for a
   core), and ``loop_callback_cpu_ms_max``: the longest callback the loop ran, in the loop thread's
   CPU time (what the refresh itself costs the loop, whatever the load). Goal: refresh under 20 ms
   at both scales (judged on the median: on a machine shared with other work a refresh's wall time
   now and then holds the time the process waited for a core, as the late wake-ups show).

Every wait has a timeout, and Ctrl-C stops the benchmark (the server is stopped on the way out).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc

from arena.competition import bundles
from arena.competition.matchmaker import Candidate, Pool
from arena.competition.server import CompetitionServer
from arena.competition.spec import CompetitionSpec, parse
from arena.competition.submission_api import serve_submissions
from arena.ledger import Ledger
from arena.ledger import competitions as store
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

TRIVIAL = Path(__file__).resolve().parent / "trivial_bot.py"
STOP_SECONDS = 60.0  # the server's stop, at most
BOT = "{python} bot.py"


def pairing_ms(entrants: int, pairings: int = 2000) -> float:
    rng = random.Random(entrants)
    pool = Pool()
    for i in range(entrants):
        pool.put(Candidate(i, i // 2, rng.gauss(25, 5), rng.uniform(1, 8.3), 0, -1, f"bot{i}"))
    start = time.perf_counter()
    for step in range(pairings):
        game = pool.pick(2, 4, rng)
        assert game is not None
        for c in game:
            pool.put(
                Candidate(c.entrant, c.author, c.mu + rng.gauss(0, 0.5), c.sigma * 0.99,
                          c.games + 2, step, c.name)
            )  # fmt: skip
    return (time.perf_counter() - start) / pairings * 1000


def make_spec(name: str) -> CompetitionSpec:
    return parse(
        {
            "name": name,
            "variant": "two-handed",
            "time_control": {"budget_ms": 2000, "bank_ms": 20000, "grace_ms": 200},
            "matchmaking": {"games_at_once": 2, "pause_seconds": 0.1},
            "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
        },
        "benchmarks/competition.py",
    )


# ---------------------------------------------------------------------------------------- live


async def competition(entrants: int, seconds: float, folder: Path, timeout: float) -> float:
    led = Ledger(folder / "ledger.sqlite")
    server = CompetitionServer(
        make_spec("Benchmark"), led, folder / "data", serve_submissions=serve_submissions
    )
    await server.start()
    try:
        comp = store.Competitions(led)

        def ledger(fn: Callable[..., Any], *args: Any) -> Awaitable[Any]:
            # Through the server's own ledger thread: this benchmark once wrote through the
            # server's connection from its own thread, and an intake's step failed inside the
            # other's transaction (the submission stayed "building" for good, issue 47).
            return server.db.call(fn, *args)

        async with grpc.aio.insecure_channel(server.submissions_address) as channel:
            stub = competition_pb2_grpc.CompetitionStub(channel)
            for i in range(entrants):
                bot = folder / f"bot{i}"
                bot.mkdir()
                shutil.copy(TRIVIAL, bot / "bot.py")
                (bot / bundles.MANIFEST).write_text(
                    f'name = "trivial-{i}"\nversion = "1"\nlanguage = "python"\nrun = "{BOT}"\n'
                )
                token = await ledger(comp.add_author, server.cid, f"author{i}")
                md = (("authorization", f"Bearer {token}"),)
                await stub.Submit(
                    pb.SubmitRequest(bundle=bundles.pack(bot, 2**20)), metadata=md, timeout=120
                )
        started = time.monotonic()
        while True:
            if server.fatal is not None:
                raise SystemExit(f"the competition server stopped: {server.fatal}")
            active = await ledger(comp.submissions, server.cid, None, (store.ACTIVE,))
            if len(active) >= entrants:
                break
            failed = await ledger(comp.submissions, server.cid, None, (store.FAILED,))
            if failed:
                raise SystemExit(f"a trivial bot failed its intake: {failed[0].reason}")
            if time.monotonic() - started > timeout:
                waiting = await ledger(comp.submissions, server.cid, None, store.LIVE)
                left = [f"{s.bot} ({s.status})" for s in waiting if s.status != store.ACTIVE]
                raise SystemExit(
                    f"{len(left)} bundle(s) not in play after {timeout:.0f} s: {', '.join(left)}"
                )
            await asyncio.sleep(1.0)
        print(f"{entrants} bundles built and checked in {time.monotonic() - started:.0f} s")

        def games() -> int:
            return int(
                led.conn.execute(
                    "SELECT count(*) FROM games WHERE tournament_id = ?", (server.cid,)
                ).fetchone()[0]
            )

        before, start = await ledger(games), time.monotonic()
        await asyncio.sleep(seconds)
        played = await ledger(games) - before
        if server.fatal is not None:
            raise SystemExit(f"the competition server stopped: {server.fatal}")
        return float(played) / (time.monotonic() - start) * 60
    finally:
        async with asyncio.timeout(STOP_SECONDS):
            await server.stop()
        led.close()


# ---------------------------------------------------------------------------------------- at scale


def prepare(path: Path, data: Path, entrants: int, games: int, seed: int = 47) -> None:
    """A ledger of one competition with ``entrants`` active bundle entrants (two per author, each
    with a build folder under ``data``) and ``games`` games planned, recorded and rated, written
    directly in bulk."""
    rng = random.Random(seed)
    spec = make_spec(f"Scale {entrants} x {games}")
    led = Ledger(path)
    cid = led.register(spec, None, "competition").id
    now = "2026-01-01T00:00:00+00:00"
    conn = led.conn
    with led.transaction():
        authors = (entrants + 1) // 2
        conn.executemany(
            "INSERT INTO authors (competition_id, name, token_hash, created_at) VALUES (?, ?, ?, ?)",
            [(cid, f"author{a}", f"{cid}-token-{a}", now) for a in range(authors)],
        )
        first_author = conn.execute(
            "SELECT min(id) FROM authors WHERE competition_id = ?", (cid,)
        ).fetchone()[0]
        first_entrant = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM entrants").fetchone()[0]
        sha = "0" * 64
        conn.executemany(
            "INSERT INTO entrants (id, name, command, command_hash, language, version, created_at) "
            "VALUES (?, ?, ?, ?, 'python', '1', ?)",
            [
                (first_entrant + i, f"bot{i}", f"bundle:{sha}:{BOT}", f"hash{cid}-{i}", now)
                for i in range(entrants)
            ],
        )
        conn.executemany(
            "INSERT INTO submissions (competition_id, author_id, bot, version, language, kind, "
            "bundle, run, build, entrant_id, status, submitted_at, updated_at) "
            "VALUES (?, ?, ?, '1', 'python', 'bundle', ?, ?, '', ?, 'active', ?, ?)",
            [
                (cid, first_author + i // 2, f"bot{i}", sha, BOT, first_entrant + i, now, now)
                for i in range(entrants)
            ],
        )
        board = conn.execute(
            "INSERT INTO boards (kind, name, variant, tournament_id) "
            "VALUES ('competition', ?, ?, ?)",
            (spec.name, spec.variant, cid),
        ).lastrowid
        seq = conn.execute("SELECT coalesce(max(rating_seq), 0) FROM games").fetchone()[0]
        played = [0] * entrants
        chunk = 50_000
        for start in range(0, games, chunk):
            planned, rows, seats = [], [], []
            first_game = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM games").fetchone()[0]
            for n in range(start, min(games, start + chunk)):
                a, b = rng.sample(range(entrants), 2)
                played[a] += 1
                played[b] += 1
                key = f"c{n:09d}-s0"
                names = json.dumps([f"bot{a}", f"bot{b}"])
                planned.append(
                    (cid, key, n, 0, n, 0, 0, n, json.dumps([[f"bot{a}"], [f"bot{b}"]]), names)
                )
                game_id = first_game + n - start
                rows.append((game_id, cid, key, n, n, n, now, seq + n + 1))
                win = rng.randrange(2)
                seats.append((game_id, 0, 0, first_entrant + a, 0, 1 - win, 1000 * win))
                seats.append((game_id, 1, 0, first_entrant + b, 1, win, 1000 * (1 - win)))
            conn.executemany(
                "INSERT INTO planned_games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", planned
            )
            conn.executemany(
                "INSERT INTO games (id, tournament_id, key, ord, round, pairing, deal, rotation, "
                "variant, seed, outcome, detail, culprit, finished_at, rating_seq) "
                "VALUES (?, ?, ?, ?, 0, ?, 0, 0, 'two-handed', ?, 'normal', '', -1, ?, ?)",
                rows,
            )
            conn.executemany("INSERT INTO game_seats VALUES (?, ?, ?, ?, ?, ?, ?)", seats)
        conn.executemany(
            "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?)",
            [
                (board, first_entrant + i, mu, sigma, mu - 3 * sigma, played[i])
                for i in range(entrants)
                if played[i]
                for mu, sigma in [(rng.gauss(25, 4), rng.uniform(0.8, 3.0))]
            ],
        )
        conn.execute(
            "INSERT OR REPLACE INTO competition_state VALUES (?, 1, ?)", (cid, now)
        )  # paused: no bot is run
    subs = conn.execute("SELECT id FROM submissions WHERE competition_id = ?", (cid,)).fetchall()
    led.close()
    for (sid,) in subs:
        build = data / "builds" / str(sid)
        build.mkdir(parents=True, exist_ok=True)
        (build / "bot.py").write_text("")


class CallbackClock:
    """The event loop's longest callback in the loop thread's CPU time (a load on the machine
    makes the loop late, never this longer): each callback the loop runs is timed."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._run = asyncio.events.Handle._run

    def __enter__(self) -> CallbackClock:
        run = self._run
        clock = self

        def timed(handle: asyncio.events.Handle) -> None:
            before = time.thread_time()
            run(handle)
            clock.longest = max(clock.longest, time.thread_time() - before)

        asyncio.events.Handle._run = timed  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.events.Handle._run = self._run  # type: ignore[method-assign]


async def refreshes(path: Path, data: Path, count: int) -> dict[str, float]:
    led = Ledger(path)
    name = led.conn.execute("SELECT name FROM tournaments WHERE kind = 'competition'").fetchone()[0]
    server = CompetitionServer(make_spec(name), led, data)
    blocks: list[float] = []
    watching = True

    async def watch() -> None:
        while watching:
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            blocks.append(time.perf_counter() - before - 0.001)

    start = time.perf_counter()
    await server.start()
    start_seconds = time.perf_counter() - start
    try:
        assert server.paused, "the prepared competition is paused: no bot is run"
        organiser = Ledger(path)
        comp = store.Competitions(organiser)
        entrants = sorted(server.entries)
        subs = {e: server.entries[e].submission.id for e in entrants}
        names = {e: server.entries[e].submission.bot for e in entrants}
        rng = random.Random(1)
        times: list[float] = []
        watcher = asyncio.create_task(watch())
        clock = CallbackClock().__enter__()
        for step in range(count):
            a, b = rng.sample(entrants, 2)
            game = ScheduledGame(
                f"bench{step:06d}", server.order, 0, server.order, 0, 0, step,
                ((names[a],), (names[b],)), (names[a], names[b]),
            )  # fmt: skip
            server.order += 1
            record = {
                "games": [
                    {
                        "outcome": "normal",
                        "detail": "",
                        "culprit": -1,
                        "result": {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 0]},
                    }
                ]
            }
            await server.db.call(server.ledger.plan, server.cid, [game])
            await server.db.call(
                server.ledger.record_game, server.cid, "two-handed", game,
                {names[a]: a, names[b]: b}, FinishedGame.from_data(record),
            )  # fmt: skip
            one = entrants[(step // 2) % len(entrants)]  # suspended, then put back
            status = store.SUSPENDED if step % 2 == 0 else store.ACTIVE
            await asyncio.to_thread(comp.set_status, subs[one], status, "benchmark")
            began = time.perf_counter()
            await server._refresh()
            times.append(time.perf_counter() - began)
            await asyncio.sleep(0.02)
        clock.__exit__()
        watching = False
        await watcher
        organiser.close()
    finally:
        async with asyncio.timeout(STOP_SECONDS):
            await server.stop()
        led.close()
    return {
        "start_seconds": start_seconds,
        "refresh_ms_median": statistics.median(times) * 1000,
        "refresh_ms_p90": sorted(times)[int(0.9 * (len(times) - 1))] * 1000,
        "refresh_ms_max": max(times) * 1000,
        "loop_block_ms_max": max(blocks) * 1000,
        "loop_callback_cpu_ms_max": clock.longest * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entrants", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--intake-timeout", type=float, default=900.0)
    parser.add_argument("--games", type=int, default=0, help="a prepared ledger of this many games")
    parser.add_argument("--refreshes", type=int, default=40)
    parser.add_argument("--ledger", type=Path, help="the prepared ledger (made if missing)")
    args = parser.parse_args()
    if args.entrants < 2 or args.games < 0 or args.refreshes < 1:
        parser.error("needs at least 2 entrants, 0 or more games and 1 or more refreshes")
    try:
        for n in (50, 500, 5000):
            print(f"pairing_ms_{n} {pairing_ms(n):.3f}", flush=True)
        with tempfile.TemporaryDirectory(prefix="arena-competition-bench-") as tmp:
            if not args.games:
                rate = asyncio.run(
                    competition(args.entrants, args.seconds, Path(tmp), args.intake_timeout)
                )
                print(f"games_per_minute {rate:.1f}")
                return
            path = args.ledger or Path(tmp) / "ledger.sqlite"
            data = path.with_name(path.name + ".data")
            if not path.exists():
                began = time.perf_counter()
                prepare(path, data, args.entrants, args.games)
                print(f"prepared {path.name} in {time.perf_counter() - began:.0f} s", flush=True)
            figures = asyncio.run(refreshes(path, data, args.refreshes))
            print(f"entrants {args.entrants} games {args.games} refreshes {args.refreshes}")
            print(" ".join(f"{k} {v:.2f}" for k, v in figures.items()))
            goal = figures["refresh_ms_median"] < 20
            print(f"refresh target 20 ms (the median): {'OK' if goal else 'MISSED'}")
    except KeyboardInterrupt:
        sys.exit("interrupted")
    finally:
        sys.stdout.flush()


if __name__ == "__main__":
    main()
