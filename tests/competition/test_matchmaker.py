"""Matchmaking properties (issue 15): never two bots of one author in a game, the entrant that needs
games most gets the next one, new entrants get games first, and every entrant keeps playing."""

from __future__ import annotations

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
