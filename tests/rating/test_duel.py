"""The one-against-one update made on plain floats (arena.rating.trueskill_env._duel) is the
library's to the last bit: the ledger's ratings are pinned and rebuilt bit-exact (issue 47 made the
rebuild of a million games fit in minutes)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.rating import ENV, Rating, rate_game
from arena.rating.trueskill_env import _duel


def library(a: Rating, b: Rating, r0: int, r1: int) -> object:
    """The trueskill library's own update (the graph of factors), or "error" where it refuses."""
    try:
        out = ENV.rate(
            [[ENV.create_rating(a.mu, a.sigma)], [ENV.create_rating(b.mu, b.sigma)]],
            ranks=[r0, r1],
        )
    except FloatingPointError:
        return "error"
    return [[Rating(out[0][0].mu, out[0][0].sigma)], [Rating(out[1][0].mu, out[1][0].sigma)]]


def arenas(a: Rating, b: Rating, r0: int, r1: int) -> object:
    try:
        return rate_game([[a], [b]], [r0, r1])
    except FloatingPointError:
        return "error"


RANKS = [(0, 1), (1, 0), (0, 0), (1, 1), (2, 5)]


def test_thousands_of_games_rate_as_the_library_does() -> None:
    rng = random.Random(47)
    direct = 0
    for _ in range(3000):
        kind = rng.random()
        if kind < 0.5:  # a ladder's games: near ratings, sigmas that shrank
            a = Rating(rng.gauss(25, 4), rng.uniform(0.5, 8.4))
            b = Rating(a.mu + rng.gauss(0, 2), rng.uniform(0.5, 8.4))
        else:  # anything
            a = Rating(rng.uniform(-50, 100), 10 ** rng.uniform(-2, 1.5))
            b = Rating(rng.uniform(-50, 100), 10 ** rng.uniform(-2, 1.5))
        r0, r1 = rng.choice(RANKS)
        assert arenas(a, b, r0, r1) == library(a, b, r0, r1), (a, b, r0, r1)
        direct += _duel(a, b, r0, r1) is not None if library(a, b, r0, r1) != "error" else 0
    assert direct > 2700, "the floats' path took nearly every game (the rest went to the library)"


@settings(max_examples=300, deadline=None)
@given(
    mu_a=st.floats(-200, 300),
    mu_b=st.floats(-200, 300),
    sigma_a=st.floats(0.001, 50),
    sigma_b=st.floats(0.001, 50),
    ranks=st.sampled_from(RANKS),
)
def test_any_game_rates_as_the_library_does(
    mu_a: float, mu_b: float, sigma_a: float, sigma_b: float, ranks: tuple[int, int]
) -> None:
    a, b = Rating(mu_a, sigma_a), Rating(mu_b, sigma_b)
    assert arenas(a, b, *ranks) == library(a, b, *ranks)


def test_the_first_game_of_two_new_entrants() -> None:
    """Pinned numbers (the library's, tests/rating pins them too): a win and a draw from the
    initial ratings."""
    new = Rating(25.0, 25.0 / 3)
    won = [
        [Rating(29.300017979673356, 7.1830908490764305)],
        [Rating(20.699982020326644, 7.1830908490764305)],
    ]
    drawn = [[Rating(24.999999999999996, 6.455821788299827)]] * 2
    assert rate_game([[new], [new]], [0, 1]) == library(new, new, 0, 1) == won
    assert rate_game([[new], [new]], [0, 0]) == library(new, new, 0, 0) == drawn
