"""Matchmaking properties (issue 15): never two bots of one author in a game, the entrant that needs
games most gets the next one, new entrants get games first, and every entrant keeps playing."""

from __future__ import annotations

import heapq
import math
import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.competition.matchmaker import Candidate, Pool


def simulate(pool: Pool, players: int, rounds: int, rng: random.Random) -> list[list[Candidate]]:
    """Pair ``rounds`` games in turn, each finished before the next (mu drifts at random)."""
    games = []
    for step in range(rounds):
        game = pool.pick(players, 4, rng)
        if game is None:
            break
        games.append(game)
        for c in game:
            pool.put(
                Candidate(c.entrant, c.author, c.mu + rng.gauss(0, 1), c.sigma * 0.97,
                          c.games + 1, step, c.name)
            )  # fmt: skip
    return games


@settings(max_examples=60, deadline=None)
@given(
    authors=st.lists(st.integers(1, 4), min_size=2, max_size=12),
    players=st.sampled_from([2, 3, 4]),
    seed=st.integers(0, 1000),
)
def test_never_two_bots_of_one_author_in_a_game(
    authors: list[int], players: int, seed: int
) -> None:
    """``authors[i]``: how many bots author i has."""
    pool = Pool()
    n = 0
    for author, bots in enumerate(authors):
        for _ in range(bots):
            pool.put(Candidate(n, author, 25.0 + n % 7, 8.0, 0, -1, f"b{n}"))
            n += 1
    games = simulate(pool, players, 40, random.Random(seed))
    for game in games:
        assert len({c.author for c in game}) == players
        assert len({c.entrant for c in game}) == players
    if len(authors) >= players:
        assert games, "enough authors: games are made"
    else:
        assert not games, "too few authors: no game can be made"


def test_the_neediest_entrant_plays_next_and_newcomers_first() -> None:
    pool = Pool()
    for i in range(10):
        pool.put(Candidate(i, i, 25.0, 3.0, 50, 100 + i, f"old{i}"))
    pool.put(Candidate(99, 99, 25.0, 8.3, 0, -1, "new"))
    game = pool.pick(2, 4, random.Random(1))
    assert game is not None and game[0].name == "new"
    # Among equals in games: the most uncertain; then the one that waited longest.
    pool = Pool()
    pool.put(Candidate(1, 1, 25.0, 3.0, 5, 10, "a"))
    pool.put(Candidate(2, 2, 25.0, 6.0, 5, 20, "b"))
    pool.put(Candidate(3, 3, 25.0, 6.0, 5, 5, "c"))
    game = pool.pick(2, 4, random.Random(1))
    assert game is not None and game[0].name == "c"


def test_opponents_are_near_in_mu() -> None:
    pool = Pool()
    for i in range(100):
        pool.put(Candidate(i, i, float(i), 5.0, 10, 0, f"b{i:03d}"))
    pool.put(Candidate(1000, 1000, 50.2, 8.0, 0, -1, "needy"))
    rng = random.Random(3)
    for _ in range(50):
        game = pool.pick(2, 4, rng)
        assert game is not None and game[0].name == "needy"
        assert abs(game[1].mu - 50.2) <= 2.5, "one of the four nearest in mu"


def test_every_entrant_keeps_playing() -> None:
    """Over a long run, games spread evenly: nobody is starved, whatever their rating."""
    rng = random.Random(7)
    pool = Pool()
    for i in range(30):
        pool.put(Candidate(i, i // 3, rng.gauss(25, 8), 8.3, 0, -1, f"b{i}"))
    games = simulate(pool, 2, 600, rng)
    played = Counter(c.entrant for game in games for c in game)
    assert set(played) == set(range(30))
    mean = sum(played.values()) / len(played)
    # The neediest always plays next; opponents are chosen by mu, so a few get a game or two more.
    assert max(played.values()) - min(played.values()) <= 0.15 * mean


def test_a_removed_entrant_is_never_picked() -> None:
    pool = Pool()
    for i in range(6):
        pool.put(Candidate(i, i, 25.0, 8.0, 0, -1, f"b{i}"))
    pool.remove(0)
    pool.remove(3)
    assert 0 not in pool and len(pool) == 4
    rng = random.Random(1)
    for game in simulate(pool, 2, 50, rng):
        assert {c.entrant for c in game}.isdisjoint({0, 3})


def test_ties_are_broken_by_the_longest_wait_never_by_the_name() -> None:
    pool = Pool()
    pool.put(Candidate(1, 1, 25.0, 3.0, 5, 40, "aaa"))  # waited less: its last game came later
    pool.put(Candidate(2, 2, 25.0, 3.0, 5, 10, "zzz"))
    pool.put(Candidate(3, 3, 25.0, 8.0, 9, 0, "mmm"))
    game = pool.pick(2, 4, random.Random(1))
    assert game is not None and game[0].name == "zzz"
    # Equal in games and wait: the first registered (the lower id), whatever the names say.
    pool = Pool()
    pool.put(Candidate(7, 7, 25.0, 3.0, 5, 10, "aaa"))
    pool.put(Candidate(4, 4, 25.0, 3.0, 5, 10, "zzz"))
    game = pool.pick(2, 4, random.Random(1))
    assert game is not None and game[0].name == "zzz"


def test_opponents_are_drawn_among_those_below_the_median() -> None:
    """Ten entrants below the median in games, ten points apart in mu, are chosen over the many
    nearer to them in mu that played more."""
    pool = Pool()
    for i in range(100):
        pool.put(Candidate(i, i, 20.0 + i * 0.1, 5.0, 20, i, f"b{i}"))
    for i in range(100, 110):
        pool.put(Candidate(i, i, (i - 100) * 10.0 - 10.0, 5.0, 3, i, f"far{i}"))
    rng = random.Random(2)
    for _ in range(5):
        game = pool.pick(2, 4, rng)
        assert game is not None
        assert all(c.name.startswith("far") for c in game), [(c.name, c.games) for c in game]
        for c in game:
            pool.put(Candidate(c.entrant, c.author, c.mu, c.sigma, c.games + 1, 200, c.name))


def below_median_first(pool: Pool, game: list[Candidate]) -> bool:
    """No one at or above the median plays while someone below it, of another author than those in
    the game, is left out."""
    median = pool.median()
    if all(c.games < median for c in game):
        return True
    authors = {c.author for c in game}
    chosen = {c.entrant for c in game}
    left_out = [
        c
        for e in range(64)  # every entrant of the test below
        if (c := pool.get(e)) is not None and c.games < median and e not in chosen
    ]
    return all(c.author in authors for c in left_out)


@settings(max_examples=40, deadline=None)
@given(
    entrants=st.integers(4, 40),
    per_author=st.integers(1, 3),
    players=st.sampled_from([2, 3]),
    seed=st.integers(0, 1000),
)
def test_an_entrant_below_the_median_plays_before_anyone_at_or_above_it(
    entrants: int, per_author: int, players: int, seed: int
) -> None:
    rng = random.Random(seed)
    pool = Pool()
    for i in range(entrants):
        pool.put(Candidate(i, i // per_author, rng.gauss(25, 6), 8.0, rng.randrange(6), -1, ""))
    for step in range(60):
        game = pool.pick(players, 4, rng)
        if game is None:
            break
        assert below_median_first(pool, game)
        for c in game:
            pool.put(Candidate(c.entrant, c.author, c.mu, c.sigma, c.games + 2, step, c.name))


def run_slots(
    pool: Pool, slots: int, until: float, rng: random.Random, arrivals: dict[float, Candidate]
) -> dict[int, float]:
    """A competition's play loop with a fake player: ``slots`` pairings at once, each of two games
    (a duplicate deal) lasting 0.5 to 1.5 time units in all; ``arrivals``: entrants that enter the
    pool at these times. Returns when each entrant's first pairing started."""
    first_start: dict[int, float] = {}
    ends: list[tuple[float, int, list[Candidate]]] = []
    now, order, n = 0.0, 0, 0
    pending = sorted(arrivals.items())
    while now <= until:
        while pending and pending[0][0] <= now:
            pool.put(pending.pop(0)[1])
        while len(ends) < slots:
            game = pool.pick(2, 4, rng)
            if game is None:
                break
            for c in game:
                first_start.setdefault(c.entrant, now)
                pool.put(Candidate(c.entrant, c.author, c.mu, c.sigma, c.games + 2, order, c.name))
            order += 2
            n += 1
            heapq.heappush(ends, (now + rng.uniform(0.5, 1.5), n, game))
        if not ends:
            break
        now, _, game = heapq.heappop(ends)
        for c in game:  # rated: mu moves, the games stay counted
            now_c = pool.get(c.entrant)
            if now_c is not None:
                pool.put(
                    Candidate(now_c.entrant, now_c.author, now_c.mu + rng.gauss(0, 1),
                              now_c.sigma * 0.97, now_c.games, now_c.last, now_c.name)
                )  # fmt: skip
    return first_start


def test_five_thousand_fresh_entrants_all_play_within_the_bound() -> None:
    """5,000 fresh entrants (two bots an author), 8 pairings at once of at most 1.5 time units each:
    every entrant's first pairing starts within ceil(5000 / (2 x 8)) + 1 = 314 pairing times, 471
    time units: the time the slots take to give each entrant one game, and one pairing more. (Ties
    broken by name and opponents chosen by rating alone left 4,856 of 5,000 without a game after
    120 s.)"""
    entrants, slots = 5000, 8
    rng = random.Random(47)
    pool = Pool()
    for i in range(entrants):
        pool.put(Candidate(i, i // 2, 25.0, 25.0 / 3, 0, -1, f"bot{i}"))
    bound = (math.ceil(entrants / (2 * slots)) + 1) * 1.5
    first_start = run_slots(pool, slots, bound, rng, {})
    assert len(first_start) == entrants, f"{entrants - len(first_start)} never played"
    assert max(first_start.values()) <= bound


def test_a_newcomer_plays_within_its_next_free_slot() -> None:
    """A newcomer to a running competition (500 entrants with 40 games each) plays in the first
    pairing made after it arrives: the first slot that frees, at most 1.5 time units later."""
    rng = random.Random(5)
    pool = Pool()
    for i in range(500):
        pool.put(Candidate(i, i, rng.gauss(25, 5), 2.0, 40 + i % 3, i, f"old{i}"))
    newcomer = Candidate(9999, 9999, 25.0, 25.0 / 3, 0, -1, "new")
    first_start = run_slots(pool, 8, 30.0, rng, {20.0: newcomer})
    assert 20.0 <= first_start[9999] <= 21.5
