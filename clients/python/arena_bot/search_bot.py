"""A searching bot: the expert player, with Monte Carlo search at the end of the stock and an exact
endgame.

The expert player (:mod:`arena_bot.expert_bot`) is its prior and its rollout policy. While the stock
is long the bot plays the expert's choice at once: measured in duplicate games, searching there with
a few tricks of lookahead and the expert's own judgement as the value did not beat the expert, and
the time saved is worth more later. In the last tricks of the stock (LATE_TRICKS, two seats) the
hand each seat takes into the last eight and who leads them are decided, and search pays:

1. it samples worlds consistent with everything its seat has seen (:class:`arena.game.sampling.Tracker`
   replays the deal's public log once per decision; further worlds deal the unseen cards afresh,
   :func:`reshuffled`); on the last stock trick, with one face-down card left, it takes every world,
   weighted by the copies that allow it (:func:`enumerate_worlds`);
2. in each world it tries the expert's best few plays (CANDIDATES) on a copy of the state and plays
   the copy on with the expert at both seats, each deciding from its own seat's knowledge only, to
   the empty stock, where the last tricks are solved exactly (:class:`arena_bot.endgame.EndgameSolver`,
   with a table of positions shared by all the worlds); in Polish, whose last tricks still score
   declarations, to the end of the deal;
3. it plays the candidate with the best mean margin (its deal points minus the other seat's), but
   keeps the expert's choice unless another beats it by more than one standard error of the paired
   differences (all candidates meet the same worlds), or every world was examined.

Once the stock is empty in two-handed Bezique and Rubicon every card is known to a player who
remembers, and it plays the last tricks exactly, in a few milliseconds. Declarations, carte blanche
and every decision of the variants with more than two seats or with consultation are the expert's.

Time: ``--ms`` per decision (default 200). Decisions that take less (the expert's, forced plays, the
exact endgame) save the rest, and the late search may spend what was saved, up to LATE_BONUS times
``--ms`` more on one decision, so that over a game it stays within ``--ms`` a decision on average;
never more than the referee's budget less a margin. Its random choices are seeded from the SDK's
per-game seed (:func:`decision_seed`), but how many worlds it examines depends on the machine's
speed, so its play is not reproducible move for move (``max_worlds`` makes it so, for tests).

    python -m arena_bot.search_bot --ms 200
"""

from __future__ import annotations

import hashlib
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence

# First, before the rules engine's modules: without the engine package installed (the SDK alone),
# this import fails with a message naming the package to install, not a bare missing module.
from arena_bot.engine import EngineBot

# isort: split

from arena.game import Action, GameState, Observation, Verb
from arena.game.cards import ANY_COPY
from arena.game.events import OVER, PLAY
from arena.game.sampling import SampleError, Tracker
from arena.game.variants import Family
from arena_bot.endgame import OutOfTime
from arena_bot.expert_bot import Expert
from arena_bot.expert_evaluation import DEFAULT_WEIGHTS, Evaluator, Weights
from arena_bot.sdk import Clock, GameEnd, parser, run
from arena_bot.tracking import Knowledge

DEFAULT_MS = 200
MARGIN_MS = 60  # kept back from the referee's budget for transport and the interpreter
CANDIDATES = 4  # the expert's best few plays that the search compares
LATE_TRICKS = 3  # stock tricks left (or fewer) from which the bot searches
LATE_BONUS = 3  # a late decision may spend up to this many times --ms of saved time on top
SAVED_CAP = 10  # time saved is kept up to this many times --ms
ENUMERATE = 40  # on the last stock trick, every world is tried when there are at most this many


class SearchBot(EngineBot):
    name = "search"
    version = "2"

    def __init__(
        self,
        ms: int = DEFAULT_MS,
        seed: int | None = None,
        confidence: float = 1.0,
        candidates: int = CANDIDATES,
        late_tricks: int = LATE_TRICKS,
        late_bonus: float = LATE_BONUS,
        max_worlds: int = 0,
        weights: Weights = DEFAULT_WEIGHTS,
    ) -> None:
        super().__init__()
        self.ms = ms
        self.confidence = confidence  # standard errors by which search must beat the expert
        self.candidates = candidates
        self.late_tricks = late_tricks
        self.late_bonus = late_bonus
        self.max_worlds = max_worlds  # stop after this many worlds (0: only the clock stops it)
        self.expert = Expert(weights)
        self.rollout_expert = Expert(weights)
        self.seed = seed  # mixed into the game's seed (tests); None: the game's seed alone
        self._tracker: Tracker | None = None
        self._tracker_key: tuple[object, ...] = ()
        self._saved_ms = 0.0
        # Statistics (for tests and benchmarks).
        self.last_worlds = 0
        self.last_mode = ""
        self.modes: Counter[str] = Counter()  # decisions by how they were taken
        self.worlds: Counter[str] = Counter()  # worlds examined, by mode
        self.rollouts = 0

    # ------------------------------------------------------------------ the match

    def on_game_over(self, end: GameEnd) -> None:
        self._saved_ms = 0.0

    # ------------------------------------------------------------------ the decision

    def decide(self, view: Observation, legal: list[Action], clock: Clock) -> Action:
        start = time.perf_counter()
        if not legal:
            raise ValueError("no legal action to choose from")
        tracker = self._track(view)  # fed at every decision, forced ones too
        self.last_worlds = 0
        if len(legal) == 1:
            mode, choice = "forced", legal[0]
        else:
            kn = Knowledge.from_view(view)
            deadline = start + max(1.0, self.budget_ms(kn, clock)) / 1000
            mode, choice = self._choose(view, kn, legal, tracker, deadline)
        used_ms = (time.perf_counter() - start) * 1000
        self._saved_ms = min(SAVED_CAP * self.ms, max(0.0, self._saved_ms + self.ms - used_ms))
        self.last_mode = mode
        self.modes[mode] += 1
        self.worlds[mode] += self.last_worlds
        return choice if choice in legal else legal[0]

    def late(self, kn: Knowledge) -> bool:
        """Whether the decision is one the bot searches: two seats, the last stock tricks (or, in
        Polish, the last tricks too)."""
        if kn.seats != 2 or kn.phase != "play":
            return False
        if kn.in_stock:
            return kn.stock_size <= self.late_tricks * kn.seats
        return kn.family is Family.POLISH

    def budget_ms(self, kn: Knowledge, clock: Clock) -> float:
        """The time for this decision: --ms, and for a searched decision the time saved on quick
        decisions, up to ``late_bonus`` times --ms more; never beyond the referee's budget less a
        margin."""
        budget = float(self.ms)
        if self.late(kn):
            budget += min(self._saved_ms, self.late_bonus * self.ms)
        return min(budget, clock.budget_ms - MARGIN_MS)

    def _choose(
        self,
        view: Observation,
        kn: Knowledge,
        legal: list[Action],
        tracker: Tracker | None,
        deadline: float,
    ) -> tuple[str, Action]:
        """How the decision is taken ("endgame", "search", "expert") and the action."""
        expert = self.expert
        if kn.phase == "play" and not kn.in_stock and kn.family is not Family.POLISH:
            exact = kn.other_hand() is not None
            return ("endgame" if exact else "expert"), expert.choose(kn, legal)
        if not self.late(kn) or tracker is None or not tracker.supported:
            return "expert", expert.choose(kn, legal)
        plays = [a for a in legal if a.verb is Verb.PLAY]
        ev = Evaluator(kn, expert.w)
        ranked = sorted(expert.score_plays(kn, ev, plays), key=lambda x: -x[0])
        prior = ranked[0][1]
        candidates = [a for _, a in ranked[: self.candidates]]
        if len(candidates) < 2:
            return "expert", prior
        rng = random.Random(decision_seed(self.game_seed ^ (self.seed or 0), view))
        try:
            choice = self._search(candidates, prior, tracker, rng, deadline)
        except SampleError:
            return "expert", prior
        return "search", choice

    def _track(self, view: Observation) -> Tracker | None:
        """The tracker of this seat and game (a new one when the variant or seat changes)."""
        seat = view.seat if view.seat is not None else view.to_act
        key = (view.variant, view.options, seat)
        if self._tracker is None or key != self._tracker_key:
            self._tracker_key = key
            try:
                self._tracker = Tracker(Knowledge.variant_of(view), seat)
            except SampleError:
                self._tracker = None
        if self._tracker is not None:
            self._tracker.update(view)
        return self._tracker

    # ------------------------------------------------------------------ Monte Carlo

    def _search(
        self,
        candidates: Sequence[Action],
        prior: Action,
        tracker: Tracker,
        rng: random.Random,
        deadline: float,
    ) -> Action:
        seat = tracker.seat
        n = len(candidates)
        totals = [0.0] * n
        rows: list[tuple[float, list[float]]] = []  # (weight, each candidate's value)
        clock = time.perf_counter
        template = tracker.sample(rng)  # one replay of the deal's log per decision
        every = enumerate_worlds(template, seat, ENUMERATE)
        count = 0
        while clock() < deadline and not (self.max_worlds and count >= self.max_worlds):
            if every is not None:
                if count >= len(every):
                    break
                weight, world = every[count]
            else:
                weight, world = 1.0, reshuffled(template, seat, rng)
            count += 1
            values = []
            for action in candidates:
                s = world.clone()
                s.apply(action)
                try:
                    values.append(self._rollout(s, seat, deadline))
                except OutOfTime:
                    break
                self.rollouts += 1
            if len(values) < n:
                break
            for i, value in enumerate(values):
                totals[i] += weight * value
            rows.append((weight, values))
        worlds = len(rows)
        self.last_worlds = worlds
        if worlds < 2:
            return prior
        best = max(range(n), key=lambda i: totals[i])
        g = candidates.index(prior)
        if g == best:
            return prior
        if every is not None and worlds == len(every):
            return candidates[best]  # every world examined: no sampling error
        # Leave the expert's choice only when the search is confident that another is better.
        mass = sum(w for w, _ in rows)
        diffs = [(w, row[best] - row[g]) for w, row in rows]
        mean = sum(w * d for w, d in diffs) / mass
        var = sum(w * (d - mean) ** 2 for w, d in diffs) / mass * worlds / (worlds - 1)
        if mean > self.confidence * (var / worlds) ** 0.5:
            return candidates[best]
        return prior

    def _rollout(self, state: GameState, seat: int, deadline: float) -> float:
        """Play the copy on with the expert at both seats to the empty stock (then solve the last
        tricks exactly) or, in Polish, to the end of the deal; ``seat``'s points minus the other's."""
        deals = len(state.deals)
        expert = self.rollout_expert
        exact = state.variant.family is not Family.POLISH
        steps = 0
        while state.phase != OVER and len(state.deals) == deals:
            if exact and state.phase == PLAY and not state.trick and not state.in_stock_phase:
                break  # the last tricks: solved exactly below
            steps += 1
            if steps & 1 == 0 and time.perf_counter() > deadline:
                raise OutOfTime
            legal = state.legal_actions()
            if len(legal) == 1:
                state.apply(legal[0])
                continue
            state.apply(expert.choose(Knowledge.from_state(state, state.to_act), legal))
        other = 1 - seat
        if len(state.deals) > deals or state.phase == OVER:
            points = state.deals[-1].points if state.deals else state.deal_points
            return float(points[seat] - points[other])
        value = float(state.deal_points[seat] - state.deal_points[other])
        if state.variant.family is Family.ORDINARY:
            brisques = state.brisques()  # counted at the end of the deal (002)
            value += brisques[seat] - brisques[other]
        leader = state.to_act
        solver = expert.solver(state.trump, state.variant.last_trick, state.variant.family)
        solver.deadline = deadline
        v = solver.value(
            [c & 31 for c in state.hands[leader]], [c & 31 for c in state.hands[1 - leader]]
        )
        return value + (v if leader == seat else -v)


def decision_seed(game_seed: int, view: Observation) -> int:
    """A seed for one decision's random choices: the game's seed (the SDK's, set by
    :meth:`EngineBot.on_game_start`, so the same deal gives the same seeds in every run) mixed with the
    observation's content (deal, hand, what has been played), so each decision draws other worlds."""
    h = hashlib.blake2b(digest_size=8)
    h.update(f"{game_seed}\x00{view.seat}\x00{view.deal}\x00{view.phase}".encode())
    h.update(f"\x00{view.stock_size}\x00{len(view.log)}\x00".encode())
    h.update(bytes(r & 0xFF for r in view.hand))
    h.update(bytes(c & 0xFF for _, c in view.trick))
    return int.from_bytes(h.digest(), "big")


def reshuffled(template: GameState, seat: int, rng: random.Random) -> GameState:
    """Another world like ``template`` for ``seat``: the cards it cannot see (the other hands'
    hidden cards and the face-down stock) dealt anew. Hidden cards have no identity in the engine
    (kind codes in hands, kinds in the stock), so this is a uniform draw of the same worlds that
    :meth:`Tracker.sample` draws, without replaying the deal's log."""
    world = template.clone()
    hidden: list[int] = []
    slots: list[tuple[int, int]] = []
    for s, hand in enumerate(world.hands):
        if s == seat:
            continue
        for i, c in enumerate(hand):
            if c >= ANY_COPY:
                hidden.append(c - ANY_COPY)
                slots.append((s, i))
    stock = world.stock
    pos = world.stock_pos
    hidden.extend(stock[pos:])
    rng.shuffle(hidden)
    for (s, i), kind in zip(slots, hidden, strict=False):
        world.hands[s][i] = ANY_COPY + kind
    if pos < len(stock):
        world.stock = stock[:pos] + hidden[len(slots) :]
    world.hands_changed()
    return world


def enumerate_worlds(
    template: GameState, seat: int, limit: int
) -> list[tuple[float, GameState]] | None:
    """Every world for ``seat`` when at most one or two face-down stock cards are left: each
    distinct way of filling them (the other hand holds the rest of the unseen cards), weighted by
    how many copies allow it; None when there are more than ``limit`` or more face-down cards."""
    stock = template.stock
    pos = template.stock_pos
    hidden_stock = len(stock) - pos
    if not 1 <= hidden_stock <= 2 or template.variant.seats != 2:
        return None
    other = 1 - seat
    pool: dict[int, int] = {}
    for c in template.hands[other]:
        if c >= ANY_COPY:
            pool[c - ANY_COPY] = pool.get(c - ANY_COPY, 0) + 1
    for k in stock[pos:]:
        pool[k] = pool.get(k, 0) + 1
    fills: list[tuple[float, tuple[int, ...]]] = []
    for a, na in pool.items():
        if hidden_stock == 1:
            fills.append((float(na), (a,)))
            continue
        for b, nb in pool.items():
            n = nb - (1 if b == a else 0)
            if n > 0:
                fills.append((float(na * n), (a, b)))
    if len(fills) > limit:
        return None
    worlds = []
    for weight, top in fills:
        rest = dict(pool)
        for k in top:
            rest[k] -= 1
        world = template.clone()
        hand = [c for c in world.hands[other] if c < ANY_COPY]
        hand.extend(ANY_COPY + k for k, n in rest.items() for _ in range(n))
        world.hands[other] = hand
        world.stock = stock[:pos] + list(top)
        world.hands_changed()
        worlds.append((weight, world))
    return worlds


def main() -> None:
    bot = SearchBot()
    if not sys.argv[1:]:  # a bot the arena starts: nothing to parse (argparse is not even imported)
        run(bot, "", "")  # "": from the environment; --ms at its default
        return
    options = parser(bot)
    options.add_argument("--ms", type=int, default=DEFAULT_MS, help="time per decision (ms)")
    args = options.parse_args()
    if args.ms < 1:
        options.error(f"--ms must be a positive number of milliseconds, got {args.ms}")
    bot.ms = args.ms
    run(bot, args.address or "", args.token or "")  # "": not given, so from the environment


if __name__ == "__main__":
    main()
