"""The schedule: who meets whom, on which deals, in which seats, in a canonical order; and the Swiss
pairing of a round by score."""

from __future__ import annotations

import itertools
import random
from collections import Counter, defaultdict
from typing import Any

import pytest

from arena.ledger.rows import ScheduledGame
from arena.play.seatings import deal_seed
from arena.tournament.schedule import full_schedule, games_for_round, pairings, swiss_pairings
from arena.tournament.spec import TournamentSpec, parse


def spec(n: int, **fields: Any) -> TournamentSpec:
    data: dict[str, Any] = {
        "name": "T",
        "entrants": [{"name": f"e{i}", "command": "bot"} for i in range(n)],
        **fields,
    }
    return parse(data, "t.toml")


def duplicate_sets(games: list[ScheduledGame]) -> dict[tuple[int, int, int], list[ScheduledGame]]:
    sets: dict[tuple[int, int, int], list[ScheduledGame]] = defaultdict(list)
    for g in games:
        sets[(g.round, g.pairing, g.deal)].append(g)
    return sets


def check_canonical(games: list[ScheduledGame]) -> None:
    keys = [g.key for g in games]
    assert len(set(keys)) == len(keys), "keys are unique"
    assert [g.ord for g in games] == list(range(len(games))), "ord counts the games in order"
    assert keys == sorted(keys), "keys sort in the canonical order"


# ---------------------------------------------------------------- formats


def test_round_robin_meets_each_pair_once_on_duplicate_deals() -> None:
    s = spec(4, deals_per_pairing=2)
    games = full_schedule(s)
    names = [e.name for e in s.entrants]
    groups = Counter(frozenset(g) for g in pairings(s))
    assert groups == Counter(frozenset(p) for p in itertools.combinations(names, 2))
    assert len(games) == 6 * 2 * 2
    check_canonical(games)
    sets = duplicate_sets(games)
    assert len(sets) == 12
    for (_, _, _), dup in sets.items():
        assert [g.rotation for g in dup] == [0, 1]
        assert len({g.seed for g in dup}) == 1, "one deal per duplicate set"
        group = dup[0].group
        assert all(g.group == group for g in dup)
        # each entrant holds each seat once
        for seat in range(2):
            assert sorted(g.seats[seat][0] for g in dup) == sorted(group)
    seeds = [dup[0].seed for dup in sets.values()]
    assert len(set(seeds)) == len(seeds), "every deal is another shuffle"


def test_double_round_robin_meets_each_pair_twice_on_other_deals() -> None:
    s = spec(3, format="double-round-robin")
    games = full_schedule(s)
    groups = pairings(s)
    assert Counter(frozenset(g) for g in groups) == Counter(
        {frozenset(p): 2 for p in itertools.combinations(["e0", "e1", "e2"], 2)}
    )
    assert set(groups) == set(itertools.permutations(["e0", "e1", "e2"], 2)), "both base orders"
    assert len(games) == 6 * 2
    check_canonical(games)
    by_pair: dict[frozenset[str], set[int]] = defaultdict(set)
    for g in games:
        by_pair[frozenset(g.group)].add(g.seed)
    assert all(len(seeds) == 2 for seeds in by_pair.values()), "the second leg is on other deals"


def test_gauntlet_pits_the_challenger_against_each() -> None:
    s = spec(5, format="gauntlet", challenger="e3", deals_per_pairing=2)
    groups = pairings(s)
    assert sorted(groups) == sorted(("e3", o) for o in ["e0", "e1", "e2", "e4"])
    games = full_schedule(s)
    assert len(games) == 4 * 2 * 2
    check_canonical(games)
    for g in games:
        assert "e3" in g.players
    seats = Counter(g.seats[0][0] for g in games)
    assert seats["e3"] == len(games) // 2, "the challenger holds each seat equally often"


def test_without_duplicates_rotations_alternate() -> None:
    s = spec(2, deals_per_pairing=5, duplicate=False)
    games = full_schedule(s)
    assert len(games) == 5
    check_canonical(games)
    assert [g.rotation for g in games] == [0, 1, 0, 1, 0]
    assert [g.seats[0][0] for g in games] == ["e0", "e1", "e0", "e1", "e0"]
    assert len({g.seed for g in games}) == 5, "each game its own deal"


def test_three_handed_rotates_groups_of_three() -> None:
    s = spec(4, variant="three-handed")
    games = full_schedule(s)
    groups = pairings(s)
    assert Counter(frozenset(g) for g in groups) == Counter(
        frozenset(c) for c in itertools.combinations([f"e{i}" for i in range(4)], 3)
    )
    assert len(games) == 4 * 3
    check_canonical(games)
    for dup in duplicate_sets(games).values():
        assert [g.rotation for g in dup] == [0, 1, 2]
        assert len({g.seed for g in dup}) == 1
        for seat in range(3):
            assert sorted(g.seats[seat][0] for g in dup) == sorted(dup[0].group)
        for g in dup:
            assert all(len(seat) == 1 for seat in g.seats)
            assert sorted(g.players) == sorted(g.group)


def test_partners_play_every_team_split_and_exchange_sides() -> None:
    s = spec(4, variant="four-handed-partners", deals_per_pairing=2)
    games = full_schedule(s)
    assert len(pairings(s)) == 3, "three team splits of one group of four"
    check_canonical(games)
    teams: Counter[frozenset[str]] = Counter()
    for dup in duplicate_sets(games).values():
        assert [g.rotation for g in dup] == [0, 1]
        assert len({g.seed for g in dup}) == 1
        first, second = dup
        side0 = {first.seats[0][0], first.seats[2][0]}
        side1 = {first.seats[1][0], first.seats[3][0]}
        assert side0.isdisjoint(side1) and len(side0 | side1) == 4
        # the teams exchange sides on the same deal
        assert {second.seats[1][0], second.seats[3][0]} == side0
        assert {second.seats[0][0], second.seats[2][0]} == side1
        teams.update([frozenset(side0), frozenset(side1)])
    pairs = [frozenset(p) for p in itertools.combinations([f"e{i}" for i in range(4)], 2)]
    assert set(teams) == set(pairs), "every two entrants are partners in some split"
    assert len(set(teams.values())) == 1, "equally often"


def test_partners_with_five_entrants_partner_everyone_equally() -> None:
    s = spec(5, variant="four-handed-partners")
    games = full_schedule(s)
    assert len(pairings(s)) == 5 * 3
    partners: Counter[frozenset[str]] = Counter()
    for g in games:
        partners[frozenset((g.seats[0][0], g.seats[2][0]))] += 1
        partners[frozenset((g.seats[1][0], g.seats[3][0]))] += 1
    assert len(partners) == 10
    assert len(set(partners.values())) == 1


def test_consultation_three_handed_each_plays_alone_once_per_deal() -> None:
    s = spec(3, variant="three-handed-consultation")
    games = full_schedule(s)
    assert len(games) == 3
    check_canonical(games)
    assert sorted(g.seats[0][0] for g in games) == ["e0", "e1", "e2"]
    for g in games:
        assert [len(seat) for seat in g.seats] == [1, 2]


def test_consultation_four_handed_every_two_share_a_seat_equally_often() -> None:
    """Four-handed consultation is two pairs of players sharing two seats: like partners, every two
    entrants should share a seat equally often (all three team splits of a group of four), or in a
    round robin of four some two entrants never play together."""
    s = spec(4, variant="four-handed-consultation")
    games = full_schedule(s)
    shared: Counter[frozenset[str]] = Counter()
    for g in games:
        for seat in g.seats:
            shared[frozenset(seat)] += 1
    everyone = [frozenset(p) for p in itertools.combinations([f"e{i}" for i in range(4)], 2)]
    assert {p: shared[p] for p in everyone} == dict.fromkeys(everyone, shared[everyone[0]])
    check_canonical(games)
    for dup in duplicate_sets(games).values():
        assert len({g.seed for g in dup}) == 1
        assert len(dup) == 2, "the two teams exchange seats on each deal"
        first, second = dup
        assert (set(second.seats[0]), set(second.seats[1])) == (
            set(first.seats[1]),
            set(first.seats[0]),
        )


def test_schedule_is_deterministic_and_seeded() -> None:
    a = full_schedule(spec(3, seed=5, deals_per_pairing=2))
    assert a == full_schedule(spec(3, seed=5, deals_per_pairing=2))
    b = full_schedule(spec(3, seed=6, deals_per_pairing=2))
    assert [g.key for g in a] == [g.key for g in b]
    assert {g.seed for g in a}.isdisjoint({g.seed for g in b})
    assert deal_seed(5, 0, 1, 1) == deal_seed(5, 0, 1, 1) != deal_seed(5, 1, 1, 1)


def test_swiss_has_no_full_schedule() -> None:
    with pytest.raises(ValueError, match="swiss"):
        full_schedule(spec(4, format="swiss", rounds=2))


def test_games_for_round_start_at_first_ord() -> None:
    s = spec(4, format="swiss", rounds=2)
    games = games_for_round(s, 3, [("e0", "e1"), ("e2", "e3")], first_ord=3_000_000)
    assert [g.ord for g in games] == list(range(3_000_000, 3_000_004))
    assert all(g.round == 3 and g.key.startswith("r003-") for g in games)
    assert [g.key for g in games] == sorted(g.key for g in games)


@pytest.mark.parametrize(
    "fields",
    [
        {"deals_per_pairing": 12},
        {"format": "double-round-robin", "deals_per_pairing": 3},
        {"variant": "four-handed-partners", "deals_per_pairing": 2},
        {"variant": "three-handed", "duplicate": False, "deals_per_pairing": 11},
    ],
)
def test_keys_sort_canonically(fields: dict[str, Any]) -> None:
    check_canonical(full_schedule(spec(6, **fields)))


def test_keys_sort_canonically_in_a_large_round_robin() -> None:
    """150 entrants: 11175 pairings. The key's pairing field has four digits, so past 9999 pairings
    the keys no longer sort in the canonical order."""
    check_canonical(full_schedule(spec(150)))


# ---------------------------------------------------------------- swiss pairings

NAMES = ["a", "b", "c", "d", "e", "f"]


def test_swiss_first_round_pairs_in_entrant_order() -> None:
    pairs, bye = swiss_pairings(NAMES, {}, set(), 0)
    assert pairs == [("a", "b"), ("c", "d"), ("e", "f")]
    assert bye is None


def test_swiss_pairs_by_score() -> None:
    points = {"a": 0, "b": 1, "c": 0, "d": 2, "e": 1, "f": 2}
    pairs, bye = swiss_pairings(NAMES, points, set(), 1)
    assert pairs == [("d", "f"), ("b", "e"), ("a", "c")]
    assert bye is None


def test_swiss_avoids_repeats_by_backtracking() -> None:
    """Greedy top-down pairing (a-b) would leave c and d, who have met: backtrack to a-d, b-c."""
    met = {frozenset("cd"), frozenset("ac")}
    pairs, _ = swiss_pairings(["a", "b", "c", "d"], {"a": 3, "b": 2, "c": 1, "d": 0}, met, 2)
    assert pairs == [("a", "d"), ("b", "c")]


def test_swiss_deeper_backtracking() -> None:
    points = {n: float(6 - i) for i, n in enumerate(NAMES)}
    met = {frozenset(p) for p in ["ab", "cd", "ef", "ce", "df", "ac", "bd"]}
    pairs, _ = swiss_pairings(NAMES, points, met, 3)
    assert sorted(n for p in pairs for n in p) == sorted(NAMES)
    assert not any(frozenset(p) in met for p in pairs)


def test_swiss_bye_goes_to_the_lowest_placed_without_one() -> None:
    names = ["a", "b", "c", "d", "e"]
    points = {"a": 2, "b": 2, "c": 1, "d": 1, "e": 0}
    pairs, bye = swiss_pairings(names, points, set(), 1)
    assert bye == "e"
    assert sorted(n for p in pairs for n in p) == ["a", "b", "c", "d"]
    pairs, bye = swiss_pairings(names, points, {frozenset("e")}, 2)
    assert bye == "d", "e had a bye already: the next lowest gets it"
    assert "d" not in {n for p in pairs for n in p}
    pairs, bye = swiss_pairings(names, points, {frozenset(n) for n in names}, 5)
    assert bye is not None and len(pairs) == 2, "everyone had a bye: still a bye, still pairs"


def test_swiss_ties_keep_entrant_order() -> None:
    pairs, _ = swiss_pairings(["d", "c", "b", "a"], {"a": 1, "b": 1, "c": 1, "d": 1}, set(), 1)
    assert pairs == [("d", "c"), ("b", "a")]


def test_swiss_when_everyone_has_met_repeats_rather_than_stops() -> None:
    met = {frozenset(p) for p in itertools.combinations("abcd", 2)}
    pairs, _ = swiss_pairings(["a", "b", "c", "d"], {}, met, 3)
    assert sorted(n for p in pairs for n in p) == ["a", "b", "c", "d"]


def test_swiss_tournament_simulation_never_repeats_and_is_deterministic() -> None:
    """Eight players, five rounds (so a perfect matching of those who have not met always exists):
    each round pairs everyone, no pairing repeats, and the same results give the same pairings."""

    def simulate(seed: int) -> list[list[tuple[str, str]]]:
        rng = random.Random(seed)
        names = [f"p{i}" for i in range(8)]
        points = dict.fromkeys(names, 0.0)
        met: set[frozenset[str]] = set()
        rounds = []
        for r in range(5):
            pairs, bye = swiss_pairings(names, points, met, r)
            assert bye is None
            assert sorted(n for p in pairs for n in p) == sorted(names)
            for a, b in pairs:
                assert frozenset((a, b)) not in met, f"round {r}: {a} and {b} met before"
                met.add(frozenset((a, b)))
                points[rng.choice((a, b))] += 1
            rounds.append(pairs)
        return rounds

    for seed in range(20):
        assert simulate(seed) == simulate(seed)
