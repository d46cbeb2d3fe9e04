"""The A/B test's loop and statistics by simulation: simulated pairs, not real games, so it is fast.

A bot is a strength; each simulated deal favours one seat by a random amount of luck (the same for
both games of the pair, which is what duplicate pairs cancel), and each game adds noise of its own. The
test then behaves as the GSPRT promises: a known-better bot is accepted as better, a bot against itself
is accepted as no better, and over many runs the errors stay within alpha and beta.

Run counts: each scenario runs RUNS sequential tests with a fixed seed. The bound checked is the
nominal error rate plus five binomial standard deviations, which a correct test exceeds with a
probability below 1e-6 (the GSPRT's real error rates are at or below the nominal ones), so a failure
means the statistics are wrong, not bad luck.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Sequence

import pytest

from arena.abtest.duplicate_pairs import NEW, OLD, GameReport, PairReport, run_ab_test
from arena.stats import Model, Pentanomial, Sprt, SprtDecision
from arena.stats.counts import mean_and_variance
from arena.stats.elo import NELO_PER_T, score_from_elo

RUNS = 150
MAX_PAIRS = 5000  # never reached in these scenarios: every run decides
SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


def bound(rate: float, runs: int = RUNS) -> float:
    """The most errors a correct test makes in ``runs`` runs, but with a probability below 1e-6."""
    return rate * runs + 5 * math.sqrt(runs * rate * (1 - rate))


def game(points: float) -> GameReport:
    return GameReport(seats=((NEW,), (OLD,)), points=points, outcome="normal")


class SimulatedBots:
    """Pairs between two simulated bots: a game's margin for the new bot is its strength advantage
    plus the deal's luck for its seat plus noise; above ``draw`` it wins, below ``-draw`` it loses."""

    def __init__(self, advantage: float, rng: random.Random, luck: float = 1.0) -> None:
        self.advantage, self.rng, self.luck = advantage, rng, luck

    def game_points(self, luck: float) -> float:
        margin = self.advantage + luck + self.rng.gauss(0, 0.5)
        return 1.0 if margin > 0.05 else 0.0 if margin < -0.05 else 0.5

    async def __call__(self, index: int) -> PairReport:
        luck = self.rng.gauss(0, self.luck)  # for seat 0; the new bot holds it in game 1 only
        games = (game(self.game_points(luck)), game(self.game_points(-luck)))
        return PairReport(index, index, games)


class SimulatedPairs:
    """Pairs drawn from a given pentanomial distribution."""

    def __init__(self, probs: Sequence[float], rng: random.Random) -> None:
        self.probs, self.rng = list(probs), rng

    async def __call__(self, index: int) -> PairReport:
        points = self.rng.choices(range(5), self.probs)[0] / 2
        halves = (min(points, 1.0), points - min(points, 1.0))
        return PairReport(index, index, (game(halves[0]), game(halves[1])))


def tilted(target: float, normalized: bool) -> list[float]:
    """A pentanomial distribution (a symmetric one, exponentially tilted) whose t-value per pair, or
    whose expected score, is exactly ``target``."""
    base = (0.05, 0.25, 0.4, 0.25, 0.05)

    def dist(theta: float) -> list[float]:
        w = [b * math.exp(theta * a) for b, a in zip(base, SCORES, strict=True)]
        return [x / sum(w) for x in w]

    def measure(theta: float) -> float:
        mu, var = mean_and_variance(SCORES, dist(theta))
        return (mu - 0.5) / math.sqrt(var) if normalized else mu

    lo, hi = -20.0, 20.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if measure(mid) < target else (lo, mid)
    return dist((lo + hi) / 2)


def run_many(make_player: object, sprt: Sprt, runs: int = RUNS) -> dict[SprtDecision, int]:
    async def all_runs() -> dict[SprtDecision, int]:
        tally = dict.fromkeys(SprtDecision, 0)
        for _ in range(runs):
            state = await run_ab_test(make_player(), sprt, MAX_PAIRS, concurrency=1)  # type: ignore[operator]
            tally[state.decision] += 1
        return tally

    return asyncio.run(all_runs())


def test_a_better_bot_is_accepted_as_better_and_a_worse_one_as_not() -> None:
    rng = random.Random(181)
    sprt = Sprt(0, 150)  # normalized Elo
    better = run_many(lambda: SimulatedBots(0.8, rng), sprt, runs=20)
    assert better == {SprtDecision.H1: 20, SprtDecision.H0: 0, SprtDecision.CONTINUE: 0}
    worse = run_many(lambda: SimulatedBots(-0.3, rng), sprt, runs=20)
    assert worse == {SprtDecision.H1: 0, SprtDecision.H0: 20, SprtDecision.CONTINUE: 0}


def test_a_bot_against_itself_is_accepted_as_no_better_within_alpha() -> None:
    rng = random.Random(182)
    sprt = Sprt(0, 150)
    tally = run_many(lambda: SimulatedBots(0.0, rng), sprt)
    assert tally[SprtDecision.CONTINUE] == 0
    assert tally[SprtDecision.H1] <= bound(sprt.alpha)  # false positives: at most alpha
    assert tally[SprtDecision.H0] >= RUNS - bound(sprt.alpha)


@pytest.mark.parametrize("model", list(Model))
def test_error_rates_at_the_hypotheses(model: Model) -> None:
    # Exactly at elo0 H1 is accepted at most alpha of the time; exactly at elo1, H0 at most beta.
    sprt = Sprt(0, 150, alpha=0.05, beta=0.1, model=model)
    rng = random.Random(183 if model is Model.NORMALIZED else 184)
    for elo, wrong, rate in (
        (sprt.elo0, SprtDecision.H1, sprt.alpha),
        (sprt.elo1, SprtDecision.H0, sprt.beta),
    ):
        if model is Model.NORMALIZED:
            probs = tilted(elo * math.sqrt(2) / NELO_PER_T, normalized=True)
        else:
            probs = tilted(score_from_elo(elo), normalized=False)
        tally = run_many(lambda p=probs: SimulatedPairs(p, rng), sprt)
        assert tally[SprtDecision.CONTINUE] == 0
        assert tally[wrong] <= bound(rate), (elo, tally)


def test_the_simulated_distributions_are_what_they_claim() -> None:
    # The scenarios above are only as good as their distributions: check them.
    probs = tilted(150 * math.sqrt(2) / NELO_PER_T, normalized=True)
    mu, var = mean_and_variance(SCORES, probs)
    assert (mu - 0.5) / math.sqrt(var) * NELO_PER_T / math.sqrt(2) == pytest.approx(150, rel=1e-6)
    probs = tilted(score_from_elo(150), normalized=False)
    assert mean_and_variance(SCORES, probs)[0] == pytest.approx(score_from_elo(150), rel=1e-9)
    # A bot against itself: symmetric pairs, nElo 0 over many simulated pairs.
    bots = SimulatedBots(0.0, random.Random(7))
    tally = [0] * 5
    for _ in range(4000):
        luck = bots.rng.gauss(0, bots.luck)
        tally[int(2 * (bots.game_points(luck) + bots.game_points(-luck)))] += 1
    e = Sprt(0, 5).report(Pentanomial.of(tally)).elo
    assert abs(e.nelo) < e.nelo_error
    # Duplicate pairs take the luck out: most pairs are split (one win each), few are won twice.
    assert tally[2] > tally[0] + tally[4]
