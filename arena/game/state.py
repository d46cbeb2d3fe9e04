"""The game state: deal, play, declare, draw, score, to the end of the game.

One API for everything above the engine: :attr:`GameState.to_act`, :meth:`GameState.legal_actions`
(sorted, deterministic), :meth:`GameState.apply` (raises :class:`IllegalActionError`),
:meth:`GameState.is_terminal`, :meth:`GameState.result`; a seat's view is built only by
:func:`arena.game.observe.observe`.

Hidden cards have no identity. A card in a hand that has never been shown is held as a *kind code*
(``ANY_COPY + kind``) and the stock holds kinds; a card gets a physical identity (its pack number) only
when it becomes public: played, declared or turned up. It then takes the lowest pack number not yet
given to its kind in this deal, so the identity a seat sees depends only on public history and never
tells which other copies an opponent holds.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from arena.game.actions import DONE, PLAY_ACTIONS, Action, Combo, declare
from arena.game.cards import (
    ANY_COPY,
    CLUBS,
    DIAMONDS,
    HEARTS,
    JACK,
    KINDS_PER_PACK,
    QUEEN,
    SEVEN,
    SPADES,
    kind_text,
    make_kind,
)
from arena.game.cutting import Cut
from arena.game.declarations import SEVEN_MARK
from arena.game.errors import IllegalActionError
from arena.game.events import (
    CARTE_BLANCHE,
    COURT_RANKS,
    DECLARE,
    EV_CUT,
    EV_DEAL,
    EV_PLAY,
    EV_SCORE,
    OVER,
    PHASE_NAMES,
    PLAY,
)
from arena.game.fields import F_RUBICON, FAMILY_IDS, NOT_ASKED
from arena.game.hands import _index, _position
from arena.game.scoring import _GameWon
from arena.game.tricks import TrickPlay
from arena.game.variants import Variant


class GameState(TrickPlay):
    """A game of Bezique: a series of deals to the target (one deal in Rubicon)."""

    __slots__ = ()

    # ------------------------------------------------------------------ creation

    @classmethod
    def new(
        cls,
        variant: Variant,
        seed: int,
        *,
        dealer: int | None = None,
        decks: Sequence[Sequence[int]] = (),
        cut: Cut | None = None,
    ) -> GameState:
        """A new game dealt from ``seed``; ``decks`` may give the shuffled order (top card first) of the
        first deals explicitly, as physical cards 0 .. 32*packs-1 or as kinds 0..31 with each kind
        ``packs`` times. ``dealer`` fixes the first dealer (default: drawn from the seed). ``cut`` is
        the players' cut for the deal where the variant's books describe one (the referee draws it,
        :func:`arena.game.cutting.draw_cut`): its highest cutter deals, and its cards open the
        public log."""
        s = cls()
        s.variant = variant
        s.fam = FAMILY_IDS[variant.family]
        s.partnered = bool(variant.partnerships)
        s.n_seats = variant.seats
        s.trump_dependent = variant.bezique_cards == "trump-dependent"
        s.immediate_target = variant.target if variant.game_end == "immediate" else 0
        s.inquiring = variant.inquiry == "on"
        s.trick_tables = _ORDERS[variant.seats]
        s.seed = seed
        s.decks = tuple(_check_deck(variant, d, i) for i, d in enumerate(decks))
        n = variant.seats
        s.log = []
        if cut is not None:
            dealer = s._cut_for_deal(cut, dealer)
        if dealer is None:
            dealer = random.Random(f"bezique-dealer:{seed}").randrange(n)
        elif not 0 <= dealer < n:
            raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer}")
        s.first_dealer = dealer
        s.deal_index = 0
        s.dealer = dealer
        s.totals = [0] * n
        s.deals = []
        s.history = []
        s.winner_seat = -1
        s.game_tricks = 0
        s._start_deal()
        return s

    def _cut_for_deal(self, cut: Cut, dealer: int | None) -> int:
        """002: "The players cut for deal, and the highest bezique card deals": the cut's cards go in
        the public log, its highest cutter deals."""
        v = self.variant
        if not v.cut_for_deal:
            raise ValueError(f"{v.name}: its books describe no cut for the deal")
        if sorted(c for c, _ in cut.rounds[0]) != list(range(v.seats)):
            raise ValueError(f"every seat of {v.name} cuts for the deal, got the cut {cut.text!r}")
        if dealer is not None and dealer != cut.winner:
            raise ValueError(f"seat {cut.winner} cut highest and deals, not seat {dealer}")
        for cards in cut.rounds:
            self.log.extend((EV_CUT, c, kind) for c, kind in cards)
        return cut.winner

    def deck_for(self, deal_index: int) -> tuple[int, ...]:
        """The shuffled kinds of a deal, top card first."""
        if deal_index < len(self.decks):
            return self.decks[deal_index]
        rng = random.Random(f"bezique-deal:{self.seed}:{deal_index}")
        return tuple(shuffled_kinds(rng, self.variant.deck_size))

    def _start_deal(self) -> None:
        v = self.variant
        n = v.seats
        kinds = self.deck_for(self.deal_index)
        self.deal_points = [0] * n
        self.items = []
        self.next_pack = [0] * KINDS_PER_PACK
        self.marks = [0] * v.deck_size
        self.hands = [[] for _ in range(n)]
        pos = 0
        first = (self.dealer + 1) % n
        for packet in v.deal_packets:
            for i in range(n):
                self.hands[(first + i) % n].extend(ANY_COPY + k for k in kinds[pos : pos + packet])
                pos += packet
        self.dealt = tuple(tuple(h) for h in self.hands)
        self.trump = -1
        self.turn_up = -1
        self.taken_up = -1
        if v.turn_up:
            self.turn_up = self._reveal(kinds[pos])
            self.trump = (kinds[pos] >> 3) & 3
            pos += 1
        self.stock = list(kinds[pos:])
        self.stock_pos = 0
        self.trick = []
        self.last_trick = ((), (), -1)
        self.tricks_done = 0
        self.tricks_won = [0] * n
        self.duels = ()
        self.duel_index = 0
        self.declare_queue = []
        self.inquiry = NOT_ASKED
        self.turn_acted = False
        self.turn_winner = -1
        self.won = [[] for _ in range(n)]
        self.open = [[] for _ in range(n)]
        self.open_present = [0] * n
        self.open_fours = [0] * n
        self.heap = []
        self.reserves = [[] for _ in range(n)]
        self.scored_sets = [{} for _ in range(n)]
        self.reformed = [set() for _ in range(n)]
        self.cb_active = [False] * n
        self.cb_queue = []
        self.last_drawn = [-1] * n
        self.in_stock_phase = True
        self.turn_sevens = []
        self.turn_new = frozenset()
        self.turn_used = set()
        self.turn_count = 0
        self.turn_excluded = -1
        self.turn_marks = []
        self.turn_done = set()
        self.turn_options = None
        self.declarer = -1
        self._reindex()
        self._begin_trick(first)
        self._legal = None
        self.log.append((EV_DEAL, self.dealer, self.deal_index, self.turn_up))
        if self.turn_up >= 0 and self.turn_up & 7 == SEVEN:
            # 002: if the turn-up is a seven, the dealer scores 10.
            self.marks[self.turn_up] |= SEVEN_MARK
            self.log.append((EV_SCORE, self.dealer, "seven-turn-up", 10))
            self._credit(self.dealer, 10, "seven-turn-up", (self.turn_up,))
        if self.fam == F_RUBICON:
            # 000: a hand dealt with no king, queen or knave may be shown for carte blanche.
            self.cb_queue = [
                (first + i) % n
                for i in range(n)
                if not any(c & 7 in COURT_RANKS for c in self.hands[(first + i) % n])
            ]
            self._next_carte_blanche()

    def _reveal(self, kind: int) -> int:
        """Give a hidden card of ``kind`` its physical identity."""
        pack = self.next_pack[kind]
        self.next_pack[kind] = pack + 1
        return pack * KINDS_PER_PACK + kind

    # ------------------------------------------------------------------ queries

    def is_terminal(self) -> bool:
        return self.phase == OVER

    @property
    def stock_size(self) -> int:
        """Cards left to draw, the turn-up included."""
        return len(self.stock) - self.stock_pos + (1 if self.turn_up >= 0 else 0)

    @property
    def bezique_kinds(self) -> tuple[int, int]:
        """(queen, knave) of bezique: QS + JD, or QC + JH with spades or diamonds trumps when the
        variant's bezique_cards option is trump-dependent."""
        if self.trump_dependent and (self.trump == SPADES or self.trump == DIAMONDS):
            return _QC_JH
        return _QS_JD

    def legal_actions(self) -> list[Action]:
        """The actions of the seat to act, sorted; empty when the game is over."""
        legal = self._legal
        if legal is None:
            phase = self.phase
            if phase == PLAY:
                if self.in_stock_phase or not self.trick:
                    # 002: while the stock lasts any card may be played, and the leader of a trick
                    # may always lead any card: the hand's index of plays (see _reindex).
                    legal = self.plays[self.to_act][:]
                else:
                    legal = self._legal_plays()
            elif phase == DECLARE:
                legal = self._legal_declare()
            elif phase == CARTE_BLANCHE:
                legal = [declare(Combo.CARTE_BLANCHE, ()), DONE]
            else:
                legal = []
            self._legal = legal
        return legal

    # ------------------------------------------------------------------ apply

    def apply(self, action: Action) -> None:
        """Apply the action of the seat to act; an illegal action raises IllegalActionError and leaves
        the state unchanged."""
        legal = self._legal
        if legal is None:
            legal = self.legal_actions()
        # The actions of the legal list itself are the usual argument: look for the very object first
        # (no tuple comparisons), then for an equal one.
        found = False
        for a in legal:
            if a is action:
                found = True
                break
        if not found and (type(action) is not _ACTION_TYPE or action not in legal):
            raise IllegalActionError(self._illegal_message(action, legal))
        self._legal = None
        seat = self.to_act
        phase = self.phase
        try:
            if phase != PLAY:
                self.history.append((seat, action))
                if phase == DECLARE:
                    self._declare_step(seat, action)
                else:
                    self._carte_blanche_step(seat, action)
                return
            # Playing a card (inline: this is the engine's most frequent step).
            ref: int = action[2][0]
            self.history.append(_PLAY_HISTORY[seat][ref])
            hand = self.hands[seat]
            # The hand's index (see _reindex): the card leaves under the reference it was played by.
            self._index_del(seat, ref)
            if ref < ANY_COPY:
                hand.pop(_index(hand, ref))
                card = ref
            else:
                # Prefer a copy that is already public (a taken turn-up; in the last tricks any copy
                # declared before), so that the identity of the card played never tells which hidden
                # copies the seat holds.
                card = -1
                at = -1  # where the card is in the hand
                kind = ref - ANY_COPY
                if self.in_stock_phase:
                    x = self.taken_up
                    if x >= 0 and x & 31 == kind and not self.marks[x]:
                        at = _position(hand, x)
                        if at >= 0:
                            card = x
                else:
                    for c in _COPIES[self.variant.packs][kind]:
                        i = _position(hand, c)
                        if i >= 0 and (at < 0 or i < at):
                            card = c
                            at = i
                if card >= 0:
                    hand.pop(at)
                else:
                    hand.pop(_index(hand, ref))
                    next_pack = self.next_pack
                    pack = next_pack[kind]
                    next_pack[kind] = pack + 1
                    card = pack * KINDS_PER_PACK + kind
            trick = self.trick
            trick.append(card)
            self.log.append(_PLAY_EVENTS[seat][card])
            reserves = self.reserves
            if reserves[seat]:
                self._refresh_reserves(seat)
            if self.partnered:
                for p in self.variant.partners(seat):
                    if reserves[p]:
                        self._refresh_reserves(p)  # a partner's bezique cards may be in a claim
            order = self.trick_order
            if len(trick) < len(order):
                self.to_act = order[len(trick)]
                return
            self._finish_trick()
        except _GameWon:
            self._finish_game(partial_deal=True)

    def _illegal_message(self, action: object, legal: list[Action]) -> str:
        text = action.text if isinstance(action, Action) else repr(action)
        if self.phase == OVER:
            return f"{text!r} is not legal: the game is over"
        phase = PHASE_NAMES[self.phase]
        options = ", ".join(a.text for a in legal)
        return (
            f"{text!r} is not legal for seat {self.to_act} in deal {self.deal_index + 1}, "
            f"trick {self.tricks_done + 1}, phase {phase}; legal: {options}"
        )

    def deciding_member(self) -> int:
        """In consultation, which of the players sharing the seat to act decides: they alternate trick
        by trick (000), the declaring turn after a trick belonging to that trick."""
        size = self.variant.team_size(self.to_act) if self.to_act >= 0 else 1
        trick = self.game_tricks - 1 if self.phase == DECLARE else self.game_tricks
        return trick % size

    # ------------------------------------------------------------------ copying

    def hands_changed(self) -> None:
        """Rebuild what the engine derives from the hands (the index of plays, the combination
        masks, the legal actions) after a caller changed ``hands`` or ``stock`` in place: a searcher
        filling a sampled world with other hidden cards."""
        self._reindex()
        self._legal = None

    def clone(self) -> GameState:
        """An independent copy (for search): lists are copied, immutable values shared."""
        s = GameState()
        # Immutable values are shared.
        s.variant = self.variant
        s.fam = self.fam
        s.partnered = self.partnered
        s.n_seats = self.n_seats
        s.trump_dependent = self.trump_dependent
        s.immediate_target = self.immediate_target
        s.inquiring = self.inquiring
        s.inquiry = self.inquiry
        s.turn_acted = self.turn_acted
        s.trick_tables = self.trick_tables
        s.seed = self.seed
        s.decks = self.decks
        s.dealt = self.dealt
        s.first_dealer = self.first_dealer
        s.deal_index = self.deal_index
        s.dealer = self.dealer
        s.phase = self.phase
        s.to_act = self.to_act
        s.leader = self.leader
        s.stock = self.stock
        s.stock_pos = self.stock_pos
        s.turn_up = self.turn_up
        s.taken_up = self.taken_up
        s.trump = self.trump
        s.last_trick = self.last_trick
        s.tricks_done = self.tricks_done
        s.declarer = self.declarer
        s.turn_winner = self.turn_winner
        s.trick_order = self.trick_order
        s.duels = self.duels
        s.duel_index = self.duel_index
        s.game_tricks = self.game_tricks
        s.turn_new = self.turn_new
        s.turn_count = self.turn_count
        s.turn_excluded = self.turn_excluded
        s.in_stock_phase = self.in_stock_phase
        s.winner_seat = self.winner_seat
        s.totals = self.totals[:]
        s.deal_points = self.deal_points[:]
        s.items = self.items[:]
        s.deals = self.deals[:]
        s.hands = [h[:] for h in self.hands]
        s.ref_counts = [r[:] for r in self.ref_counts]
        s.play_refs = [r[:] for r in self.play_refs]
        s.plays = [p[:] for p in self.plays]
        s.kind_counts = [k[:] for k in self.kind_counts]
        s.present = self.present[:]
        s.fresh = self.fresh[:]
        s.fours = self.fours[:]
        s.open_present = self.open_present[:]
        s.open_fours = self.open_fours[:]
        s.next_pack = self.next_pack[:]
        s.marks = self.marks[:]
        s.trick = self.trick[:]
        s.won = [w[:] for w in self.won]
        s.open = [o[:] for o in self.open]
        s.heap = self.heap[:]
        s.log = self.log[:]
        s.history = self.history[:]
        s.turn_used = set(self.turn_used)
        s.turn_marks = self.turn_marks[:]
        s.turn_done = set(self.turn_done)
        s.turn_options = self.turn_options  # never mutated: replaced as a whole
        s.declare_queue = self.declare_queue[:]
        s.tricks_won = self.tricks_won[:]
        s.turn_sevens = self.turn_sevens[:]
        s.reserves = [r[:] for r in self.reserves]
        s.scored_sets = [{k: r[:] for k, r in x.items()} for x in self.scored_sets]
        s.reformed = [set(x) for x in self.reformed]
        s.cb_active = self.cb_active[:]
        s.cb_queue = self.cb_queue[:]
        s.last_drawn = self.last_drawn[:]
        s._legal = self._legal
        return s


# The seats of a trick in playing order, by number of seats and leader.
_ORDERS: Final = {
    n: tuple(tuple((lead + i) % n for i in range(n)) for lead in range(n)) for n in (2, 3, 4)
}
_QS_JD: Final = (make_kind(QUEEN, SPADES), make_kind(JACK, DIAMONDS))
_QC_JH: Final = (make_kind(QUEEN, CLUBS), make_kind(JACK, HEARTS))
_ACTION_TYPE: Final = Action
# The history entry of each play and the log event of each card played, by seat (built once: plays
# are most of a game, and every tuple allocated there is work for the garbage collector too).
_PLAY_HISTORY: Final = tuple(tuple((seat, a) for a in PLAY_ACTIONS) for seat in range(4))
_PLAY_EVENTS: Final = tuple(tuple((EV_PLAY, seat, c) for c in range(ANY_COPY)) for seat in range(4))
# The physical copies of each kind, by number of packs.
_COPIES: Final = {
    n: tuple(tuple(p * KINDS_PER_PACK + k for p in range(n)) for k in range(32)) for n in (2, 3, 4)
}


def shuffled_kinds(rng: random.Random, size: int) -> list[int]:
    """The kinds of a deck of ``size`` cards shuffled exactly as ``rng.shuffle`` does (same calls to
    ``getrandbits``, so the same deals), without its per-card Python method calls."""
    deck = [c & 31 for c in range(size)]
    getrandbits = rng.getrandbits
    for i in range(size - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _check_deck(variant: Variant, deck: Sequence[int], index: int) -> tuple[int, ...]:
    size = variant.deck_size
    kinds = [c & 31 for c in deck]
    if len(deck) != size:
        raise ValueError(f"deck {index} must hold {size} cards, got {len(deck)}")
    if any(not 0 <= c < size for c in deck):
        raise ValueError(f"deck {index}: a card's number is 0..{size - 1}")
    counts = [0] * 32
    for k in kinds:
        counts[k] += 1
    if any(c != variant.packs for c in counts):
        missing = [kind_text(k) for k in range(32) if counts[k] != variant.packs]
        raise ValueError(
            f"deck {index} must hold each card {variant.packs} times; "
            f"wrong counts for {', '.join(missing)}"
        )
    return tuple(kinds)
