"""What the sandbox costs per game.

    python benchmarks/sandbox.py [--games 8] [--variant two-handed] [--freeze]

Plays one-game matches between two trivial bots (``benchmarks/trivial_bot.py``, answering the first
legal action at once) over the real server, each match with fresh bot processes (as a tournament with
``matches_per_process = 1``), once with the bots isolated (``sandbox = "required"``: bubblewrap, their
own uids and namespaces, the Unix socket) and once in the light mode (``sandbox = "none"``: TCP on
loopback), the two modes taking turns game by game so that a change in the machine's load touches both
alike. A game is timed from the match's creation to its end, bots started, connected, played and
stopped. The figures are medians over the games of each mode; also the median time of one decision
(round trip included) in each mode, and of starting and stopping a program that does nothing
(``true``), to tell starting the sandbox from talking through it. The last line is
``sandbox_overhead_ms_per_game <N>``: the median sandboxed game minus the median light one.
With ``--freeze``, both modes run with ``freeze = true`` (each bot frozen between its turns): a
decision's time then includes thawing the bot before its request and freezing it after its reply.

On a machine loaded by other sessions the sandboxed bots may come out faster: each runs in a session
of its own, hence in a scheduler autogroup of its own, which the kernel gives a fair share against the
other sessions, while light bots share the arena's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time

from arena.bots.launcher import BotProcess
from arena.bots.limits import Limits
from arena.referee import MatchConfig, TimeControl
from arena.sandbox import probe
from arena.service.match_manager import MatchManager, PlayerSpec
from arena.service.server import create_server

BOT = (
    f"{sys.executable} {os.path.join(os.path.dirname(os.path.abspath(__file__)), 'trivial_bot.py')}"
)
CLOCK = TimeControl(budget_ms=10_000, bank_ms=60_000, grace_ms=1000)  # never a timeout
MODES = {"sandboxed": "required", "light": "none"}  # each mode's sandbox setting


async def _game(
    manager: MatchManager, variant: str, seed: int, limits: Limits
) -> tuple[float, float]:
    """One one-game match: (milliseconds from creation to its end, milliseconds per decision)."""
    start = time.perf_counter()
    config = MatchConfig(variant=variant, seed=seed, games=1, time_control=CLOCK)
    specs = [[PlayerSpec(f"trivial-{s}", BOT)] for s in range(config.build_variant().seats)]
    entry = manager.create(config, specs, connect_timeout=120.0, limits=limits)
    await manager.start(entry)
    await entry.done.wait()
    total = (time.perf_counter() - start) * 1000
    if entry.record is None or entry.record.games[0].outcome != "normal":
        raise SystemExit(f"a benchmark game did not end normally: {entry.error or entry.record}")
    decisions = entry.record.games[0].decisions
    per_decision = statistics.median(d.elapsed_ms for d in decisions)
    return total, per_decision


async def _bare(manager: MatchManager, limits: Limits) -> float:
    """Milliseconds to start, wait for and stop a program that does nothing."""
    start = time.perf_counter()
    assert manager.sockets is not None
    sock = await manager.sockets.open()
    bot = await BotProcess.start(
        "true", "true", manager.address, "-", None, limits, socket=str(sock.path)
    )
    await bot.wait()
    await bot.stop()
    await sock.close()
    return (time.perf_counter() - start) * 1000


async def _run(
    games: int, variant: str, freeze: bool
) -> dict[str, tuple[list[float], list[float], list[float]]]:
    server, _, manager = await create_server("127.0.0.1:0")
    limits = {mode: Limits(sandbox=sandbox, freeze=freeze) for mode, sandbox in MODES.items()}
    times: dict[str, tuple[list[float], list[float], list[float]]] = {
        m: ([], [], []) for m in MODES
    }
    try:
        await _game(manager, variant, 0, limits["light"])  # warm up: imports, caches, the probe
        await _game(manager, variant, 0, limits["sandboxed"])
        for g in range(games):
            order = list(MODES) if g % 2 == 0 else list(reversed(MODES))
            for mode in order:
                total, per_decision = await _game(manager, variant, g + 1, limits[mode])
                times[mode][0].append(total)
                times[mode][1].append(per_decision)
                times[mode][2].append(await _bare(manager, limits[mode]))
    finally:
        await manager.close()
        await server.stop(None)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=8, help="games per mode")
    parser.add_argument("--variant", default="two-handed")
    parser.add_argument("--freeze", action="store_true", help="freeze each bot between its turns")
    args = parser.parse_args()
    found = probe("required")
    if not found.isolated:
        raise SystemExit(f"the sandbox is unavailable here: {found.reason}")
    print(found.describe())
    times = asyncio.run(_run(args.games, args.variant, args.freeze))
    medians = {}
    for mode, (totals, decisions, bare) in times.items():
        medians[mode] = statistics.median(totals)
        print(
            f"{mode:>9}: median {medians[mode]:7.1f} ms per game "
            f"(min {min(totals):.1f}, max {max(totals):.1f}, {len(totals)} games), "
            f"{statistics.median(decisions):.3f} ms per decision, "
            f"{statistics.median(bare):.1f} ms to start and stop `true`"
        )
    print(f"sandbox_overhead_ms_per_game {medians['sandboxed'] - medians['light']:.1f}")


if __name__ == "__main__":
    main()
