"""Engine throughput: random legal hands per second on one core.

    python benchmarks/engine.py --variant two-handed --seconds 5

Plays games between two seeded random players, counting completed hands (deals), with the legal action
list computed at every decision exactly as a searching bot would. The last line is
``hands_per_second <N>``.
"""

from __future__ import annotations

import argparse
import random
import time

from arena.game import VARIANT_NAMES, GameState, variant


def run(name: str, seconds: float, seed: int) -> tuple[int, int, float]:
    v = variant(name)
    rng = random.Random(seed)
    hands = decisions = 0
    game = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = GameState.new(v, seed=seed * 1_000_003 + game)
        game += 1
        choice = rng.choice
        while not state.is_terminal():
            state.apply(choice(state.legal_actions()))
            decisions += 1
        hands += len(state.deals)
    return hands, decisions, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--variant", choices=VARIANT_NAMES, default="two-handed")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    hands, decisions, elapsed = run(args.variant, args.seconds, args.seed)
    print(f"variant {args.variant} hands {hands} decisions {decisions} seconds {elapsed:.2f}")
    print(f"decisions_per_second {decisions / elapsed:.0f}")
    print(f"hands_per_second {hands / elapsed:.0f}")


if __name__ == "__main__":
    main()
