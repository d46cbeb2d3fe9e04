"""The one TrueSkill environment of the arena (never ``trueskill.setup()``: no global state).

A game is rated as its sides: each side a team of the entrants who played its seats (partners, and the
players sharing a seat in consultation), ranked by the game's result; equal places are a draw. A team's
performance is the weighted sum of its players': partners each play a hand of their own (weight 1),
players sharing a seat play one hand between them (weight 1/n each: TrueSkill's partial play), so that
two allies in consultation count as one hand's strength, not twice a single player's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import trueskill

MU = 25.0
SIGMA = MU / 3
ENV = trueskill.TrueSkill(
    mu=MU, sigma=SIGMA, beta=SIGMA / 2, tau=SIGMA / 100, draw_probability=0.05, backend=None
)


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float

    @property
    def exposed(self) -> float:
        """The leaderboard key: mu - 3 sigma, a conservative estimate of skill."""
        return self.mu - 3 * self.sigma


def initial() -> Rating:
    return Rating(MU, SIGMA)


def conservative(r: Rating) -> float:
    return r.exposed


def rate_game(
    teams: Sequence[Sequence[Rating]],
    ranks: Sequence[int],
    weights: Sequence[Sequence[float]] | None = None,
) -> list[list[Rating]]:
    """New ratings for every player of every team; ``ranks[i]`` is team i's place (0 best);
    ``weights[i][j]`` the share of team i's play that its player j had (None: 1 each)."""
    if weights is None and len(teams) == 2 and len(teams[0]) == 1 and len(teams[1]) == 1:
        duel = _duel(teams[0][0], teams[1][0], ranks[0], ranks[1])
        if duel is not None:
            return [[duel[0]], [duel[1]]]
    groups = [[ENV.create_rating(r.mu, r.sigma) for r in team] for team in teams]
    shares = None if weights is None else [list(w) for w in weights]
    rated = ENV.rate(groups, ranks=list(ranks), weights=shares)
    return [[Rating(r.mu, r.sigma) for r in team] for team in rated]


# One player against one: the arena's every two-handed game. The library builds a factor graph of a
# dozen objects for it and passes messages between them (118 us a game); _duel makes the same
# floating-point operations in the same order on plain floats, so its ratings are the library's to
# the last bit (tests/rating/test_duel.py compares them on many thousands of games, draws and
# extremes included), in a seventh of the time. Anything unusual (a zero precision on the way)
# goes to the library.
_TAU2 = ENV.tau**2
_BETA2 = ENV.beta**2
_MARGIN = trueskill.calc_draw_margin(ENV.draw_probability, 2, ENV)
_MIN_DELTA = 0.0001  # the library's default min_delta (trueskill.DELTA)


def _mu(pi: float, tau: float) -> float:
    return pi and tau / pi  # Gaussian.mu


def _as_library(mu: float, sigma: float) -> Rating:
    """A rating as the library's Rating holds it: kept as precision and precision times mean, and
    read back from them (not always the same last bit)."""
    pi = sigma**-2
    tau = pi * mu
    return Rating(pi and tau / pi, math.sqrt(1 / pi) if pi else math.inf)


def _duel(first: Rating, second: Rating, rank0: int, rank1: int) -> tuple[Rating, Rating] | None:
    """The library's update of a game of two players of weight 1, or None to leave it to it."""
    swap = rank1 < rank0  # the library sorts the teams by rank (stably)
    a, b = (second, first) if swap else (first, second)
    draw = rank0 == rank1
    try:
        a, b = _as_library(a.mu, a.sigma), _as_library(b.mu, b.sigma)
        # Down: prior (sigma with the dynamics), likelihood (performance), team performance.
        p0 = math.sqrt(a.sigma**2 + _TAU2) ** -2
        t0 = p0 * a.mu
        p1 = math.sqrt(b.sigma**2 + _TAU2) ** -2
        t1 = p1 * b.mu
        k0 = 1.0 / (1.0 + _BETA2 * p0)
        k1 = 1.0 / (1.0 + _BETA2 * p1)
        q0, r0 = k0 * p0, k0 * t0  # performance: value and the likelihood's message
        q1, r1 = k1 * p1, k1 * t1
        s0 = 1.0 / (1.0 / q0)  # team performance: value and the sum's message
        u0 = s0 * (r0 / q0)
        s1 = 1.0 / (1.0 / q1)
        u1 = s1 * (r1 / q1)
        # The difference and its truncation, until the change is small.
        dv_pi = dv_tau = 0.0  # the difference's value
        mf_pi = mf_tau = 0.0  # the difference's message from the sum
        mt_pi = mt_tau = 0.0  # its message from the truncation
        v_func, w_func = (ENV.v_draw, ENV.w_draw) if draw else (ENV.v_win, ENV.w_win)
        for _ in range(10):
            pi = 1.0 / (1.0 / s0 + 1.0 / s1)
            tau = pi * (u0 / s0 - u1 / s1)
            dv_pi, dv_tau = (dv_pi - mf_pi) + pi, (dv_tau - mf_tau) + tau
            mf_pi, mf_tau = pi, tau
            c_pi, c_tau = dv_pi - mt_pi, dv_tau - mt_tau
            sqrt_pi = math.sqrt(c_pi)
            x, margin = c_tau / sqrt_pi, _MARGIN * sqrt_pi
            v = v_func(x, margin)
            denom = 1.0 - w_func(x, margin)
            n_pi, n_tau = c_pi / denom, (c_tau + sqrt_pi * v) / denom
            mt_pi, mt_tau = (n_pi + mt_pi) - dv_pi, (n_tau + mt_tau) - dv_tau
            pi_delta = abs(dv_pi - n_pi)
            delta = 0.0 if pi_delta == math.inf else max(abs(dv_tau - n_tau), math.sqrt(pi_delta))
            dv_pi, dv_tau = n_pi, n_tau
            if delta <= _MIN_DELTA:
                break
        # Up: to each team's performance, then each player's performance and rating.
        e_pi, e_tau = dv_pi - mf_pi, dv_tau - mf_tau
        pi = 1.0 / ((0 + 1.0 / e_pi) + 1.0 / s1)
        tau = pi * ((0 + _mu(e_pi, e_tau)) + _mu(s1, u1))
        g0_pi, g0_tau = s0 + pi, u0 + tau  # team 0's performance, its message from the difference
        m0_pi, m0_tau = pi, tau
        f_pi, f_tau = g0_pi - m0_pi, g0_tau - m0_tau
        pi = 1.0 / ((0 + 1.0 / f_pi) + 1.0 / e_pi)
        tau = pi * ((0 + _mu(f_pi, f_tau)) + -1.0 * _mu(e_pi, e_tau))
        g1_pi, g1_tau = s1 + pi, u1 + tau
        out = []
        for g_pi, g_tau, s, u, q, r, p, t in (
            (g0_pi, g0_tau, s0, u0, q0, r0, p0, t0),
            (g1_pi, g1_tau, s1, u1, q1, r1, p1, t1),
        ):
            h_pi, h_tau = g_pi - s, g_tau - u
            pi = 1.0 / (0 + 1.0 / h_pi)
            tau = pi * (0 + _mu(h_pi, h_tau))
            m_pi, m_tau = (q + pi) - q, (r + tau) - r
            k = 1.0 / (1.0 + _BETA2 * m_pi)
            z_pi, z_tau = p + k * m_pi, t + k * m_tau
            out.append(_as_library(_mu(z_pi, z_tau), math.sqrt(1 / z_pi)))
    except ZeroDivisionError:
        return None
    if not all(math.isfinite(r.mu) and math.isfinite(r.sigma) for r in out):
        return None
    return (out[1], out[0]) if swap else (out[0], out[1])
