"""Which declarations a seat may make: enumeration of combinations with the re-use rules.

docs/rules.md §1.4: classes A (marriage, sequence), B (bezique and its multiples), C (fours). A card
carries *marks*: the highest level it reached in class A and in class B, and whether it took part in a
four. Under the ordinary rules a card may join a new declaration only at a strictly higher level of a
class (a queen marries once; a royal marriage grows into a sequence; a single bezique into a double), and
every declaration needs at least one card never declared before. Rubicon (004) lets a card be used again
at the *same* level with other cards ("the same combination over again"), never lower, but only to
re-form a scored combination broken by play, or in 004's crosswise marriages (:attr:`Rules.allows`).

Copies that cannot be told apart are merged (see :mod:`arena.game.cards`): a class of equivalent copies
is a list of references, of which a selection takes the first few.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import product
from typing import Final, NamedTuple

from arena.game.actions import Action, Combo, declare
from arena.game.cards import ACE, ANY_COPY, JACK, KING, QUEEN, TEN, make_kind

# Marks on a physical card.
A_LEVEL: Final = 0b11  # 1: married, 2: in a sequence
B_SHIFT: Final = 2
B_LEVEL: Final = 0b111 << B_SHIFT  # 1..4: single, double, triple, quadruple bezique
FOUR_MARK: Final = 1 << 5
COMBO_MARKS: Final = 0b111111
SEVEN_MARK: Final = 1 << 6  # the seven of trumps has scored (declared)

CLASS_A: Final = 0
CLASS_B: Final = 1
CLASS_C: Final = 2

BEZIQUE_LEVELS: Final = (
    Combo.BEZIQUE,
    Combo.DOUBLE_BEZIQUE,
    Combo.TRIPLE_BEZIQUE,
    Combo.QUADRUPLE_BEZIQUE,
)
FOUR_COMBOS: Final = {
    JACK: Combo.FOUR_KNAVES,
    QUEEN: Combo.FOUR_QUEENS,
    KING: Combo.FOUR_KINGS,
    ACE: Combo.FOUR_ACES,
}
SEQUENCE_RANKS: Final = (ACE, TEN, KING, QUEEN, JACK)


def _class_level(combo: int) -> tuple[int, int]:
    if combo in (Combo.MARRIAGE, Combo.ROYAL_MARRIAGE):
        return CLASS_A, 1
    if combo in (Combo.PLAIN_SEQUENCE, Combo.SEQUENCE):
        return CLASS_A, 2
    if Combo.BEZIQUE <= combo <= Combo.QUADRUPLE_BEZIQUE:
        return CLASS_B, combo - Combo.BEZIQUE + 1
    return CLASS_C, 1


# By combination number (looked up at every declaration: Combo is an enum of plain Python).
_CLASS_LEVELS: Final = tuple(_class_level(c) for c in range(len(Combo) + 1))


def combo_class_level(combo: int) -> tuple[int, int]:
    """(class, level) of a combination; fours have level 1 in class C."""
    if 0 <= combo < len(_CLASS_LEVELS):
        return _CLASS_LEVELS[combo]
    return _class_level(combo)


def level_of(marks: int, klass: int) -> int:
    if klass == CLASS_A:
        return marks & A_LEVEL
    if klass == CLASS_B:
        return (marks & B_LEVEL) >> B_SHIFT
    return 1 if marks & FOUR_MARK else 0


def with_level(marks: int, klass: int, level: int) -> int:
    """Marks after the card takes part in a declaration of ``level`` in ``klass``: the highest level
    reached stays (a Polish compound turn may score a sequence before the marriage within it)."""
    if klass == CLASS_A:
        return (marks & ~A_LEVEL) | max(level, marks & A_LEVEL)
    if klass == CLASS_B:
        return (marks & ~B_LEVEL) | (max(level, (marks & B_LEVEL) >> B_SHIFT) << B_SHIFT)
    return marks | FOUR_MARK


# Interchangeable copies of one kind: (their references (a selection of j takes refs[:j]), their
# marks, whether they came from the trick just won (Polish)). A plain tuple, which compiled code
# builds and reads natively (a NamedTuple is built by Python code).
CardClass = tuple[tuple[int, ...], int, bool]


Pool = dict[int, list[CardClass]]  # kind -> classes


def pool_from_codes(
    codes: Sequence[int], marks: Sequence[int], excluded: frozenset[int], kinds: int = -1
) -> Pool:
    """Classes of a hand (ordinary and Rubicon): undeclared copies merge under their kind reference,
    declared ones stay physical. Only the cards of ``kinds`` (a mask; -1: all) are looked at."""
    merged: dict[int, int] = {}
    pool: Pool = {}
    for code in codes:
        if not (kinds >> (code & 31)) & 1:
            continue
        if code >= ANY_COPY:
            merged[code] = merged.get(code, 0) + 1
        elif code in excluded:
            continue
        else:
            m = marks[code] & COMBO_MARKS
            if m == 0:
                ref = ANY_COPY + (code & 31)
                merged[ref] = merged.get(ref, 0) + 1
            else:
                pool.setdefault(code & 31, []).append(((code,), m, False))
    for ref, count in merged.items():
        pool.setdefault(ref & 31, []).append(((ref,) * count, 0, False))
    return pool


def pool_from_cards(cards: Sequence[int], marks: Sequence[int], new: frozenset[int]) -> Pool:
    """Classes of public physical cards (Polish open cards): copies merge when kind, marks and newness
    agree, which under the ordinary re-use rules makes them interchangeable."""
    groups: dict[tuple[int, int, bool], list[int]] = {}
    for c in cards:
        groups.setdefault((c & 31, marks[c] & COMBO_MARKS, c in new), []).append(c)
    pool: Pool = {}
    for (kind, m, is_new), ids in groups.items():
        pool.setdefault(kind, []).append((tuple(sorted(ids)), m, is_new))
    return pool


def _choose(
    classes: Sequence[CardClass], k: int, start: int = 0
) -> Iterator[list[tuple[int, int]]]:
    """All ways to take k cards from the classes: lists of (class index, count)."""
    if k == 0:
        yield []
        return
    for i in range(start, len(classes)):
        avail = len(classes[i][0])
        for j in range(min(k, avail), 0, -1):
            for rest in _choose(classes, k - j, i + 1):
                yield [(i, j), *rest]


Pick = tuple[tuple[int, ...], bool, bool]  # chosen references, any never declared, any new


def _picks(classes: Sequence[CardClass], k: int) -> list[Pick]:
    """The ways to take k cards from the classes, each with its references and whether it holds a
    card never declared and a card of the trick just won."""
    if k == 1:
        return [(c[0][:1], c[1] == 0, c[2]) for c in classes]
    out: list[Pick] = []
    for pick in _choose(classes, k):
        refs: tuple[int, ...] = ()
        undeclared = new = False
        for i, j in pick:
            c = classes[i]
            refs += c[0][:j]
            undeclared = undeclared or c[1] == 0
            new = new or c[2]
        out.append((refs, undeclared, new))
    return out


class Rules(NamedTuple):
    """How the re-use rules apply in this enumeration."""

    rubicon: bool  # same level allowed, subject to ``allows``
    need_undeclared: bool  # at least one card never declared (002)
    need_new: bool  # at least one card of the trick just won (Polish)
    # Rubicon (000, 004): whether a combination (combo key, card references) may score given the
    # combinations of that kind the seat has scored (a fresh one, a broken one re-formed, or 004's
    # crosswise marriages); None: no such test.
    allows: Callable[[int, Sequence[int]], bool] | None = None
    # EB9-643 (three packs or more): a second double bezique may be declared to a bezique on the table
    # that has already served in a double.
    second_double: bool = False


def _combo_key(combo: int) -> int:
    klass, level = combo_class_level(combo)
    if klass == CLASS_C:
        return 100 + combo
    return klass * 10 + level


_COMBO_KEYS: Final = tuple(_combo_key(c) for c in range(len(Combo) + 1))


def combo_key(combo: int) -> int:
    """Combinations that count as 'the same kind' for re-use: marriages, sequences, each bezique level,
    and each four."""
    if 0 <= combo < len(_COMBO_KEYS):
        return _COMBO_KEYS[combo]
    return _combo_key(combo)


ALL_KINDS: Final = (1 << 32) - 1

# Families of combinations, as bits of a mask (which ones a hand may hold, see
# DeclaringTurn._combos): marriages (bit per suit), sequences (bit per suit), bezique and its
# multiples, and the four fours.
MARRIAGE_FAMILY: Final = 1  # << suit
SEQUENCE_FAMILY: Final = 1 << 4  # << suit
BEZIQUE_FAMILY: Final = 1 << 8
FOUR_FAMILIES: Final = {JACK: 1 << 9, QUEEN: 1 << 10, KING: 1 << 11, ACE: 1 << 12}
ALL_FAMILIES: Final = (1 << 13) - 1
_SUIT_MASK: Final = tuple(0xFF << (8 * suit) for suit in range(4))
_MARRIAGE_MASK: Final = tuple(
    (1 << make_kind(KING, s)) | (1 << make_kind(QUEEN, s)) for s in range(4)
)
_SEQUENCE_MASK: Final = tuple(sum(1 << make_kind(r, s) for r in SEQUENCE_RANKS) for s in range(4))
_RANK_MASK: Final = {r: sum(1 << make_kind(r, s) for s in range(4)) for r in FOUR_COMBOS}


def families_kinds(families: int, bezique_kinds: tuple[int, int]) -> int:
    """The kinds that the combinations of ``families`` (a mask, see :data:`ALL_FAMILIES`) are made
    of."""
    out = 0
    for suit in range(4):
        if families >> suit & 1:
            out |= _MARRIAGE_MASK[suit]
        if families & (SEQUENCE_FAMILY << suit):
            out |= _SEQUENCE_MASK[suit]
    if families & BEZIQUE_FAMILY:
        out |= (1 << bezique_kinds[0]) | (1 << bezique_kinds[1])
    for rank, mask in _RANK_MASK.items():
        if families & FOUR_FAMILIES[rank]:
            out |= mask
    return out


def relevant_kinds(
    focus: int, trump: int, bezique_kinds: tuple[int, int], plain_sequences: bool
) -> int:
    """The kinds that can take part in a combination together with a kind of ``focus`` (a mask)."""
    out = 0
    for suit in range(4):
        if focus & _MARRIAGE_MASK[suit]:
            out |= _MARRIAGE_MASK[suit]
        if (suit == trump or plain_sequences) and focus & _SEQUENCE_MASK[suit]:
            out |= _SEQUENCE_MASK[suit]
    bez = (1 << bezique_kinds[0]) | (1 << bezique_kinds[1])
    if focus & bez:
        out |= bez
    for mask in _RANK_MASK.values():
        if focus & mask:
            out |= mask
    return out


def _eligible(pool: Pool, rules: Rules, kind: int, klass: int, level: int) -> list[CardClass]:
    """The classes of ``kind`` in the pool that may join a declaration of ``level`` in ``klass``."""
    cls = pool.get(kind)
    if not cls:
        return []
    if rules.rubicon or (rules.second_double and klass == CLASS_B and level == 2):
        return [c for c in cls if level_of(c[1], klass) <= level]
    return [c for c in cls if level_of(c[1], klass) < level]


def _emit(
    out: list[Action], rules: Rules, combo: Combo, groups: list[tuple[list[CardClass], int]]
) -> None:
    """Append to ``out`` every declaration of ``combo`` taking the given number of cards from each
    group of classes that the rules allow."""
    key = combo_key(combo)
    need_undeclared = rules.need_undeclared
    need_new = rules.need_new
    allows = rules.allows
    for sel in product(*[_picks(classes, k) for classes, k in groups]):
        refs: tuple[int, ...] = ()
        undeclared = new = False
        for pick_refs, pick_undeclared, pick_new in sel:
            refs += pick_refs
            undeclared = undeclared or pick_undeclared
            new = new or pick_new
        if need_undeclared and not undeclared:
            continue
        if need_new and not new:
            continue
        if allows is not None and not allows(key, refs):
            continue
        out.append(declare(combo, refs))


def enumerate_declarations(
    pool: Pool,
    trump: int,
    bezique_kinds: tuple[int, int],
    packs: int,
    rules: Rules,
    plain_sequences: bool,
    focus: int = ALL_KINDS,
    partner_bezique: Sequence[int] = (),
    marks: Sequence[int] = (),
    families: int = ALL_FAMILIES,
) -> list[Action]:
    """Every combination the pool can declare under the rules (without the per-turn limits) that holds
    a kind of ``focus`` (a mask of kinds; Polish declarations must hold a card of the trick just won),
    looking only at the ``families`` of combinations given (a mask, see :data:`ALL_FAMILIES`)."""
    out: list[Action] = []
    if not pool:
        return out
    partner_pool = pool_from_cards(partner_bezique, marks, frozenset()) if partner_bezique else {}

    # Class A: marriages and sequences.
    for suit in range(4):
        if families >> suit & 1 and focus & _MARRIAGE_MASK[suit]:
            kings = _eligible(pool, rules, KING + 8 * suit, CLASS_A, 1)
            if kings:
                queens = _eligible(pool, rules, QUEEN + 8 * suit, CLASS_A, 1)
                if queens:
                    royal = suit == trump or (trump < 0 and rules.rubicon)
                    _emit(
                        out,
                        rules,
                        Combo.ROYAL_MARRIAGE if royal else Combo.MARRIAGE,
                        [(kings, 1), (queens, 1)],
                    )
        if (
            families & SEQUENCE_FAMILY << suit
            and (suit == trump or plain_sequences)
            and focus & _SEQUENCE_MASK[suit]
        ):
            groups = []
            for rank in SEQUENCE_RANKS:
                cls = _eligible(pool, rules, rank + 8 * suit, CLASS_A, 2)
                if not cls:
                    break
                groups.append((cls, 1))
            else:
                trump_seq = suit == trump or trump < 0
                _emit(out, rules, Combo.SEQUENCE if trump_seq else Combo.PLAIN_SEQUENCE, groups)
    # Class B: bezique and its multiples.
    queen_kind, knave_kind = bezique_kinds
    if families & BEZIQUE_FAMILY and focus & ((1 << queen_kind) | (1 << knave_kind)):
        for level in range(1, packs + 1):
            qs = _eligible(pool, rules, queen_kind, CLASS_B, level)
            js = _eligible(pool, rules, knave_kind, CLASS_B, level)
            if level > 1 and partner_pool:
                qs = qs + [c for c in partner_pool.get(queen_kind, ()) if level_of(c[1], 1) < level]
                js = js + [c for c in partner_pool.get(knave_kind, ()) if level_of(c[1], 1) < level]
            if sum(len(c[0]) for c in qs) < level or sum(len(c[0]) for c in js) < level:
                continue  # a higher level may still be open to cards that this one excludes
            if level == 2 and rules.second_double and not rules.rubicon:
                # EB9-643 (docs/rules.md §3.1): a second double is declared to one bezique of a
                # declared double, one queen and one knave of it with a new queen and knave: never
                # two queens or two knaves of the double, nor one of its cards without its pair.
                q_old = [c for c in qs if level_of(c[1], CLASS_B) == 2]
                j_old = [c for c in js if level_of(c[1], CLASS_B) == 2]
                q_new = [c for c in qs if level_of(c[1], CLASS_B) < 2]
                j_new = [c for c in js if level_of(c[1], CLASS_B) < 2]
                combo = BEZIQUE_LEVELS[1]
                _emit(out, rules, combo, [(q_new, 2), (j_new, 2)])
                _emit(out, rules, combo, [(q_old, 1), (q_new, 1), (j_old, 1), (j_new, 1)])
                continue
            _emit(out, rules, BEZIQUE_LEVELS[level - 1], [(qs, level), (js, level)])
    # Class C: fours of a kind, irrespective of suit.
    for rank, combo in FOUR_COMBOS.items():
        if not families & FOUR_FAMILIES[rank] or not focus & _RANK_MASK[rank]:
            continue
        cls = []
        for suit in range(4):
            cls.extend(_eligible(pool, rules, rank + 8 * suit, CLASS_C, 1))
        if sum(len(c[0]) for c in cls) >= 4:
            _emit(out, rules, combo, [(cls, 4)])
    return out
