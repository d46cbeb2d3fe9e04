"""Sampling a full game state consistent with what one seat knows (determinization, for search).

Hidden cards have no identity in the engine, so a *world* consistent with a seat's knowledge is a deck
order for the current deal that

- gives the seat exactly the cards it was dealt and each card it drew, in the order it drew them;
- gives every other seat each card it revealed (played, declared, exchanged) before it revealed it;
- puts random unseen kinds in every other slot (the other hands, the rest of the stock);

with the deal's public actions replayed on it. A :class:`Tracker` is fed the seat's view at each of its
decisions (it must see every decision of the deal from the first, as a bot does); :meth:`Tracker.sample`
then returns a :class:`GameState` positioned exactly at the current decision, whose ``observe(state,
seat)`` shows the seat's hand and every public fact of the deal as the real game does, and whose
``legal_actions()`` are the real ones. Scores of earlier deals are carried over as totals; earlier
deals themselves are not replayed (their log is not part of the sampled state).

Two-seat variants without partners are supported (two-handed with its options, Polish, Rubicon). A
Rubicon deal in which another seat showed carte blanche is not (its shown hand would constrain the deal
in ways this sampler does not model): :attr:`Tracker.supported` is then False.

    >>> tracker = Tracker(variant("two-handed"), seat=0)
    >>> tracker.update(view)            # at every decision of the seat
    >>> world = tracker.sample(random.Random(1))
    >>> world.to_act == view.to_act
    True
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.game.actions import DONE, PLAY_ACTIONS, Action, Combo, Verb
from arena.game.cards import ANY_COPY, parse_card, parse_kind
from arena.game.events import CARTE_BLANCHE, DECLARE, PHASE_NAMES, event_text, event_texts
from arena.game.observe import Observation
from arena.game.state import GameState
from arena.game.variants import Variant


class SampleError(Exception):
    """The seat's history cannot be turned into a consistent world (unsupported or inconsistent)."""


# ---------------------------------------------------------------------- the public log, parsed

_DEAL = re.compile(r"deal (\d+): seat (\d+) deals(?:, turn-up (\S+))?$")
_PLAY = re.compile(r"seat (\d+) plays (\S+)$")
_TRICK = re.compile(r"seat (\d+) wins trick (\d+)$")
_DECLARE = re.compile(r"seat (\d+) declares (\S+) (.*) for (\d+)$")
_DECLARE_BARE = re.compile(r"seat (\d+) declares (\S+) for (\d+)$")
_EXCHANGE = re.compile(r"seat (\d+) exchanges (\S+) for the turn-up (\S+)$")
_TURN_UP = re.compile(r"seat (\d+) draws the turn-up (\S+)$")
_CARTE = re.compile(r"seat (\d+) shows carte blanche:(.*)$")

PLAY_EV, TRICK_EV, DECLARE_EV, EXCHANGE_EV, TURN_UP_EV, CARTE_EV = range(6)


@dataclass(frozen=True, slots=True)
class Event:
    """One public event of the deal that matters for replay: kind, seat, cards (physical), combo."""

    kind: int
    seat: int
    cards: tuple[int, ...] = ()
    combo: int = 0
    text: str = ""


def parse_event(text: str) -> Event | None:
    """The replay-relevant content of one log text; None for scores and trump fixing."""
    if m := _PLAY.match(text):
        return Event(PLAY_EV, int(m[1]), (parse_card(m[2]),), text=text)
    if m := _TRICK.match(text):
        return Event(TRICK_EV, int(m[1]), (), int(m[2]), text=text)
    if m := _DECLARE.match(text):
        cards = tuple(parse_card(w) for w in m[3].split())
        return Event(DECLARE_EV, int(m[1]), cards, int(Combo.parse(m[2])), text=text)
    if m := _DECLARE_BARE.match(text):
        return Event(DECLARE_EV, int(m[1]), (), int(Combo.parse(m[2])), text=text)
    if m := _EXCHANGE.match(text):
        return Event(EXCHANGE_EV, int(m[1]), (parse_card(m[2]), parse_card(m[3])), text=text)
    if m := _TURN_UP.match(text):
        return Event(TURN_UP_EV, int(m[1]), (parse_card(m[2]),), text=text)
    if m := _CARTE.match(text):
        kinds = tuple(parse_kind(w) for w in m[2].split())
        return Event(CARTE_EV, int(m[1]), kinds, text=text)
    return None


def deal_start(log: Sequence[str]) -> int:
    """Index in the log of the current deal's first entry ("deal N: ...")."""
    for i in range(len(log) - 1, -1, -1):
        if log[i].startswith("deal "):
            return i
    raise SampleError("the log holds no deal")


# ---------------------------------------------------------------------- the tracker


@dataclass(slots=True)
class _Snapshot:
    log_len: int  # entries of the deal's log seen at this decision
    hand: Counter[int]  # kinds in hand


@dataclass(slots=True)
class _DealKnowledge:
    """What the seat knows privately about the current deal."""

    game_key: tuple[str, ...]  # the log's first entries: a new game changes them
    start: int  # index of the deal's first log entry in the game's log
    snapshots: list[_Snapshot] = field(default_factory=list)


class Tracker:
    """Follows one seat through a game, decision by decision, and samples consistent worlds."""

    def __init__(self, variant: Variant, seat: int) -> None:
        if variant.seats != 2 or variant.partnerships or variant.team_sizes:
            raise SampleError(f"sampling supports two seats without partners, not {variant.name}")
        self.variant = variant
        self.seat = seat
        self._deal: _DealKnowledge | None = None
        self._view: Observation | None = None
        self._broken = ""
        self._plan: _Plan | None = None

    # ------------------------------------------------------------------ feeding

    def update(self, view: Observation) -> None:
        """Record the seat's view at one of its decisions (call at every decision, forced ones too)."""
        if view.seat != self.seat:
            raise ValueError(
                f"the tracker follows seat {self.seat}, got a view of seat {view.seat}"
            )
        log = view.log
        start = deal_start(log)
        key = tuple(log[:1])
        d = self._deal
        if d is None or d.game_key != key or d.start != start or len(log) < self._last_len():
            d = self._deal = _DealKnowledge(key, start)
            self._broken = ""
        d.snapshots.append(_Snapshot(len(log) - start, Counter(r & 31 for r in view.hand)))
        self._view = view
        self._plan = None

    def _last_len(self) -> int:
        d = self._deal
        if d is None or not d.snapshots:
            return 0
        return d.start + d.snapshots[-1].log_len

    @property
    def supported(self) -> bool:
        """Whether worlds can be sampled at the current decision."""
        if self._view is None:
            return False
        try:
            self._prepare()
        except SampleError as exc:
            self._broken = str(exc)
            return False
        return True

    @property
    def reason(self) -> str:
        """Why sampling is not supported (empty when it is)."""
        return self._broken

    # ------------------------------------------------------------------ sampling

    def sample(self, rng: random.Random, check: bool = False) -> GameState:
        """A full state consistent with the seat's knowledge, at its current decision. With ``check``
        the replayed public log is compared with the real one entry by entry."""
        plan = self._prepare()
        return plan.sample(rng, check)

    def _prepare(self) -> _Plan:
        if self._plan is None:
            if self._deal is None or self._view is None:
                raise SampleError("no decision seen yet")
            self._plan = _Plan.build(self.variant, self.seat, self._view, self._deal)
        return self._plan


# ---------------------------------------------------------------------- the plan of one decision


@dataclass(slots=True)
class _Plan:
    """Everything fixed at one decision; each sample draws the free slots anew."""

    variant: Variant
    seat: int
    view: Observation
    dealer: int
    events: list[Event]
    texts: tuple[str, ...]  # the deal's log entries
    deck: list[int]  # fixed kinds, -1 where free
    # The other seat's hidden slots, each with the event index from which its card is in hand.
    other_slots: list[tuple[int, int]]
    # The other seat's revelations: (event index, kind), in order.
    reveals: list[tuple[int, int]]
    unseen: Counter[int]  # kinds for the free slots (before the revelations are placed)
    totals: list[int]

    @classmethod
    def build(cls, v: Variant, seat: int, view: Observation, d: _DealKnowledge) -> _Plan:
        texts = view.log[d.start :]
        head = _DEAL.match(texts[0])
        if head is None:
            raise SampleError(f"unexpected deal line {texts[0]!r}")
        dealer = int(head[2])
        turn_up = parse_card(head[3]) if head[3] else -1
        events = [e for e in (parse_event(t) for t in texts[1:]) if e is not None]
        other = 1 - seat
        if any(e.kind == CARTE_EV and e.seat == other for e in events):
            raise SampleError("the other seat showed carte blanche")
        # Event indices are positions in ``events``; a log position maps to the first event at or after.
        log_to_event = []
        count = 0
        for text in texts[1:]:
            log_to_event.append(count)
            if parse_event(text) is not None:
                count += 1
        log_to_event.append(count)

        def event_at(log_len: int) -> int:
            return log_to_event[max(0, min(len(log_to_event) - 1, log_len - 1))]

        # ---- my dealt hand and my hidden draws, from the hand snapshots
        snaps = d.snapshots
        first = snaps[0]
        before = events[: event_at(first.log_len)]
        if any(e.kind == TRICK_EV or e.seat == seat for e in before):
            raise SampleError("the tracker joined the deal after it began")
        dealt = Counter(first.hand)
        draws: list[int] = []
        for a, b in itertools.pairwise(snaps):
            expected = Counter(a.hand)
            for e in events[event_at(a.log_len) : event_at(b.log_len)]:
                if e.seat != seat:
                    continue
                if e.kind == PLAY_EV:
                    expected[e.cards[0] & 31] -= 1
                elif e.kind == EXCHANGE_EV and v.family.value != "polish":
                    expected[e.cards[0] & 31] -= 1
                    expected[e.cards[1] & 31] += 1
                elif e.kind == TURN_UP_EV:
                    expected[e.cards[0] & 31] += 1
            new = Counter(b.hand)
            new.subtract(expected)
            if any(n < 0 for n in new.values()):
                raise SampleError("the hand lost a card the log does not show")
            got = sorted(new.elements())
            if len(got) > 1:
                raise SampleError("more than one hidden draw between two decisions")
            draws.extend(got)
        if sum(dealt.values()) != v.hand_size:
            raise SampleError("the first decision's hand is not a dealt hand")

        # ---- deck positions
        n = 2
        deck = [-1] * v.deck_size
        first_seat = (dealer + 1) % n
        pos = 0
        dealt_pos: list[list[int]] = [[], []]
        for packet in v.deal_packets:
            for i in range(n):
                s = (first_seat + i) % n
                dealt_pos[s].extend(range(pos, pos + packet))
                pos += packet
        if v.turn_up:
            deck[pos] = turn_up & 31
            pos += 1
        stock0 = pos
        stock_len = v.deck_size - stock0
        mine = list(dealt.elements())
        rng0 = random.Random(0)
        rng0.shuffle(mine)
        for p, k in zip(dealt_pos[seat], mine, strict=True):
            deck[p] = k
        # Stock tricks: winner draws slot 2t, the other 2t+1 (the turn-up comes after the stock).
        winners = [e.seat for e in events if e.kind == TRICK_EV]
        trick_event = [i for i, e in enumerate(events) if e.kind == TRICK_EV]
        stock_tricks = -(-stock_len // n)  # the last stock trick may draw the turn-up
        if len(draws) > min(len(winners), stock_tricks):
            raise SampleError("more hidden draws than stock tricks")
        for t, k in enumerate(draws):
            p = stock0 + n * t + (0 if winners[t] == seat else 1)
            if p >= v.deck_size:
                raise SampleError("a hidden draw where the turn-up was drawn")
            deck[p] = k
        drawn_up = any(e.kind == TURN_UP_EV and e.seat == seat for e in events)
        draws_done = len(draws) + (1 if drawn_up else 0)
        # The other seat's hidden slots and the event from which each card is in its hand.
        other_slots = [(p, -1) for p in dealt_pos[other]]
        for t in range(min(draws_done, len(winners))):
            p = stock0 + n * t + (0 if winners[t] == other else 1)
            if p >= v.deck_size:
                continue  # it drew the turn-up: a public card
            when = len(events)
            for j in range(trick_event[t] + 1, len(events)):
                if events[j].kind == PLAY_EV:
                    when = j
                    break
            other_slots.append((p, when))
        # The other seat's revelations: cards it shows that were never public in this deal.
        seen = {turn_up} if turn_up >= 0 else set()
        reveals: list[tuple[int, int]] = []
        for i, e in enumerate(events):
            if e.kind in (TRICK_EV, CARTE_EV):
                continue
            cards = e.cards[:1] if e.kind == EXCHANGE_EV else e.cards
            for c in cards:
                if c not in seen and e.seat == other:
                    reveals.append((i, c & 31))
                seen.add(c)
            seen.update(e.cards)
        unseen: Counter[int] = Counter({k: v.packs for k in range(32)})
        for k in deck:
            if k >= 0:
                unseen[k] -= 1
        for _, k in reveals:
            unseen[k] -= 1
        if any(c < 0 for c in unseen.values()):
            raise SampleError("more copies of a kind than the packs hold")
        totals = [si.total - si.deal_points for si in view.seats]
        return cls(v, seat, view, dealer, events, texts, deck, other_slots, reveals, unseen, totals)

    def sample(self, rng: random.Random, check: bool = False) -> GameState:
        deck = self.deck[:]
        # Place the other seat's revelations, in order, each in a slot it held by then.
        free = list(self.other_slots)
        rng.shuffle(free)
        for when, kind in self.reveals:
            for i, (p, got) in enumerate(free):
                if got <= when:
                    deck[p] = kind
                    free.pop(i)
                    break
            else:
                raise SampleError("no slot for a card the other seat revealed")
        rest = list(self.unseen.elements())
        rng.shuffle(rest)
        it = iter(rest)
        for p in range(len(deck)):
            if deck[p] < 0:
                deck[p] = next(it)
        return self._replay(deck, check)

    def _replay(self, deck: list[int], check: bool) -> GameState:
        v = self.variant
        view = self.view
        state = GameState.new(v, seed=0, dealer=self.dealer, decks=[deck])
        state.totals = self.totals[:]
        state.deal_index = view.deal
        ev0 = state.log[0]
        state.log[0] = (ev0[0], ev0[1], view.deal, *ev0[3:])
        for e in self.events:
            if e.kind in (TRICK_EV, TURN_UP_EV):
                continue
            # "done" is never logged: a declaring turn (or carte blanche) with no logged act ends.
            while state.phase in (DECLARE, CARTE_BLANCHE) and (
                e.kind == PLAY_EV or state.to_act != e.seat
            ):
                state.apply(DONE)
            if state.to_act != e.seat:
                raise SampleError(f"replay: seat {state.to_act} to act before {e.text!r}")
            state.apply(self._action(state, e))
        me = self.seat
        want = view.phase
        while state.phase in (DECLARE, CARTE_BLANCHE) and not (
            state.to_act == me and PHASE_NAMES[state.phase] == want
        ):
            state.apply(DONE)
        if state.to_act != view.to_act or PHASE_NAMES[state.phase] != want:
            raise SampleError("replay did not reach the current decision")
        if check:
            got = event_texts(state.log)
            if got != self.texts:
                raise SampleError("replayed log differs from the real one")
        return state

    def _action(self, state: GameState, e: Event) -> Action:
        legal = state.legal_actions()
        if e.kind == PLAY_EV:
            c = e.cards[0]
            hand = state.hands[e.seat]
            if c in hand and PLAY_ACTIONS[c] in legal:
                return PLAY_ACTIONS[c]
            a = PLAY_ACTIONS[ANY_COPY + (c & 31)]
            if a in legal:
                return a
            raise SampleError(f"replay: {e.text!r} is not legal")
        if e.kind == CARTE_EV:
            cands = [a for a in legal if a.verb is Verb.DECLARE]
        elif e.kind == EXCHANGE_EV:
            cands = [a for a in legal if a.verb is Verb.EXCHANGE]
        else:
            kinds = sorted(c & 31 for c in e.cards)
            cands = [
                a
                for a in legal
                if a.verb is Verb.DECLARE
                and a.combo == e.combo
                and sorted(r & 31 for r in a.refs) == kinds
            ]
        if len(cands) == 1:
            return cands[0]
        for a in cands:  # copies of a kind differ: the one that names the logged cards
            trial = state.clone()
            n = len(trial.log)
            trial.apply(a)
            if any(event_text(x) == e.text for x in trial.log[n:]):
                return a
        raise SampleError(f"replay: no legal action gives {e.text!r}")


def sample_world(
    variant: Variant, seat: int, views: Sequence[Observation], rng: random.Random
) -> GameState:
    """One consistent world from the seat's views at each of its decisions of the current deal (the
    last view is the current decision)."""
    tracker = Tracker(variant, seat)
    for view in views:
        tracker.update(view)
    return tracker.sample(rng)


__all__ = ["Event", "SampleError", "Tracker", "parse_event", "sample_world"]
