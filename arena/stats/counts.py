"""Outcome counts of a head-to-head comparison: pentanomial over duplicate pairs, trinomial over games.

A *duplicate pair* is one deal played twice with the seats swapped; the first player's points over the
two games (a win 1, a draw 1/2, a loss 0) are 0, 1/2, 1, 3/2 or 2, so a test's pairs are five counts
(the pentanomial model of fishtest and fastchess). Games that are not in pairs are three counts: losses,
draws and wins (the trinomial model). Both are read as an empirical distribution of a score in [0, 1]:
outcome ``i`` of ``k`` is worth ``i / (k - 1)`` (a pair's points divided by two).

Counting pairs rather than games is what takes the luck of the cards out: a deal that favours one seat
gives each player one good game, and the pair scores 1 (a draw) whoever held the better cards.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# fastchess and fishtest replace an outcome never seen by this count before solving for a likelihood,
# so that every outcome keeps a little probability (and a test with one kind of outcome stays finite).
REGULARIZATION = 1e-3

# The largest count taken: far beyond any test (a tournament plans at most a million games), and far
# inside the range where a regularized count of 0.001 still tells next to the others in a double: from
# about 10^12 the likelihoods' roots fall between floats and the LLR fails.
MAX_COUNT = 10**9


class StatsError(ValueError):
    """Counts or test parameters that the statistics cannot use; the message names the problem."""


def _check_counts(counts: Sequence[int], names: Sequence[str]) -> tuple[int, ...]:
    if len(counts) != len(names):
        raise StatsError(f"expected {len(names)} counts ({', '.join(names)}), got {len(counts)}")
    out = []
    for name, n in zip(names, counts, strict=True):
        if isinstance(n, bool) or not isinstance(n, int):
            raise StatsError(f"the count of {name} must be a whole number, got {n!r}")
        if n < 0:
            raise StatsError(f"the count of {name} must be 0 or more, got {n}")
        if n > MAX_COUNT:
            raise StatsError(f"the count of {name} must be at most {MAX_COUNT}, got {n}")
        out.append(n)
    return tuple(out)


def _parse_count(text: str, name: str) -> int:
    """One count as typed: ASCII digits only (``str.isdigit()`` also takes digits such as "²" that
    ``int()`` refuses, and others, Arabic-Indic ones, that it reads), and not so long that ``int()``
    refuses it."""
    if not (text.isascii() and text.isdigit()):
        raise StatsError(f"the count of {name} must be a whole number >= 0, got {text!r}")
    if len(text.lstrip("0")) > len(str(MAX_COUNT)):  # before int(), which refuses 4300 digits
        raise StatsError(
            f"the count of {name} must be at most {MAX_COUNT}, "
            f"got a number of {len(text.lstrip('0'))} digits"
        )
    return int(text)


def _parse_counts(text: str, names: Sequence[str], expected: str) -> list[int]:
    """Comma-separated counts, one per name, as typed (``expected`` says what, when they are not)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != len(names):
        raise StatsError(f"expected {expected}, got {text!r}")
    return [_parse_count(p, n) for n, p in zip(names, parts, strict=True)]


PAIR_OUTCOMES = ("0", "0.5", "1", "1.5", "2")  # a pair's points for the first player
GAME_OUTCOMES = ("losses", "draws", "wins")


@dataclass(frozen=True, slots=True)
class Pentanomial:
    """Counts of duplicate pairs by the first player's points: ``counts[i]`` pairs scored ``i / 2``
    (0: lost both games, 1: one win and one loss or two draws, 2: won both)."""

    counts: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)

    def __post_init__(self) -> None:
        _check_counts(self.counts, PAIR_OUTCOMES)

    @classmethod
    def of(cls, counts: Sequence[int]) -> Pentanomial:
        c = _check_counts(counts, PAIR_OUTCOMES)
        return cls((c[0], c[1], c[2], c[3], c[4]))

    @classmethod
    def parse(cls, text: str) -> Pentanomial:
        """``N0,N1,N2,N3,N4``: the pairs scored 0, 1/2, 1, 3/2 and 2 points by the first player."""
        expected = "five counts N0,N1,N2,N3,N4 (pairs scored 0, 0.5, 1, 1.5, 2)"
        names = [f"pairs scored {n}" for n in PAIR_OUTCOMES]
        return cls.of(_parse_counts(text, names, expected))

    @property
    def scores(self) -> tuple[float, ...]:
        """The score in [0, 1] of each outcome: a pair's points divided by two."""
        return (0.0, 0.25, 0.5, 0.75, 1.0)

    @property
    def games_per_unit(self) -> int:
        return 2

    @property
    def total(self) -> int:
        """The number of pairs."""
        return sum(self.counts)

    @property
    def games(self) -> int:
        return 2 * self.total

    def add(self, points: float) -> Pentanomial:
        """These counts with one more pair worth ``points`` (0, 0.5, 1, 1.5 or 2) to the first
        player."""
        i = pair_index(points)
        c = list(self.counts)
        c[i] += 1
        return Pentanomial.of(c)

    def flipped(self) -> Pentanomial:
        """The same pairs seen from the second player."""
        return Pentanomial.of(self.counts[::-1])

    def __str__(self) -> str:
        return ",".join(map(str, self.counts))


@dataclass(frozen=True, slots=True)
class Trinomial:
    """Counts of games, not in pairs: the first player's losses, draws and wins."""

    losses: int = 0
    draws: int = 0
    wins: int = 0

    def __post_init__(self) -> None:
        _check_counts((self.losses, self.draws, self.wins), GAME_OUTCOMES)

    @classmethod
    def parse(cls, text: str) -> Trinomial:
        """``L,D,W``: the first player's losses, draws and wins."""
        expected = "three whole numbers L,D,W (losses, draws, wins)"
        losses, draws, wins = _parse_counts(text, GAME_OUTCOMES, expected)
        return cls(losses, draws, wins)

    @property
    def counts(self) -> tuple[int, int, int]:
        return (self.losses, self.draws, self.wins)

    @property
    def scores(self) -> tuple[float, ...]:
        return (0.0, 0.5, 1.0)

    @property
    def games_per_unit(self) -> int:
        return 1

    @property
    def total(self) -> int:
        """The number of games."""
        return self.losses + self.draws + self.wins

    @property
    def games(self) -> int:
        return self.total

    def add(self, points: float) -> Trinomial:
        """These counts with one more game worth ``points`` (0, 0.5 or 1) to the first player."""
        if points == 0:
            return Trinomial(self.losses + 1, self.draws, self.wins)
        if points == 0.5:
            return Trinomial(self.losses, self.draws + 1, self.wins)
        if points == 1:
            return Trinomial(self.losses, self.draws, self.wins + 1)
        raise StatsError(f"a game is worth 0, 0.5 or 1 point, got {points!r}")

    def flipped(self) -> Trinomial:
        return Trinomial(self.wins, self.draws, self.losses)

    def __str__(self) -> str:
        return f"{self.losses},{self.draws},{self.wins}"


Counts = Pentanomial | Trinomial


def pair_index(points: float) -> int:
    """The pentanomial outcome of a pair worth ``points`` (the sum of two games' 0, 0.5 or 1)."""
    doubled = points * 2
    if doubled not in (0, 1, 2, 3, 4):
        raise StatsError(f"a pair is worth 0, 0.5, 1, 1.5 or 2 points, got {points!r}")
    return int(doubled)


def distribution(counts: Counts, regularize: bool = False) -> tuple[float, list[float]]:
    """The number of units (pairs or games) and the empirical probability of each outcome. With
    ``regularize``, an outcome never seen counts as ``REGULARIZATION`` (as fastchess and fishtest do
    before solving for a likelihood), so the total is then not a whole number."""
    raw = [float(n) for n in counts.counts]
    if regularize:
        raw = [n if n > 0 else REGULARIZATION for n in raw]
    total = sum(raw)
    if total <= 0:
        raise StatsError("no results yet: every count is 0")
    return total, [n / total for n in raw]


def mean_and_variance(scores: Sequence[float], probs: Sequence[float]) -> tuple[float, float]:
    """The expectation and variance of a discrete distribution. The mean is taken about the middle
    of the scores and summed exactly (fsum): a distribution symmetric about it (an even match, or
    all draws once regularized) has that middle as its mean to the last bit, not 0.49999999999999994,
    which read as an Elo difference of -7.7e-14."""
    middle = (min(scores) + max(scores)) / 2
    mu = middle + math.fsum((a - middle) * p for a, p in zip(scores, probs, strict=True))
    var = math.fsum(p * (a - mu) ** 2 for a, p in zip(scores, probs, strict=True))
    return mu, var
