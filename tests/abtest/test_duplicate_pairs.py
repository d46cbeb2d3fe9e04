"""The A/B test's seatings, the scoring of a game for the new version, and its loop with a fake pair
player (the loop with real bots is in tests/cli/test_sprt.py)."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from arena.abtest.duplicate_pairs import (
    MAX_ERRORS_IN_A_ROW,
    NEW,
    OLD,
    OPPONENT,
    GameReport,
    PairReport,
    pair_seatings,
    roles_needed,
    run_ab_test,
    score_game,
)
from arena.game import variant
from arena.referee import Outcome
from arena.stats import Sprt


def swapped(seats: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    other = {NEW: OLD, OLD: NEW, OPPONENT: OPPONENT}
    return tuple(tuple(other[r] for r in seat) for seat in seats)


@pytest.mark.parametrize(
    ("name", "first"),
    [
        ("two-handed", ((NEW,), (OLD,))),
        ("polish", ((NEW,), (OLD,))),
        ("rubicon", ((NEW,), (OLD,))),
        ("four-handed-partners", ((NEW,), (OLD,), (NEW,), (OLD,))),
        ("three-handed-consultation", ((NEW,), (OLD, OLD))),
        ("four-handed-consultation", ((NEW, NEW), (OLD, OLD))),
    ],
)
def test_two_sides_each_version_takes_a_side(name: str, first: tuple[tuple[str, ...], ...]) -> None:
    v = variant(name)
    for index in range(5):
        a, b = pair_seatings(v, index)
        assert a == first
        assert b == swapped(a)
    assert roles_needed(v) == (NEW, OLD)


@pytest.mark.parametrize("name", ["three-handed", "four-handed"])
def test_every_seat_for_itself_both_versions_meet_fixed_opponents(name: str) -> None:
    v = variant(name)
    assert roles_needed(v) == (NEW, OLD, OPPONENT)
    seats_of_new: Counter[int] = Counter()
    gaps: set[int] = set()
    for index in range(2 * v.seats):
        a, b = pair_seatings(v, index)
        assert b == swapped(a)
        roles = [seat[0] for seat in a]
        assert sorted(roles) == sorted([NEW, OLD] + [OPPONENT] * (v.seats - 2))
        # The opponents keep their seats between the two games of the pair.
        assert [r == OPPONENT for r in roles] == [seat[0] == OPPONENT for seat in b]
        seats_of_new[roles.index(NEW)] += 1
        gaps.add((roles.index(OLD) - roles.index(NEW)) % v.seats)
    assert set(seats_of_new) == set(range(v.seats))  # the table turns
    if v.seats == 4:
        assert {1, 2} <= gaps  # next to each other, and across the table


def test_a_game_is_scored_for_the_new_version() -> None:
    v = variant("two-handed")
    seats = ((OLD,), (NEW,))
    win = score_game(v, seats, (1, 0), (800, 1020), Outcome.NORMAL, -1, "")
    assert (win.points, win.new_score, win.old_score, win.new_place, win.old_place) == (
        1.0,
        1020,
        800,
        0,
        1,
    )
    assert not win.failed and win.outcome == "normal"
    loss = score_game(v, seats, (0, 1), (1010, 900), Outcome.NORMAL, -1, "")
    assert loss.points == 0.0
    draw = score_game(v, seats, (0, 0), (1000, 1000), Outcome.NORMAL, -1, "")
    assert draw.points == 0.5


def test_a_failure_is_the_failing_versions_loss() -> None:
    v = variant("two-handed")
    seats = ((NEW,), (OLD,))
    # The referee's forfeit ranks the culprit's side last, even when it led on points.
    crash = score_game(v, seats, (1, 0), (900, 300), Outcome.CRASH, 0, "seat 0 (x): gone")
    assert (crash.points, crash.failed, crash.outcome, crash.detail) == (
        0.0,
        NEW,
        "crash",
        "seat 0 (x): gone",
    )
    timeout = score_game(v, seats, (0, 1), (100, 300), Outcome.TIMEOUT, 1, "late")
    assert (timeout.points, timeout.failed) == (1.0, OLD)


def test_three_handed_compares_places_and_an_opponents_failure_is_a_draw() -> None:
    v = variant("three-handed")
    seats = ((OPPONENT,), (NEW,), (OLD,))
    g = score_game(v, seats, (0, 2, 1), (2100, 900, 1500), Outcome.NORMAL, -1, "")
    assert (g.points, g.new_place, g.old_place) == (0.0, 2, 1)
    g = score_game(v, seats, (1, 0, 0), (700, 900, 800), Outcome.CRASH, 0, "gone")
    assert (g.points, g.failed) == (0.5, OPPONENT)


# ---------------------------------------------------------------------------------------- the loop


def pair(index: int, points: float) -> PairReport:
    halves = (min(points, 1.0), points - min(points, 1.0))
    games = tuple(GameReport(((NEW,), (OLD,)), h, "normal") for h in halves)
    return PairReport(index, 1000 + index, games)


class Scripted:
    """Plays pair i as the script says (points, or an error), after ``delay`` seconds."""

    def __init__(self, points: dict[int, float | str], delay: float = 0.0) -> None:
        self.points, self.delay = points, delay
        self.asked: list[int] = []
        self.running = 0
        self.most_at_once = 0
        self.cancelled = 0

    async def __call__(self, index: int) -> PairReport:
        self.asked.append(index)
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            await asyncio.sleep(self.delay * (1 + index % 3))
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.running -= 1
        value = self.points.get(index, 1.0)
        if isinstance(value, str):
            return PairReport(index, 1000 + index, error=value)
        return pair(index, value)


def test_stops_when_h1_is_accepted_and_cancels_the_pairs_under_way() -> None:
    player = Scripted(dict.fromkeys(range(100), 2.0), delay=0.001)
    seen: list[int] = []
    state = asyncio.run(
        run_ab_test(
            player, Sprt(0, 50), 1000, concurrency=3, on_pair=lambda p, s: seen.append(p.index)
        )
    )
    assert state.stopped == "H1 accepted"
    assert state.report is not None and state.report.llr >= state.report.upper
    assert len(seen) == state.counts.total == len(state.pairs)
    assert player.most_at_once == 3
    # Nothing is left running, and the pairs under way at the decision are not counted.
    assert player.running == 0
    assert len(seen) + player.cancelled <= len(player.asked) <= len(seen) + 2


def test_stops_when_h0_is_accepted() -> None:
    state = asyncio.run(run_ab_test(Scripted(dict.fromkeys(range(100), 0.0)), Sprt(0, 50), 1000))
    assert state.stopped == "H0 accepted"
    assert state.counts.counts[0] == state.counts.total


def test_a_fixed_test_plays_every_pair() -> None:
    player = Scripted(dict.fromkeys(range(100), 2.0))
    state = asyncio.run(run_ab_test(player, Sprt(0, 50), 30, concurrency=2, sequential=False))
    assert state.stopped == "pair limit"
    assert state.counts.counts == (0, 0, 0, 0, 30)
    assert sorted(player.asked) == list(range(30))
    assert state.report is not None and state.report.llr > state.report.upper


def test_the_game_limit_stops_an_undecided_test() -> None:
    state = asyncio.run(run_ab_test(Scripted({}), Sprt(0, 5), 10))  # every pair drawn
    assert state.stopped == "pair limit"
    assert state.counts.counts == (0, 0, 10, 0, 0)


def test_resumes_from_the_pairs_already_played() -> None:
    played = [pair(0, 2.0), pair(2, 1.5), pair(3, 0.0)]
    player = Scripted({})
    state = asyncio.run(run_ab_test(player, Sprt(0, 5), 6, played=played))
    assert sorted(player.asked) == [1, 4, 5]
    assert state.counts.counts == (1, 0, 3, 1, 1)
    # Already decided: nothing more is played.
    decided = [pair(i, 2.0) for i in range(200)]
    player = Scripted({})
    state = asyncio.run(run_ab_test(player, Sprt(0, 50), 1000, played=decided))
    assert state.stopped == "H1 accepted" and player.asked == []


def test_pairs_the_arena_could_not_play_are_not_counted() -> None:
    player = Scripted({1: "bot did not start", 4: "no record"})
    state = asyncio.run(run_ab_test(player, Sprt(0, 5), 5, sequential=False))
    assert state.counts.total == 5 and state.errors == 2
    assert sorted(player.asked) == [0, 1, 2, 3, 4, 5, 6]
    errors = dict.fromkeys(range(100), "the referee is gone")
    state = asyncio.run(run_ab_test(Scripted(errors), Sprt(0, 5), 50))  # type: ignore[arg-type]
    assert state.stopped == "arena errors"
    assert state.errors == MAX_ERRORS_IN_A_ROW and state.report is None


def test_the_deals_available_limit_the_test() -> None:
    player = Scripted({})
    state = asyncio.run(run_ab_test(player, Sprt(0, 5), 100, concurrency=2, deals=7))
    assert state.stopped == "no deals left"
    assert sorted(player.asked) == list(range(7))


def test_a_version_that_fails_every_game_stops_the_test() -> None:
    class Broken(Scripted):
        async def __call__(self, index: int) -> PairReport:
            games = tuple(
                GameReport(((NEW,), (OLD,)), 0.0, "crash", NEW, "never connected") for _ in range(2)
            )
            return PairReport(index, index, games)

    state = asyncio.run(run_ab_test(Broken({}), Sprt(-100, 100), 100))
    assert state.stopped == "the new version failed each of its first 4 games"
    assert state.counts.total == 2


def test_a_pair_for_another_deal_is_an_error() -> None:
    async def wrong(index: int) -> PairReport:
        return pair(index + 1, 1.0)

    with pytest.raises(ValueError, match="asked to play pair 0, got pair 1"):
        asyncio.run(run_ab_test(wrong, Sprt(0, 5), 10))


def test_bad_limits() -> None:
    with pytest.raises(ValueError, match="at least one pair"):
        asyncio.run(run_ab_test(Scripted({}), Sprt(0, 5), 0))
    with pytest.raises(ValueError, match="concurrency"):
        asyncio.run(run_ab_test(Scripted({}), Sprt(0, 5), 5, concurrency=0))
