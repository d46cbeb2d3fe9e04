"""The strength ladder measured in-process, without the server: duplicate games between example bots.

    python benchmarks/ladder.py --games 20 --pair greedy:random --pair search200:greedy

Each pairing plays ``--games`` deals seeds, each twice with the seats swapped (duplicate), on
``--jobs`` processes. Bot names: random, first, greedy, searchN (the searching bot at N ms per
decision). Prints, per pairing, the first bot's wins, draws and losses, its score share with a 95%
Wilson interval, and the mean point margin per game.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

from arena.game import Action, GameState, variant
from arena.game.observe import observe
from arena.tournament.summary import wilson
from arena_bot.first_bot import FirstBot
from arena_bot.greedy_bot import GreedyBot
from arena_bot.random_bot import RandomBot
from arena_bot.sdk import Bot, Clock
from arena_bot.search_bot import SearchBot

CLOCK = Clock(budget_ms=2000, bank_ms=20000)


def make(name: str, seed: int) -> Bot:
    if name == "random":
        return RandomBot(seed)
    if name == "first":
        return FirstBot()
    if name == "greedy":
        return GreedyBot()
    if name.startswith("search"):
        return SearchBot(ms=int(name[6:] or 200), seed=seed)
    raise SystemExit(f"unknown bot {name!r}")


def play(args: tuple[str, str, str, int, int]) -> tuple[int, int, float]:
    """One game: bot ``a`` in seat ``a_seat``; returns (a's rank: 0 win / 1 loss / -1 draw, a's
    margin, seconds)."""
    vname, a, b, seed, a_seat = args
    start = time.perf_counter()
    state = GameState.new(variant(vname), seed=seed, dealer=0)
    bots = [make(a, seed), make(b, seed + 1)]
    if a_seat == 1:
        bots.reverse()
    while not state.is_terminal():
        seat = state.to_act
        action = bots[seat].decide(observe(state, seat), list(state.legal_actions()), CLOCK)
        state.apply(action if not isinstance(action, str) else Action.parse(action))
    result = state.result()
    mine, theirs = result.scores[a_seat], result.scores[1 - a_seat]
    outcome = 0 if mine > theirs else 1 if mine < theirs else -1
    return outcome, mine - theirs, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", default="two-handed")
    parser.add_argument("--games", type=int, default=20, help="deals seeds per pairing")
    parser.add_argument("--pair", action="append", default=[], help="A:B (default greedy:random)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    pairs = args.pair or ["greedy:random"]
    with ProcessPoolExecutor(args.jobs) as pool:
        for pair in pairs:
            a, b = pair.split(":")
            jobs = [
                (args.variant, a, b, args.seed * 10_000 + g, a_seat)
                for g in range(args.games)
                for a_seat in (0, 1)
            ]
            start = time.perf_counter()
            results = list(pool.map(play, jobs))
            wins = sum(1 for r in results if r[0] == 0)
            draws = sum(1 for r in results if r[0] == -1)
            losses = len(results) - wins - draws
            score = wins + draws / 2
            low, high = wilson(score, len(results))
            margin = sum(r[1] for r in results) / len(results)
            slowest = max(r[2] for r in results)
            print(
                f"{a} vs {b}: {wins}-{draws}-{losses} of {len(results)}, "
                f"score {score / len(results):.3f} [{low:.3f}, {high:.3f}], "
                f"margin {margin:+.0f}, {time.perf_counter() - start:.0f} s "
                f"(slowest game {slowest:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
