"""The declaring turn: after winning a trick and before drawing (docs/rules.md §1.3 to §1.5, §2.3,
§5.3, §6.4).

The trick's winner may declare combinations, exchange or declare the seven of trumps, or be done. The
turn is a phase of its own only when there is something to decide; otherwise play moves straight on to the
draw. This mixin holds the turn's logic; :class:`arena.game.state.GameState` holds the state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from arena.game.actions import DONE, Action, Combo, Verb, declare, exchange
from arena.game.cards import ACE, ANY_COPY, JACK, KING, QUEEN, SEVEN, TEN, make_kind
from arena.game.declarations import (
    ALL_KINDS,
    B_LEVEL,
    COMBO_MARKS,
    SEVEN_MARK,
    Pool,
    Rules,
    combo_class_level,
    combo_key,
    enumerate_declarations,
    level_of,
    pool_from_cards,
    pool_from_codes,
    relevant_kinds,
    with_level,
)
from arena.game.events import DECLARE, EV_DECLARE, EV_EXCHANGE, EV_TRUMPS
from arena.game.results import DealResult, ScoreItem
from arena.game.variants import Family, Variant

_KING_BITS: Final = sum(1 << make_kind(KING, s) for s in range(4))
MARRIAGE_KEY: Final = combo_key(Combo.MARRIAGE)  # marriages, royal or not: one kind for re-use


class StateFields:
    """Every field of a game state, declared once (GameState's behaviour is spread over mixins)."""

    __slots__ = (
        "_legal",
        "cb_active",
        "cb_queue",
        "deal_index",
        "deal_points",
        "dealer",
        "deals",
        "dealt",
        "decks",
        "declare_queue",
        "declarer",
        "duel_index",
        "duels",
        "first_dealer",
        "game_tricks",
        "hands",
        "heap",
        "history",
        "in_stock_phase",
        "items",
        "last_drawn",
        "last_trick",
        "leader",
        "log",
        "marks",
        "next_pack",
        "open",
        "phase",
        "reformed",
        "reserves",
        "scored_sets",
        "seed",
        "stock",
        "stock_pos",
        "to_act",
        "totals",
        "trick",
        "trick_order",
        "tricks_done",
        "tricks_won",
        "trump",
        "turn_count",
        "turn_done",
        "turn_excluded",
        "turn_marks",
        "turn_new",
        "turn_options",
        "turn_sevens",
        "turn_up",
        "turn_used",
        "turn_winner",
        "variant",
        "winner_seat",
        "won",
    )

    variant: Variant
    seed: int
    decks: tuple[tuple[int, ...], ...]
    first_dealer: int
    deal_index: int
    dealer: int
    totals: list[int]
    deal_points: list[int]
    items: list[ScoreItem]
    deals: list[DealResult]
    dealt: tuple[tuple[int, ...], ...]  # the hands as dealt in this deal (kind codes)
    phase: int
    to_act: int
    leader: int
    hands: list[list[int]]
    stock: list[int]
    stock_pos: int
    turn_up: int
    trump: int
    next_pack: list[int]
    marks: list[int]
    trick: list[int]
    last_trick: tuple[
        tuple[int, ...], tuple[int, ...], int
    ]  # (seats, cards, winner); winner -1: none
    tricks_done: int
    won: list[list[int]]
    open: list[list[int]]
    heap: list[int]
    log: list[tuple[object, ...]]
    history: list[tuple[int, Action]]
    declarer: int
    declare_queue: list[int]  # partners still to declare after this trick (four-handed partners)
    turn_winner: int  # the trick's winner, who draws first
    trick_order: tuple[int, ...]  # the seats playing the current trick, in order
    duels: tuple[tuple[int, int], ...]  # 000: four-handed, the last eight tricks as two duels
    duel_index: int
    game_tricks: int  # tricks completed in the whole game (consultation: who decides)
    tricks_won: list[int]
    turn_new: frozenset[int]
    turn_used: set[int]
    turn_count: int
    # Polish: a compound declaration is made "at once" (000), so within the turn each card is judged by
    # its marks at the start of the turn, and may serve once per kind of combination.
    turn_marks: list[int]
    turn_done: set[tuple[int, int]]  # (combination key, card) used this turn
    turn_options: tuple[Action, ...] | None  # Polish: the turn's combinations, enumerated once
    turn_excluded: int
    turn_sevens: list[int]
    reserves: list[list[Action]]  # each seat's combinations held "to score" (004)
    # Rubicon: each seat's scored combinations by combo key, and the broken ones already re-formed.
    scored_sets: list[dict[int, list[frozenset[int]]]]
    reformed: list[set[tuple[int, frozenset[int]]]]
    cb_active: list[bool]
    cb_queue: list[int]
    last_drawn: list[int]
    in_stock_phase: bool
    winner_seat: int
    _legal: list[Action] | None


class DeclaringTurn(StateFields):
    """Methods of the declaring turn, mixed into GameState."""

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def bezique_kinds(self) -> tuple[int, int]: ...

        def _credit(
            self, seat: int, points: int, reason: str, cards: tuple[int, ...] = ()
        ) -> None: ...

        def _reveal(self, kind: int) -> int: ...

        def _draw(self, winner: int) -> None: ...

        def _after_turn(self) -> None: ...

    def _start_turn(self, winner: int) -> None:
        """After a trick: the winner may declare, then (000) each of his partners."""
        self.turn_winner = winner
        v = self.variant
        self.declare_queue = [winner, *v.partners(winner)] if v.partnerships else [winner]
        self._next_declarer()

    def _next_declarer(self) -> None:
        if not self.declare_queue:
            self._finish_declaring()
            return
        winner = self.declare_queue.pop(0)
        self.declarer = winner
        self.turn_used = set()
        self.turn_count = 0
        self.turn_excluded = -1
        if self.variant.family is Family.POLISH:
            self.turn_marks = self.marks[:]
            self.turn_done = set()
            self.turn_options = None
        else:
            self.turn_new = frozenset()
            self.turn_sevens = []
        self.phase = DECLARE
        self.to_act = winner
        if self.variant.family is Family.ORDINARY and not (
            self.reserves[winner] or self._may_combine(winner) or self._holds_seven(winner)
        ):
            self._end_turn()  # the common case: nothing to declare, nothing to decide
            return
        legal = self._legal_declare()
        if len(legal) == 1:  # only "done": nothing to decide
            self._end_turn()
        else:
            self._legal = legal

    def _rules(self, seat: int) -> Rules:
        v = self.variant
        if v.family is Family.RUBICON:
            scored = self.scored_sets[seat]
            if not scored:
                return Rules(True, False, False)
            return Rules(
                True, False, False, lambda key, refs: self._rubicon_allows(seat, key, refs)
            )
        if v.family is Family.POLISH:
            return Rules(False, True, True)
        return Rules(False, True, False, second_double=v.packs >= 3)

    def _rubicon_allows(self, seat: int, key: int, refs: Sequence[int]) -> bool:
        """Rubicon (000, 004; docs/rules.md §6.4): whether a combination of kind ``key`` made of ``refs`` may
        score. A card may serve again in the same kind of combination only

        - to re-form a scored combination broken by play: one of its cards has been played to a trick
          (000: "If a card of a declared combination be played to a trick, another card of the same
          rank may be used to form a second similar combination"), and the new combination holds every
          card of it still on the table with substitutes from the table or the hand (004: "If a
          combination, duly scored, is broken up, one or more cards must be substituted"); each broken
          combination is re-formed once;
        - or in 004's crosswise marriages: a king and a queen from two different scored marriages of
          the suit, all four cards still on the table, not yet married to each other.

        Regrouping cards of which none has been played never scores again (five declared queens, none
        played, do not make a second four queens)."""
        records = self.scored_sets[seat].get(key)
        if not records:
            return True
        cards = [c for c in refs if c < ANY_COPY]
        if not any(c in r for r in records for c in cards):
            return True  # none of these cards has served in this kind of combination
        this = frozenset(refs)
        if this in records:
            return False
        hand = set(self.hands[seat])
        reformed = self.reformed[seat]
        for r in records:
            if (key, r) in reformed:
                continue
            left = [c for c in r if c in hand]
            if left and len(left) < len(r) and all(c in this for c in left):
                return True  # a broken combination re-formed
        if key == MARRIAGE_KEY and len(cards) == 2:
            king = [r for r in records if cards[0] in r and r <= hand]
            queen = [r for r in records if cards[1] in r and r <= hand]
            if any(a != b for a in king for b in queen):
                return True  # 004: crosswise re-marriage
        return False

    def _pool(self, seat: int, focus: int) -> Pool:
        if self.variant.family is Family.POLISH:
            relevant = relevant_kinds(focus, self.trump, self.bezique_kinds, False)
            cards = [c for c in self.open[seat] if relevant >> (c & 31) & 1]
            return pool_from_cards(cards, self.turn_marks, self.turn_new)
        excluded = frozenset(self.turn_used | {self.turn_excluded})
        return pool_from_codes(self.hands[seat], self.marks, excluded)

    def _partner_bezique(self, seat: int) -> list[int]:
        """000: with partners, double and triple bezique may be formed from the béziques declared
        by either partner: the partners' declared bezique cards on the table."""
        q, j = self.bezique_kinds
        marks = self.marks
        return [
            c
            for p in self.variant.partners(seat)
            for c in self.hands[p]
            if c < ANY_COPY and c & 31 in (q, j) and marks[c] & B_LEVEL
        ]

    def _legal_declare(self) -> list[Action]:
        seat = self.declarer
        v = self.variant
        family = v.family
        out: list[Action] = []
        one = v.declarations_per_trick == "one"
        if not (one and self.turn_count > 0) and (family is not Family.POLISH or self.turn_new):
            if family is Family.POLISH or self._may_combine(seat):
                focus = ALL_KINDS
                if family is Family.POLISH:
                    # 000: every declaration must include a card of the trick last won.
                    focus = 0
                    for c in self.turn_new:
                        focus |= 1 << (c & 31)
                if family is Family.POLISH and self.turn_options is not None:
                    out = list(self.turn_options)  # a compound turn judges cards as at its start
                else:
                    out = enumerate_declarations(
                        self._pool(seat, focus),
                        self.trump,
                        self.bezique_kinds,
                        v.packs,
                        self._rules(seat),
                        plain_sequences=family is Family.RUBICON,
                        focus=focus,
                        partner_bezique=self._partner_bezique(seat) if v.partnerships else (),
                        marks=self.marks,
                    )
                    if family is Family.POLISH:
                        self.turn_options = tuple(out)
            if family is Family.POLISH and self.turn_done:
                done = self.turn_done
                out = [a for a in out if not any((combo_key(a.combo), c) in done for c in a.refs)]
            if one and self.reserves[seat]:
                out.extend(a for a in self.reserves[seat] if self._reserve_valid(seat, a, True))
        if family is Family.ORDINARY:
            out.extend(self._seven_actions(seat))
        elif family is Family.POLISH and self.turn_sevens and self._may_exchange():
            out.append(exchange(min(self.turn_sevens)))
        out = sorted(set(out))
        out.append(DONE)
        return out

    def _may_combine(self, seat: int) -> bool:
        """Cheap test that the hand holds the kinds of at least one combination."""
        hand = self.hands[seat]
        present = 0
        for c in hand:
            present |= 1 << (c & 31)
        if present & (present << 1) & _KING_BITS:  # a king with the queen of its suit
            return True
        q, j = self.bezique_kinds
        if present >> q & 1 and present >> j & 1:
            return True
        # Sequences hold the king and queen of their suit, so the marriage test covers them.
        if len(hand) < 4:
            return False
        ranks = [c & 7 for c in hand]
        count = ranks.count
        return count(ACE) >= 4 or count(KING) >= 4 or count(QUEEN) >= 4 or count(JACK) >= 4

    def _may_exchange(self) -> bool:
        tu = self.turn_up
        # 002: a second seven is declared, not exchanged: never exchange a seven for a seven.
        return tu >= 0 and not (tu & 7 == SEVEN and (tu >> 3) & 3 == self.trump)

    def _holds_seven(self, seat: int) -> bool:
        """Whether the seat holds a seven of trumps that has not scored (002)."""
        seven = make_kind(SEVEN, self.trump)
        ref = ANY_COPY + seven
        marks = self.marks
        for c in self.hands[seat]:
            if c == ref or (
                c < ANY_COPY and c & 31 == seven and not marks[c] and c != self.turn_excluded
            ):
                return True
        return False

    def _seven_actions(self, seat: int) -> list[Action]:
        if not self._holds_seven(seat):
            return []
        ref = ANY_COPY + make_kind(SEVEN, self.trump)
        acts = [declare(Combo.SEVEN_OF_TRUMPS, (ref,))]
        if self._may_exchange():
            acts.append(exchange(ref))
        return acts

    def _reserve_valid(self, seat: int, action: Action, this_turn: bool = False) -> bool:
        """Whether a combination held "to score" may still be scored (004): its cards are still the
        seat's (a card of it played ends the claim; copies not yet declared are interchangeable, so a
        kind reference needs enough of them in hand), none has served in a higher declaration of its
        class, and in Rubicon the re-use rules still allow it. ``this_turn``: scored in the current
        declaring turn, which excludes the turn-up just taken in exchange for the seven (002)."""
        hand = self.hands[seat]
        marks = self.marks
        klass, level = combo_class_level(action.combo)
        rubicon = self.variant.family is Family.RUBICON
        excluded = self.turn_excluded if this_turn else -1
        for ref in set(action.refs):
            if ref >= ANY_COPY:
                kind = ref - ANY_COPY
                free = sum(
                    1
                    for c in hand
                    if c == ref
                    or (c < ANY_COPY and c & 31 == kind and not marks[c] and c != excluded)
                )
                if free < action.refs.count(ref):
                    return False
                continue
            if ref not in hand or ref == excluded:
                return False
            reached = level_of(marks[ref], klass)
            if reached > level or (reached == level and not rubicon):
                return False
        if rubicon:
            return self._rubicon_allows(seat, combo_key(action.combo), list(action.refs))
        return True

    def _refresh_reserves(self, seat: int) -> None:
        """004: drop the claims "to score" that have lapsed."""
        res = self.reserves[seat]
        if res:
            self.reserves[seat] = [a for a in res if self._reserve_valid(seat, a)]

    def _announce(self, seat: int, declared: tuple[Action, Action], newly: frozenset[int]) -> None:
        """One declaration per trick (Portland Club option; Rubicon, 004): after scoring one, every
        other combination the seat could declare at that moment is held "to score" (000: "forty, and
        twenty to score"), together with those that the newly laid cards form with the cards on the
        table (004: four kings, then bezique: the marriage of the king and queen of spades)."""
        v = self.variant
        marks = self.marks
        hand = self.hands[seat]
        pool = pool_from_codes(hand, marks, frozenset((self.turn_excluded,)))
        found = enumerate_declarations(
            pool,
            self.trump,
            self.bezique_kinds,
            v.packs,
            self._rules(seat),
            plain_sequences=v.family is Family.RUBICON,
            partner_bezique=self._partner_bezique(seat) if v.partnerships else (),
            marks=marks,
        )
        if v.family is Family.ORDINARY and newly:
            # 004: combinations of cards on the table only, one of them newly laid (not otherwise
            # declarable under 002, which wants a card never declared).
            table = [c for c in hand if c < ANY_COPY and marks[c] & COMBO_MARKS]
            found += enumerate_declarations(
                pool_from_cards(table, marks, newly),
                self.trump,
                self.bezique_kinds,
                v.packs,
                Rules(False, False, True),
                plain_sequences=False,
            )
        held = [
            a for a in self.reserves[seat] if a not in declared and self._reserve_valid(seat, a)
        ]
        known = set(held)
        for a in found:
            if a not in declared and a not in known:
                held.append(a)
                known.add(a)
        self.reserves[seat] = held

    def _resolve(self, seat: int, refs: tuple[int, ...]) -> list[int]:
        """Physical cards for a declaration's references; hidden copies are revealed."""
        v = self.variant
        if v.family is Family.POLISH:
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
        if action.verb is Verb.DONE:
            self._end_turn()
            return
        v = self.variant
        if action.verb is Verb.EXCHANGE:
            self._exchange(seat, action.refs[0])
        elif action.combo == Combo.SEVEN_OF_TRUMPS:
            card = self._resolve(seat, action.refs)[0]
            self.marks[card] |= SEVEN_MARK
            self.log.append((EV_DECLARE, seat, action.combo, (card,), 10))
            self._credit(seat, v.scores[Combo.SEVEN_OF_TRUMPS], "seven-of-trumps", (card,))
        else:
            self._declare_combo(seat, action)
        legal = self._legal_declare()
        if len(legal) == 1:
            self._end_turn()
        else:
            self._legal = legal

    def _declare_combo(self, seat: int, action: Action) -> None:
        v = self.variant
        combo = Combo(action.combo)
        cards = self._resolve(seat, action.refs)
        marks = self.marks
        newly = frozenset(c for c in cards if not marks[c] & COMBO_MARKS)
        klass, level = combo_class_level(combo)
        for c in cards:
            marks[c] = with_level(marks[c], klass, level)
        self.turn_count += 1
        self.turn_used.update(cards)
        if v.family is Family.POLISH:
            key = combo_key(combo)
            self.turn_done.update((key, c) for c in cards)
        declared = declare(combo, cards)
        if v.family is Family.RUBICON:
            self._record_scored(seat, combo_key(combo), frozenset(cards))
            if self.trump < 0 and klass == 0:
                # 000: trumps are fixed by the first marriage or sequence declared.
                self._fix_trumps(seat, (cards[0] >> 3) & 3)
        points = v.scores[combo]
        self.log.append((EV_DECLARE, seat, int(combo), tuple(cards), points))
        if v.declarations_per_trick == "one":
            self._announce(seat, (action, declared), newly)
        self._credit(seat, points, combo.text, tuple(cards))

    def _record_scored(self, seat: int, key: int, cards: frozenset[int]) -> None:
        """Rubicon: remember a scored combination; the broken ones it re-forms are used up (each broken
        combination is re-formed once, see :meth:`_rubicon_allows`)."""
        scored = self.scored_sets[seat]
        records = scored.get(key)
        if records is None:
            scored[key] = [cards]
            return
        hand = self.hands[seat]
        for r in records:
            left = [c for c in r if c in hand]
            if left and len(left) < len(r) and all(c in cards for c in left):
                self.reformed[seat].add((key, r))
        scored[key] = [*records, cards]

    def _fix_trumps(self, seat: int, suit: int) -> None:
        """Rubicon: the first marriage or sequence fixes trumps (000); claims "to score" held before
        are renamed: marriages and sequences in the other suits are plain ones."""
        self.trump = suit
        self.log.append((EV_TRUMPS, seat, suit))
        for s, res in enumerate(self.reserves):
            renamed = []
            for a in res:
                if (a.refs[0] >> 3) & 3 != suit:
                    if a.combo == Combo.ROYAL_MARRIAGE:
                        a = declare(Combo.MARRIAGE, a.refs)
                    elif a.combo == Combo.SEQUENCE:
                        a = declare(Combo.PLAIN_SEQUENCE, a.refs)
                renamed.append(a)
            self.reserves[s] = renamed

    def _exchange(self, seat: int, ref: int) -> None:
        v = self.variant
        old = self.turn_up
        if v.family is Family.POLISH:
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
                self.turn_options = (
                    None  # a new open card: the turn's combinations are counted again
                )
            self._credit(seat, v.scores[Combo.SEVEN_OF_TRUMPS], "exchange", (seven, old))
            if r >= TEN:
                self._credit(seat, 10, "brisque", (old,))
            return
        # 002: the seven goes in place of the turn-up, which is taken into the hand; it cannot be part
        # of a declaration in the same turn.
        seven = self._resolve(seat, (ref,))[0]
        self.hands[seat].remove(seven)
        self.marks[seven] |= SEVEN_MARK
        self.turn_up = seven
        self.hands[seat].append(old)
        self.turn_excluded = old
        self.log.append((EV_EXCHANGE, seat, seven, old))
        self._credit(seat, v.scores[Combo.SEVEN_OF_TRUMPS], "exchange", (seven, old))

    def _end_turn(self) -> None:
        """The declarer is done."""
        seat = self.declarer
        if self.variant.family is Family.POLISH:
            for c in self.turn_sevens:
                self._credit(
                    seat, self.variant.scores[Combo.SEVEN_OF_TRUMPS], "seven-of-trumps", (c,)
                )
            self.turn_sevens = []
            self.turn_new = frozenset()
        self.declarer = -1
        self._next_declarer()

    def _finish_declaring(self) -> None:
        if self.in_stock_phase:
            self._draw(self.turn_winner)
        self._after_turn()
