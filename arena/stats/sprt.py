"""The generalized sequential probability ratio test (GSPRT) of fishtest and fastchess.

H0: the first player is ``elo0`` stronger than the second; H1: it is ``elo1`` stronger (``elo0 <
elo1``). After each result the log-likelihood ratio (LLR) of the counts under H1 against H0 is compared
with the bounds ``ln(beta / (1 - alpha))`` (at or below it H0 is accepted) and ``ln((1 - beta) / alpha)``
(at or above it H1 is accepted); in between the test goes on. ``alpha`` is the largest chance of
accepting H1 when H0 holds, ``beta`` of accepting H0 when H1 holds.

The ratio is *generalized*: each hypothesis fixes one number (the expected score, or its t-value) and
leaves the rest of the outcome distribution free, so each likelihood is maximised over the
distributions that meet its hypothesis, given the counts (Van den Bergh, "Comparing the approximations
for the generalized log likelihood ratio of a multinomial distribution", Proposition 1.1; "Comments on
normalized Elo", section 4.1). The two models fastchess offers:

- ``normalized`` (its default): ``elo0`` and ``elo1`` are normalized Elo; the hypothesis fixes the
  t-value ``(mu - 1/2) / sigma`` of the outcome distribution at ``nelo / (800 / ln 10)``, times sqrt(2)
  for pairs (a pair's score has half a game's variance);
- ``logistic``: they are logistic Elo; the hypothesis fixes the expected score at ``1 / (1 +
  10^(-elo / 400))``.

Counts never seen are regularized to 0.001 first, as both programs do. This module solves for the
maximum likelihood distributions to full floating-point precision; fastchess stops earlier (a tolerance
of 1e-3 on the logistic model's multiplier, ten rounds of the normalized model's fixed point), so the
two agree to three or four significant figures, and where fastchess stops short of the hypothesis
(every pair alike, or counts far from both hypotheses) this module's figure is the one whose
distribution meets it (tests/stats). Where the normalized model's likelihood has several local maxima
on a hypothesis (one far beyond the counts), the fixed point alone can stop at a lesser one; this
module takes the global maximum (``_mle_t_value``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from arena.stats.counts import Counts, StatsError, distribution, mean_and_variance
from arena.stats.elo import NELO_PER_T, EloEstimate, estimate, score_from_elo


class Model(Enum):
    NORMALIZED = "normalized"
    LOGISTIC = "logistic"


class SprtDecision(Enum):
    CONTINUE = "continue"
    H0 = "H0 accepted"
    H1 = "H1 accepted"


@dataclass(frozen=True, slots=True)
class Sprt:
    """A test's parameters, checked: ``elo0 < elo1``, ``0 < alpha, beta`` and ``alpha + beta < 1``."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: Model = Model.NORMALIZED

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            if not math.isfinite(getattr(self, name)):
                raise StatsError(f"{name} must be a finite number, got {getattr(self, name)}")
        if self.elo0 >= self.elo1:
            raise StatsError(f"elo0 must be less than elo1, got {self.elo0} and {self.elo1}")
        for name in ("alpha", "beta"):
            if not 0 < getattr(self, name) < 1:
                raise StatsError(f"{name} must be between 0 and 1, got {getattr(self, name)}")
        if self.alpha + self.beta >= 1:
            raise StatsError(f"alpha + beta must be less than 1, got {self.alpha} + {self.beta}")
        limit = MAX_NELO if self.model is Model.NORMALIZED else MAX_ELO
        for name in ("elo0", "elo1"):
            if abs(getattr(self, name)) > limit:
                raise StatsError(
                    f"{name} must be within -{limit:g} .. {limit:g} for the {self.model.value} model, "
                    f"got {getattr(self, name)}"
                )

    @property
    def lower(self) -> float:
        """At or below this LLR, H0 is accepted."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """At or above this LLR, H1 is accepted."""
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, counts: Counts) -> float:
        return llr(counts, self.elo0, self.elo1, self.model)

    def decide(self, value: float) -> SprtDecision:
        if value >= self.upper:
            return SprtDecision.H1
        if value <= self.lower:
            return SprtDecision.H0
        return SprtDecision.CONTINUE

    def report(self, counts: Counts) -> SprtReport:
        value = self.llr(counts)
        return SprtReport(self, counts, value, self.decide(value), estimate(counts))


# Hypotheses beyond these are not what an A/B test asks, and the normalized model's maximum likelihood
# problem has no stable solution far out (a t-value of several standard deviations per game).
MAX_NELO = 200.0
MAX_ELO = 1000.0


@dataclass(frozen=True, slots=True)
class SprtReport:
    sprt: Sprt
    counts: Counts
    llr: float
    decision: SprtDecision
    elo: EloEstimate

    @property
    def lower(self) -> float:
        return self.sprt.lower

    @property
    def upper(self) -> float:
        return self.sprt.upper


def llr(counts: Counts, elo0: float, elo1: float, model: Model = Model.NORMALIZED) -> float:
    """The generalized log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for the counts;
    0 when there are none."""
    if counts.total == 0:
        return 0.0
    total, probs = distribution(counts, regularize=True)
    scores = counts.scores
    if model is Model.NORMALIZED:
        scale = math.sqrt(counts.games_per_unit) / NELO_PER_T
        p0 = _mle_t_value(scores, probs, 0.5, elo0 * scale)
        p1 = _mle_t_value(scores, probs, 0.5, elo1 * scale)
    else:
        p0 = _mle_expectation(scores, probs, score_from_elo(elo0))
        p1 = _mle_expectation(scores, probs, score_from_elo(elo1))
    return total * sum(
        p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, p0, p1, strict=True)
    )


def _solve_secular(probs: Sequence[float], a: Sequence[float], start: float = 0.0) -> float:
    """The root ``x`` of ``sum_i probs[i] * a[i] / (1 + x * a[i]) = 0`` with every ``1 + x a[i] > 0``.

    The function decreases strictly between its poles ``-1 / max(a)`` and ``-1 / min(a)`` (where it
    runs from +inf to -inf), so the root is unique when ``min(a) < 0 < max(a)``; it is found by Newton's
    method from ``start`` kept inside a shrinking bracket (bisection whenever a step would leave it),
    to the last float that moves.
    """
    lo_a, hi_a = min(a), max(a)
    if not lo_a < 0 < hi_a:
        raise StatsError("the likelihood has no maximum for these counts and hypotheses")
    pairs = [(p, ai) for p, ai in zip(probs, a, strict=True) if p > 0]

    def f_and_slope(x: float) -> tuple[float, float]:
        f = slope = 0.0
        for p, ai in pairs:
            q = ai / (1 + x * ai)
            f += p * q
            slope -= p * q * q
        return f, slope

    lo, hi = -1 / hi_a, -1 / lo_a  # the poles: f(lo+) = +inf, f(hi-) = -inf
    x = start if lo < start < hi else 0.0
    for _ in range(200):
        f, slope = f_and_slope(x)
        if f == 0:
            return x
        if f > 0:
            lo = x
        else:
            hi = x
        step = x - f / slope if slope < 0 else math.nan
        nxt = step if lo < step < hi else (lo + hi) / 2
        # Stop only where floating point stops: near a pole a step far below x's own size still moves
        # a term 1 + x a[i] that is almost 0, and with it the distribution's sum and mean.
        if nxt == x:
            return x
        x = nxt
    return x


def _mle_expectation(scores: Sequence[float], probs: Sequence[float], s: float) -> list[float]:
    """The distribution on ``scores`` with expectation ``s`` most likely to give ``probs``."""
    shifted = [a - s for a in scores]
    x = _solve_secular(probs, shifted)
    return [p / (1 + x * d) for p, d in zip(probs, shifted, strict=True)]


def _mle_t_value(
    scores: Sequence[float], probs: Sequence[float], ref: float, t: float
) -> list[float]:
    """The distribution on ``scores`` with t-value ``(mu - ref) / sigma = t`` most likely to give
    ``probs``.

    The fixed point of section 4.1 of "Comments on normalized Elo", reached from the uniform
    distribution, is a stationary point of the likelihood on the hypothesis. Where the counts' own
    t-value lies beyond the hypothesis (further from ``ref`` on t's side) the likelihood has a single
    maximum there: the distributions with ``t * (mu - ref - t sigma) <= 0`` form a convex set, since
    sigma is concave in the distribution, and the likelihood is concave. Where the hypothesis lies beyond the counts' t-value
    the likelihood is maximised over the complement of that convex set, which can hold several local
    maxima, and the fixed point may stop at a lesser one (counts 0,0,1000,1,0 with H1 at 150 nElo: log
    likelihood -0.3234 per pair instead of -0.3181, an LLR of 2.20 instead of 7.71). There the global
    maximum is searched for among the tangent planes (``_tangent_maximum``).
    """
    p = _fixed_point_t_value(scores, probs, ref, t)
    mu, var = mean_and_variance(scores, probs)
    if t == 0 or t * (mu - ref - t * math.sqrt(var)) >= 0:
        return p
    return _global_t_value(scores, probs, ref, t, p)


def _fixed_point_t_value(
    scores: Sequence[float], probs: Sequence[float], ref: float, t: float
) -> list[float]:
    """A distribution with t-value ``t`` where the likelihood is stationary: the fixed point of
    section 4.1 of "Comments on normalized Elo", reached from the uniform distribution."""
    n = len(scores)
    p = [1 / n] * n

    def phi_of(dist: Sequence[float]) -> list[float]:
        mu, var = mean_and_variance(scores, dist)
        sigma = math.sqrt(var)
        return [a - ref - 0.5 * t * sigma * (1 + ((a - mu) / sigma) ** 2) for a in scores]

    x = 0.0
    last = math.inf
    for _ in range(100):
        phi = phi_of(p)
        x = _solve_secular(probs, phi, x)
        nxt = [q / (1 + x * f) for q, f in zip(probs, phi, strict=True)]
        change = max(abs(u - v) for u, v in zip(nxt, p, strict=True))
        p = nxt
        # Converged, or down to the rounding noise of the root (the changes stop shrinking).
        if change < 1e-12 or (change < 1e-8 and change >= last / 2):
            break
        last = change
    return p


def _log_likelihood(probs: Sequence[float], dist: Sequence[float]) -> float:
    return sum(q * math.log(p) for q, p in zip(probs, dist, strict=True))


# Points of the scan over sigma in _global_t_value, spaced evenly in log sigma over its whole range.
# The local maxima lie a factor of 1.3 or more apart in sigma in every case tried (6,000 random counts,
# pentanomial and trinomial, small and large, with hypotheses up to 200 nElo, against a scan of 1000
# points): 8 points already found them all.
T_VALUE_SCAN = 16


def _tangent_maximum(
    scores: Sequence[float], probs: Sequence[float], ref: float, t: float, s: float, x: float
) -> tuple[list[float], float, float] | None:
    """The distribution most likely to give ``probs`` on the plane tangent to the hypothesis where
    ``sigma = s`` (and so ``mu = ref + t s``), the mean's excess over ``ref + t s``, and the
    plane's multiplier; None if the plane misses the simplex's interior.

    The plane is ``sum p_i phi_i = 0`` with ``phi_i = a_i - ref - t (s + (a_i - m)^2 / s) / 2``; on it
    ``mu - ref = t (s + E(a - m)^2 / s) / 2``, at least ``t sigma`` in size (AM-GM), so the whole plane
    lies on the side of the hypothesis away from the counts, and its best distribution is never likelier
    than the hypothesis's best. Where the excess is 0, that distribution has ``sigma = s`` and meets the
    hypothesis: it is a stationary point of the likelihood there, and every stationary point is one.
    """
    m = ref + t * s
    phi = [a - ref - 0.5 * t * (s + (a - m) ** 2 / s) for a in scores]
    if not min(phi) < 0 < max(phi):
        return None
    x = _solve_secular(probs, phi, x)
    dist = [q / (1 + x * f) for q, f in zip(probs, phi, strict=True)]
    return dist, sum(a * p for a, p in zip(scores, dist, strict=True)) - m, x


def _global_t_value(
    scores: Sequence[float], probs: Sequence[float], ref: float, t: float, found: list[float]
) -> list[float]:
    """The likeliest of ``found`` and the stationary points of the likelihood on the hypothesis, where
    the hypothesis lies beyond the counts.

    Every stationary point has ``sigma = s`` where the tangent plane's excess (``_tangent_maximum``)
    changes sign; ``s`` runs from where the planes first reach the simplex (some ``phi_i > 0``: ``s >
    d (1 - 1 / sqrt(1 + t^2)) / t`` for an outcome ``d = a_i - ref`` of t's sign) to the largest sigma a
    distribution on ``[min, max]`` with mean ``ref + t s`` can have (Bhatia-Davis). It is scanned in
    ``T_VALUE_SCAN`` steps, and each change that makes a maximum, but the one at ``found``, is narrowed
    down by the Illinois method.
    """
    lo_a, hi_a = min(scores), max(scores)
    # d (1 - 1 / sqrt(1 + t^2)) / t, written so that it stays positive for the tiniest t.
    root = math.sqrt(1 + t * t)
    s_lo = min((d for d in ((a - ref) * t for a in scores) if d > 0), default=0.0)
    s_lo /= (root + 1) * root
    if not s_lo > 0:
        return found
    # (m - lo)(hi - m) = s^2 with m = ref + t s, a quadratic in s.
    qa, qb, qc = 1 + t * t, t * (2 * ref - lo_a - hi_a), -(ref - lo_a) * (hi_a - ref)
    s_hi = (-qb + math.sqrt(qb * qb - 4 * qa * qc)) / (2 * qa)
    s_found = math.sqrt(mean_and_variance(scores, found)[1])
    best, best_l = found, _log_likelihood(probs, found)
    ratio = (s_hi / s_lo) ** (1 / T_VALUE_SCAN)
    x = 0.0
    prev: tuple[float, float, float] | None = None
    for k in range(1, T_VALUE_SCAN):
        s = s_lo * ratio**k
        cur = _tangent_maximum(scores, probs, ref, t, s, x)
        if cur is None:
            prev = None
            continue
        x = cur[2]
        # The likelihood's slope along the planes is -x g (1 + t^2) / s (by the envelope theorem, with
        # the plane's own equation), and x keeps its sign (x = 0 would put the counts on a plane): a
        # maximum lies where x g turns from negative to positive.
        if prev is not None and prev[1] * x < 0 < cur[1] * x and not prev[0] <= s_found <= s:
            dist = _stationary_between(scores, probs, ref, t, prev, (s, cur[1], x))
            # Every plane's best is at most as likely as the hypothesis's best, but only one that
            # meets the hypothesis is its answer.
            if dist is not None and _meets(scores, dist, ref, t):
                value = _log_likelihood(probs, dist)
                if value > best_l:
                    best, best_l = dist, value
        prev = (s, cur[1], x)
    return best


def _meets(scores: Sequence[float], dist: Sequence[float], ref: float, t: float) -> bool:
    mu, var = mean_and_variance(scores, dist)
    return var > 0 and abs((mu - ref) / math.sqrt(var) - t) <= 1e-9 * max(1.0, abs(t))


def _stationary_between(
    scores: Sequence[float],
    probs: Sequence[float],
    ref: float,
    t: float,
    a: tuple[float, float, float],
    b: tuple[float, float, float],
) -> list[float] | None:
    """The tangent plane's best distribution where its excess is 0, between the planes ``a`` and ``b``
    (each sigma, excess, multiplier; the excesses of opposite signs): the Illinois method, which keeps
    the root bracketed and converges superlinearly, to a relative width of 1e-13 in sigma (the excess
    is down to its rounding noise well before)."""
    (sa, ga, xa), (sb, gb, _) = a, b
    best: tuple[list[float], float] | None = None
    side = 0
    for _ in range(100):
        if sb - sa <= 1e-13 * sb:
            break
        s = (sa * gb - sb * ga) / (gb - ga)
        if not sa < s < sb:
            s = (sa + sb) / 2
            if not sa < s < sb:
                break
        cur = _tangent_maximum(scores, probs, ref, t, s, xa)
        if cur is None:
            break
        dist, g, xa = cur
        if best is None or abs(g) < best[1]:
            best = dist, abs(g)
        if g == 0:
            break
        if (g > 0) == (ga > 0):
            sa, ga = s, g
            if side == -1:
                gb /= 2
            side = -1
        else:
            sb, gb = s, g
            if side == 1:
                ga /= 2
            side = 1
    return None if best is None else best[0]
