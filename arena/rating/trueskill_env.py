"""The one TrueSkill environment of the arena (never ``trueskill.setup()``: no global state).

A game is rated as its sides: each side a team of the entrants who played its seats (partners, and the
players sharing a seat in consultation), ranked by the game's result; equal places are a draw.
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


def rate_game(teams: Sequence[Sequence[Rating]], ranks: Sequence[int]) -> list[list[Rating]]:
    """New ratings for every player of every team; ``ranks[i]`` is team i's place (0 best)."""
    groups = [[ENV.create_rating(r.mu, r.sigma) for r in team] for team in teams]
    rated = ENV.rate(groups, ranks=list(ranks))
    return [[Rating(r.mu, r.sigma) for r in team] for team in rated]
