"""What ``arena sprt`` prints: the report (``name value`` lines), the line after each pair, a pair's
failures, and the summary at the end of a played test."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from arena.game import Variant
from arena.stats import EloEstimate, Pentanomial, SprtReport
from arena.stats.counts import Counts, distribution, mean_and_variance
from arena.stats.elo import ELO_CEILING, ELO_FLOOR, elo_text

if TYPE_CHECKING:
    from arena.abtest.duplicate_pairs import AbTestState, PairReport


def _number(x: float) -> str:
    """At least four significant figures (six), in plain form where it fits."""
    return f"{x:.6g}"


def _elo_error(e: EloEstimate, spec: str) -> str:
    """Half the width of Elo's interval; at least that (``>``) when an end is held at the limit."""
    held = e.elo_high >= ELO_CEILING or e.elo_low <= ELO_FLOOR
    return (">" if held else "") + format(e.elo_error, spec)


def _score(counts: Counts) -> float:
    """The games' own score, without the regularization's pseudo-counts."""
    return mean_and_variance(counts.scores, distribution(counts)[1])[0]


def report_lines(report: SprtReport) -> list[str]:
    """The report, one ``name value`` line each: what ``--pentanomial`` prints, and the summary of a
    played test. While every pair (game) scored alike, Elo, nElo and LOS would be the
    regularization's, not the games': they are ``-``, and ``regularized`` says why."""
    s, e = report.sprt, report.elo
    pairs = isinstance(report.counts, Pentanomial)
    if e.regularized:
        regularized = (
            f"yes: every {'pair' if pairs else 'game'} scored alike, so there is no spread to "
            "measure Elo, nElo or LOS with (the LLR counts the outcomes never seen as 0.001)"
        )
        figures = dict.fromkeys(
            ("elo", "elo_low", "elo_high", "elo_error", "nelo", "nelo_error", "los"), "-"
        )
    else:
        regularized = "no"
        figures = {
            "elo": elo_text(e.elo, ".6g"),
            "elo_low": elo_text(e.elo_low, ".6g"),
            "elo_high": elo_text(e.elo_high, ".6g"),
            "elo_error": _elo_error(e, ".6g"),
            "nelo": _number(e.nelo),
            "nelo_error": _number(e.nelo_error),
            "los": _number(e.los * 100),
        }
    return [
        f"{'pairs' if pairs else 'games'} {report.counts.total}",
        f"{'pentanomial' if pairs else 'trinomial'} {report.counts}",
        f"model {s.model.value}",
        f"elo0 {_number(s.elo0)}",
        f"elo1 {_number(s.elo1)}",
        f"alpha {_number(s.alpha)}",
        f"beta {_number(s.beta)}",
        f"llr {_number(report.llr)}",
        f"lower {_number(report.lower)}",
        f"upper {_number(report.upper)}",
        f"score {_number(_score(report.counts))}",
        f"regularized {regularized}",
        *(f"{key} {value}" for key, value in figures.items()),
        f"decision {report.decision.value}",
    ]


def progress_line(pair: PairReport, state: AbTestState) -> str:
    """One line after each pair: its points, then the test so far."""
    head = f"pair {len(state.pairs)} (deal {pair.index})"
    if not pair.counted:
        return f"{head}: not counted, the arena could not play it: {pair.error}"
    r = state.report
    assert r is not None
    e = r.elo
    if e.regularized:  # every pair scored alike: Elo and LOS would be the regularization's
        figures = "Elo - | nElo - | LOS - (every pair alike so far)"
    else:
        figures = (
            f"Elo {elo_text(e.elo, '.1f')} +/- {_elo_error(e, '.1f')} "
            f"[{elo_text(e.elo_low, '.1f')}, {elo_text(e.elo_high, '.1f')}] | "
            f"nElo {e.nelo:.1f} +/- {e.nelo_error:.1f} | LOS {e.los:.1%}"
        )
    return (
        f"{head}: {pair_score(pair)} | penta {state.counts} | LLR {r.llr:.3f} "
        f"({r.lower:.2f}, {r.upper:.2f}) | {figures}"
    )


PAIR_SCORE = (
    "each pair's score, NEW-OLD: the points of the new version and of the old in its two games "
    "(a win 1, a draw 0.5 each)"
)


def pair_score(pair: PairReport) -> str:
    """The pair's points, the new version's first: ``pair score 1.5-0.5``."""
    return f"pair score {pair.points:g}-{len(pair.games) - pair.points:g}"


def closing_line(state: AbTestState, names: dict[str, str], played: int, seconds: float) -> str:
    """The last line of a played test: the new version's wins, losses and draws against the old
    over the pairs counted, and the games played by this run with their time and rate."""
    from arena.abtest.duplicate_pairs import NEW, OLD

    games = state.games
    wins = sum(1 for g in games if g.points == 1)
    losses = sum(1 for g in games if g.points == 0)
    pairs = sum(1 for p in state.pairs if p.counted)
    rate = played / seconds if seconds > 0 else 0.0
    return (
        f"result: {names[NEW]} (new) against {names[OLD]} (old) W-L-D "
        f"{wins}-{losses}-{len(games) - wins - losses} in {pairs} pairs; "
        f"{played} games played in {seconds:.1f} s, {rate:.2f} games per second"
    )


def failure_lines(pair: PairReport, names: dict[str, str]) -> list[str]:
    return [
        f"  game {i + 1}: {names[g.failed]} ({g.failed}) {g.outcome}: {g.detail} "
        f"-> counted as its loss"
        for i, g in enumerate(pair.games)
        if g.failed
    ]


def summary(state: AbTestState, v: Variant, names: dict[str, str], roles: Sequence[str]) -> None:
    from arena.abtest.duplicate_pairs import NEW, OLD

    print(f"stopped: {state.stopped}")
    if state.errors:
        print(f"pairs not counted (the arena could not play them): {state.errors}")
    games = state.games
    failures = [g for g in games if g.failed]
    if failures:
        by_role = {r: sum(1 for g in failures if g.failed == r) for r in roles}
        print(
            "games ended by a bot's failure: "
            + ", ".join(f"{names[r]} ({r}) {n}" for r, n in by_role.items() if n)
        )
    if games:
        n = len(games)
        for role, place, score in (
            (NEW, sum(g.new_place for g in games), sum(g.new_score for g in games)),
            (OLD, sum(g.old_place for g in games), sum(g.old_score for g in games)),
        ):
            extra = f" average place {place / n + 1:.3f}," if len(v.sides) > 2 else ""
            print(f"{names[role]} ({role}):{extra} average points {score / n:.1f}")
    if state.report is None:
        print("no pair was counted: no report")
        return
    for line in report_lines(state.report):
        print(line)
