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

from arena.game.actions import DONE, PLAY_ACTIONS, Action, Combo, Verb, declare
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
    TEN,
    kind_text,
    make_kind,
)
from arena.game.declarations import SEVEN_MARK
from arena.game.declaring import DeclaringTurn
from arena.game.errors import IllegalActionError
from arena.game.events import (
    CARTE_BLANCHE,
    COURT_RANKS,
    DECLARE,
    EV_CARTE_BLANCHE,
    EV_DEAL,
    EV_PLAY,
    EV_SCORE,
    EV_TRICK,
    EV_TURN_UP,
    OVER,
    PHASE_NAMES,
    PLAY,
)
from arena.game.fields import F_ORDINARY, F_POLISH, F_RUBICON, FAMILY_IDS
from arena.game.hands import _FOUR_FIELD, _index, _position
from arena.game.scoring import _GameWon
from arena.game.variants import Variant


class GameState(DeclaringTurn):
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
    ) -> GameState:
        """A new game dealt from ``seed``; ``decks`` may give the shuffled order (top card first) of the
        first deals explicitly, as physical cards 0 .. 32*packs-1 or as kinds 0..31 with each kind
        ``packs`` times. ``dealer`` fixes the first dealer (default: drawn from the seed)."""
        s = cls()
        s.variant = variant
        s.fam = FAMILY_IDS[variant.family]
        s.partnered = bool(variant.partnerships)
        s.n_seats = variant.seats
        s.trump_dependent = variant.bezique_cards == "trump-dependent"
        s.immediate_target = variant.target if variant.game_end == "immediate" else 0
        s.trick_tables = _ORDERS[variant.seats]
        s.seed = seed
        s.decks = tuple(_check_deck(variant, d, i) for i, d in enumerate(decks))
        n = variant.seats
        if dealer is None:
            dealer = random.Random(f"bezique-dealer:{seed}").randrange(n)
        elif not 0 <= dealer < n:
            raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer}")
        s.first_dealer = dealer
        s.deal_index = 0
        s.dealer = dealer
        s.totals = [0] * n
        s.deals = []
        s.log = []
        s.history = []
        s.winner_seat = -1
        s.game_tricks = 0
        s._start_deal()
        return s

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

    def _legal_plays(self) -> list[Action]:
        """A follower in the last tricks: copies of a kind are interchangeable, and the rules of
        following apply (the other plays are handled in :meth:`legal_actions`)."""
        # The hand's references are its kinds now (see _reindex), sorted.
        kinds = [r - ANY_COPY for r in self.play_refs[self.to_act]]
        return [_PLAY_KIND[k] for k in self._obligatory(kinds)]

    def _reindex(self) -> None:
        """Index every hand for its legal plays: while the stock lasts a card is played by its own
        reference once declared (``QS.1``), else by its kind (``QS``: hidden copies, and a public one
        never declared, such as a taken turn-up); later always by its kind."""
        marks = self.marks
        in_stock = self.in_stock_phase
        n = len(self.hands)
        self.ref_counts = [[0] * (ANY_COPY + KINDS_PER_PACK) for _ in range(n)]
        self.play_refs = [[] for _ in range(n)]
        self.plays = [[] for _ in range(n)]
        self.kind_counts = [[0] * KINDS_PER_PACK for _ in range(n)]
        self.present = [0] * n
        self.fresh = [0] * n
        self.fours = [0] * n
        for seat, hand in enumerate(self.hands):
            for c in hand:
                self._index_add(
                    seat, c if c >= ANY_COPY or (in_stock and marks[c]) else ANY_COPY + (c & 31)
                )

    def _obligatory(self, kinds: list[int]) -> list[int]:
        """002 (last eight tricks): follow suit and win if able; if void, win by trumping if able;
        never forced to under-trump (three-handed, EB9-643). ``kinds`` and the answer are lists
        in the same order."""
        trick = self.trick
        led = (trick[0] >> 3) & 3
        b = trick[self._winning_index()]
        bsuit = (b >> 3) & 3
        brank = b & 7
        trump = self.trump
        same = [k for k in kinds if (k >> 3) & 3 == led]
        if same:
            if bsuit == led:
                over = [k for k in same if k & 7 > brank]
                return over or same
            return same
        if trump >= 0:
            if bsuit == trump:
                over = [k for k in kinds if (k >> 3) & 3 == trump and k & 7 > brank]
            else:
                over = [k for k in kinds if (k >> 3) & 3 == trump]
            if over:
                return over
        return kinds

    def _winning_index(self) -> int:
        """Index in the trick of the card winning it so far: the highest trump, else the highest card
        of the suit led; between identical cards the one played first (002)."""
        trick = self.trick
        trump = self.trump
        best = 0
        b = trick[0]
        for i in range(1, len(trick)):
            c = trick[i]
            cs = (c >> 3) & 3
            bs = (b >> 3) & 3
            if (cs == bs and c & 7 > b & 7) or (cs != bs and cs == trump):
                best = i
                b = c
        return best

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

    def _finish_trick(self) -> None:
        trick = self.trick
        order = self.trick_order
        if len(trick) == 2:
            a, b = trick
            same = (a ^ b) & 24 == 0
            wins = (b & 7) > (a & 7) if same else (b >> 3) & 3 == self.trump
            winner = order[1] if wins else order[0]
        else:
            winner = order[self._winning_index()]
        cards = tuple(trick)
        self.trick = []
        self.last_trick = (order, cards, winner)
        self.tricks_done = done = self.tricks_done + 1
        self.game_tricks += 1
        self.tricks_won[winner] += 1
        family = self.fam
        if family != F_RUBICON:
            self.won[winner].extend(cards)
        self.log.append(
            _TRICK_EVENTS[winner][done] if done < _TRICKS_INTERNED else (EV_TRICK, winner, done)
        )
        if family == F_POLISH:
            self._polish_take(winner, cards)
        elif family == F_RUBICON:
            # 004: tricks stay face up in one heap until a brisque is played; its winner takes the heap.
            heap = self.heap
            heap.extend(cards)
            for c in cards:
                if c & 7 >= TEN:
                    self.won[winner].extend(heap)
                    self.heap = []
                    break
        self.leader = winner
        if self.in_stock_phase:
            # The common case: nothing to declare or decide after the trick, so no declaring turn.
            if family == F_POLISH:
                quiet = not self.turn_sevens and (
                    not self.turn_new or not self._polish_families(winner)
                )
            elif self.partnered:
                quiet = False
            else:
                self.turn_excluded = -1
                quiet = (
                    not self.reserves[winner]
                    and not self._combos(winner)
                    and (family != F_ORDINARY or not self._holds_seven(winner))
                )
            if not quiet:
                self._start_turn(winner)
                return
            self.turn_winner = winner
            stock = self.stock
            pos = self.stock_pos
            if (
                len(order) == 2
                and pos + 2 <= len(stock)
                and (self.turn_up >= 0 or pos + 2 < len(stock))
                and (family != F_RUBICON or True not in self.cb_active)
            ):
                # Two seats, and the stock lasts after this draw: both draw (the winner first), and
                # the winner leads the next trick.
                loser = order[0] if order[1] == winner else order[1]
                hands = self.hands
                last_drawn = self.last_drawn
                for seat, kind in ((winner, stock[pos]), (loser, stock[pos + 1])):
                    hands[seat].append(ANY_COPY + kind)
                    last_drawn[seat] = kind
                    self._index_add(seat, ANY_COPY + kind)
                self.stock_pos = pos + 2
                self.trick_order = self.trick_tables[winner]
                self.phase = PLAY
                self.to_act = winner
                return
            self._draw(winner)
            if self.cb_queue:
                self._next_carte_blanche()
            else:
                self._begin_trick(winner)
        elif family == F_POLISH:
            self._start_turn(winner)
        else:
            self._after_turn()

    def _polish_take(self, winner: int, cards: tuple[int, ...]) -> None:
        # 000: scoring cards (A, K, Q, J, trump ten) won go face up among the winner's open cards;
        # aces and tens score 10 as soon as won; the seven of trumps scores 10 unless exchanged.
        trump = self.trump
        new = []
        sevens = []
        for c in cards:
            r = c & 7
            if r >= JACK and (r != TEN or (c >> 3) & 3 == trump):
                new.append(c)
            elif r == SEVEN and (c >> 3) & 3 == trump and not self.marks[c] & SEVEN_MARK:
                sevens.append(c)  # a seven that scored as turn-up or in an exchange scores no more
        self.open[winner].extend(new)
        for c in new:
            self.open_present[winner] |= 1 << (c & 31)
            self.open_fours[winner] += _FOUR_FIELD[c & 31]
        self.turn_new = frozenset(new)
        self.turn_sevens = sevens
        for c in cards:
            if c & 7 >= TEN:
                self._credit(winner, 10, "brisque", (c,))

    def _draw(self, winner: int) -> None:
        # 002: the winner draws the top card, then the others in turn; the turn-up is drawn last.
        stock = self.stock
        pos = self.stock_pos
        hands = self.hands
        last_drawn = self.last_drawn
        order = self.trick_tables[winner]
        if pos + len(order) <= len(stock):
            for seat in order:
                kind = stock[pos]
                pos += 1
                hands[seat].append(ANY_COPY + kind)
                last_drawn[seat] = kind
                self._index_add(seat, ANY_COPY + kind)
            self.stock_pos = pos
        else:
            for seat in order:
                if pos < len(stock):
                    kind = stock[pos]
                    pos += 1
                    hands[seat].append(ANY_COPY + kind)
                    last_drawn[seat] = kind
                else:
                    card = self.turn_up
                    self.turn_up = -1
                    hands[seat].append(card)
                    last_drawn[seat] = card & 31
                    self.log.append((EV_TURN_UP, seat, card))
            self.stock_pos = pos
        if self.fam == F_RUBICON and True in self.cb_active:
            for seat in order:
                if self.cb_active[seat]:
                    if self.last_drawn[seat] & 7 in COURT_RANKS:
                        self.cb_active[seat] = False
                    else:
                        self.cb_queue.append(seat)
        if self.stock_pos >= len(stock) and self.turn_up < 0:
            self._end_stock_phase()

    def _end_stock_phase(self) -> None:
        # 002: declarations cease; cards on the table go back to their owners' hands, so from now on
        # copies of a kind are interchangeable.
        self.in_stock_phase = False
        if self.fam != F_POLISH:
            self.marks = [0] * len(self.marks)
            self.reserves = [[] for _ in self.reserves]
        self._reindex()
        if self.variant.last_duels:
            # 000: the winner of the last stock trick plays his eight cards against the adversary to
            # his left; then the other two (the player opposite the winner leading).
            w = self.leader
            n = self.variant.seats
            self.duels = ((w, (w + 1) % n), ((w + 2) % n, (w + 3) % n))

    def _after_turn(self) -> None:
        if self.cb_queue:
            self._next_carte_blanche()
            return
        if not self.in_stock_phase and not any(self.hands):
            self._end_deal()
            return
        self._begin_trick(self.leader)

    def _begin_trick(self, leader: int) -> None:
        if self.duels:
            pair = self.duels[self.duel_index]
            if not self.hands[pair[0]] and not self.hands[pair[1]]:
                self.duel_index += 1
                pair = self.duels[self.duel_index]
                leader = pair[0]
            self.trick_order = (leader, pair[1] if leader == pair[0] else pair[0])
        else:
            self.trick_order = self.trick_tables[leader]
        self.leader = leader
        self.phase = PLAY
        self.to_act = leader

    # ------------------------------------------------------------------ carte blanche (Rubicon)

    def _next_carte_blanche(self) -> None:
        if self.cb_queue:
            self.phase = CARTE_BLANCHE
            self.to_act = self.cb_queue[0]
        else:
            self._after_turn()

    def _carte_blanche_step(self, seat: int, action: Action) -> None:
        self.cb_queue.pop(0)
        if action.verb is Verb.DONE:
            self.cb_active[seat] = False
        else:
            first = not self.cb_active[seat]
            shown = (
                tuple(sorted(c & 31 for c in self.hands[seat]))
                if first
                else (self.last_drawn[seat],)
            )
            self.cb_active[seat] = True
            self.log.append((EV_CARTE_BLANCHE, seat, shown))
            self._credit(seat, self.variant.scores[Combo.CARTE_BLANCHE], "carte-blanche")
        self._next_carte_blanche()

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
_PLAY_KIND: Final = PLAY_ACTIONS[ANY_COPY:]  # "play" a kind, by kind
_ACTION_TYPE: Final = Action
# The history entry of each play and the log event of each card played, by seat (built once: plays
# are most of a game, and every tuple allocated there is work for the garbage collector too).
_PLAY_HISTORY: Final = tuple(tuple((seat, a) for a in PLAY_ACTIONS) for seat in range(4))
_PLAY_EVENTS: Final = tuple(tuple((EV_PLAY, seat, c) for c in range(ANY_COPY)) for seat in range(4))
_TRICKS_INTERNED: Final = 64
_TRICK_EVENTS: Final = tuple(
    tuple((EV_TRICK, seat, done) for done in range(_TRICKS_INTERNED)) for seat in range(4)
)
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
    if len(deck) != size or any(not 0 <= c < size for c in deck):
        raise ValueError(f"deck {index} must hold {size} cards numbered 0..{size - 1}")
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
