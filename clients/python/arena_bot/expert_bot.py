"""A strong heuristic Bezique player: card tracking, keep values, trick judgement, an exact endgame.

It plays every variant and decides in a few milliseconds, with no search and no randomness (so a
tournament of it against itself or other deterministic bots is reproducible). What it weighs:

- **Card tracking** (:class:`arena_bot.tracking.Knowledge`): the copies of each kind it holds, that
  were played, that each other seat has shown (declared, a turn-up taken, carte blanche), and those it
  cannot place (in the stock or another hand).
- **Keep values**: each card's worth in the combinations still possible for it, given what has been
  played and declared (marriages, the trump sequence, bezique and double bezique, four of a kind, the
  seven of trumps), with the chance of drawing the missing cards before the stock runs out; plus its
  worth for taking tricks later (aces, tens, trumps).
- **Tricks while the stock lasts**: a trick is worth its brisques and a declaring turn, the more the
  less stock is left; it wins a trick when what it gains (brisques, its own declarations, denying the
  other seat the declarations it may hold) is worth the card it spends. It leads the card whose
  expected worth is best: usually the one it least wants to keep, one the other seat is unlikely to
  beat when it has something to declare, and no brisque that the other seat can take.
- **Declaring**: the best declaration first, but a royal marriage before its sequence and a single
  bezique before the double while there is stock to do both (40 + 250, 40 + 500), and never a second
  single bezique that would spend the double's last undeclared cards; the seven of trumps exchanged
  for the turn-up; in Rubicon, the first marriage in the suit that makes the best trumps; carte
  blanche always shown.
- **Polish**: combinations come only from open cards, so a trick is worth the brisques it scores and
  what its scoring cards complete among the winner's open cards, less what they would give the
  other seat.
- **The last tricks**: with two seats every card is known once the stock is empty, and it plays them
  exactly (:class:`arena_bot.endgame.EndgameSolver`); with more seats, it wins cheaply and leads its
  sure winners.

This module is its policy (:class:`Expert`: declaring, trick play, the last tricks); what a holding
is worth, the keep values, threats and Polish gains it weighs, is :mod:`arena_bot.expert_evaluation`.

    python -m arena_bot.expert_bot
"""

from __future__ import annotations

from collections.abc import Sequence

# First, before the rules engine's modules: without the engine package installed (the SDK alone),
# this import fails with a message naming the package to install, not a bare missing module.
from arena_bot.engine import EngineBot

# isort: split

from arena.game import Action, Combo, GameState, Observation, Verb
from arena.game.cards import SEVEN, TEN, make_kind
from arena.game.declarations import B_LEVEL
from arena.game.variants import Family
from arena_bot.endgame import EndgameSolver
from arena_bot.expert_evaluation import (
    DEFAULT_WEIGHTS,
    SEQUENCE_RANKS,
    Evaluator,
    Holding,
    Weights,
)
from arena_bot.sdk import Clock, main_for
from arena_bot.tracking import Knowledge

# ---------------------------------------------------------------------- the player


def _beats(card: int, best: int, trump: int) -> bool:
    """Whether ``card`` takes the lead of a trick that ``best`` is winning."""
    if card >> 3 & 3 == best >> 3 & 3:
        return card & 7 > best & 7
    return card >> 3 & 3 == trump


def _winning(trick: Sequence[tuple[int, int]], trump: int) -> tuple[int, int]:
    """(seat, card) winning the trick so far."""
    best = trick[0]
    for entry in trick[1:]:
        if _beats(entry[1], best[1], trump):
            best = entry
    return best


def _brisques(cards: Sequence[int]) -> int:
    return sum(10 for c in cards if c & 7 >= TEN)


class Expert:
    """The decision procedure, on :class:`Knowledge` (a bot's view or a state inside a search)."""

    def __init__(self, weights: Weights = DEFAULT_WEIGHTS) -> None:
        self.w = weights
        self._solver: EndgameSolver | None = None

    # ------------------------------------------------------------------ entry points

    def choose(self, kn: Knowledge, legal: Sequence[Action]) -> Action:
        """The action to take (one of ``legal``)."""
        if len(legal) == 1:
            return legal[0]
        if kn.phase == "carte-blanche":
            # 000: carte blanche scores 50 and shows only a hand without court cards.
            return next((a for a in legal if a.verb is Verb.DECLARE), legal[0])
        ev = Evaluator(kn, self.w)
        if kn.phase == "declare":
            return self._declare(kn, ev, legal)
        plays = [a for a in legal if a.verb is Verb.PLAY]
        if not plays:
            return legal[0]
        if not kn.in_stock and not ev.polish:
            exact = self._exact(kn, plays)
            if exact is not None:
                return exact
            return self._last_tricks(kn, ev, plays)
        return max(self.score_plays(kn, ev, plays), key=lambda x: x[0])[1]

    # ------------------------------------------------------------------ declaring

    def _declare(self, kn: Knowledge, ev: Evaluator, legal: Sequence[Action]) -> Action:
        """The best declaration first; the seven of trumps exchanged; a royal marriage before its
        sequence and a single bezique before the double while there is stock to do both."""
        scores = kn.scores
        declarations = [a for a in legal if a.verb is Verb.DECLARE]
        exchanges = [a for a in legal if a.verb is Verb.EXCHANGE]
        done = next((a for a in legal if a.verb is Verb.DONE), legal[-1])
        split = kn.in_stock and ev.tricks_left > self.w.split_tricks
        combos = {Combo(a.combo) for a in declarations}
        best: Action | None = None
        best_value = 0.0
        for a in declarations:
            combo = Combo(a.combo)
            value = float(scores.get(combo, 0))
            if combo is Combo.SEVEN_OF_TRUMPS and exchanges:
                value = 0.0  # the exchange scores as much and takes the turn-up into the hand
            elif split and combo is Combo.SEQUENCE and Combo.ROYAL_MARRIAGE in combos:
                value = 0.0  # the royal marriage first (40), the sequence on a later trick (250)
            elif split and combo is Combo.DOUBLE_BEZIQUE and Combo.BEZIQUE in combos:
                value = 0.0  # a single bezique first (40), the double on a later trick (500)
            elif combo is Combo.BEZIQUE and self._double_open(kn, ev):
                # A second single bezique would leave no undeclared card for the double (002).
                value = 0.0
            elif combo is Combo.ROYAL_MARRIAGE and kn.trump < 0:
                value += self._trump_prospect(kn, a.refs[0] >> 3 & 3)  # Rubicon: it fixes trumps
            if value > best_value:
                best, best_value = a, value
        if best is not None:
            return best
        if exchanges:
            return exchanges[0]
        # Only a seven to declare, or a sequence or double bezique held back for later.
        fallback = [
            a
            for a in declarations
            if Combo(a.combo) is Combo.SEVEN_OF_TRUMPS or not kn.in_stock or ev.tricks_left <= 1
        ]
        return fallback[0] if fallback else done

    def _double_open(self, kn: Knowledge, ev: Evaluator) -> bool:
        """Whether the hand holds a declared single bezique and the cards for the double: two
        queens and two knaves of bezique that have not been in a double."""
        h = ev.holding
        if len(h.bq) < 3 or h.bq[2] < 2 or h.bj[2] < 2 or ev.rubicon:
            return False
        return any(m & B_LEVEL for m in kn.hand_marks)

    def _trump_prospect(self, kn: Knowledge, suit: int) -> float:
        """Rubicon: how good ``suit`` would be as trumps for this hand (its length and high cards,
        its sequence cards), a small tie-break between marriages that would fix trumps."""
        value = 0.0
        for r in kn.hand:
            kind = r & 31
            if kind >> 3 == suit:
                value += 1.0 + (kind & 7) * 0.2 + (1.0 if kind & 7 in SEQUENCE_RANKS else 0.0)
        return value

    # ------------------------------------------------------------------ the stock phase

    def score_plays(
        self, kn: Knowledge, ev: Evaluator, plays: Sequence[Action]
    ) -> list[tuple[float, Action]]:
        """Each play's estimated worth (points of the deal, relative to one another)."""
        if ev.polish:
            return [(self._polish_play(kn, ev, a.refs[0] & 31), a) for a in plays]
        marks_of = dict(zip(kn.hand, kn.hand_marks, strict=True))
        out = []
        for a in plays:
            ref = a.refs[0]
            kind = ref & 31
            rest = ev.holding.without(ev, kind, marks_of.get(ref, 0))
            loss = ev.potential(ev.holding, kind) - ev.potential(rest, kind) + ev.power(kind)
            if kn.trick:
                gain = self._follow_gain(kn, ev, kind, rest)
            else:
                gain = self._lead_gain(kn, ev, kind, rest)
            out.append((gain - loss, a))
        return out

    def _turn_value(self, ev: Evaluator, kind: int, rest: Holding) -> float:
        """What winning the trick's declaring turn is worth to the seat: declaring now what it
        would otherwise hope to declare later."""
        if not ev.tricks_left:
            return 0.0
        return ev.declarable(rest, kind) * ev.urgency

    def _follow_gain(self, kn: Knowledge, ev: Evaluator, kind: int, rest: Holding) -> float:
        trump = kn.trump
        seat_w, best = _winning(kn.trick, trump)
        cards = [c for _, c in kn.trick]
        pot = (_brisques(cards) + (10 if kind & 7 >= TEN else 0)) * ev.brisque / 10
        taker = seat_w if seat_w != kn.seat else (kn.seat + 1) % kn.seats
        their_turn = ev.threat(taker) * ev.urgency
        if seat_w in kn.partners and not _beats(kind, best & 31, trump):
            # The partner keeps the trick: its brisques stay on our side and we may declare too.
            return pot + self._turn_value(ev, kind, rest)
        if _beats(kind, best & 31, trump):
            hold = self._holds(kn, ev, kind, kn.seats - len(kn.trick) - 1)
            win = pot + self._turn_value(ev, kind, rest) + self.w.deny * their_turn
            win -= self.w.lead_cost
            return hold * win + (1 - hold) * (-pot - their_turn)
        return -pot - self.w.deny * their_turn

    def _holds(self, kn: Knowledge, ev: Evaluator, kind: int, to_play: int) -> float:
        """The chance that ``kind`` still wins the trick after ``to_play`` more seats."""
        if to_play <= 0:
            return 1.0
        count, kinds = ev.beaters(kind)
        unseen = kn.unseen_total or 1
        p_none = 1.0
        for i in range(1, to_play + 1):
            seat = (kn.seat + i) % kn.seats
            if seat in kn.partners:
                continue
            known = kn.known[seat]
            if any(known[k] for k in kinds):
                p_none *= 0.2  # it shows a card that beats this one
            else:
                share = min(1.0, kn.unknown_cards(seat) / unseen)
                p_none *= (1 - share) ** count
        return p_none

    def _lead_gain(self, kn: Knowledge, ev: Evaluator, kind: int, rest: Holding) -> float:
        brisque = ev.brisque if kind & 7 >= TEN else 0.0
        # The chance that another seat can beat the card, and that it will want to.
        can = 1.0 - self._holds(kn, ev, kind, kn.seats - 1)
        their_turn = ev.threat((kn.seat + 1) % kn.seats) * ev.urgency
        want = min(1.0, self.w.contest + (brisque + their_turn) / 20.0)
        p_lose = can * want
        win = brisque + self._turn_value(ev, kind, rest) + self.w.deny * their_turn
        win -= self.w.lead_cost
        lose = -brisque - their_turn
        return (1 - p_lose) * win + p_lose * lose

    def _polish_play(self, kn: Knowledge, ev: Evaluator, kind: int) -> float:
        """Polish: the worth of playing ``kind``: the trick's brisques (scored when won), the open
        cards its scoring cards give the winner, the seven of trumps, less the card's trick power."""
        me = kn.seat
        other = (me + 1) % kn.seats
        trump = kn.trump
        seven = make_kind(SEVEN, trump) if trump >= 0 else -1
        loss = ev.power(kind)
        if kn.trick:
            seat_w, best = _winning(kn.trick, trump)
            cards = [c & 31 for _, c in kn.trick] + [kind]
            value = float(_brisques(cards)) + 10.0 * cards.count(seven)
            mine = seat_w in kn.partners or _beats(kind, best & 31, trump)
            if kn.seats > 2 and mine:
                mine = self._holds(kn, ev, kind, kn.seats - len(kn.trick) - 1) > 0.5
            if mine:
                return value + ev.polish_gain(kn.open[me], cards) - loss
            taker = seat_w if seat_w != me else other
            return -value - ev.polish_gain(kn.open[taker], cards) - loss
        value = (10.0 if kind & 7 >= TEN else 0.0) + (10.0 if kind == seven else 0.0)
        can = 1.0 - self._holds(kn, ev, kind, kn.seats - 1)
        theirs = ev.polish_gain(kn.open[other], [kind])
        want = min(1.0, self.w.contest + (value + theirs) / 20.0)
        p_lose = can * want
        win = value + ev.polish_gain(kn.open[me], [kind])
        lose = -value - theirs - 5.0  # they take it with a card of their own, often a scoring one
        return (1 - p_lose) * win + p_lose * lose - loss

    # ------------------------------------------------------------------ the last tricks

    def _exact(self, kn: Knowledge, plays: Sequence[Action]) -> Action | None:
        """Two seats, stock empty, every card known: the exact best play."""
        if kn.seats != 2 or len(kn.trick) > 1:
            return None
        other = kn.other_hand()
        if other is None:
            return None
        mine = [r & 31 for r in kn.hand]
        solver = self.solver(kn.trump, kn.variant.last_trick, kn.family)
        if kn.trick:
            led = kn.trick[0][1] & 31
            kind, _ = solver.best_follow([*other, led], mine, led)
        else:
            kind, _ = solver.best_lead(mine, other)
        return next((a for a in plays if a.refs[0] & 31 == kind), None)

    def solver(self, trump: int, last_trick: int, family: Family) -> EndgameSolver:
        """The endgame solver for these rules (kept between decisions: one deal's last tricks
        share their positions)."""
        brisque = 1 if family is Family.RUBICON else 10  # Rubicon: brisques only break ties
        solver = self._solver
        if (
            solver is None
            or solver.trump != trump
            or solver.last_trick != last_trick
            or solver.brisque != brisque
        ):
            solver = self._solver = EndgameSolver(trump, last_trick, brisque)
        return solver

    def _last_tricks(self, kn: Knowledge, ev: Evaluator, plays: Sequence[Action]) -> Action:
        """More than two seats (or a gap in what the seat knows): win as cheaply as possible when
        the trick is worth it, lead a sure winner, else throw the cheapest card."""
        trump = kn.trump

        def cost(a: Action) -> float:
            return ev.power(a.refs[0] & 31) + (5.0 if a.refs[0] & 7 >= TEN else 0.0)

        if kn.trick:
            seat_w, best = _winning(kn.trick, trump)
            if seat_w in kn.partners:
                return min(plays, key=cost)
            winners = [a for a in plays if _beats(a.refs[0] & 31, best & 31, trump)]
            to_play = kn.seats - len(kn.trick) - 1
            sure = [a for a in winners if self._holds(kn, ev, a.refs[0] & 31, to_play) > 0.9]
            if sure:
                return min(sure, key=cost)
            if winners:
                return max(winners, key=lambda a: (a.refs[0] >> 3 & 3 == trump, a.refs[0] & 7))
            return min(plays, key=cost)
        sure = [a for a in plays if self._holds(kn, ev, a.refs[0] & 31, kn.seats - 1) > 0.95]
        if sure:
            return max(sure, key=lambda a: (a.refs[0] & 7 >= TEN, a.refs[0] & 7))
        return min(plays, key=cost)


# ---------------------------------------------------------------------- the bot


class ExpertBot(EngineBot):
    name = "expert"
    version = "1"

    def __init__(self, weights: Weights = DEFAULT_WEIGHTS) -> None:
        super().__init__()
        self.expert = Expert(weights)

    def decide(self, view: Observation, legal: list[Action], clock: Clock) -> Action:
        if not legal:
            raise ValueError("no legal action to choose from")
        if len(legal) == 1:
            return legal[0]
        kn = Knowledge.from_view(view)
        choice = self.expert.choose(kn, legal)
        return choice if choice in legal else legal[0]


def choose_in_state(expert: Expert, state: GameState) -> Action:
    """The expert's action for the seat to act in a full state (rollouts inside a search)."""
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal[0]
    return expert.choose(Knowledge.from_state(state, state.to_act), legal)


def main() -> None:
    main_for(ExpertBot())


if __name__ == "__main__":
    main()
