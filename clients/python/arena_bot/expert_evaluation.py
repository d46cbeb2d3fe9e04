"""The expert player's evaluation (:mod:`arena_bot.expert_bot` is its policy): what a holding is worth.

On the card tracking of :class:`arena_bot.tracking.Knowledge`, an :class:`Evaluator` values:

- **Keep values**: each card's worth in the combinations still possible for it, given what has been
  played and declared (marriages, the trump sequence, bezique and double bezique, four of a kind, the
  seven of trumps), with the chance of drawing the missing cards before the stock runs out; plus its
  worth for taking tricks later (aces, tens, trumps).
- **Threats**: the declarations another seat may hold, from the cards it has shown.
- **Polish**: what scoring cards complete among a seat's open cards.

The numbers of that judgement are :class:`Weights`. Pure and deterministic: no I/O, no randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from arena.game import Combo
from arena.game.cards import (
    ACE,
    JACK,
    KING,
    QUEEN,
    SEVEN,
    TEN,
    make_kind,
)
from arena.game.declarations import A_LEVEL, B_LEVEL, B_SHIFT, FOUR_MARK, SEVEN_MARK
from arena.game.variants import Family
from arena_bot.tracking import Knowledge

_FOUR_RANKS: Final = (
    (ACE, Combo.FOUR_ACES),
    (KING, Combo.FOUR_KINGS),
    (QUEEN, Combo.FOUR_QUEENS),
    (JACK, Combo.FOUR_KNAVES),
)
SEQUENCE_RANKS: Final = (ACE, TEN, KING, QUEEN, JACK)
_MARRIAGES: Final = tuple(
    (make_kind(KING, s), make_kind(QUEEN, s), frozenset((make_kind(KING, s), make_kind(QUEEN, s))))
    for s in range(4)
)
_SEQUENCES: Final = tuple(frozenset(make_kind(r, s) for r in SEQUENCE_RANKS) for s in range(4))
_FOURS: Final = {r: frozenset(make_kind(r, s) for s in range(4)) for r in (ACE, KING, QUEEN, JACK)}
_NONE: Final = (0,) * 32
_SEVEN_GROUP: Final = frozenset((-1,))
_BEZIQUE_LEVELS: Final = (
    Combo.BEZIQUE,
    Combo.DOUBLE_BEZIQUE,
    Combo.TRIPLE_BEZIQUE,
    Combo.QUADRUPLE_BEZIQUE,
)


# ---------------------------------------------------------------------- the weights


@dataclass(frozen=True, slots=True)
class Weights:
    """The expert's judgement in numbers (points of the deal)."""

    # Trick-taking worth of keeping a card (for later tricks and the last eight).
    ace: float = 9.0
    ten: float = 4.0
    king: float = 1.5
    queen: float = 1.0
    knave: float = 0.5
    trump: float = 3.0  # a trump, more for the higher ones
    trump_rank: float = 0.7  # per rank step of a trump
    # A combination held complete is declared at the next won trick, unless the stock runs out
    # first: its chance of being declared is 1 - decay ** (stock tricks left).
    decay: float = 0.8
    urgency_floor: float = 0.15  # the least a declaring turn now is worth of what it declares
    # A combination that needs cards drawn is discounted further: it must also be declared later.
    draw_discount: float = 0.75
    # How much of the other seat's likely declarations a declaring turn denies it is worth.
    deny: float = 1.0
    # Leading: the chance that the other seat wins a low lead it can beat, when it has nothing to
    # declare that we know of (it wins a lead with a brisque whenever it cheaply can).
    contest: float = 0.45
    lead_cost: float = 1.0  # being the leader of the next trick (the follower chooses)
    # Stock tricks left from which to declare the royal marriage before the sequence, the single
    # bezique before the double.
    split_tricks: int = 5
    # Polish: the share of the cards still out that a seat can expect to win, and how much of the
    # combinations the open cards may still complete counts now.
    polish_share: float = 0.45
    polish_later: float = 0.6


DEFAULT_WEIGHTS = Weights()


# ---------------------------------------------------------------------- combinations


Card = tuple[int, int]  # (kind, marks)


def _tail(u: int, m: int, p: float) -> float:
    """P(at least m successes in u trials of probability p)."""
    if m <= 0:
        return 1.0
    if m > u or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    # 1 - P(fewer than m)
    q = 1.0 - p
    term = q**u  # P(0)
    below = term
    for i in range(1, m):
        term *= (u - i + 1) / i * p / q
        below += term
    return max(0.0, 1.0 - below)


class Holding:
    """The cards of one seat as counts of what each may still take part in (from their marks)."""

    __slots__ = ("a0", "a1", "bj", "bq", "four", "sevens")

    def __init__(self, ev: Evaluator, cards: Sequence[Card]) -> None:
        packs = ev.kn.packs
        self.a0 = [0] * 32  # copies never married nor in a sequence
        self.a1 = [0] * 32  # copies not yet in a sequence
        self.bq = [0] * (packs + 1)  # bq[L]: queens of bezique below bezique level L
        self.bj = [0] * (packs + 1)  # the same for the knaves of bezique
        self.four = [0] * 8  # copies of each rank never in a four
        self.sevens = 0  # sevens of trumps that have not scored
        for kind, m in cards:
            self.add(ev, kind, m, 1)

    def add(self, ev: Evaluator, kind: int, m: int, n: int) -> None:
        if kind == ev.seven and not m & SEVEN_MARK:
            self.sevens += n
        if ev.rubicon:
            m = 0  # 004: a broken combination may be re-formed and scored again
        a = m & A_LEVEL
        if a == 0:
            self.a0[kind] += n
        if a < 2:
            self.a1[kind] += n
        if kind == ev.q or kind == ev.j:
            counts = self.bq if kind == ev.q else self.bj
            for level in range(((m & B_LEVEL) >> B_SHIFT) + 1, len(counts)):
                counts[level] += n
        if not m & FOUR_MARK:
            self.four[kind & 7] += n

    def without(self, ev: Evaluator, kind: int, m: int) -> Holding:
        h = Holding.__new__(Holding)
        h.a0 = self.a0[:]
        h.a1 = self.a1[:]
        h.bq = self.bq[:]
        h.bj = self.bj[:]
        h.four = self.four[:]
        h.sevens = self.sevens
        h.add(ev, kind, m, -1)
        return h


Combination = tuple[float, float, frozenset[int]]  # (score, chance it is held, its kinds)


class Evaluator:
    """The expert's judgements at one decision of one seat."""

    def __init__(self, kn: Knowledge, w: Weights = DEFAULT_WEIGHTS) -> None:
        self.kn = kn
        self.w = w
        self.scores = kn.scores
        self.trump = kn.trump
        self.q, self.j = kn.q, kn.j
        self.pair = frozenset((kn.q, kn.j))
        self.polish = kn.family is Family.POLISH
        self.rubicon = kn.family is Family.RUBICON
        ordinary = kn.family is Family.ORDINARY
        self.seven = make_kind(SEVEN, kn.trump) if ordinary and kn.trump >= 0 else -1
        self.seven_open = ordinary and kn.turn_up >= 0 and kn.in_stock
        # Rubicon counts brisques only to break a tie or to save a rubicon (006).
        self.brisque = 1.0 if self.rubicon else 10.0
        n = kn.seats
        # Stock tricks still followed by a declaring turn (the current one included while playing).
        self.tricks_left = kn.stock_size // n if kn.in_stock else 0
        unknown = kn.unseen_total
        self.p_draw = min(1.0, self.tricks_left / unknown) if unknown else 0.0
        self._tails: dict[tuple[int, int, float], float] = {}
        self._threats: dict[int, float] = {}
        self._beaters: dict[int, tuple[int, frozenset[int]]] = {}
        self.hand: list[Card] = list(zip((r & 31 for r in kn.hand), kn.hand_marks, strict=True))
        self.holding = Holding(self, self.hand)
        self.complete_factor = 1.0 - w.decay**self.tricks_left if self.tricks_left else 0.0
        self._hand_complete: list[tuple[float, frozenset[int]]] | None = None
        if kn.variant.declarations_per_trick == "one" and self.tricks_left:
            # One declaration scores per trick: a backlog of them needs as many won tricks.
            backlog = len(self.complete(self.holding))
            if backlog > 1:
                self.complete_factor = 1.0 - w.decay ** (self.tricks_left / backlog)
        self.urgency = max(w.urgency_floor, 1.0 - self.complete_factor)
        self.available: list[int] = []
        if self.polish:
            # Every card left will be won by one seat or the other.
            opened = [0] * 32
            for cards in kn.open:
                for kind, _ in cards:
                    opened[kind] += 1
            for _, c in kn.trick:
                opened[c & 31] += 1
            self.available = [max(0, kn.packs - opened[k]) for k in range(32)]

    # ------------------------------------------------------------------ probabilities

    def _have(self, held: int, need: int, unseen: int, p: float) -> float:
        """The chance of holding ``need`` copies, ``held`` in hand and each of ``unseen`` more
        coming with probability ``p``."""
        if held >= need:
            return 1.0
        if p <= 0.0:
            return 0.0
        key = (unseen, need - held, p)
        got = self._tails.get(key)
        if got is None:
            got = self._tails[key] = _tail(unseen, need - held, p)
        return got

    # ------------------------------------------------------------------ combinations

    def combos(
        self, h: Holding, p: float, unseen: Sequence[int], focus: int = -1
    ) -> list[Combination]:
        """Every combination the holding may still make, with the chance that its cards are all
        held, missing ones coming with probability ``p`` each from ``unseen``. With ``focus`` (a
        kind), only the combinations that kind can take part in."""
        scores = self.scores
        trump = self.trump
        packs = self.kn.packs
        reform = self.rubicon
        a0, a1 = h.a0, h.a1
        out: list[Combination] = []
        have = self._have
        suits: Sequence[int] = range(4) if focus < 0 else (focus >> 3,)
        frank = focus & 7 if focus >= 0 else -1
        # Marriages, one per pair of a king and queen of a suit never married.
        if focus < 0 or frank in (KING, QUEEN):
            royal = scores.get(Combo.ROYAL_MARRIAGE, 40)
            common = scores.get(Combo.MARRIAGE, 20)
            for suit in suits:
                k, q, kinds = _MARRIAGES[suit]
                hk, hq = a0[k], a0[q]
                if not (hk or hq) and p <= 0.0:
                    continue
                score = royal if suit == trump or (trump < 0 and reform) else common
                for i in range(1, min(packs, max(hk, hq) + 1) + 1):
                    pr = have(hk, i, unseen[k], p) * have(hq, i, unseen[q], p)
                    if pr <= 0.01:
                        break
                    out.append((score, pr, kinds))
        # Sequences: the trump suit (250); in Rubicon every suit (plain 150; any 250 before trumps).
        if focus < 0 or frank in SEQUENCE_RANKS:
            for suit in suits:
                if suit == trump or (trump < 0 and reform):
                    score = scores.get(Combo.SEQUENCE, 250)
                elif reform:
                    score = scores.get(Combo.PLAIN_SEQUENCE, 0)
                else:
                    continue
                kinds5 = _SEQUENCES[suit]
                top = min(packs, max(a1[x] for x in kinds5) + 1)
                for i in range(1, top + 1):
                    pr = 1.0
                    for x in kinds5:
                        pr *= have(a1[x], i, unseen[x], p)
                        if pr < 0.005:
                            break
                    if pr < 0.005:
                        break
                    out.append((score, pr, kinds5))
        # Bezique and its multiples (levels up to the packs).
        qk, jk = self.q, self.j
        if focus < 0 or focus in (qk, jk):
            pair = self.pair
            for level in range(1, packs + 1):
                pr = have(h.bq[level], level, unseen[qk], p) * have(
                    h.bj[level], level, unseen[jk], p
                )
                if pr <= 0.002:
                    break
                out.append((scores.get(_BEZIQUE_LEVELS[level - 1], 0), pr, pair))
        # Fours of a kind, whatever the suits; in Rubicon each copy beyond four lets a broken four
        # be re-formed and scored again.
        extra = packs if reform else 1
        for rank, combo in _FOUR_RANKS:
            if focus >= 0 and rank != frank:
                continue
            kinds4 = _FOURS[rank]
            held = h.four[rank]
            unseen_rank = 0 if p <= 0.0 else sum(unseen[x] for x in kinds4)
            for i in range(extra):
                pr = have(held, 4 + i, unseen_rank, p)
                if pr <= 0.005:
                    break
                out.append((scores.get(combo, 0), pr, kinds4))
        return out

    def potential(self, h: Holding, focus: int = -1) -> float:
        """What a holding is still worth in combinations declared later while the stock lasts;
        with ``focus`` (a kind), only in the combinations that kind can take part in."""
        if not self.tricks_left:
            return 0.0
        total = 0.0
        complete = self.complete_factor
        later = complete * self.w.draw_discount
        for score, pr, _ in self.combos(h, self.p_draw, self.kn.unseen, focus):
            total += score * (complete if pr >= 1.0 else pr * later)
        if self.seven_open and (focus < 0 or focus == self.seven):
            total += self.scores.get(Combo.SEVEN_OF_TRUMPS, 10) * complete * h.sevens
        return total

    def complete(self, h: Holding, focus: int = -1) -> list[tuple[float, frozenset[int]]]:
        """The combinations the holding could declare now: (score, kinds)."""
        return [(sc, ks) for sc, pr, ks in self.combos(h, 0.0, _NONE, focus) if sc > 0]

    def declarable(self, h: Holding, without: int = -1) -> float:
        """What a declaring turn now would score with the holding (the best declaration, and
        declarations of other cards where several are allowed); ``without``: the holding is this
        evaluator's hand less a card of that kind (computed from the hand's, faster)."""
        if self._hand_complete is None:
            self._hand_complete = self.complete(self.holding)
        if without >= 0:
            found = [c for c in self._hand_complete if without not in c[1]]
            found.extend(self.complete(h, without))
        else:
            found = list(self._hand_complete)
        if self.seven_open and h.sevens:
            found.append((self.scores.get(Combo.SEVEN_OF_TRUMPS, 10), _SEVEN_GROUP))
        if not found:
            return 0.0
        found.sort(key=lambda x: -x[0])
        if self.kn.variant.declarations_per_trick != "disjoint":
            return float(found[0][0])
        used: frozenset[int] = frozenset()
        total = 0.0
        for score, kinds in found:
            if not kinds & used:
                total += score
                used = used | kinds
        return total

    def threat(self, seat: int) -> float:
        """What ``seat`` may declare if it wins this trick: its combinations complete with the cards
        it is known to hold and those it may hold among the unseen."""
        got = self._threats.get(seat)
        if got is None:
            got = self._threats[seat] = self._threat(seat)
        return got

    def _threat(self, seat: int) -> float:
        kn = self.kn
        if not kn.in_stock and not self.polish:
            return 0.0
        unknown = kn.unknown_cards(seat)
        p = min(1.0, unknown / kn.unseen_total) if kn.unseen_total else 0.0
        h = Holding(self, kn.known_marks[seat])
        best = 0.0
        total = 0.0
        for score, pr, _ in self.combos(h, p, kn.unseen):
            v = score * pr
            total += v
            best = max(best, v)
        if self.seven_open:
            total += 10 * _tail(kn.unseen[self.seven], 1, p)
        # The chances overlap and one turn declares only so much: count the best in full and the
        # rest by half.
        return best + 0.5 * (total - best)

    # ------------------------------------------------------------------ Polish open cards

    def polish_gain(self, opened: Sequence[Card], new: Sequence[int]) -> float:
        """Polish: what the scoring cards ``new`` (kinds) are worth added to the open cards
        ``opened``: the combinations they complete now (declared at once, 000) and the change in
        what the open cards may still complete."""
        trump = self.trump
        scoring = [k for k in new if k & 7 >= JACK and (k & 7 != TEN or k >> 3 == trump)]
        if not scoring:
            return 0.0
        before = Holding(self, opened)
        after = Holding(self, [*opened, *((k, 0) for k in scoring)])
        avail = self.available
        p = self.w.polish_share
        gain = 0.0
        for h, sign in ((after, 1.0), (before, -1.0)):
            for sc, pr, _ in self.combos(h, p, avail):
                gain += sign * (sc if pr >= 1.0 else self.w.polish_later * sc * pr)
        return gain

    # ------------------------------------------------------------------ single cards

    def power(self, kind: int) -> float:
        """The worth of keeping a card for taking tricks later."""
        w = self.w
        rank = kind & 7
        value = 0.0
        if rank == ACE:
            value = w.ace
        elif rank == TEN:
            value = w.ten
        elif rank == KING:
            value = w.king
        elif rank == QUEEN:
            value = w.queen
        elif rank == JACK:
            value = w.knave
        if self.rubicon:
            value *= 0.2  # brisques hardly count: only the last trick (50) rewards taking tricks
        if kind >> 3 == self.trump:
            value += w.trump + w.trump_rank * rank
        return value

    def beaters(self, kind: int) -> tuple[int, frozenset[int]]:
        """How many unseen cards would beat ``kind`` led, and their kinds."""
        got = self._beaters.get(kind)
        if got is None:
            suit, rank = kind >> 3, kind & 7
            kinds = {make_kind(r, suit) for r in range(rank + 1, 8)}
            if self.trump >= 0 and suit != self.trump:
                kinds.update(make_kind(r, self.trump) for r in range(8))
            unseen = self.kn.unseen
            got = self._beaters[kind] = (sum(unseen[k] for k in kinds), frozenset(kinds))
        return got
