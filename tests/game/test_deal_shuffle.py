"""The engine shuffles a deal with its own loop (arena.game.state.shuffled_kinds); the deals, and so
every seeded game, golden playthrough and recorded match, must stay those of ``random.shuffle``."""

from __future__ import annotations

import random

import pytest

from arena.game.state import shuffled_kinds


@pytest.mark.parametrize("size", [1, 2, 64, 96, 128])
def test_the_same_order_as_random_shuffle(size: int) -> None:
    for seed in range(50):
        expected = [c & 31 for c in range(size)]
        random.Random(f"bezique-deal:{seed}:{size}").shuffle(expected)
        assert shuffled_kinds(random.Random(f"bezique-deal:{seed}:{size}"), size) == expected


def test_the_generator_is_left_where_random_shuffle_leaves_it() -> None:
    ours, theirs = random.Random(7), random.Random(7)
    shuffled_kinds(ours, 64)
    theirs.shuffle(list(range(64)))
    assert ours.random() == theirs.random()
