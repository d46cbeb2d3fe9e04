"""The statistics pinned by fastchess's numbers: the same counts give the same LLR, Elo, nElo and LOS
to three significant figures.

Where the figures come from: fastchess (github.com/Disservin/fastchess, commit 74deac23), its own
``SPRT::getLLR``, ``EloPentanomial`` and ``EloWDL`` (``app/src/matchmaking/sprt/sprt.cpp``,
``app/src/matchmaking/elo/``) compiled unchanged with a ten-line driver that builds fastchess's
``Stats`` from the counts and prints each figure with 10 significant digits (its LOS comes formatted with
two decimals, in percent). The rows marked "fastchess test" are also in fastchess's own test suite
(``app/tests/sprt_test.cpp``, ``app/tests/elo_test.cpp``), which checks them to two decimals.

Pentanomial counts are N0..N4, the pairs scored 0, 0.5, 1, 1.5 and 2 by the first player: fastchess's
LL, LD, WL+DD, WD, WW. Trinomial counts are losses, draws, wins.
"""

from __future__ import annotations

import math

import pytest

from arena.stats import Model, Pentanomial, Sprt, Trinomial

# model, alpha, beta, elo0, elo1, counts, llr, elo, elo_error, nelo, nelo_error, los (%)
# None: fastchess prints inf or nan there (every pair the same), so there is nothing to compare.
PENTANOMIAL = [
    # fastchess test "normalized pentanomial 1" (LLR 2.25), and EloPentanomial on the same counts
    ("normalized", 0.05, 0.05, 0, 2, (365, 16618, 36229, 16974, 390),
     2.250367704, 0.9993428129, 0.9230768134, 1.962270793, 1.812503573, 98.31),
    # fastchess test "normalized pentanomial 2" (LLR 3.01)
    ("normalized", 0.05, 0.05, -1.75, 0.25, (127, 4883, 10712, 5150, 104),
     3.010154205, 1.830281624, 1.698966887, 3.581711126, 3.324650936, 98.26),
    # fastchess test "normalized pentanomial 3" (LLR 111.82): every pair won twice
    ("normalized", 0.05, 0.05, 0, 5, (0, 0, 0, 0, 5550),
     111.7975551, None, None, None, None, 100.00),
    # fastchess test "logistic pentanomial 1" (LLR -3.07)
    ("logistic", 0.05, 0.05, 0.5, 2.5, (223, 9863, 21279, 10037, 246),
     -3.07442286, 0.9176431828, 1.206369873, 1.794764376, 2.359447488, 93.20),
    # fastchess test "logistic pentanomial 2" (LLR -4.98)
    ("logistic", 0.05, 0.05, 0, 2, (871, 26175, 55983, 26678, 821),
     -4.979611872, 0.6333992114, 0.7521708183, 1.219646334, 1.44834237, 95.06),
    # fastchess test "EloPentanomial 1" (nElo 57.94 +- 28.28, Elo 55.58 +- 27.65)
    ("normalized", 0.05, 0.05, 0, 5, (34, 54, 63, 64, 75),
     1.301436377, 55.57978042, 27.65342951, 57.93559994, 28.27537624, 100.00),
    # fastchess test "EloPentanomial 2" (nElo -9.17 +- 10.96, LOS 5.05 %)
    ("normalized", 0.05, 0.05, 0, 5, (332, 433, 498, 333, 334),
     -1.86381536, -8.642667268, 10.33419442, -9.17291427, 10.96045888, 5.05),
    # fastchess test "EloPentanomial 3" (nElo -19.01 +- 2.65)
    ("normalized", 0.05, 0.05, 0, 5, (7895, 8757, 5685, 568, 9999),
     -58.12928307, -21.04352058, 2.945280869, -19.01283428, 2.654501917, 0.00),
    # the driver on other counts: a short test, both models, other alpha and beta
    ("normalized", 0.05, 0.05, 0, 5, (3, 12, 40, 25, 9),
     0.4962159102, 49.12184284, 34.5824481, 73.7258136, 51.04020243, 99.77),
    ("logistic", 0.05, 0.05, 0, 5, (3, 12, 40, 25, 9),
     0.7028353694, 49.12184284, 34.5824481, 73.7258136, 51.04020243, 99.77),
    ("normalized", 0.01, 0.1, 0, 10, (10, 30, 60, 35, 15),
     0.4587419279, 17.38627751, 29.16575654, 23.53130709, 39.31531521, 87.96),
    ("logistic", 0.1, 0.2, -5, 5, (10, 30, 60, 35, 15),
     0.7857335187, 17.38627751, 29.16575654, 23.53130709, 39.31531521, 87.96),
    ("normalized", 0.05, 0.05, 0, 5, (0, 2, 15, 40, 43),
     1.582998505, 251.8925672, 43.4094184, 392.4989543, 48.15123067, 100.00),
    ("logistic", 0.05, 0.05, 0, 5, (0, 2, 15, 40, 43),
     1.428501519, 251.8925672, 43.4094184, 392.4989543, 48.15123067, 100.00),
    ("normalized", 0.05, 0.05, 0, 50, (1, 4, 10, 30, 60),
     15.35472465, 291.7837306, 56.07192742, 384.7606687, 46.99078952, 100.00),
    ("logistic", 0.05, 0.05, 0, 50, (1, 4, 10, 30, 60),
     13.58411417, 291.7837306, 56.07192742, 384.7606687, 46.99078952, 100.00),
]  # fmt: skip

# model, alpha, beta, elo0, elo1, (losses, draws, wins), llr, elo, elo_error, nelo, nelo_error, los
TRINOMIAL = [
    # fastchess test "normalized trinomial 1" (LLR 0.92)
    ("normalized", 0.05, 0.05, 0, 2, (36027, 68692, 36433),
     0.9232934492, 0.9993428129, 1.298633596, 1.394797463, 1.812503573, 93.43),
    # fastchess test "normalized trinomial 2" (LLR 2.30)
    ("normalized", 0.05, 0.05, -1.75, 0.25, (10650, 20431, 10871),
     2.29750041, 1.830281624, 2.381266756, 2.555469844, 3.324650936, 93.40),
    # fastchess test "normalized trinomial 3" (LLR 120.56): every game won
    ("normalized", 0.05, 0.05, 0, 10, (0, 0, 4250),
     120.5482677, None, None, None, None, 100.00),
    # fastchess test "logistic trinomial 1" (LLR -1.57)
    ("logistic", 0.05, 0.05, 0.5, 2.5, (21184, 40708, 21404),
     -1.57203161, 0.9176431828, 1.687117561, 1.283347432, 2.359447488, 85.68),
    # fastchess test "logistic trinomial 2" (LLR -2.59)
    ("logistic", 0.05, 0.05, 0, 2, (57030, 106593, 57433),
     -2.593331364, 0.6333992114, 1.042207026, 0.8802317357, 1.44834237, 88.32),
    # fastchess test "EloWDL 1" (nElo -20.76 +- 40.13, LOS 15.53 %)
    ("normalized", 0.05, 0.05, 0, 5, (89, 123, 76),
     -0.2769647496, -15.69352071, 30.45800072, -20.75644978, 40.12602556, 15.53),
    # fastchess test "EloWDL 2" (Elo 40.70 +- 30.43, LOS 99.60 %)
    ("normalized", 0.05, 0.05, 0, 5, (96, 111, 136),
     0.6644880603, 40.70245819, 30.42721794, 49.76841538, 36.76845059, 99.60),
    ("normalized", 0.05, 0.05, 0, 5, (40, 3, 57),
     0.2380438328, 59.64310775, 68.99765174, 60.88430221, 68.09612346, 96.01),
    ("logistic", 0.05, 0.05, 0, 5, (40, 3, 57),
     0.2415502672, 59.64310775, 68.99765174, 60.88430221, 68.09612346, 96.01),
]  # fmt: skip


def agrees(mine: float, reference: float) -> bool:
    """Equal to three significant figures: within half a unit of the reference's third figure."""
    if reference == 0:
        return abs(mine) < 1e-9
    unit = 10 ** (math.floor(math.log10(abs(reference))) - 2)
    return abs(mine - reference) <= unit / 2


def check(row: tuple[object, ...], counts: Pentanomial | Trinomial) -> None:
    model, alpha, beta, elo0, elo1, _, llr, elo, elo_error, nelo, nelo_error, los = row
    assert isinstance(model, str)
    sprt = Sprt(float(elo0), float(elo1), float(alpha), float(beta), Model(model))  # type: ignore[arg-type]
    report = sprt.report(counts)
    assert agrees(report.llr, float(llr)), (report.llr, llr)  # type: ignore[arg-type]
    expected = {"elo": elo, "elo_error": elo_error, "nelo": nelo, "nelo_error": nelo_error}
    got = {
        "elo": report.elo.elo,
        "elo_error": report.elo.elo_error,
        "nelo": report.elo.nelo,
        "nelo_error": report.elo.nelo_error,
    }
    for name, value in expected.items():
        if value is not None:
            assert agrees(got[name], float(value)), (name, got[name], value)  # type: ignore[arg-type]
    if los is not None:  # fastchess prints the LOS in percent with two decimals
        assert abs(report.elo.los * 100 - float(los)) <= 0.005 + 1e-9, (report.elo.los, los)  # type: ignore[arg-type]


@pytest.mark.parametrize("row", PENTANOMIAL, ids=lambda r: f"{r[0]}-{r[5]}")
def test_pentanomial_matches_fastchess(row: tuple[object, ...]) -> None:
    counts = row[5]
    assert isinstance(counts, tuple)
    check(row, Pentanomial.of(counts))


@pytest.mark.parametrize("row", TRINOMIAL, ids=lambda r: f"{r[0]}-{r[5]}")
def test_trinomial_matches_fastchess(row: tuple[object, ...]) -> None:
    losses, draws, wins = row[5]  # type: ignore[misc]
    check(row, Trinomial(losses, draws, wins))


def test_bounds_match_fastchess() -> None:
    # fastchess prints (-2.94, 2.94) for alpha = beta = 0.05; the driver printed these for the others.
    assert Sprt(0, 5).lower == pytest.approx(-2.944438979, rel=1e-9)
    assert Sprt(0, 5).upper == pytest.approx(2.944438979, rel=1e-9)
    assert Sprt(0, 10, alpha=0.01, beta=0.1).lower == pytest.approx(-2.292534757, rel=1e-9)
    assert Sprt(0, 10, alpha=0.01, beta=0.1).upper == pytest.approx(4.49980967, rel=1e-9)
    assert Sprt(-5, 5, alpha=0.1, beta=0.2).lower == pytest.approx(-1.504077397, rel=1e-9)
    assert Sprt(-5, 5, alpha=0.1, beta=0.2).upper == pytest.approx(2.079441542, rel=1e-9)


def test_every_pair_drawn_meets_the_hypothesis_where_fastchess_stops_early() -> None:
    # Two identical deterministic bots draw every pair. fastchess gives LLR -0.04588263923 for 120 such
    # pairs with [0, 5], but its maximum likelihood distribution under H1 stops (after its 10 rounds,
    # at its 1e-4 tolerance) at a t-value of 0.020402 instead of H1's 0.020352 (the driver printed
    # both). Ours meets the hypothesis exactly and is likelier, so the two differ by 0.5% here.
    from arena.stats.counts import distribution, mean_and_variance
    from arena.stats.elo import NELO_PER_T
    from arena.stats.sprt import _mle_t_value

    counts = Pentanomial.of((0, 0, 120, 0, 0))
    _, probs = distribution(counts, regularize=True)
    t1 = 5 * math.sqrt(2) / NELO_PER_T
    p1 = _mle_t_value(counts.scores, probs, 0.5, t1)
    mu, var = mean_and_variance(counts.scores, p1)
    assert sum(p1) == pytest.approx(1, abs=1e-12)
    assert (mu - 0.5) / math.sqrt(var) == pytest.approx(t1, rel=1e-9)
    llr = Sprt(0, 5).llr(counts)
    assert llr == pytest.approx(-0.04588263923, rel=0.01)
    assert llr == pytest.approx(-0.0456339, rel=1e-5)
