"""How long an A/B test takes to decide: ``arena sprt`` between two example bots, as a user runs it.

    python benchmarks/sprt.py --new greedy_bot --old random_bot --elo1 50 --concurrency 2

Runs the command (local bot processes on the arena's own referee, sandboxed when the machine allows)
until the GSPRT decides or ``--max-games``, and prints the decision, the pairs and games it took, the
wall time, and games per second; the last line is the same as JSON. With ``--ledger``, every game is
also recorded in a fresh ledger in a temporary folder (the cost of recording).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new", default="greedy_bot", help="an arena_bot module")
    parser.add_argument("--old", default="random_bot", help="an arena_bot module")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--max-games", type=int, default=400)
    parser.add_argument("--budget-ms", type=int, default=1000)
    parser.add_argument("--ledger", action="store_true", help="record the games in a ledger")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        cmd = [
            sys.executable, "-m", "arena.cli.main", "sprt",
            "--bot", f"{{python}} -m arena_bot.{args.new}",
            "--bot", f"{{python}} -m arena_bot.{args.old}",
            "--elo0", str(args.elo0), "--elo1", str(args.elo1),
            "--concurrency", str(args.concurrency), "--max-games", str(args.max_games),
            "--budget-ms", str(args.budget_ms),
            *(["--ledger", str(Path(scratch) / "arena.db")] if args.ledger else []),
        ]  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=3600)
        seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"arena sprt failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    values = dict(line.partition(" ")[::2] for line in done.stdout.splitlines())
    pairs = int(values["pairs"])
    result = {
        "new": args.new,
        "old": args.old,
        "elo0": args.elo0,
        "elo1": args.elo1,
        "concurrency": args.concurrency,
        "ledger": args.ledger,
        "decision": values["decision"],
        "pentanomial": values["pentanomial"],
        "pairs": pairs,
        "games": 2 * pairs,
        "seconds": round(seconds, 2),
        "games_per_second": round(2 * pairs / seconds, 2),
    }
    print(
        f"{args.new} against {args.old}, H0 {args.elo0:g} H1 {args.elo1:g}: {result['decision']} "
        f"after {pairs} pairs ({2 * pairs} games, pentanomial {result['pentanomial']}) in "
        f"{seconds:.1f} s, {result['games_per_second']} games/s, concurrency {args.concurrency}"
        + (", recorded in a ledger" if args.ledger else "")
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
