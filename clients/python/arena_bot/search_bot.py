"""A searching bot: perfect-information Monte Carlo over sampled worlds, and an exact endgame.

At each decision with a choice, it samples worlds consistent with everything its seat has seen
(:class:`arena.game.sampling.Tracker`: its own dealt hand and draws, every card the opponent revealed,
the public log), and in each world tries every legal action on a copy of the state and plays the deal
out with a fast rollout policy for both seats (the best declaration when one is offered; the card the
seat least wants to keep, or a cheap winner, and a random card one time in five), every action's
rollout in a world drawing the same random numbers. It picks the action with the best mean of (its
deal points - the opponent's), unless the greedy bot's choice is within one standard error of it (then
the greedy choice: the search's noise never makes it weaker than greedy play). Once the stock is empty
in two-handed Bezique and Rubicon every card is known to a player who remembers, so it solves the last
tricks exactly (memoized minimax on brisques and the last trick) instead.

It stays within ``min(--ms, budget_ms - margin)`` per decision. Where sampling does not apply (three
or four seats, partners, consultation, a Rubicon deal in which the opponent showed carte blanche) it
plays as the greedy bot.

    python -m arena_bot.search_bot --ms 200
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence

from arena.game import Action, Combo, GameState, Observation, Verb, variant
from arena.game.cards import JACK, KING, QUEEN, SEVEN, TEN
from arena.game.events import CARTE_BLANCHE, DECLARE, PLAY
from arena.game.sampling import SampleError, Tracker
from arena.game.variants import Family, Variant
from arena_bot.greedy_bot import GreedyBot
from arena_bot.sdk import Bot, Clock, run

DEFAULT_MS = 200
MARGIN_MS = 60  # kept back from the referee's budget for transport and the interpreter
EPSILON = 0.2  # rollouts play a random card this often


class SearchBot(Bot):
    name = "search"
    version = "1"

    def __init__(
        self, ms: int = DEFAULT_MS, seed: int | None = None, confidence: float = 1.0
    ) -> None:
        self.ms = ms
        self.confidence = confidence  # standard errors by which search must beat the greedy choice
        self.rng = random.Random(seed if seed is not None else int(os.environ.get("BOT_SEED", "0")))
        self.greedy = GreedyBot()
        self._tracker: Tracker | None = None
        self._tracker_key: tuple[object, ...] = ()
        self._endgame = EndgameSolver(0, 10)
        # Statistics of the last decision (for tests and benchmarks).
        self.last_worlds = 0
        self.last_mode = ""
        self.modes: Counter[str] = Counter()  # decisions by how they were taken

    # ------------------------------------------------------------------ the decision

    def decide(self, view: Observation, legal: list[Action], clock: Clock) -> Action:
        start = time.perf_counter()
        if not legal:
            raise ValueError("no legal action to choose from")
        budget_ms = min(self.ms, clock.budget_ms - MARGIN_MS)
        deadline = start + max(1, budget_ms) / 1000
        tracker = self._track(view)
        self.last_worlds = 0
        mode, choice = self._choose(view, legal, tracker, deadline)
        if choice is None:
            choice = self.greedy.decide(view, legal, clock)
        self.last_mode = mode
        self.modes[mode] += 1
        return choice

    def _choose(
        self, view: Observation, legal: list[Action], tracker: Tracker | None, deadline: float
    ) -> tuple[str, Action | None]:
        """How the decision is taken ("forced", "endgame", "search"; "out-of-time" or "greedy" when
        the greedy bot decides) and the action (None: the greedy bot's)."""
        if len(legal) == 1:
            return "forced", legal[0]
        if tracker is None or not tracker.supported:
            return "greedy", None
        v = tracker.variant
        try:
            if (
                view.stock_size == 0
                and view.phase == "play"
                and v.family is not Family.POLISH
                and len(view.trick) <= 1
            ):
                return "endgame", self._solve_endgame(view, legal, v, tracker, deadline)
            choice = self._search(view, legal, tracker, deadline)
        except OutOfTime:
            return "out-of-time", None
        except SampleError:
            return "greedy", None
        return ("search", choice) if choice is not None else ("out-of-time", None)

    def _variant(self, view: Observation) -> Variant:
        return variant(view.variant, **dict(view.options))  # built once per variant

    def _track(self, view: Observation) -> Tracker | None:
        """The tracker of this seat and game (a new one when the match, variant or seat changes)."""
        seat = view.seat if view.seat is not None else view.to_act
        key = (view.variant, view.options, seat)
        if self._tracker is None or key != self._tracker_key:
            self._tracker_key = key
            try:
                self._tracker = Tracker(self._variant(view), seat)
            except SampleError:
                self._tracker = None
        if self._tracker is not None:
            self._tracker.update(view)
        return self._tracker

    # ------------------------------------------------------------------ Monte Carlo

    def _search(
        self, view: Observation, legal: list[Action], tracker: Tracker, deadline: float
    ) -> Action | None:
        seat = tracker.seat
        scores = tracker.variant.scores
        rng = self.rng
        n = len(legal)
        totals = [0.0] * n
        rows: list[list[float]] = []
        clock = time.perf_counter
        while clock() < deadline:
            world = tracker.sample(rng)
            # Common random numbers: every action's rollout in a world draws the same random stream.
            stream = rng.getrandbits(64)
            values = []
            for action in legal:
                if clock() >= deadline:
                    break
                s = world.clone()
                s.apply(action)
                values.append(rollout(s, seat, scores, random.Random(stream)))
            if len(values) < n:
                break
            for i, value in enumerate(values):
                totals[i] += value
            rows.append(values)
        worlds = len(rows)
        self.last_worlds = worlds
        if worlds == 0:
            return None
        best = max(range(n), key=lambda i: totals[i])
        prior = self.greedy.decide(view, legal, Clock(10**6, 10**6))
        if prior not in legal or worlds < 2:
            return legal[best]
        g = legal.index(prior)
        if g == best:
            return legal[best]
        # Leave the greedy choice only when the search is confident that another action is better.
        diffs = [row[best] - row[g] for row in rows]
        mean = sum(diffs) / worlds
        var = sum((d - mean) ** 2 for d in diffs) / (worlds - 1)
        if mean > self.confidence * (var / worlds) ** 0.5:
            return legal[best]
        return prior

    # ------------------------------------------------------------------ the last tricks

    def _solve_endgame(
        self, view: Observation, legal: list[Action], v: Variant, tracker: Tracker, deadline: float
    ) -> Action:
        world = tracker.sample(self.rng)
        seat = tracker.seat
        trump = world.trump
        if self._endgame.trump != trump or self._endgame.last_trick != v.last_trick:
            self._endgame = EndgameSolver(trump, v.last_trick)
        solver = self._endgame
        if len(solver.memo) > 1_000_000:
            solver.memo.clear()
        solver.deadline = deadline
        mine = tuple(sorted(c & 31 for c in world.hands[seat]))
        theirs = tuple(sorted(c & 31 for c in world.hands[1 - seat]))
        plays = [a for a in legal if a.verb is Verb.PLAY]
        if view.trick:
            led = view.trick[0][1] & 31
            leader = tuple(sorted((*theirs, led)))
            best = min(plays, key=lambda a: solver.after_follow(leader, mine, led, a.refs[0] & 31))
        else:
            best = max(plays, key=lambda a: solver.after_lead(mine, theirs, a.refs[0] & 31))
        return best


# ---------------------------------------------------------------------- rollouts


def best_declaration(legal: Sequence[Action], scores: Mapping[Combo, int]) -> Action:
    """The rollout's declaring policy: the best-scoring declaration, the exchange of the seven before
    declaring it, else done."""
    best: Action | None = None
    best_score = -1
    for a in legal:
        if a.verb is Verb.DECLARE:
            sc = scores.get(Combo(a.combo), 0)
            if sc > best_score:
                best, best_score = a, sc
        elif a.verb is Verb.EXCHANGE:
            sc = 10
            if sc >= best_score:
                best, best_score = a, sc
    return best if best is not None else legal[-1]  # "done" sorts last


def rollout(
    state: GameState,
    seat: int,
    scores: Mapping[Combo, int],
    rng: random.Random,
    epsilon: float = EPSILON,
) -> float:
    """Play to the end of the current deal; the seat's deal points minus the opponent's. Both seats
    play :func:`heuristic_play` (a random card with probability ``epsilon``) and declare the best."""
    deals = len(state.deals)
    rand = rng.random
    choice = rng.choice
    while len(state.deals) == deals and state.phase != 4:
        legal = state.legal_actions()
        phase = state.phase
        if phase == PLAY:
            if len(legal) == 1:
                state.apply(legal[0])
            elif rand() < epsilon:
                state.apply(choice(legal))
            else:
                state.apply(heuristic_play(state, legal))
        elif phase == DECLARE:
            state.apply(best_declaration(legal, scores))
        elif phase == CARTE_BLANCHE:
            state.apply(legal[0])
        else:
            break
    points = state.deals[-1].points if len(state.deals) > deals else state.deal_points
    return float(points[seat] - sum(points) + points[seat])


def heuristic_play(state: GameState, legal: list[Action]) -> Action:
    """A fast card choice from the state (both seats, in rollouts): in the stock, lead or throw the card
    the seat least wants to keep (low, not a trump, no brisque, no part of a combination) and take a
    trick holding a brisque cheaply; in the last tricks, win as cheaply as possible, else throw low."""
    seat = state.to_act
    hand = state.hands[seat]
    trump = state.trump
    present = 0
    for c in hand:
        present |= 1 << (c & 31)
    q, j = state.bezique_kinds
    trick = state.trick
    in_stock = state.in_stock_phase

    def keep(a: Action) -> int:
        k = a.refs[0] & 31
        rank = k & 7
        suit = k >> 3
        value = rank
        if rank >= TEN:
            value += 10
        if suit == trump:
            value += 6
        if in_stock:
            if rank in (KING, QUEEN):
                mate = k + 1 if rank == QUEEN else k - 1
                value += 4 if present >> mate & 1 else 2
            if k in (q, j):
                value += 6 if present >> (q + j - k) & 1 else 3
            if suit == trump and rank >= JACK:
                value += 3
            if rank == SEVEN and suit == trump and state.turn_up >= 0:
                value += 8
        return value

    if trick:
        led = trick[0]
        lsuit = led >> 3 & 3
        lrank = led & 7

        def beats(a: Action) -> bool:
            k = a.refs[0] & 31
            if k >> 3 == lsuit:
                return (k & 7) > lrank
            return k >> 3 == trump

        if not in_stock or lrank >= TEN:
            winners = [a for a in legal if beats(a)]
            if in_stock:
                winners = [a for a in winners if a.refs[0] & 7 < TEN]
            if winners:
                return min(winners, key=keep)
        return min(legal, key=keep)
    if not in_stock:
        return max(legal, key=lambda a: (a.refs[0] >> 3 & 3 == trump, a.refs[0] & 7))
    return min(legal, key=keep)


# ---------------------------------------------------------------------- the exact endgame

Hand = tuple[int, ...]


class OutOfTime(Exception):
    """The endgame search ran out of its time (its memo keeps what it solved)."""


def _remove(hand: Hand, kind: int) -> Hand:
    i = hand.index(kind)
    return hand[:i] + hand[i + 1 :]


class EndgameSolver:
    """Exact play of the last tricks of a two-seat deal, every card known: each seat must follow suit
    and win if able, else trump if able (RULES.md, the last eight tricks). Values are from the point
    of view of the leader: his brisques and last trick minus the follower's."""

    def __init__(self, trump: int, last_trick: int) -> None:
        self.trump = trump
        self.last_trick = last_trick
        self.memo: dict[tuple[Hand, Hand], int] = {}
        self.deadline = float("inf")  # perf_counter time at which a search gives up (OutOfTime)
        self._ticks = 0

    def follows(self, hand: Hand, led: int) -> list[int]:
        """The kinds the follower may play to the card led (distinct)."""
        suit = led >> 3
        same = [k for k in hand if k >> 3 == suit]
        if same:
            over = [k for k in same if k & 7 > led & 7]
            return sorted(set(over or same))
        trump = self.trump
        if trump >= 0:
            trumps = [k for k in hand if k >> 3 == trump]
            if trumps:
                return sorted(set(trumps))
        return sorted(set(hand))

    def follower_wins(self, led: int, card: int) -> bool:
        if card >> 3 == led >> 3:
            return card & 7 > led & 7
        return card >> 3 == self.trump

    def value(self, leader: Hand, follower: Hand) -> int:
        """The leader's points minus the follower's over the remaining tricks, both playing best."""
        if not leader:
            return 0
        key = (leader, follower)
        got = self.memo.get(key)
        if got is not None:
            return got
        self._ticks += 1
        if self._ticks & 255 == 0 and time.perf_counter() > self.deadline:
            raise OutOfTime
        best = -(10**9)
        for lead in sorted(set(leader)):
            v = self.after_lead(leader, follower, lead)
            if v > best:
                best = v
        self.memo[key] = best
        return best

    def after_lead(self, leader: Hand, follower: Hand, lead: int) -> int:
        """The leader's value after leading ``lead``, the follower answering best."""
        worst = 10**9
        for card in self.follows(follower, lead):
            v = self.after_follow(leader, follower, lead, card)
            if v < worst:
                worst = v
        return worst

    def after_follow(self, leader: Hand, follower: Hand, lead: int, card: int) -> int:
        """The leader's value once the trick is ``lead`` and ``card``."""
        rest_l = _remove(leader, lead)
        rest_f = _remove(follower, card)
        points = (10 if lead & 7 >= TEN else 0) + (10 if card & 7 >= TEN else 0)
        if not rest_l:
            points += self.last_trick
        if self.follower_wins(lead, card):
            return -points - self.value(rest_f, rest_l)
        return points + self.value(rest_l, rest_f)


def brute_force(trump: int, last_trick: int, leader: Hand, follower: Hand) -> int:
    """Plain minimax without memo (for tests): the leader's points minus the follower's."""
    solver = EndgameSolver(trump, last_trick)
    if not leader:
        return 0
    best = -(10**9)
    for lead in leader:
        worst = 10**9
        for card in solver.follows(follower, lead):
            rest_l = _remove(leader, lead)
            rest_f = _remove(follower, card)
            points = (10 if lead & 7 >= TEN else 0) + (10 if card & 7 >= TEN else 0)
            if not rest_l:
                points += last_trick
            if solver.follower_wins(lead, card):
                v = -points - brute_force(trump, last_trick, rest_f, rest_l)
            else:
                v = points + brute_force(trump, last_trick, rest_l, rest_f)
            worst = min(worst, v)
        best = max(best, worst)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description="Bezique Arena searching bot")
    parser.add_argument("--address", help="referee address (default: $ARENA_ADDRESS)")
    parser.add_argument("--token", help="seat token (default: $ARENA_TOKEN)")
    parser.add_argument("--ms", type=int, default=DEFAULT_MS, help="time per decision (ms)")
    args = parser.parse_args()
    try:
        run(SearchBot(ms=args.ms), args.address, args.token)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
