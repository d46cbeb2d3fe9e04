"""Each hand's index, kept up to date card by card: how many cards a seat holds under each card
reference, its references in order with the play actions they give, the kinds it holds, and its
count of fours (see :class:`arena.game.fields.StateFields`). :class:`HandIndex` is one layer of
:class:`arena.game.state.GameState` (see :mod:`arena.game.fields`); the declaring turn and trick
play change a hand through it.
"""

from __future__ import annotations

from typing import Final

from arena.game.actions import PLAY_ACTIONS
from arena.game.cards import ACE, ANY_COPY, JACK, KINDS_PER_PACK, KING, QUEEN
from arena.game.scoring import Scoring

# Counting knaves, queens, kings and aces in one sum: an 8-bit field each; a field reaches 4 exactly
# when adding 124 to it sets its high bit.
_FOUR_FIELD: Final = tuple(
    1 << (8 * (ACE, KING, QUEEN, JACK).index(c & 7)) if c & 7 in (ACE, KING, QUEEN, JACK) else 0
    for c in range(ANY_COPY + 32)
)

_PLAY: Final = PLAY_ACTIONS


def _insertion_point(refs: list[int], ref: int) -> int:
    """Where ``ref`` goes in the sorted list (a hand's few references: a plain scan)."""
    i = 0
    n = len(refs)
    while i < n and refs[i] < ref:
        i += 1
    return i


# Whether this module runs compiled (mypyc): then a scan of unboxed integers beats list.index.
_COMPILED: Final = not __file__.endswith(".py")


def _position(items: list[int], x: int) -> int:
    """Where ``x`` first occurs in ``items`` (a hand, or its few references), or -1: compiled, a scan
    of unboxed integers, several times cheaper than ``list.index`` or ``in`` with their generic
    comparisons (the play of every card looks up its card twice); interpreted, ``list.index``, which
    is the faster there."""
    if not _COMPILED:
        try:
            return items.index(x)
        except ValueError:
            return -1
    i = 0
    n = len(items)
    while i < n:
        if items[i] == x:
            return i
        i += 1
    return -1


def _index(items: list[int], x: int) -> int:
    """``items.index(x)`` by :func:`_position`: a ValueError if ``x`` is missing."""
    if not _COMPILED:
        return items.index(x)
    i = _position(items, x)
    if i < 0:
        raise ValueError(f"{x} is not in the list")
    return i


class HandIndex(Scoring):
    """Methods that keep each hand's index, mixed into GameState."""

    __slots__ = ()

    def _index_add(self, seat: int, ref: int) -> None:
        """A card enters the seat's hand under ``ref`` (see StateFields.ref_counts)."""
        counts = self.ref_counts[seat]
        n: int = counts[ref]
        counts[ref] = n + 1
        kind = ref & 31
        if not n:
            refs = self.play_refs[seat]
            i = _insertion_point(refs, ref)
            refs.insert(i, ref)
            self.plays[seat].insert(i, _PLAY[ref])
            if ref >= ANY_COPY:
                fresh = self.fresh
                x: int = fresh[seat]
                fresh[seat] = x | (1 << kind)
        kinds = self.kind_counts[seat]
        k: int = kinds[kind]
        if not k:
            present = self.present
            x = present[seat]
            present[seat] = x | (1 << kind)
        kinds[kind] = k + 1
        fours = self.fours
        x = fours[seat]
        fours[seat] = x + _FOUR_FIELD[kind]

    def _index_del(self, seat: int, ref: int) -> None:
        """A card held under ``ref`` leaves the seat's hand."""
        counts = self.ref_counts[seat]
        n: int = counts[ref] - 1
        counts[ref] = n
        kind = ref & 31
        if not n:
            refs = self.play_refs[seat]
            i = _index(refs, ref)
            refs.pop(i)
            self.plays[seat].pop(i)
            if ref >= ANY_COPY:
                fresh = self.fresh
                x: int = fresh[seat]
                fresh[seat] = x & ~(1 << kind)
        kinds = self.kind_counts[seat]
        k: int = kinds[kind] - 1
        kinds[kind] = k
        if not k:
            present = self.present
            x = present[seat]
            present[seat] = x & ~(1 << kind)
        fours = self.fours
        x = fours[seat]
        fours[seat] = x - _FOUR_FIELD[kind]

    def _index_move(self, seat: int, old: int, new: int) -> None:
        """A card of the hand is now held under ``new`` rather than ``old`` (its kind reference, until
        it is declared)."""
        counts = self.ref_counts[seat]
        refs = self.play_refs[seat]
        plays = self.plays[seat]
        n = counts[old] - 1
        counts[old] = n
        if not n:
            i = _index(refs, old)
            refs.pop(i)
            plays.pop(i)
            if old >= ANY_COPY:
                self.fresh[seat] &= ~(1 << (old & 31))
        n = counts[new]
        counts[new] = n + 1
        if not n:
            i = _insertion_point(refs, new)
            refs.insert(i, new)
            plays.insert(i, _PLAY[new])
            if new >= ANY_COPY:
                self.fresh[seat] |= 1 << (new & 31)

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
