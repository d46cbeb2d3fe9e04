"""Three-handed consultation played as a series (000; docs/rules.md §3.2).

000: "Sometimes the three players cut, the one who cuts the highest card plays against the other two
in consultation, and continues to do so till the allies win a game, when the two cut as before to see
who shall be the single player." The match's three players are numbered in the order they were given
(the single seat's player, then the allies'); a seating lists the players of each seat, the single
player's seat 0 first, then the two allies in that order. Every cut is drawn from the seed of the game
it comes before (keyed by the referee's secret like that game's deals), and recorded.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.game.cutting import Cut, draw_cut

Seating = tuple[tuple[int, ...], ...]

PURPOSE = "single player"  # what the cut decides (an independent draw from the cut for the deal)
PACKS = 2  # 000: "Only two packs are then used"


def _around(single: int, players: int = 3) -> Seating:
    return ((single,), tuple(p for p in range(players) if p != single))


def first_seating(seed: int) -> tuple[Seating, Cut]:
    """The three players cut; the highest plays alone."""
    cut = draw_cut(seed, (0, 1, 2), PACKS, PURPOSE)
    return _around(cut.winner), cut


def next_seating(seating: Seating, allies_won: bool, seed: int) -> tuple[Seating, Cut | None]:
    """After a game: the single player keeps his seat unless the allies won it; then the two allies
    cut, and the highest plays alone (the single player of the game lost joins the other ally)."""
    if not allies_won:
        return seating, None
    cut = draw_cut(seed, seating[1], PACKS, PURPOSE)
    return _around(cut.winner), cut


def allies_won(ranking: Sequence[int]) -> bool:
    """Whether a game's result (each side's place: the single player's side 0, the allies' side 1)
    was won by the allies: what brings the next cut."""
    return tuple(ranking) == (1, 0)
