"""The statistics' own properties: symmetry, the maximum likelihood distributions meet their hypothesis,
bounds and decisions, and clear errors for counts and parameters they cannot use."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arena.stats import (
    Model,
    Pentanomial,
    Sprt,
    SprtDecision,
    StatsError,
    Trinomial,
    elo_from_score,
    estimate,
    llr,
    pair_index,
    score_from_elo,
)
from arena.stats.counts import MAX_COUNT, distribution, mean_and_variance
from arena.stats.elo import NELO_PER_T
from arena.stats.sprt import _mle_expectation, _mle_t_value

pentanomials = st.lists(st.integers(0, 5000), min_size=5, max_size=5).filter(
    lambda c: sum(1 for n in c if n) >= 2
)


@pytest.mark.parametrize(
    "counts",
    [
        Trinomial(0, 5, 0),
        Trinomial(0, 1, 0),
        Trinomial(3, 4, 3),
        Pentanomial((0, 0, 11, 0, 0)),
        Pentanomial((0, 0, 3, 0, 0)),
        Pentanomial((1, 2, 3, 2, 1)),
        Pentanomial((4, 0, 1, 0, 4)),
    ],
)
def test_an_even_match_is_exactly_even(counts: Trinomial | Pentanomial) -> None:
    """Counts symmetric about a draw (all draws are regularized first) give a score of 0.5 and an
    Elo difference of +0.0 to the last bit: it printed as -7.7e-14, or as -0."""
    e = estimate(counts)
    assert e.score == 0.5
    assert e.elo == 0.0 and math.copysign(1.0, e.elo) == 1.0
    assert f"{e.elo:+.0f}" == "+0"


def test_elo_and_score_are_inverse() -> None:
    assert elo_from_score(0.5) == 0
    assert score_from_elo(400) == pytest.approx(10 / 11)
    for elo in (-600.0, -35.5, 0.0, 5.0, 250.0):
        assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo, abs=1e-9)
    with pytest.raises(StatsError, match="strictly between 0 and 1"):
        elo_from_score(1.0)


@settings(max_examples=60, deadline=None)
@given(pentanomials)
def test_flipping_the_players_negates_everything(counts: list[int]) -> None:
    p = Pentanomial.of(counts)
    e, f = estimate(p), estimate(p.flipped())
    assert f.elo == pytest.approx(-e.elo, abs=1e-7)
    assert f.elo_error == pytest.approx(e.elo_error, rel=1e-9)
    assert f.nelo == pytest.approx(-e.nelo, abs=1e-7)
    assert f.los == pytest.approx(1 - e.los, abs=1e-12)
    for model in Model:
        assert llr(p.flipped(), -1.0, -4.0, model) == pytest.approx(
            llr(p, 1.0, 4.0, model), rel=1e-6, abs=1e-9
        )


@settings(max_examples=60, deadline=None)
@given(pentanomials, st.floats(-100, 100))
# Roots next to a pole (a count of 0 regularized to almost nothing), once short of full precision.
@example([425, 0, 2, 1, 0], 8.0)
@example([0, 0, 0, 1, 85], 0.0)
def test_the_most_likely_distributions_meet_their_hypothesis(counts: list[int], elo: float) -> None:
    p = Pentanomial.of(counts)
    _, probs = distribution(p, regularize=True)
    s = score_from_elo(elo)
    dist = _mle_expectation(p.scores, probs, s)
    assert sum(dist) == pytest.approx(1, abs=1e-9)
    assert mean_and_variance(p.scores, dist)[0] == pytest.approx(s, abs=1e-9)
    t = elo * math.sqrt(2) / NELO_PER_T
    dist = _mle_t_value(p.scores, probs, 0.5, t)
    assert sum(dist) == pytest.approx(1, abs=1e-9)
    mu, var = mean_and_variance(p.scores, dist)
    assert (mu - 0.5) / math.sqrt(var) == pytest.approx(t, abs=1e-7)


def test_the_llr_grows_with_evidence_for_h1() -> None:
    weak = Pentanomial.of((10, 20, 40, 20, 10))
    better = Pentanomial.of((5, 15, 40, 25, 15))
    for model in Model:
        assert llr(weak, 0, 5, model) < 0 < llr(better, 0, 5, model)
        # Twice the same results: twice the evidence.
        doubled = Pentanomial.of([2 * n for n in better.counts])
        assert llr(doubled, 0, 5, model) == pytest.approx(2 * llr(better, 0, 5, model), rel=1e-9)


def test_no_results_yet() -> None:
    assert llr(Pentanomial(), 0, 5) == 0
    with pytest.raises(StatsError, match="no results yet"):
        estimate(Pentanomial())


def test_bounds_and_decisions() -> None:
    sprt = Sprt(0, 5, alpha=0.05, beta=0.1)
    assert sprt.lower == pytest.approx(math.log(0.1 / 0.95))
    assert sprt.upper == pytest.approx(math.log(0.9 / 0.05))
    assert sprt.decide(sprt.upper) is SprtDecision.H1
    assert sprt.decide(sprt.lower) is SprtDecision.H0
    assert sprt.decide(0.0) is SprtDecision.CONTINUE
    assert sprt.report(Pentanomial.of((0, 0, 0, 0, 400))).decision is SprtDecision.H1
    assert sprt.report(Pentanomial.of((400, 0, 0, 0, 0))).decision is SprtDecision.H0


def test_a_test_with_no_spread_is_regularized_and_finite() -> None:
    e = estimate(Pentanomial.of((0, 0, 50, 0, 0)))
    assert e.regularized
    assert e.elo == pytest.approx(0, abs=1e-9)
    assert e.los == pytest.approx(0.5)
    assert math.isfinite(e.elo_error) and e.elo_error > 0
    e = estimate(Pentanomial.of((0, 0, 0, 0, 50)))
    assert e.regularized and e.elo > 1000 and e.los == pytest.approx(1)
    assert not estimate(Pentanomial.of((0, 0, 49, 1, 0))).regularized


def test_an_interval_nearer_to_the_edge_than_the_clamp_keeps_its_order() -> None:
    # 10^7 pairs won twice and one pair scored 1.5: the score is 1 - 0.25 / (10^7 + 1) and its 95%
    # half-width 1.96 sqrt(var / n) is about 4.9e-8 (exact fractions: var = 6.25e-9), so the point and
    # both ends lie above 1 - 1e-6 = 1 - SCORE_CLAMP. Each is held there: Elo 400 log10(999999) =
    # 2399.99982628 with no width. Holding only the upper end gave elo_low 2852.3 above elo_high 2400.0,
    # an error of -226.2.
    top = 400 * math.log10((1 - 1e-6) / 1e-6)
    for counts, sign in (((0, 0, 0, 1, 10**7), 1), ((10**7, 1, 0, 0, 0), -1)):
        e = estimate(Pentanomial.of(counts))
        assert not e.regularized
        assert e.elo_low <= e.elo <= e.elo_high
        for value in (e.elo_low, e.elo, e.elo_high):
            assert value == pytest.approx(sign * top, abs=1e-6)
        assert e.elo_error == pytest.approx(0, abs=1e-6)
        assert e.score_error == pytest.approx(4.8999092e-8, rel=1e-6)


def test_pairs_and_games_are_counted() -> None:
    p = Pentanomial().add(2).add(1).add(1.5).add(0).add(0.5).add(1)
    assert p.counts == (1, 1, 2, 1, 1)
    assert (p.total, p.games, str(p)) == (6, 12, "1,1,2,1,1")
    t = Trinomial().add(1).add(0.5).add(0).add(1)
    assert (t.losses, t.draws, t.wins, t.games) == (1, 1, 2, 4)
    assert pair_index(1.5) == 3
    with pytest.raises(StatsError, match=r"0, 0\.5, 1, 1\.5 or 2"):
        pair_index(0.75)
    with pytest.raises(StatsError, match=r"0, 0\.5 or 1"):
        Trinomial().add(2)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,2,3,4", "expected five counts"),
        ("1,2,3,4,5,6", "expected five counts"),
        ("1,2,x,4,5", "pairs scored 1 must be a whole number >= 0, got 'x'"),
        ("1,2,-3,4,5", "pairs scored 1 must be a whole number"),
        ("1,2,3.5,4,5", "pairs scored 1 must be a whole number"),
        # Digits to str.isdigit() that int() refuses or reads otherwise: a clear error, no traceback.
        ("1,2,3,4,\u00b2", "pairs scored 2 must be a whole number >= 0, got '\u00b2'"),
        ("1,2,3,4,\u0661", "pairs scored 2 must be a whole number >= 0"),
    ],
)
def test_bad_pentanomial_text(text: str, message: str) -> None:
    with pytest.raises(StatsError, match=message):
        Pentanomial.parse(text)


def test_trinomial_text() -> None:
    assert Trinomial.parse(" 89, 123,76 ").counts == (89, 123, 76)
    with pytest.raises(StatsError, match="expected three whole numbers"):
        Trinomial.parse("1,2,3,4")
    with pytest.raises(StatsError, match="the count of draws must be a whole number >= 0"):
        Trinomial.parse("1,\u00b2,3")


def test_counts_are_checked() -> None:
    assert Pentanomial.parse(" 1, 2,3 ,4,5").counts == (1, 2, 3, 4, 5)
    with pytest.raises(StatsError, match="0 or more"):
        Pentanomial.of((1, -1, 0, 0, 0))
    with pytest.raises(StatsError, match="whole number"):
        Trinomial(1, 2.5, 3)  # type: ignore[arg-type]


def test_counts_past_the_limit_are_refused_and_those_up_to_it_solve() -> None:
    # 10^16 pairs against four single ones: the regularized 0.001 and the single pairs vanish next to
    # them in a double, and the LLR divided by zero; such counts are now refused up front, and counts
    # up to the limit (10^9, beside 0s and 1s) still give finite figures under both models.
    with pytest.raises(StatsError, match="at most 1000000000, got 10000000000000000"):
        Pentanomial.of((10**16, 1, 1, 1, 1))
    with pytest.raises(StatsError, match="draws must be at most 1000000000"):
        Trinomial(0, MAX_COUNT + 1, 0)
    with pytest.raises(StatsError, match="scored 2 must be at most 1000000000, got a number of 20"):
        Pentanomial.parse("1,2,3,4,000" + "9" * 20)
    with pytest.raises(StatsError, match="got a number of 5000 digits"):  # int() refuses these
        Pentanomial.parse("1,2,3,4," + "9" * 5000)
    assert Pentanomial.parse("0,0,0,0," + "0" * 30 + str(MAX_COUNT)).counts[4] == MAX_COUNT
    m = MAX_COUNT
    shapes: list[Pentanomial | Trinomial] = [
        Pentanomial.of(c)
        for c in ((0, 0, 0, 0, m), (m, m, m, 0, 0), (0, 0, m, 1, 0), (m, 1, 1, 1, 1))
    ]
    shapes += [Trinomial(0, 0, m), Trinomial(m, m, 0), Trinomial(1, m, 1)]
    for counts in shapes:
        report = [
            Sprt(0, 5).report(counts),
            Sprt(-200, 200).report(counts),
            Sprt(0, 5, model=Model.LOGISTIC).report(counts),
            Sprt(-1000, 1000, model=Model.LOGISTIC).report(counts),
        ]
        for r in report:
            e = r.elo
            for value in (r.llr, e.elo, e.elo_low, e.elo_high, e.nelo, e.nelo_error, e.los):
                assert math.isfinite(value), (counts, r.sprt, value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"elo0": 5, "elo1": 5}, "elo0 must be less than elo1"),
        ({"elo0": 5, "elo1": 0}, "elo0 must be less than elo1"),
        ({"elo0": 0, "elo1": 5, "alpha": 0}, "alpha must be between 0 and 1"),
        ({"elo0": 0, "elo1": 5, "beta": 1.5}, "beta must be between 0 and 1"),
        ({"elo0": 0, "elo1": 5, "alpha": 0.6, "beta": 0.5}, "alpha \\+ beta must be less than 1"),
        ({"elo0": 0, "elo1": math.inf}, "elo1 must be a finite number"),
        ({"elo0": 0, "elo1": 500}, "elo1 must be within -200 .. 200 for the normalized model"),
    ],
)
def test_bad_test_parameters(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(StatsError, match=message):
        Sprt(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("elo1", [-150.0, 50.0, 200.0])
def test_far_hypotheses_still_solve(elo1: float) -> None:
    # The normalized model's limits are inside the range where its likelihood has a maximum.
    for counts in ((1, 0, 0, 0, 1), (0, 0, 0, 0, 100), (100, 0, 0, 0, 0), (3, 12, 40, 25, 9)):
        value = llr(Pentanomial.of(counts), -200.0, elo1)
        assert math.isfinite(value)


def test_an_elo_held_at_the_limit_is_written_as_beyond_it() -> None:
    # Elo stays finite by holding scores 1e-6 inside (0, 1): about +-2400, which is no estimate.
    from arena.stats import elo_text
    from arena.stats.elo import ELO_CEILING, ELO_FLOOR

    assert round(ELO_CEILING) == 2400 and round(ELO_FLOOR) == -2400
    assert elo_text(ELO_CEILING, "+.0f") == ">2400"
    assert elo_text(ELO_FLOOR, ".1f") == "<-2400"
    assert elo_text(-416.6, ".1f") == "-416.6" and elo_text(12.3, "+.0f") == "+12"
