"""A standing competition's throughput and its matchmaker's cost.

    python benchmarks/competition.py [--entrants 50] [--seconds 60]

1. The matchmaker alone: a pool of 50, 500 and 5,000 entrants (two bots per author, random ratings),
   paired again and again with the ratings and game counts updated after each pairing, as the server
   does. Prints ``pairing_ms_50``, ``pairing_ms_500``, ``pairing_ms_5000``: milliseconds per pairing.
2. The whole competition in this process: ``--entrants`` trivial bots (``benchmarks/trivial_bot.py``)
   are submitted as bundles over gRPC by as many authors, built and checked; once they are all in
   play, the games recorded over ``--seconds`` give ``games_per_minute`` (the last line).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import grpc

from arena.competition import bundles
from arena.competition.matchmaker import Candidate, Pool
from arena.competition.server import CompetitionServer
from arena.competition.spec import parse
from arena.competition.submission_api import serve_submissions
from arena.ledger import Ledger
from arena.ledger import competitions as store
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

TRIVIAL = Path(__file__).resolve().parent / "trivial_bot.py"


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


async def competition(entrants: int, seconds: float, folder: Path) -> float:
    spec = parse(
        {
            "name": "Benchmark",
            "time_control": {"budget_ms": 2000, "bank_ms": 20000, "grace_ms": 200},
            "matchmaking": {"games_at_once": 2, "pause_seconds": 0.1},
            "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
        },
        "benchmarks/competition.py",
    )
    led = Ledger(folder / "ledger.sqlite")
    server = CompetitionServer(spec, led, folder / "data", serve_submissions=serve_submissions)
    await server.start()
    try:
        comp = store.Competitions(led)
        async with grpc.aio.insecure_channel(server.submissions_address) as channel:
            stub = competition_pb2_grpc.CompetitionStub(channel)
            for i in range(entrants):
                bot = folder / f"bot{i}"
                bot.mkdir()
                shutil.copy(TRIVIAL, bot / "bot.py")
                (bot / bundles.MANIFEST).write_text(
                    f'name = "trivial-{i}"\nversion = "1"\nlanguage = "python"\n'
                    'run = "{python} bot.py"\n'
                )
                token = comp.add_author(server.cid, f"author{i}")
                md = (("authorization", f"Bearer {token}"),)
                await stub.Submit(pb.SubmitRequest(bundle=bundles.pack(bot, 2**20)), metadata=md)
        started = time.monotonic()
        while len(comp.submissions(server.cid, None, (store.ACTIVE,))) < entrants:
            failed = comp.submissions(server.cid, None, (store.FAILED,))
            if failed:
                raise SystemExit(f"a trivial bot failed its intake: {failed[0].reason}")
            await asyncio.sleep(1.0)
        print(f"{entrants} bundles built and checked in {time.monotonic() - started:.0f} s")

        def games() -> int:
            return int(
                led.conn.execute(
                    "SELECT count(*) FROM games WHERE tournament_id = ?", (server.cid,)
                ).fetchone()[0]
            )

        before, start = games(), time.monotonic()
        await asyncio.sleep(seconds)
        played = games() - before
        return played / (time.monotonic() - start) * 60
    finally:
        await server.stop()
        led.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    for n in (50, 500, 5000):
        print(f"pairing_ms_{n} {pairing_ms(n):.3f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="arena-competition-bench-") as tmp:
        rate = asyncio.run(competition(args.entrants, args.seconds, Path(tmp)))
    print(f"games_per_minute {rate:.1f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
