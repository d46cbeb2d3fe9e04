"""Trick play: what a follower may play in the last tricks, who wins a trick, what follows it (the
declaring turn, the draw, the end of the stock), and carte blanche in Rubicon (docs/rules.md §1.1,
§2.2, §2.4, §5.1, §6.2). :class:`TrickPlay` is one layer of :class:`arena.game.state.GameState` (see
:mod:`arena.game.fields`); :meth:`arena.game.state.GameState.apply` plays a card and hands the rest
of the trick to it.
"""

from __future__ import annotations

from typing import Final

from arena.game.actions import PLAY_ACTIONS, Action, Combo, Verb
from arena.game.cards import ANY_COPY, JACK, SEVEN, TEN
from arena.game.declarations import SEVEN_MARK
from arena.game.declaring_turn import DeclaringTurn
from arena.game.events import (
    CARTE_BLANCHE,
    COURT_RANKS,
    EV_CARTE_BLANCHE,
    EV_TRICK,
    EV_TURN_UP,
    PLAY,
)
from arena.game.fields import F_ORDINARY, F_POLISH, F_RUBICON
from arena.game.hands import _FOUR_FIELD

_PLAY_KIND: Final = PLAY_ACTIONS[ANY_COPY:]  # "play" a kind, by kind
_TRICKS_INTERNED: Final = 64
_TRICK_EVENTS: Final = tuple(
    tuple((EV_TRICK, seat, done) for done in range(_TRICKS_INTERNED)) for seat in range(4)
)


class TrickPlay(DeclaringTurn):
    """Methods of trick play, mixed into GameState."""

    __slots__ = ()

    def _legal_plays(self) -> list[Action]:
        """A follower in the last tricks: copies of a kind are interchangeable, and the rules of
        following apply (the other plays are handled in :meth:`legal_actions`)."""
        # The hand's references are its kinds now (see _reindex), sorted.
        kinds = [r - ANY_COPY for r in self.play_refs[self.to_act]]
        return [_PLAY_KIND[k] for k in self._obligatory(kinds)]

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
