"""Elo from a head-to-head score, normalized Elo, the likelihood of superiority, 95% intervals.

The formulas are fastchess's (``elo_pentanomial.cpp``, ``elo_wdl.cpp``) and fishtest's
(``stat_util.get_elo``), written afresh:

- the score ``s`` is the mean of the outcomes' scores (a pair's points / 2, a game's points); its
  variance per unit (pair or game) ``v`` is that of the empirical distribution, and the standard error of
  ``s`` is ``sqrt(v / n)`` over ``n`` units;
- logistic Elo is ``-400 log10(1/s - 1)``; its 95% interval maps ``s -+ 1.96 sqrt(v / n)`` through the
  same function, and ``elo_error`` is half the interval's width;
- normalized Elo (nElo, fishtest's and fastchess's default) measures the score in standard deviations
  per game: ``(s - 1/2) / sigma * 800 / ln 10``, where ``sigma`` is a game's standard deviation:
  ``sqrt(v)`` for games, ``sqrt(2 v)`` for pairs (a pair's score is the mean of two games). Two players
  whose games vary less are told apart with fewer games, which is what nElo makes visible;
- the likelihood of superiority is ``Phi((s - 1/2) / sqrt(v / n))``.

When every unit has the same score the variance is 0 and Elo is infinite; then, as fishtest does, the
counts never seen are taken as 0.001 (``REGULARIZATION``), which keeps every figure finite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from arena.stats.counts import Counts, StatsError, distribution, mean_and_variance

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile: a two-sided 95% interval
NELO_PER_T = 800 / math.log(10)  # nElo per unit of t-value per game (fishtest's nelo_divided_by_nt)
SCORE_CLAMP = 1e-6  # scores are held this far inside (0, 1), so that Elo stays finite (+-2400)


def elo_from_score(score: float) -> float:
    """Logistic Elo difference that gives an expected score of ``score`` (0 < score < 1)."""
    if not 0 < score < 1:
        raise StatsError(f"a score must be strictly between 0 and 1 for a finite Elo, got {score}")
    return 400 * math.log10(score / (1 - score))  # an even score gives 0.0, not -0.0


# Elo is held within these (the Elo of a score SCORE_CLAMP from 0 or 1), so that it stays finite: an
# end of an interval held there lies beyond, at a distance the figures do not tell.
ELO_FLOOR, ELO_CEILING = elo_from_score(SCORE_CLAMP), elo_from_score(1 - SCORE_CLAMP)


def elo_text(x: float, spec: str) -> str:
    """An Elo figure in the format ``spec``; one held at the limit as beyond it (``>2400``)."""
    if x >= ELO_CEILING:
        return f">{ELO_CEILING:.0f}"
    if x <= ELO_FLOOR:
        return f"<{ELO_FLOOR:.0f}"
    return format(x, spec)


def score_from_elo(elo: float) -> float:
    """Expected score of a logistic Elo difference ``elo``."""
    return 1 / (1 + 10 ** (-elo / 400))


def phi(x: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """What a set of counts says about the first player against the second."""

    units: float  # pairs (pentanomial) or games (trinomial)
    games: float
    score: float  # mean score per game, 0..1
    variance: float  # variance of one unit's score (a pair's points / 2, or a game's)
    elo: float  # logistic Elo difference
    elo_low: float  # 95% interval
    elo_high: float
    nelo: float  # normalized Elo
    nelo_low: float
    nelo_high: float
    los: float  # likelihood of superiority, 0..1
    regularized: bool  # True when the counts had no spread and were regularized (see the module)

    @property
    def elo_error(self) -> float:
        """Half the width of the 95% interval of Elo (fastchess's ``+/-``)."""
        return (self.elo_high - self.elo_low) / 2

    @property
    def nelo_error(self) -> float:
        return (self.nelo_high - self.nelo_low) / 2

    @property
    def score_error(self) -> float:
        """Half the width of the 95% interval of the score."""
        return Z95 * math.sqrt(self.variance / self.units)


def _inside(score: float) -> float:
    """``score`` held within ``SCORE_CLAMP .. 1 - SCORE_CLAMP``, where Elo is finite."""
    return min(max(score, SCORE_CLAMP), 1 - SCORE_CLAMP)


def _nelo(score: float, game_sd: float) -> float:
    return (score - 0.5) / game_sd * NELO_PER_T


def estimate(counts: Counts) -> EloEstimate:
    """Elo, nElo, their 95% intervals and the LOS from pentanomial or trinomial counts."""
    if counts.total == 0:
        raise StatsError("no results yet: every count is 0")
    units, probs = distribution(counts)
    score, var = mean_and_variance(counts.scores, probs)
    regularized = var <= 0
    if regularized:
        units, probs = distribution(counts, regularize=True)
        score, var = mean_and_variance(counts.scores, probs)
    half = Z95 * math.sqrt(var / units)
    # The point and both ends are held on both sides, so that they keep their order (elo_low <= elo <=
    # elo_high) even where the score is nearer to 0 or 1 than SCORE_CLAMP.
    low, point, high = (_inside(x) for x in (score - half, score, score + half))
    game_sd = math.sqrt(counts.games_per_unit * var)
    return EloEstimate(
        units=units,
        games=units * counts.games_per_unit,
        score=score,
        variance=var,
        elo=elo_from_score(point),
        elo_low=elo_from_score(low),
        elo_high=elo_from_score(high),
        nelo=_nelo(score, game_sd),
        nelo_low=_nelo(score - half, game_sd),
        nelo_high=_nelo(score + half, game_sd),
        los=phi((score - 0.5) / math.sqrt(var / units)),
        regularized=regularized,
    )
