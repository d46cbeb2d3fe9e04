"""The arena's one TrueSkill environment: pinned numbers for 1 vs 1, draws, teams and free-for-all,
checked against the trueskill library itself, and no global state."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
import trueskill

from arena.rating import ENV, Rating, conservative, initial, rate_game

TOL = 1e-9


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0.0, abs_tol=TOL)


@pytest.fixture
def library_env() -> trueskill.TrueSkill:
    """The trueskill library's own environment with the arena's parameters, built independently."""
    return trueskill.TrueSkill(
        mu=25.0,
        sigma=25.0 / 3,
        beta=25.0 / 6,
        tau=25.0 / 300,
        draw_probability=0.05,
        backend=None,
    )


@pytest.fixture
def pristine_global_env() -> Iterator[None]:
    saved = trueskill.global_env()
    try:
        yield
    finally:
        trueskill.setup(env=saved)


def test_the_environment_is_explicit() -> None:
    assert ENV.mu == 25.0
    assert ENV.sigma == pytest.approx(25.0 / 3, abs=TOL)
    assert ENV.beta == pytest.approx(25.0 / 6, abs=TOL)
    assert ENV.tau == pytest.approx(25.0 / 300, abs=TOL)
    assert ENV.draw_probability == 0.05
    assert initial() == Rating(25.0, 25.0 / 3)


def test_library_default_environment_gives_the_published_numbers() -> None:
    """The trueskill documentation's 1 vs 1 example: mu 29.396 / 20.604, sigma 7.171."""
    env = trueskill.TrueSkill(backend=None)
    (w,), (lose,) = env.rate([(env.create_rating(),), (env.create_rating(),)], ranks=[0, 1])
    assert round(w.mu, 3) == 29.396 and round(lose.mu, 3) == 20.604
    assert round(w.sigma, 3) == round(lose.sigma, 3) == 7.171


# Our environment's numbers, computed once and pinned.
WIN_1V1 = ((29.300017979673356, 7.1830908490764305), (20.699982020326644, 7.1830908490764305))
DRAW_1V1 = ((24.999999999999996, 6.455821788299827), (24.999999999999996, 6.455821788299827))
WIN_2V2 = ((28.0405718726511, 7.7797231003093685), (21.959428127348893, 7.7797231003093685))
FFA_3 = (
    (31.49187385830199, 6.6774303073625845),
    (25.000000000004828, 6.223123260092612),
    (18.508126141693175, 6.677430307363801),
)
DRAW_UNEQUAL = ((28.155491569294387, 3.613094181839513), (24.149143693365986, 4.589895790812487))


def test_one_vs_one_win(library_env: trueskill.TrueSkill) -> None:
    i = initial()
    [[w], [lose]] = rate_game([[i], [i]], [0, 1])
    assert close(w.mu, WIN_1V1[0][0]) and close(w.sigma, WIN_1V1[0][1])
    assert close(lose.mu, WIN_1V1[1][0]) and close(lose.sigma, WIN_1V1[1][1])
    r = library_env.create_rating
    (lw,), (ll,) = library_env.rate([(r(),), (r(),)], ranks=[0, 1])
    assert close(w.mu, lw.mu) and close(w.sigma, lw.sigma)
    assert close(lose.mu, ll.mu) and close(lose.sigma, ll.sigma)
    assert w.mu + lose.mu == pytest.approx(50.0, abs=TOL), "symmetric from equal ratings"


def test_rank_order_not_team_order_decides() -> None:
    i = initial()
    [[a], [b]] = rate_game([[i], [i]], [1, 0])
    assert close(b.mu, WIN_1V1[0][0]) and close(a.mu, WIN_1V1[1][0])


def test_draw_from_equal_ratings(library_env: trueskill.TrueSkill) -> None:
    i = initial()
    [[a], [b]] = rate_game([[i], [i]], [0, 0])
    assert a.mu == b.mu
    assert close(a.mu, 25.0)
    assert close(a.sigma, DRAW_1V1[0][1]) and a.sigma < i.sigma
    r = library_env.create_rating
    (la,), (lb,) = library_env.rate([(r(),), (r(),)], ranks=[0, 0])
    assert close(a.mu, la.mu) and close(b.sigma, lb.sigma)


def test_draw_between_unequal_ratings_pulls_together(library_env: trueskill.TrueSkill) -> None:
    [[a], [b]] = rate_game([[Rating(30.0, 4.0)], [Rating(20.0, 6.0)]], [0, 0])
    assert close(a.mu, DRAW_UNEQUAL[0][0]) and close(a.sigma, DRAW_UNEQUAL[0][1])
    assert close(b.mu, DRAW_UNEQUAL[1][0]) and close(b.sigma, DRAW_UNEQUAL[1][1])
    assert a.mu < 30.0 and b.mu > 20.0
    (la,), (lb,) = library_env.rate(
        [(library_env.create_rating(30.0, 4.0),), (library_env.create_rating(20.0, 6.0),)],
        ranks=[0, 0],
    )
    assert close(a.mu, la.mu) and close(b.mu, lb.mu)


def test_teams_of_two(library_env: trueskill.TrueSkill) -> None:
    i = initial()
    [[a1, a2], [b1, b2]] = rate_game([[i, i], [i, i]], [0, 1])
    assert a1 == a2 and b1 == b2
    assert close(a1.mu, WIN_2V2[0][0]) and close(a1.sigma, WIN_2V2[0][1])
    assert close(b1.mu, WIN_2V2[1][0]) and close(b1.sigma, WIN_2V2[1][1])
    r = library_env.create_rating
    (la, _), (lb, _) = library_env.rate([(r(), r()), (r(), r())], ranks=[0, 1])
    assert close(a1.mu, la.mu) and close(b1.sigma, lb.sigma)


def test_free_for_all_of_three(library_env: trueskill.TrueSkill) -> None:
    i = initial()
    [[first], [second], [third]] = rate_game([[i], [i], [i]], [0, 1, 2])
    for got, (mu, sigma) in zip((first, second, third), FFA_3, strict=True):
        assert close(got.mu, mu) and close(got.sigma, sigma)
    assert first.mu > second.mu > third.mu
    r = library_env.create_rating
    lib = library_env.rate([(r(),), (r(),), (r(),)], ranks=[0, 1, 2])
    for got, (want,) in zip((first, second, third), lib, strict=True):
        assert close(got.mu, want.mu) and close(got.sigma, want.sigma)


def test_free_for_all_with_a_shared_place(library_env: trueskill.TrueSkill) -> None:
    i = initial()
    [[a], [b], [c]] = rate_game([[i], [i], [i]], [0, 0, 1])
    # the factor graph's iterations stop within trueskill's own tolerance, not exactly
    assert a.mu == pytest.approx(b.mu, abs=1e-2)
    assert a.mu > 25.0 > c.mu
    r = library_env.create_rating
    (la,), _, (lc,) = library_env.rate([(r(),), (r(),), (r(),)], ranks=[0, 0, 1])
    assert close(a.mu, la.mu) and close(c.mu, lc.mu)


def test_exposed_is_mu_minus_three_sigma() -> None:
    for r in (initial(), Rating(31.5, 2.25), Rating(-3.0, 0.5)):
        assert r.exposed == r.mu - 3 * r.sigma
        assert conservative(r) == r.exposed
        assert close(r.exposed, ENV.expose(ENV.create_rating(r.mu, r.sigma)))
    assert initial().exposed == pytest.approx(0.0, abs=TOL)


def test_ratings_are_values() -> None:
    r = Rating(25.0, 8.0)
    assert r == Rating(25.0, 8.0) and hash(r) == hash(Rating(25.0, 8.0))
    with pytest.raises(AttributeError):
        r.mu = 3.0  # type: ignore[misc]


@pytest.mark.usefixtures("pristine_global_env")
def test_no_global_state() -> None:
    """Changing the trueskill library's global environment changes nothing in the arena's numbers."""
    i = initial()
    before = rate_game([[i], [i]], [0, 1])
    trueskill.setup(mu=0.0, sigma=1.0, beta=10.0, tau=0.0, draw_probability=0.5)
    assert rate_game([[i], [i]], [0, 1]) == before
    assert rate_game([[i], [i]], [0, 0])[0][0].mu == pytest.approx(25.0, abs=TOL)
