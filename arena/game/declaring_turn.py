"""The declaring turn: after winning a trick and before drawing (docs/rules.md §1.3 to §1.5, §2.3,
§5.3, §6.4).

The trick's winner may declare combinations, exchange or declare the seven of trumps, or be done. The
turn is a phase of its own only when there is something to decide; otherwise play moves straight on to the
draw. :class:`DeclaringTurn` holds the turn's logic, one layer of :class:`arena.game.state.GameState`
(see :mod:`arena.game.fields`).
"""

from __future__ import annotations

from typing import Final

from arena.game.actions import DONE, INQUIRE, Action, Combo, Verb, declare, exchange
from arena.game.cards import ACE, ANY_COPY, JACK, KING, QUEEN, SEVEN, TEN, make_kind
from arena.game.claims import Claims
from arena.game.declarations import (
    ALL_KINDS,
    BEZIQUE_FAMILY,
    COMBO_MARKS,
    FOUR_FAMILIES,
    SEQUENCE_FAMILY,
    SEVEN_MARK,
    Pool,
    combo_class_level,
    combo_key,
    enumerate_declarations,
    families_kinds,
    pool_from_cards,
    pool_from_codes,
    relevant_kinds,
    with_level,
)
from arena.game.events import DECLARE, EV_DECLARE, EV_EXCHANGE, EV_INQUIRE, EV_PASS
from arena.game.fields import ANSWERED, ASKED, F_ORDINARY, F_POLISH, F_RUBICON, NOT_ASKED
from arena.game.hands import _FOUR_FIELD

_KING_BITS: Final = sum(1 << make_kind(KING, s) for s in range(4))
# A rank's 8-bit field in a hand's count of fours (arena.game.hands) reaches 4 exactly when adding
# 124 to it sets its high bit.
_FOUR_CARRY: Final = 0x7C7C7C7C
_FOUR_HIGH: Final = 0x80808080
# (the high bit of a rank's field, the kinds of that rank, its combination family)
_FOUR_MASKS: Final = tuple(
    (0x80 << (8 * i), sum(1 << make_kind(rank, s) for s in range(4)), FOUR_FAMILIES[rank])
    for i, rank in enumerate((ACE, KING, QUEEN, JACK))
)
_SEQUENCE_BITS: Final = tuple(
    sum(1 << make_kind(r, s) for r in (ACE, TEN, KING, QUEEN, JACK)) for s in range(4)
)


# Declaring and exchanging the seven of trumps (a hidden one: by its kind), by trump suit.
_SEVEN_DECLARE: Final = tuple(
    declare(Combo.SEVEN_OF_TRUMPS, (ANY_COPY + make_kind(SEVEN, s),)) for s in range(4)
)
_SEVEN_EXCHANGE: Final = tuple(exchange(ANY_COPY + make_kind(SEVEN, s)) for s in range(4))


def families_held(
    present: int, fresh: int, fours: int, trump: int, queen: int, knave: int, any_suit: bool
) -> int:
    """The families of combinations (see :data:`ALL_FAMILIES`) whose kinds are all in ``present`` (a
    mask of kinds) with one in ``fresh``; ``fours`` counts the knaves, queens, kings and aces in 8-bit
    fields (:data:`_FOUR_FIELD`); sequences in trumps only unless ``any_suit``."""
    out = 0
    married = present & (present << 1) & _KING_BITS  # kings with the queen of their suit
    if married:
        m = married & (fresh | fresh << 1)  # king bits 5, 13, 21, 29 to marriage bits 0 to 3
        out = (m >> 5 & 1) | (m >> 12 & 2) | (m >> 19 & 4) | (m >> 26 & 8)
        for suit in range(4) if any_suit else (trump,) if trump >= 0 else ():
            seq = _SEQUENCE_BITS[suit]
            if present & seq == seq and fresh & seq:
                out |= SEQUENCE_FAMILY << suit
    pair = (1 << queen) | (1 << knave)
    if present & pair == pair and fresh & pair:
        out |= BEZIQUE_FAMILY
    full = (fours + _FOUR_CARRY) & _FOUR_HIGH
    if full:
        for rank_field, mask, family in _FOUR_MASKS:
            if full & rank_field and fresh & mask:
                out |= family
    return out


# Enum members and the combinations' text forms as compiled constants: an attribute of an enum class,
# a call of it, or its Python-level ``text`` property costs a thousand instructions or so a time.
_DONE_VERB: Final = Verb.DONE
_INQUIRE_VERB: Final = Verb.INQUIRE
_EXCHANGE_VERB: Final = Verb.EXCHANGE
_SEVEN_OF_TRUMPS: Final = Combo.SEVEN_OF_TRUMPS
_COMBOS: Final[tuple[Combo, ...]] = (Combo.MARRIAGE, *Combo)  # by number (0 is no combination)
_COMBO_TEXTS: Final = tuple(c.text for c in _COMBOS)


class DeclaringTurn(Claims):
    """Methods of the declaring turn, mixed into GameState."""

    __slots__ = ()

    def _start_turn(self, winner: int) -> None:
        """After a trick: the winner may declare, then (000) each of his partners."""
        self.turn_winner = winner
        v = self.variant
        self.declare_queue = [winner, *v.partners(winner)] if v.partnerships else [winner]
        self.inquiry = NOT_ASKED
        self._next_declarer()

    def _next_declarer(self) -> None:
        """Open the declaring turn of the next seat in the queue that has something to decide; a seat
        with nothing to decide has no turn (the common case). Then, with the queue empty, draw."""
        family = self.fam
        queue = self.declare_queue
        while queue:
            seat = queue.pop(0)
            self.turn_excluded = -1
            if self.turn_used:  # before _may_combine: the last declarer's are not this seat's
                self.turn_used = set()
            if family == F_POLISH:
                if not self.turn_new and not (self.turn_sevens and self._may_exchange()):
                    self.declarer = seat
                    self._end_polish_turn(seat)  # the seven won in the trick scores
                    self.declarer = -1
                    continue
            elif (
                not self.reserves[seat]
                and not self._may_combine(seat)
                and (family != F_ORDINARY or not self._holds_seven(seat))
                and not self._may_inquire(seat)
            ):
                self._answered(seat, False)
                continue
            self.declarer = seat
            self.turn_count = 0
            self.turn_acted = False
            if family == F_POLISH:
                self.turn_marks = self.marks[:]
                self.turn_done = set()
                self.turn_options = None
            else:
                self.turn_new = frozenset()
                self.turn_sevens = []
            self.phase = DECLARE
            self.to_act = seat
            legal = self._legal_declare()
            if len(legal) > 1:
                self._legal = legal
                return
            if family == F_POLISH:  # only "done": nothing to decide
                self._end_polish_turn(seat)
            self._answered(seat, False)
            self.declarer = -1
        self._finish_declaring()

    def _may_inquire(self, seat: int) -> bool:
        """003: the winner of a trick "may inquire of his partner if he has anything to declare,
        before drawing": first in his turn, once a trick (four-handed partners, inquiry "on")."""
        return (
            self.inquiring
            and seat == self.turn_winner
            and self.inquiry == NOT_ASKED
            and self.in_stock_phase
        )

    def _inquire(self, seat: int) -> None:
        """The winner asks: his partner's declaring turn comes now, then the winner's."""
        partners = self.variant.partners(seat)
        self.log.append((EV_INQUIRE, seat, partners[0]))
        self.inquiry = ASKED
        self.declarer = -1
        self.declare_queue = [*partners, seat]
        self._next_declarer()

    def _answered(self, seat: int, declared: bool) -> None:
        """A partner asked (003) answers with his declarations, or that he has nothing to declare."""
        if self.inquiry == ASKED and seat != self.turn_winner:
            if not declared:
                self.log.append((EV_PASS, seat))
            self.inquiry = ANSWERED

    def _pool(self, seat: int, focus: int, families: int) -> Pool:
        if self.fam == F_POLISH:
            relevant = relevant_kinds(focus, self.trump, self.bezique_kinds, False)
            cards = [c for c in self.open[seat] if relevant >> (c & 31) & 1]
            return pool_from_cards(cards, self.turn_marks, self.turn_new)
        excluded = frozenset(self.turn_used | {self.turn_excluded})
        # Only the kinds of the families of combinations the hand may hold (the enumeration looks
        # at no other).
        kinds = families_kinds(families, self.bezique_kinds)
        return pool_from_codes(self.hands[seat], self.marks, excluded, kinds)

    def _legal_declare(self) -> list[Action]:
        seat = self.declarer
        v = self.variant
        family = self.fam
        out: list[Action] = []
        one = v.declarations_per_trick == "one"
        if not (one and self.turn_count > 0) and (family != F_POLISH or self.turn_new):
            families = self._polish_families(seat) if family == F_POLISH else self._combos(seat)
            if families:
                focus = ALL_KINDS
                if family == F_POLISH:
                    # 000: every declaration must include a card of the trick last won.
                    focus = 0
                    for c in self.turn_new:
                        focus |= 1 << (c & 31)
                if family == F_POLISH and self.turn_options is not None:
                    out = list(self.turn_options)  # a compound turn judges cards as at its start
                else:
                    out = enumerate_declarations(
                        self._pool(seat, focus, families),
                        self.trump,
                        self.bezique_kinds,
                        v.packs,
                        self._rules(seat),
                        plain_sequences=family == F_RUBICON,
                        focus=focus,
                        partner_bezique=self._partner_bezique(seat) if v.partnerships else (),
                        marks=self.marks,
                        families=families,
                    )
                    if family == F_POLISH:
                        self.turn_options = tuple(out)
                if family == F_POLISH and self.turn_done:
                    out = self._polish_rest(seat, out)
            if one and self.reserves[seat]:
                out.extend(a for a in self.reserves[seat] if self._reserve_valid(seat, a, True))
        if family == F_ORDINARY:
            out.extend(self._seven_actions(seat))
            if not self.turn_acted and self._may_inquire(seat):
                out.append(INQUIRE)
        elif family == F_POLISH and self.turn_sevens and self._may_exchange():
            out.append(exchange(min(self.turn_sevens)))
        out = sorted(set(out))
        out.append(DONE)
        return out

    def _polish_rest(self, seat: int, options: list[Action]) -> list[Action]:
        """Polish: what a compound turn may still declare once it has declared. A card never scores
        twice in one kind of combination (000), so an option holding a card already declared this turn
        in its kind is gone. But the options, counted at the turn's start, hold one option for copies
        that were interchangeable then (same kind, marks and newness): the same combination may still
        be made of the other copies (the second marriage of clubs of KC KC QC QC). So each option
        gone is tried again with those cards replaced by interchangeable copies still free in its
        kind."""
        done = self.turn_done
        out: list[Action] = []
        gone: list[tuple[Action, int]] = []
        for a in options:
            key = combo_key(a.combo)
            if any((key, c) in done for c in a.refs):
                gone.append((a, key))
            else:
                out.append(a)
        if not gone:
            return out
        marks, new, opened = self.turn_marks, self.turn_new, self.open[seat]
        for a, key in gone:
            cards = list(a.refs)
            for i, c in enumerate(cards):
                if (key, c) not in done:
                    continue
                kind, m, is_new = c & 31, marks[c] & COMBO_MARKS, c in new
                for o in opened:  # an interchangeable copy, free in this kind
                    if (
                        o & 31 == kind
                        and marks[o] & COMBO_MARKS == m
                        and (o in new) == is_new
                        and (key, o) not in done
                        and o not in cards
                    ):
                        cards[i] = o
                        break
                else:
                    break
            else:
                out.append(declare(_COMBOS[a.combo], cards))
        return out

    def _may_combine(self, seat: int) -> bool:
        """Cheap test that the seat may have a combination to declare (see :meth:`_combos`)."""
        return self._combos(seat) != 0

    def _combos(self, seat: int) -> int:
        """The combinations (a mask of families, see :data:`ALL_FAMILIES`) that the hand holds the
        cards of: a king with the queen of its suit, the five cards of a sequence, the two cards of
        bezique, four cards of a rank that makes a four. Under the ordinary rules every declaration
        needs a card never declared (002), so the combination must hold one of those. A cheap superset
        of what :func:`enumerate_declarations` finds, which it is given to skip the rest."""
        present = self.present[seat]
        rubicon = self.fam == F_RUBICON
        # While the stock lasts the hand's cards held by kind are those never declared; 004 lets
        # Rubicon make a combination of declared cards only.
        fresh = present if rubicon else self.fresh[seat]
        # families_held(), inline: this runs after every trick won while the stock lasts.
        out = 0
        married = present & (present << 1) & _KING_BITS  # kings with the queen of their suit
        if married:
            m = married & (fresh | fresh << 1)  # king bits 5, 13, 21, 29 to marriage bits 0 to 3
            out = (m >> 5 & 1) | (m >> 12 & 2) | (m >> 19 & 4) | (m >> 26 & 8)
            trump = self.trump
            for suit in range(4) if rubicon else (trump,) if trump >= 0 else ():
                seq = _SEQUENCE_BITS[suit]
                if present & seq == seq and fresh & seq:
                    out |= SEQUENCE_FAMILY << suit
        q, j = self.bezique_kinds
        pair = (1 << q) | (1 << j)
        if fresh & pair and (
            present & pair == pair or (self.partnered and self._partner_bezique(seat))
        ):
            out |= BEZIQUE_FAMILY  # with partners, 000: the partners' béziques combine
        full = (self.fours[seat] + _FOUR_CARRY) & _FOUR_HIGH
        if full:
            for rank_field, mask, family in _FOUR_MASKS:
                if full & rank_field and fresh & mask:
                    out |= family
        return out

    def _polish_families(self, seat: int) -> int:
        """Polish (000): the families of combinations that the cards of the trick just won complete
        with the seat's open cards (those new cards are the ones never declared)."""
        new = 0
        for c in self.turn_new:
            new |= 1 << (c & 31)
        present = self.open_present[seat]
        fours = self.open_fours[seat]
        q, j = self.bezique_kinds
        return families_held(present, new, fours, self.trump, q, j, False)

    def _may_exchange(self) -> bool:
        tu = self.turn_up
        # 002: a second seven is declared, not exchanged: never exchange a seven for a seven.
        return tu >= 0 and not (tu & 7 == SEVEN and (tu >> 3) & 3 == self.trump)

    def _holds_seven(self, seat: int) -> bool:
        """Whether the seat holds a seven of trumps that has not scored (002). While the stock lasts a
        public card in the hand is either declared (a seven declared has scored) or the turn-up taken
        in exchange for a seven, which is no seven of trumps (a seven turned up is never exchanged):
        so an unscored seven is a hidden one."""
        trump = self.trump
        return trump >= 0 and self.ref_counts[seat][ANY_COPY + SEVEN + trump * 8] > 0

    def _seven_actions(self, seat: int) -> list[Action]:
        if not self._holds_seven(seat):
            return []
        trump = self.trump
        if self._may_exchange():
            return [_SEVEN_DECLARE[trump], _SEVEN_EXCHANGE[trump]]
        return [_SEVEN_DECLARE[trump]]

    def _resolve(self, seat: int, refs: tuple[int, ...]) -> list[int]:
        """Physical cards for a declaration's references; hidden copies are revealed."""
        if self.fam == F_POLISH:
            return list(refs)
        hand = self.hands[seat]
        marks = self.marks
        cards: list[int] = []
        for ref in refs:
            if ref < ANY_COPY:
                cards.append(ref)
                continue
            kind = ref - ANY_COPY
            card = -1
            for c in hand:
                if (
                    c < ANY_COPY
                    and c & 31 == kind
                    and not marks[c]
                    and c != self.turn_excluded
                    and c not in cards
                ):
                    card = c
                    break
            if card < 0:
                hand.remove(ref)
                card = self._reveal(kind)
                hand.append(card)
            cards.append(card)
        return cards

    def _declare_step(self, seat: int, action: Action) -> None:
        if action.verb is _DONE_VERB:
            self._end_turn()
            return
        if action.verb is _INQUIRE_VERB:
            self._inquire(seat)
            return
        self.turn_acted = True
        v = self.variant
        if action.verb is _EXCHANGE_VERB:
            self._exchange(seat, action.refs[0])
        elif action.combo == _SEVEN_OF_TRUMPS:
            card = self._resolve(seat, action.refs)[0]
            self._index_move(seat, ANY_COPY + (card & 31), card)  # shown: now a public card
            self.marks[card] |= SEVEN_MARK
            self.log.append((EV_DECLARE, seat, action.combo, (card,), 10))
            self._credit(seat, v.scores[_SEVEN_OF_TRUMPS], "seven-of-trumps", (card,))
        else:
            self._declare_combo(seat, action)
        legal = self._legal_declare()
        if len(legal) == 1:
            self._end_turn()
        else:
            self._legal = legal

    def _declare_combo(self, seat: int, action: Action) -> None:
        v = self.variant
        combo = _COMBOS[action.combo]
        cards = self._resolve(seat, action.refs)
        marks = self.marks
        newly = frozenset(c for c in cards if not marks[c] & COMBO_MARKS)
        if self.fam != F_POLISH:
            for c in cards:
                if not marks[c]:
                    self._index_move(seat, ANY_COPY + (c & 31), c)  # declared: played as itself
        klass, level = combo_class_level(combo)
        for c in cards:
            marks[c] = with_level(marks[c], klass, level)
        self.turn_count += 1
        self.turn_used.update(cards)
        if self.fam == F_POLISH:
            key = combo_key(combo)
            self.turn_done.update((key, c) for c in cards)
        declared = declare(combo, cards)
        if self.fam == F_RUBICON:
            self._record_scored(seat, combo_key(combo), frozenset(cards))
            if self.trump < 0 and klass == 0:
                # 000: trumps are fixed by the first marriage or sequence declared.
                self._fix_trumps(seat, (cards[0] >> 3) & 3)
        points = v.scores[combo]
        self.log.append((EV_DECLARE, seat, int(combo), tuple(cards), points))
        if v.declarations_per_trick == "one":
            self._announce(seat, (action, declared), newly)
        self._credit(seat, points, _COMBO_TEXTS[combo], tuple(cards))

    def _exchange(self, seat: int, ref: int) -> None:
        v = self.variant
        old = self.turn_up
        if self.fam == F_POLISH:
            # 000: the seven won in the trick is exchanged; a turn-up that is a scoring card becomes an
            # open card (an ace or ten scoring 10 at once).
            seven = ref
            self.turn_sevens.remove(seven)
            self.won[seat].remove(seven)
            self.marks[seven] |= SEVEN_MARK  # it has scored; won again later, it scores no more
            self.turn_up = seven
            self.won[seat].append(old)
            r = old & 7
            self.log.append((EV_EXCHANGE, seat, seven, old))
            if r >= JACK and (r != TEN or (old >> 3) & 3 == self.trump):
                self.open[seat].append(old)
                self.open_present[seat] |= 1 << (old & 31)
                self.open_fours[seat] += _FOUR_FIELD[old & 31]
                self.turn_options = (
                    None  # a new open card: the turn's combinations are counted again
                )
            self._credit(seat, v.scores[_SEVEN_OF_TRUMPS], "exchange", (seven, old))
            if r >= TEN:
                self._credit(seat, 10, "brisque", (old,))
            return
        # 002: the seven goes in place of the turn-up, which is taken into the hand; it cannot be part
        # of a declaration in the same turn.
        seven = self._resolve(seat, (ref,))[0]
        self.hands[seat].remove(seven)
        self._index_del(seat, ANY_COPY + (seven & 31))
        self.marks[seven] |= SEVEN_MARK
        self.turn_up = seven
        self.hands[seat].append(old)
        self._index_add(seat, ANY_COPY + (old & 31))  # not declared: played by its kind
        self.turn_excluded = old
        self.taken_up = old
        self.log.append((EV_EXCHANGE, seat, seven, old))
        self._credit(seat, v.scores[_SEVEN_OF_TRUMPS], "exchange", (seven, old))

    def _end_turn(self) -> None:
        """The declarer is done."""
        if self.fam == F_POLISH:
            self._end_polish_turn(self.declarer)
        self._answered(self.declarer, self.turn_acted)
        self.declarer = -1
        self._next_declarer()

    def _end_polish_turn(self, seat: int) -> None:
        # 000: the seven of trumps won in the trick and not exchanged scores for the trick's winner.
        for c in self.turn_sevens:
            self._credit(seat, self.variant.scores[Combo.SEVEN_OF_TRUMPS], "seven-of-trumps", (c,))
        self.turn_sevens = []
        self.turn_new = frozenset()

    def _finish_declaring(self) -> None:
        if self.in_stock_phase:
            self._draw(self.turn_winner)
        self._after_turn()
