"""Tournament throughput on 1, 2 and 4 Ray nodes of this machine, and the coordinator's cost per game.

The bots sleep a fixed time per decision, so that the CPU is not what limits the games: each node is
allowed the same number of games at once (``--slots``: it has two CPUs per slot, a game asks one per
bot), and more nodes should play proportionally more games per minute. For each cluster size a warm-up
tournament starts the nodes' worker processes and bot processes (bot processes are reused across games,
``matches_per_process``, so that their start-up does not crowd the machine's two cores); then a
tournament of ``--rounds`` games per slot is timed from its first game sent to its last recorded.

Prints, per size, ``games_per_minute_N``, and the coordinator's CPU time per game (its process: the
ledger writes, Ray's driver threads, the scheduling), then ``speedup_4`` (4 nodes over 1; the goal is
at least 3). The last line is machine-readable::

    games_per_minute_1 A games_per_minute_2 B games_per_minute_4 C speedup_4 S coordinator_ms_per_game M

    .venv/bin/python benchmarks/cluster.py                 # about ten minutes on a quiet machine
    .venv/bin/python benchmarks/cluster.py --pause 0.05 --rounds 1
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ray._private import ray_constants
from ray._private import services as ray_services
from ray._private import utils as ray_utils
from ray.cluster_utils import Cluster as RayCluster

from arena.cluster.connect import LOOPBACK, ONE_MACHINE, Cluster, connect
from arena.cluster.player import for_tournament
from arena.ledger import Ledger
from arena.tournament.runner import Progress, TournamentRunner, hidden_paths
from arena.tournament.spec import load

T = TypeVar("T")

SLEEPY = """\
import sys, time
from arena_bot.sdk import Bot, run

pause, starts = float(sys.argv[1]), sys.argv[2]
with open(starts, "a") as f:
    f.write("started\\n")

class Sleepy(Bot):
    def decide(self, view, legal, clock):
        time.sleep(pause)
        return legal[len(legal) // 2]

run(Sleepy())
"""


def started(start: Callable[[], T]) -> T:
    """A Ray node started with patience: Ray gives a starting node 30 s to register with the head,
    asking every 0.1 s, and a node of a loaded machine may need longer. Each asking waits here (up
    to four minutes) instead."""
    ask = ray_services.get_node

    def patiently(gcs_address: str, node_id: str) -> Any:
        deadline = time.monotonic() + 240
        while True:
            try:
                return ask(gcs_address, node_id)
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    # A starting raylet gives its dashboard agent about 15 s to report its ports, then aborts; the
    # full agent imports too slowly for that on a loaded machine: these nodes run the minimal one.
    dependencies = ray_utils.get_dashboard_dependency_error
    ray_services.get_node = patiently
    ray_utils.get_dashboard_dependency_error = lambda: "minimal for the benchmark"
    try:
        return start()
    finally:
        ray_services.get_node = ask
        ray_utils.get_dashboard_dependency_error = dependencies


def tournament(folder: Path, name: str, games: int, pause: float, starts: Path) -> Path:
    lines = [
        f'name = "{name}"',
        'variant = "rubicon"',  # one deal: about 130 decisions a game
        f"deals_per_pairing = {games}",
        "duplicate = false",  # a new deal every game: a bot process may play each of them
        "matches_per_process = 1000",
        "seed = 1",
        "[time_control]",
        "budget_ms = 10000",
        "bank_ms = 600000",
        "grace_ms = 2000",
        "[limits]",
        'sandbox = "none"',  # the bots note their starts outside their folder
    ]
    for bot in ("north", "south"):
        command = f"{{python}} sleepy.py {pause} {starts}"
        lines += ["[[entrants]]", f'name = "{bot}"', f'command = "{command}"']
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def play(path: Path, ledger: Path, cluster: Cluster) -> tuple[int, float, float]:
    """(games, wall seconds, coordinator CPU seconds) of one tournament."""
    spec = load(path)
    led = Ledger(ledger)
    first: list[float] = []  # when the first game was sent (after the entrants' check)

    def sent(progress: Progress) -> None:
        if progress.running and not first:
            first.append(time.perf_counter())

    remote = for_tournament(cluster, spec, hidden_paths(spec, led))
    runner = TournamentRunner(spec, led, on_progress=sent, remote=remote)
    cpu = time.process_time()
    try:
        asyncio.run(runner.run())
    finally:
        led.close()
    wall, cpu = time.perf_counter() - first[0], time.process_time() - cpu
    if runner.progress.errors or runner.progress.failures:
        raise SystemExit(f"{path.name}: {runner.progress}")
    return runner.progress.done, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pause", type=float, default=0.2, help="seconds a bot sleeps per decision"
    )
    parser.add_argument("--slots", type=int, default=2, help="games at once per node")
    parser.add_argument("--rounds", type=int, default=2, help="timed games per slot")
    parser.add_argument("--nodes", default="1,2,4", help="cluster sizes, in increasing order")
    args = parser.parse_args()
    logging.getLogger("ray").setLevel(logging.ERROR)
    sizes = [int(n) for n in args.nodes.split(",")]
    cpus = 2 * args.slots
    rates: dict[int, float] = {}
    costs: list[float] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        data = Path(tmp)  # the ledgers and the bots' start notes
        folder = data / "tournament"  # the tournament files and the bot: shipped to the nodes
        folder.mkdir()
        (folder / "sleepy.py").write_text(SLEEPY)
        # Every node on loopback: Ray keeps the node address 127.0.0.1 as given when told that it
        # runs on one machine (a switch the nodes' processes inherit), and nothing listens beyond it.
        os.environ[ONE_MACHINE] = "0"
        ray_constants.ENABLE_RAY_CLUSTER = False  # (read by Ray when it was imported)
        private = {"num_cpus": cpus, "node_ip_address": LOOPBACK}
        nodes = started(
            lambda: RayCluster(
                initialize_head=True, head_node_args={**private, "include_dashboard": False}
            )
        )
        cluster = None
        try:
            cluster = connect(nodes.address)
            count = 1
            for size in sizes:
                while count < size:
                    started(lambda: nodes.add_node(**private))
                    count += 1
                nodes.wait_for_nodes()
                slots = size * args.slots
                starts = data / f"starts-{size}.txt"
                starts.touch()
                warm = tournament(folder, f"warm-up-{size}", slots, args.pause, starts)
                play(warm, data / f"warm-{size}.sqlite", cluster)
                warm_starts = len(starts.read_text().splitlines())
                timed = tournament(folder, f"timed-{size}", slots * args.rounds, args.pause, starts)
                games, wall, cpu = play(timed, data / f"timed-{size}.sqlite", cluster)
                launched = len(starts.read_text().splitlines()) - warm_starts
                rates[size] = games / wall * 60
                costs.append(cpu / games)
                print(
                    f"{size} node(s), {slots} games at once: {games} games in {wall:.1f} s, "
                    f"games_per_minute_{size} {rates[size]:.2f}, coordinator "
                    f"{cpu / games * 1000:.1f} ms CPU per game, {launched} bot processes started",
                    flush=True,
                )
        finally:
            if cluster is not None:
                cluster.close()
            nodes.shutdown()
    first, last = sizes[0], sizes[-1]
    speedup = rates[last] / rates[first]
    cost = sum(costs) / len(costs) * 1000
    print(f"speedup_{last} {speedup:.2f} (goal: at least 3 for 4 nodes over 1)")
    print(
        " ".join(f"games_per_minute_{n} {rates[n]:.2f}" for n in sizes)
        + f" speedup_{last} {speedup:.2f} coordinator_ms_per_game {cost:.1f}"
    )


if __name__ == "__main__":
    main()
