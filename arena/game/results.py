"""Score items, deal results, game results, and the Rubicon settlement (docs/rules.md §6).

A deal's result lists every score item so that a transcript can explain every point.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.game.cards import card_text


@dataclass(frozen=True, slots=True)
class ScoreItem:
    """Points credited to a seat, with the reason: a combination's text name (``royal-marriage``),
    ``brisques``, ``last-trick``, ``seven-turn-up``, ``exchange``, ``seven-of-trumps``, ``game``,
    ``rubicon-points`` and so on, and the cards involved."""

    seat: int
    reason: str
    points: int
    cards: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        cards = " ".join(card_text(c) for c in self.cards)
        what = f"{self.reason} {cards}" if cards else self.reason
        return f"seat {self.seat}: {what} {self.points:+d}"


@dataclass(frozen=True, slots=True)
class DealResult:
    index: int
    dealer: int
    items: tuple[ScoreItem, ...]
    points: tuple[int, ...]  # points made in this deal, per seat
    totals: tuple[int, ...]  # game totals after this deal, per seat
    brisques: tuple[int, ...]  # brisques (aces and tens) taken, per seat
    completed: bool = True  # False when the game was won mid-deal (game_end = "immediate")


@dataclass(frozen=True, slots=True)
class GameResult:
    """The outcome of a game: sides (lists of seats), the ranking of the sides (best first; tied sides
    share a place), each seat's final score, and the deals. This is what a TrueSkill update takes."""

    sides: tuple[tuple[int, ...], ...]
    ranking: tuple[int, ...]  # ranking[i] = place of side i (0 = first); equal places are a draw
    scores: tuple[int, ...]  # final game score per seat
    side_scores: tuple[int, ...]  # per side: the sum of its seats' scores
    deals: tuple[DealResult, ...]
    team_sizes: tuple[int, ...]  # players sharing each seat (consultation), else 1s
    settlement: tuple[ScoreItem, ...] = ()  # Rubicon: how the game score was reckoned

    @property
    def winners(self) -> tuple[int, ...]:
        """Seats on the sides in first place; empty on a draw between all sides."""
        if len(set(self.ranking)) == 1:
            return ()
        return tuple(
            s
            for side, place in zip(self.sides, self.ranking, strict=True)
            if place == 0
            for s in side
        )


@dataclass(frozen=True, slots=True)
class Settlement:
    """Rubicon settlement of the single deal (docs/rules.md §6.6, from 000 and 004)."""

    winner: int | None  # None: a drawn game (equal totals, even with brisques added)
    rounded: tuple[int, ...]
    rubicon: bool
    scores: tuple[int, ...]  # what each seat scores for the game
    items: tuple[ScoreItem, ...]


def rubicon_settlement(points: tuple[int, int], brisques: tuple[int, int]) -> Settlement:
    """Settle a Rubicon game from each seat's points (declarations, carte blanche, last trick) and
    brisque points.

    - Fractions of 100 are dropped from both totals.
    - If the rounded totals are equal, the brisques are added to decide the game (and rounded again).
    - The winner scores 500 for the game plus the difference of the rounded totals (with the brisques
      when they decided).
    - The loser is rubiconed if under 1000, unless his points plus his brisques reach 1000 (he may count
      his brisques to save the rubicon; they are not added to his points). Then the winner scores his
      own points plus the loser's (at least 100; both without brisques, even when they decided the
      game) plus 320 for all brisques plus 1000 for the game, with the fractions of 100 dropped from
      that sum too (000's "300 for brisques"): 1,450 v 820 gives 3500.
    """
    rounded = points_only = tuple(p // 100 * 100 for p in points)
    decide = rounded
    if rounded[0] == rounded[1]:
        decide = tuple((p + b) // 100 * 100 for p, b in zip(points, brisques, strict=True))
        if decide[0] == decide[1]:
            return Settlement(None, rounded, False, (0, 0), ())
        rounded = decide
    w = 0 if decide[0] > decide[1] else 1
    loser = 1 - w
    saved = points[loser] + brisques[loser] >= 1000
    items: tuple[ScoreItem, ...]
    if points[loser] >= 1000 or saved:
        score = 500 + rounded[w] - rounded[loser]
        items = (
            ScoreItem(w, "game", 500),
            ScoreItem(w, "difference", rounded[w] - rounded[loser]),
        )
        rubicon = False
    else:
        # The points alone, even when the brisques broke a tie: the 320 are every brisque already.
        own, loser_points = points_only[w], max(points_only[loser], 100)
        reckoned = own + loser_points + 320 + 1000
        # 000: "all fractions of 100 are neglected", the final score included (its "300 for brisques").
        score = reckoned // 100 * 100
        items = (
            ScoreItem(w, "own-points", own),
            ScoreItem(w, "rubicon-loser-points", loser_points),
            ScoreItem(w, "rubicon-brisques", 320),
            ScoreItem(w, "rubicon-game", 1000),
            ScoreItem(w, "fractions-dropped", score - reckoned),
        )
        rubicon = True
    scores = (score, 0) if w == 0 else (0, score)
    return Settlement(w, rounded, rubicon, scores, items)
