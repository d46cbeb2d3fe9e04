"""The one TrueSkill environment of the arena (never ``trueskill.setup()``: no global state).

A game is rated as its sides: each side a team of the entrants who played its seats (partners, and the
players sharing a seat in consultation), ranked by the game's result; equal places are a draw. A team's
performance is the weighted sum of its players': partners each play a hand of their own (weight 1),
players sharing a seat play one hand between them (weight 1/n each: TrueSkill's partial play), so that
two allies in consultation count as one hand's strength, not twice a single player's.
"""

from __future__ import annotations

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
    groups = [[ENV.create_rating(r.mu, r.sigma) for r in team] for team in teams]
    shares = None if weights is None else [list(w) for w in weights]
    rated = ENV.rate(groups, ranks=list(ranks), weights=shares)
    return [[Rating(r.mu, r.sigma) for r in team] for team in rated]
