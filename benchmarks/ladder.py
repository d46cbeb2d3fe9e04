"""The strength ladder measured in-process, without the server: duplicate games between example bots.

    python benchmarks/ladder.py --deals 20 --pair greedy:random --pair search200:expert
    python benchmarks/ladder.py --playouts --ms 200 --deals 4

Each pairing plays ``--deals`` deal seeds, each twice with the seats swapped (a duplicate pair), on
``--jobs`` processes. Bot names: random, first, greedy, expert, searchN (the searching bot at N ms per
decision). Prints, per pairing, the first bot's games won, drawn and lost, its duplicate pairs won,
lost and tied (a pair is won on the sum of its two games' margins), its score share with a 95%
Wilson interval, the same for the pairs (a tied pair counts half), and the mean point margin per
game; ``--table`` adds the rows as a Markdown table.

``--playouts`` measures the searching bot instead: how many worlds (and rollouts: one per candidate
action in each world) it examines per decision at ``--ms``, playing ``--deals`` deals against the
expert. The last line printed is machine-readable.
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

from arena.game import Action, GameState, variant
from arena.game.observe import observe
from arena.tournament.summary import wilson
from arena_bot.engine import view_seed
from arena_bot.expert_bot import ExpertBot
from arena_bot.first_bot import FirstBot
from arena_bot.greedy_bot import GreedyBot
from arena_bot.random_bot import RandomBot
from arena_bot.sdk import Bot, Clock, GameStart
from arena_bot.search_bot import SearchBot

CLOCK = Clock(budget_ms=1000, bank_ms=10000)  # the ladder tournament's time control


def make(name: str, seed: int) -> Bot:
    if name == "random":
        return RandomBot(seed)
    if name == "first":
        return FirstBot()
    if name == "greedy":
        return GreedyBot()
    if name == "expert":
        return ExpertBot()
    if name.startswith("search"):
        return SearchBot(ms=int(name[6:] or 200))
    raise SystemExit(f"unknown bot {name!r} (random, first, greedy, expert, searchN)")


def play(args: tuple[str, str, str, int, int]) -> tuple[int, int, float, int]:
    """One game, bot ``a`` in seat ``a_seat``: (a's result: 0 win, 1 loss, -1 draw; a's margin;
    seconds; the deal seed)."""
    vname, a, b, seed, a_seat = args
    start = time.perf_counter()
    state = GameState.new(variant(vname), seed=seed, dealer=0)
    bots = [make(a, seed), make(b, seed + 1)]
    if a_seat == 1:
        bots.reverse()
    started = [False, False]
    while not state.is_terminal():
        seat = state.to_act
        view = observe(state, seat)
        if not started[seat]:  # as the SDK does before a bot's first decision of the game
            started[seat] = True
            bots[seat].on_game_start(GameStart("ladder", 0, seat, view_seed(view, 0), view))
        action = bots[seat].decide(view, list(state.legal_actions()), CLOCK)
        state.apply(action if not isinstance(action, str) else Action.parse(action))
    result = state.result()
    mine, theirs = result.scores[a_seat], result.scores[1 - a_seat]
    outcome = 0 if mine > theirs else 1 if mine < theirs else -1
    return outcome, mine - theirs, time.perf_counter() - start, seed


def ladder(args: argparse.Namespace) -> None:
    pairs = args.pair or ["greedy:random"]
    rows = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for pair in pairs:
            a, b = pair.split(":")
            jobs = [
                (args.variant, a, b, args.seed * 10_000 + g, a_seat)
                for g in range(args.deals)
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
            by_deal: dict[int, int] = {}
            for r in results:
                by_deal[r[3]] = by_deal.get(r[3], 0) + r[1]
            pw = sum(1 for m in by_deal.values() if m > 0)
            pl = sum(1 for m in by_deal.values() if m < 0)
            pt = len(by_deal) - pw - pl
            share = score / len(results)
            # The duplicate pairs as the unit: cards' luck cancels within a pair.
            pshare = (pw + pt / 2) / len(by_deal)
            plow, phigh = wilson(pw + pt / 2, len(by_deal))
            row = (a, b, len(results), wins, draws, losses, pw, pl, pt, share, low, high, margin)
            rows.append((*row, pshare, plow, phigh))
            print(
                f"{a} vs {b}: {wins}-{draws}-{losses} of {len(results)}, pairs {pw}-{pl}-{pt}, "
                f"score {share:.3f} [{low:.3f}, {high:.3f}], pair score {pshare:.3f} "
                f"[{plow:.3f}, {phigh:.3f}], margin {margin:+.0f}, "
                f"{time.perf_counter() - start:.0f} s (slowest game "
                f"{max(r[2] for r in results):.0f} s)",
                flush=True,
            )
    if args.table:
        print()
        print(
            "| entrant | opponent | games | W-D-L | game score (95% CI) | duplicate pairs W-L-T "
            "| pair score (95% CI) | margin a game |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for a, b, n, w, d, l_, pw, pl, pt, share, low, high, margin, ps, plo, phi in rows:
            print(
                f"| {a} | {b} | {n} | {w}-{d}-{l_} | {share:.0%} ({low:.0%}-{high:.0%}) | "
                f"{pw}-{pl}-{pt} | {ps:.0%} ({plo:.0%}-{phi:.0%}) | {margin:+.0f} |"
            )
    games_above = all(r[10] > 0.5 for r in rows)
    pairs_above = all(r[14] > 0.5 for r in rows)
    print(
        "pairings",
        len(rows),
        "games_above_half",
        int(games_above),
        "pairs_above_half",
        int(pairs_above),
    )


def playouts(args: argparse.Namespace) -> None:
    """Worlds and rollouts per searched decision of the searching bot, against the expert."""
    worlds: list[int] = []
    rollouts = 0
    searched = 0
    spent: list[float] = []
    for g in range(args.deals):
        state = GameState.new(variant(args.variant), seed=args.seed * 10_000 + g, dealer=0)
        bot = SearchBot(ms=args.ms)
        other = ExpertBot()
        while not state.is_terminal() and not state.deals:
            seat = state.to_act
            legal = list(state.legal_actions())
            start = time.perf_counter()
            action = (bot if seat == 0 else other).decide(observe(state, seat), legal, CLOCK)
            if seat == 0:
                spent.append(time.perf_counter() - start)
                if bot.last_mode == "search":
                    worlds.append(bot.last_worlds)
            state.apply(action)
        rollouts += bot.rollouts
        searched += bot.modes["search"]
    mean_worlds = statistics.mean(worlds) if worlds else 0.0
    print(
        f"searched decisions {searched}: worlds per decision mean {mean_worlds:.1f} "
        f"(median {statistics.median(worlds) if worlds else 0}), rollouts per decision "
        f"{rollouts / max(1, searched):.1f}; all decisions: mean {1000 * statistics.mean(spent):.0f} ms"
    )
    print(
        f"worlds_per_decision {mean_worlds:.1f} rollouts_per_decision {rollouts / max(1, searched):.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--variant", default="two-handed")
    parser.add_argument("--deals", type=int, default=20, help="deal seeds per pairing")
    parser.add_argument("--pair", action="append", default=[], help="A:B (default greedy:random)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--table", action="store_true", help="also print a Markdown table")
    parser.add_argument("--playouts", action="store_true", help="measure the searching bot")
    parser.add_argument("--ms", type=int, default=200, help="the searching bot's time (--playouts)")
    args = parser.parse_args()
    if args.playouts:
        playouts(args)
    else:
        ladder(args)


if __name__ == "__main__":
    main()
