"""Card tracking: what one seat knows about where every card of the deal is.

A seat that remembers the public log knows, for each kind of card, how many copies it holds, how many
were played to tricks, how many each other seat is known to hold (cards it declared and has not
played, a turn-up it took, a carte blanche it showed) and so how many are *unseen*: in the stock or in
another hand, it cannot tell which. :class:`Knowledge` holds these counts for one decision; it is built
from the seat's observation and public log (:meth:`Knowledge.from_view`, what a bot has) or from a full
game state (:meth:`Knowledge.from_state`, for rollouts inside a search, where it must be cheap), and
both give the same counts for the same position.

Marks (which declarations a card already took part in, see :mod:`arena.game.declarations`) decide
which combinations a card may still join; for a seat's declared cards they are on the table, for
Polish open cards they are replayed from the log's declarations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from arena.game import Combo, GameState, Observation, variant
from arena.game.cards import (
    ANY_COPY,
    CLUBS,
    DIAMONDS,
    HEARTS,
    JACK,
    QUEEN,
    SEVEN,
    SPADES,
    SUIT_CHARS,
    make_kind,
    parse_card,
    parse_kind,
)
from arena.game.declarations import COMBO_MARKS, SEVEN_MARK, combo_class_level, with_level
from arena.game.events import EV_CARTE_BLANCHE, EV_PLAY, PHASE_NAMES
from arena.game.variants import Family, Variant

_BEZIQUE_FIXED: Final = (make_kind(QUEEN, SPADES), make_kind(JACK, DIAMONDS))
_BEZIQUE_SWAPPED: Final = (make_kind(QUEEN, CLUBS), make_kind(JACK, HEARTS))


def bezique_kinds(v: Variant, trump: int) -> tuple[int, int]:
    """(queen, knave) of bezique: QS + JD, or QC + JH with spades or diamonds trumps when the
    variant's bezique_cards option is trump-dependent (RULES.md section 1)."""
    if v.bezique_cards == "trump-dependent" and trump in (SPADES, DIAMONDS):
        return _BEZIQUE_SWAPPED
    return _BEZIQUE_FIXED


# ---------------------------------------------------------------------- the public log

# Parsed log entries: (verb, seat, physical cards, combo). Parsing is cached per distinct text: each
# decision reads the deal's log again.
_PLAYS, _DECLARES, _EXCHANGES, _TURN_UP, _CARTE, _OTHER = range(6)
_Entry = tuple[int, int, tuple[int, ...], int]
_PARSED: dict[str, _Entry] = {}


def _parse(text: str) -> _Entry:
    entry = _PARSED.get(text)
    if entry is not None:
        return entry
    words = text.split()
    entry = (_OTHER, -1, (), 0)
    try:
        if len(words) >= 4 and words[0] == "seat":
            seat = int(words[1])
            verb = words[2]
            if verb == "plays":
                entry = (_PLAYS, seat, (parse_card(words[3]),), 0)
            elif verb == "declares" and len(words) >= 5:
                combo = int(Combo.parse(words[3]))
                cards = tuple(parse_card(w) for w in words[4:-2])
                entry = (_DECLARES, seat, cards, combo)
            elif verb == "exchanges":
                entry = (_EXCHANGES, seat, (parse_card(words[3]), parse_card(words[-1])), 0)
            elif verb == "draws":
                entry = (_TURN_UP, seat, (parse_card(words[-1]),), 0)
            elif verb == "shows":
                entry = (_CARTE, seat, tuple(parse_kind(w) for w in words[5:]), 0)
    except ValueError:  # a text this bot does not understand: it knows less, nothing breaks
        entry = (_OTHER, -1, (), 0)
    if len(_PARSED) > 50_000:
        _PARSED.clear()
    _PARSED[text] = entry
    return entry


def deal_log(log: Sequence[str]) -> Sequence[str]:
    """The entries of the current deal (from its "deal N: ..." line on)."""
    for i in range(len(log) - 1, -1, -1):
        if log[i].startswith("deal "):
            return log[i:]
    return log


# ---------------------------------------------------------------------- knowledge


class Knowledge:
    """What a seat knows at one decision. Card counts are per kind (0..31)."""

    __slots__ = (
        "cb_shown",
        "counts",
        "deal_points",
        "family",
        "hand",
        "hand_marks",
        "hand_sizes",
        "in_stock",
        "j",
        "known",
        "known_marks",
        "open",
        "open_marks",
        "packs",
        "partners",
        "phase",
        "played",
        "q",
        "scores",
        "seat",
        "seats",
        "stock_size",
        "totals",
        "trick",
        "trump",
        "turn_up",
        "unseen",
        "unseen_total",
        "variant",
    )

    variant: Variant
    family: Family
    seats: int
    seat: int
    partners: tuple[int, ...]
    trump: int  # -1: none yet (Rubicon)
    q: int  # the queen of bezique
    j: int  # the knave of bezique
    packs: int
    scores: Mapping[Combo, int]
    phase: str
    in_stock: bool
    stock_size: int  # cards left to draw, the turn-up included
    turn_up: int  # physical card, -1 when none
    hand: tuple[int, ...]  # card references as in the observation
    hand_marks: list[int]  # marks of each card of ``hand`` (0: never declared)
    counts: list[int]  # copies of each kind in the seat's hand
    played: list[int]  # copies of each kind played to tricks in this deal (the current one too)
    known: list[list[int]]  # per seat: copies of each kind known to be in its hand (own: counts)
    known_marks: list[list[tuple[int, int]]]  # per seat: (kind, marks) of its known cards
    unseen: list[int]  # copies of each kind whose place the seat cannot tell
    unseen_total: int
    hand_sizes: list[int]
    trick: tuple[tuple[int, int], ...]  # (seat, physical card) of the trick being played
    open: list[list[tuple[int, int]]]  # Polish: per seat, (kind, marks) of its open cards
    open_marks: dict[int, int]  # marks of public physical cards, replayed from the log
    deal_points: list[int]
    totals: list[int]
    cb_shown: list[bool]  # Rubicon: the seat has shown carte blanche this deal

    # ------------------------------------------------------------------ building

    @staticmethod
    def variant_of(view: Observation) -> Variant:
        return variant(view.variant, **dict(view.options))  # built once per variant

    @classmethod
    def from_view(cls, view: Observation) -> Knowledge:
        """From the seat's observation and its public log (as a bot gets them)."""
        v = cls.variant_of(view)
        seat = view.seat if view.seat is not None else view.to_act
        k = cls._blank(v, seat)
        k.trump = SUIT_CHARS.index(view.trump) if view.trump else -1
        k.q, k.j = bezique_kinds(v, k.trump)
        k.phase = view.phase
        k.stock_size = view.stock_size
        k.in_stock = view.stock_size > 0
        k.turn_up = view.turn_up if view.turn_up is not None else -1
        k.trick = view.trick
        k.hand = view.hand
        k.hand_sizes = [si.hand_size for si in view.seats]
        k.deal_points = [si.deal_points for si in view.seats]
        k.totals = [si.total for si in view.seats]
        k.cb_shown = [si.carte_blanche for si in view.seats]
        # Marks of public cards: from the log's declarations, then the table (authoritative).
        marks: dict[int, int] = {}
        revealed: list[dict[int, int]] = [{} for _ in range(v.seats)]  # physical card -> kind
        shown: list[list[int]] = [[0] * 32 for _ in range(v.seats)]  # carte blanche kinds
        played = k.played
        texts = deal_log(view.log)
        if texts and "turn-up" in texts[0]:
            # 002: a turn-up seven scores for the dealer at once; it scores no more.
            try:
                up = parse_card(texts[0].split()[-1])
            except ValueError:
                up = -1
            if up >= 0 and up & 7 == SEVEN:
                marks[up] = SEVEN_MARK
        for text in texts:
            verb, s, cards, combo = _parse(text)
            if verb == _OTHER or not 0 <= s < v.seats:
                continue
            if verb == _PLAYS:
                c = cards[0]
                played[c & 31] += 1
                revealed[s].pop(c, None)
                if shown[s][c & 31]:
                    shown[s][c & 31] -= 1
            elif verb == _DECLARES:
                if combo == Combo.SEVEN_OF_TRUMPS:
                    for c in cards:
                        marks[c] = marks.get(c, 0) | SEVEN_MARK
                elif combo != Combo.CARTE_BLANCHE:
                    klass, level = combo_class_level(combo)
                    for c in cards:
                        marks[c] = with_level(marks.get(c, 0), klass, level)
                if v.family is not Family.POLISH:
                    for c in cards:
                        # A partner's bezique in a double stays on the partner's table (§4.2).
                        if not any(c in r for r in revealed):
                            revealed[s][c] = c & 31
            elif verb == _EXCHANGES:
                seven, taken = cards
                marks[seven] = marks.get(seven, 0) | SEVEN_MARK
                revealed[s].pop(seven, None)
                if v.family is Family.POLISH:
                    # 000: the seven won in the trick becomes the turn-up; the turn-up goes to the
                    # tricks won.
                    played[seven & 31] -= 1
                    played[taken & 31] += 1
                else:
                    revealed[s][taken] = taken & 31
            elif verb == _TURN_UP:
                revealed[s][cards[0]] = cards[0] & 31
            elif verb == _CARTE:
                if len(cards) > 1:  # the whole hand shown; later shows are one drawn card
                    shown[s] = [0] * 32
                for kind in cards:
                    shown[s][kind] += 1
        for si in view.seats:
            for c, m in si.table:
                marks[c] = m
                if si.seat != seat:
                    revealed[si.seat][c] = c & 31
        if not k.in_stock and v.family is not Family.POLISH:
            # 002: once the stock is out, declarations cease and copies of a kind are
            # interchangeable: no card carries the marks of its declarations any more (as the
            # engine's state forgets them).
            marks = {}
        k.open_marks = marks
        k.hand_marks = [
            marks.get(r, 0) & (COMBO_MARKS | SEVEN_MARK) if r < ANY_COPY else 0 for r in k.hand
        ]
        counts = k.counts
        for r in k.hand:
            counts[r & 31] += 1
        for s in range(v.seats):
            if s == seat:
                continue
            known = k.known[s]
            for c, kind in revealed[s].items():
                known[kind] += 1
                k.known_marks[s].append((kind, marks.get(c, 0) & COMBO_MARKS))
            for kind in range(32):
                if shown[s][kind] > known[kind]:
                    k.known_marks[s].extend([(kind, 0)] * (shown[s][kind] - known[kind]))
                    known[kind] = shown[s][kind]
        for si in view.seats:
            k.open[si.seat] = [(c & 31, marks.get(c, 0) & COMBO_MARKS) for c in si.open_cards]
        k._finish()
        return k

    @classmethod
    def from_state(cls, state: GameState, seat: int) -> Knowledge:
        """From a full state, for ``seat``: the same counts a bot following the game would have
        (hidden cards of other seats and the stock count as unseen)."""
        v = state.variant
        k = cls._blank(v, seat)
        k.trump = state.trump
        k.q, k.j = state.bezique_kinds
        k.phase = PHASE_NAMES[state.phase]
        k.stock_size = state.stock_size
        k.in_stock = state.in_stock_phase
        k.turn_up = state.turn_up
        order = state.trick_order
        k.trick = tuple(zip(order, state.trick, strict=False))
        marks = state.marks
        hand = state.hands[seat]
        pairs = sorted(
            (c, 0) if c >= ANY_COPY else (c, m) if (m := marks[c]) else (ANY_COPY + (c & 31), 0)
            for c in hand
        )
        k.hand = tuple(r for r, _ in pairs)
        k.hand_marks = [m & (COMBO_MARKS | SEVEN_MARK) for _, m in pairs]
        k.hand_sizes = [len(h) for h in state.hands]
        k.deal_points = list(state.deal_points)
        k.totals = [t + d for t, d in zip(state.totals, state.deal_points, strict=True)]
        k.cb_shown = list(state.cb_active)
        counts = k.counts
        for c in hand:
            counts[c & 31] += 1
        played = k.played
        for won in state.won:
            for c in won:
                played[c & 31] += 1
        for c in state.heap:
            played[c & 31] += 1
        for c in state.trick:
            played[c & 31] += 1
        for s in range(v.seats):
            if s == seat:
                continue
            known = k.known[s]
            for c in state.hands[s]:
                if c < ANY_COPY:  # a public copy: declared, or a turn-up taken
                    known[c & 31] += 1
                    k.known_marks[s].append((c & 31, marks[c] & COMBO_MARKS))
        # Cards shown for carte blanche stay known until played, after the chain has ended too; the
        # deal's score items (a few dozen) say whether any was shown without reading the whole log.
        if v.family is Family.RUBICON and any(i.reason == "carte-blanche" for i in state.items):
            k._carte_blanche_from_state(state)
        k.open_marks = {}
        for s in range(v.seats):
            k.open[s] = [(c & 31, marks[c] & COMBO_MARKS) for c in state.open[s]]
        k._finish()
        return k

    def _carte_blanche_from_state(self, state: GameState) -> None:
        """Rubicon: the kinds a seat showed for carte blanche and has not played since are known."""
        shown = [[0] * 32 for _ in range(self.seats)]
        for event in state.log:
            if event[0] == EV_CARTE_BLANCHE:
                s = int(event[1])  # type: ignore[call-overload]
                kinds = event[2]
                assert isinstance(kinds, tuple)
                if len(kinds) > 1:
                    shown[s] = [0] * 32
                for kind in kinds:
                    shown[s][kind] += 1
            elif event[0] == EV_PLAY:
                s = int(event[1])  # type: ignore[call-overload]
                card = event[2]
                assert isinstance(card, int)
                if shown[s][card & 31]:
                    shown[s][card & 31] -= 1
        for s in range(self.seats):
            if s == self.seat:
                continue
            known = self.known[s]
            for kind in range(32):
                if shown[s][kind] > known[kind]:
                    self.known_marks[s].extend([(kind, 0)] * (shown[s][kind] - known[kind]))
                    known[kind] = shown[s][kind]

    @classmethod
    def _blank(cls, v: Variant, seat: int) -> Knowledge:
        k = cls.__new__(cls)
        k.variant = v
        k.family = v.family
        k.seats = v.seats
        k.seat = seat
        k.partners = v.partners(seat)
        k.packs = v.packs
        k.scores = v.scores
        k.counts = [0] * 32
        k.played = [0] * 32
        k.known = [[0] * 32 for _ in range(v.seats)]
        k.known_marks = [[] for _ in range(v.seats)]
        k.open = [[] for _ in range(v.seats)]
        return k

    def _finish(self) -> None:
        packs = self.packs
        unseen = [packs - self.counts[i] - self.played[i] for i in range(32)]
        for s in range(self.seats):
            if s != self.seat:
                known = self.known[s]
                for i in range(32):
                    unseen[i] -= known[i]
        if 0 <= self.turn_up < ANY_COPY:
            unseen[self.turn_up & 31] -= 1
        self.unseen = [u if u > 0 else 0 for u in unseen]
        self.unseen_total = sum(self.unseen)
        self.known[self.seat] = self.counts

    # ------------------------------------------------------------------ questions

    def unknown_cards(self, seat: int) -> int:
        """How many cards of ``seat``'s hand the seat deciding cannot name."""
        if seat == self.seat:
            return 0
        return max(0, self.hand_sizes[seat] - sum(self.known[seat]))

    def hidden_stock(self) -> int:
        """Face-down cards left in the stock (the turn-up excluded)."""
        return max(0, self.stock_size - (1 if self.turn_up >= 0 else 0))

    def other_hand(self) -> list[int] | None:
        """Two seats, stock empty: the other hand is every card neither played nor held (sorted
        kinds); None when the counts do not add up (a gap in the log)."""
        if self.seats != 2 or self.stock_size:
            return None
        other = 1 - self.seat
        cards = [
            kind for kind in range(32) for _ in range(self.unseen[kind] + self.known[other][kind])
        ]
        if len(cards) != self.hand_sizes[other]:
            return None
        return cards


def kinds_of(refs: Iterable[int]) -> list[int]:
    return [r & 31 for r in refs]
