"""Load: many concurrent matches of trivial bots on one referee, counting spurious timeouts.

    python benchmarks/load.py --matches 32 --budget-ms 200 --seconds 60

Keeps ``--matches`` matches of ``--games`` games running at once between pairs of first-legal bots
(separate processes, started for each match), each decision with a budget of ``--budget-ms`` and a bank
of ``--bank-ms``, until ``--seconds`` have passed and the running matches have finished. Timeouts are
counted from the match records. The last line is ``games <N> decisions <D> timeouts <T>``.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import time

from arena.referee import MatchConfig, Outcome, TimeControl
from arena.service.match_manager import MatchManager, PlayerSpec
from arena.service.server import create_server


async def one_match(
    manager: MatchManager, seed: int, games: int, tc: TimeControl
) -> tuple[int, int, int]:
    bot = f"{shlex.quote(sys.executable)} -m arena_bot.first_bot"
    entry = manager.create(
        MatchConfig(seed=seed, games=games, time_control=tc),
        [[PlayerSpec("a", bot)], [PlayerSpec("b", bot)]],
        connect_timeout=120,
    )
    await manager.start(entry)
    await entry.done.wait()
    if entry.record is None:
        return 0, 0, 0
    decisions = sum(len(g.decisions) for g in entry.record.games)
    timeouts = sum(
        1 for g in entry.record.games for d in g.decisions if d.failure == Outcome.TIMEOUT.text
    )
    return len(entry.record.games), decisions, timeouts


async def run(
    matches: int, games_per_match: int, seconds: float, tc: TimeControl
) -> tuple[int, int, int, float]:
    server, _, manager = await create_server()
    games = decisions = timeouts = 0
    seed = 0
    start = time.perf_counter()
    deadline = start + seconds
    running: set[asyncio.Task[tuple[int, int, int]]] = set()
    try:
        while running or time.perf_counter() < deadline:
            while len(running) < matches and time.perf_counter() < deadline:
                seed += 1
                running.add(asyncio.create_task(one_match(manager, seed, games_per_match, tc)))
            done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                g, d, t = task.result()
                games, decisions, timeouts = games + g, decisions + d, timeouts + t
    finally:
        await manager.close()
        await server.stop(None)
    return games, decisions, timeouts, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=32)
    parser.add_argument("--games", type=int, default=4, help="games per match")
    parser.add_argument("--budget-ms", type=int, default=200)
    parser.add_argument("--bank-ms", type=int, default=0)
    parser.add_argument("--grace-ms", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    tc = TimeControl(budget_ms=args.budget_ms, bank_ms=args.bank_ms, grace_ms=args.grace_ms)
    games, decisions, timeouts, elapsed = asyncio.run(
        run(args.matches, args.games, args.seconds, tc)
    )
    print(
        f"matches {args.matches} games_per_match {args.games} budget_ms {args.budget_ms} bank_ms {args.bank_ms} "
        f"grace_ms {args.grace_ms} seconds {elapsed:.1f} decisions_per_second {decisions / elapsed:.0f}"
    )
    print(f"games {games} decisions {decisions} timeouts {timeouts}")


if __name__ == "__main__":
    main()
