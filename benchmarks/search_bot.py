"""The searching bot's simulations per decision: how many sampled worlds it plays out in its time.

    python benchmarks/search_bot.py --variant two-handed --ms 100 --decisions 60

Seeded games are played by a fixed random policy; at each decision of seat 0 that has a choice, the
search bot (``arena_bot.search_bot.SearchBot``, which follows every decision of its seat) decides within
``--ms`` milliseconds, and the number of worlds it sampled and played out (one rollout per legal action
in each) is counted. The policy's action, not the bot's, is applied, so the positions do not depend on
the machine's speed. Only decisions taken by Monte Carlo search count (not the exact endgame, nor forced
moves). The last line is ``worlds_per_decision <W> rollouts_per_second <R>``.
"""

from __future__ import annotations

import argparse
import random
import time

from arena.game import GameState, observe, variant
from arena_bot.sdk import Clock
from arena_bot.search_bot import SearchBot

CLOCK = Clock(budget_ms=10_000, bank_ms=100_000)


def run(name: str, ms: int, decisions: int, seed: int) -> tuple[int, int, int, float]:
    """(searched decisions, worlds, rollouts, seconds spent deciding)."""
    v = variant(name)
    searched = worlds = rollouts = 0
    spent = 0.0
    game = 0
    while searched < decisions:
        state = GameState.new(v, seed=seed * 1_000 + game, dealer=game % 2)
        bot = SearchBot(ms=ms, seed=game)
        policy = random.Random(seed * 7_919 + game)
        game += 1
        while not state.is_terminal() and searched < decisions:
            legal = state.legal_actions()
            if state.to_act == 0:
                start = time.perf_counter()
                bot.decide(observe(state, 0), list(legal), CLOCK)
                if bot.last_mode == "search":
                    spent += time.perf_counter() - start
                    searched += 1
                    worlds += bot.last_worlds
                    rollouts += bot.last_worlds * len(legal)
            state.apply(policy.choice(legal))
    return searched, worlds, rollouts, spent


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--variant", default="two-handed", choices=("two-handed", "polish", "rubicon")
    )
    parser.add_argument("--ms", type=int, default=100, help="the bot's time per decision")
    parser.add_argument("--decisions", type=int, default=60, help="searched decisions to measure")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    searched, worlds, rollouts, spent = run(args.variant, args.ms, args.decisions, args.seed)
    print(
        f"variant {args.variant} ms {args.ms} decisions {searched} worlds {worlds} "
        f"rollouts {rollouts} seconds {spent:.2f}"
    )
    print(f"worlds_per_decision {worlds / searched:.1f} rollouts_per_second {rollouts / spent:.0f}")


if __name__ == "__main__":
    main()
