"""Claims held "to score" and Rubicon's re-use of declared cards (docs/rules.md §2.3, §4.2, §6.4):
which combinations a seat may still score later, and which a card already scored may serve in again.
:class:`Claims` is one layer of :class:`arena.game.state.GameState` (see :mod:`arena.game.fields`),
below the declaring turn (:class:`arena.game.declaring_turn.DeclaringTurn`), which uses it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from arena.game.actions import Action, Combo, declare
from arena.game.cards import ANY_COPY
from arena.game.declarations import (
    B_LEVEL,
    COMBO_MARKS,
    Rules,
    combo_class_level,
    combo_key,
    enumerate_declarations,
    level_of,
    pool_from_cards,
    pool_from_codes,
)
from arena.game.events import EV_TRUMPS
from arena.game.fields import F_ORDINARY, F_POLISH, F_RUBICON
from arena.game.hands import HandIndex

_POLISH_RULES: Final = Rules(False, True, True)
_RUBICON_RULES: Final = Rules(True, False, False)
_ORDINARY_RULES: Final = (
    Rules(False, True, False, second_double=False),
    Rules(False, True, False, second_double=True),
)
MARRIAGE_KEY: Final = combo_key(Combo.MARRIAGE)  # marriages, royal or not: one kind for re-use


class Claims(HandIndex):
    """Methods of the claims "to score" and of Rubicon's re-use rules, mixed into GameState."""

    __slots__ = ()

    def _rules(self, seat: int) -> Rules:
        v = self.variant
        if self.fam == F_RUBICON:
            scored = self.scored_sets[seat]
            if not scored:
                return _RUBICON_RULES
            return Rules(
                True, False, False, lambda key, refs: self._rubicon_allows(seat, key, refs)
            )
        if self.fam == F_POLISH:
            return _POLISH_RULES
        return _ORDINARY_RULES[1 if v.packs >= 3 else 0]

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

    def _partner_bezique(self, seat: int) -> list[int]:
        """000: with partners, double and triple bezique may be formed from the béziques declared
        by either partner: the partners' declared bezique cards on the table."""
        q, j = self.bezique_kinds
        marks = self.marks
        used = self.turn_used  # 002: no card is part of two declarations in one turn
        return [
            c
            for p in self.variant.partners(seat)
            for c in self.hands[p]
            if c < ANY_COPY and c & 31 in (q, j) and marks[c] & B_LEVEL and c not in used
        ]

    def _reserve_valid(self, seat: int, action: Action, this_turn: bool = False) -> bool:
        """Whether a combination held "to score" may still be scored (004): its cards are still the
        seat's (a card of it played ends the claim; copies not yet declared are interchangeable, so a
        kind reference needs enough of them in hand), none has served in a higher declaration of its
        class, and in Rubicon the re-use rules still allow it. ``this_turn``: scored in the current
        declaring turn, which excludes the turn-up just taken in exchange for the seven (002)."""
        hand = self.hands[seat]
        marks = self.marks
        klass, level = combo_class_level(action.combo)
        rubicon = self.fam == F_RUBICON
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
            plain_sequences=self.fam == F_RUBICON,
            partner_bezique=self._partner_bezique(seat) if v.partnerships else (),
            marks=marks,
        )
        if self.fam == F_ORDINARY and newly:
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
