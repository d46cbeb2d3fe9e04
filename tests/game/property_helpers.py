"""Helpers shared by test_properties.py, test_properties_legality.py, test_multiplayer_properties.py."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from arena.game import (
    DONE,
    GameState,
    Variant,
    variant,
)
from arena.game.cards import ANY_COPY

CONFIGS: list[tuple[str, dict[str, str]]] = [
    ("two-handed", {}),
    ("two-handed", {"declarations_per_trick": "one"}),
    ("polish", {}),
    ("rubicon", {}),
]


CONFIG_IDS = ["two-handed", "two-handed-one", "polish", "rubicon"]


SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


Policy = tuple[int, bool]


POLICIES = st.tuples(SEEDS, st.booleans())


EXAMPLES = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


MAX_STEPS = 30_000


parametrize_configs = pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)


def _variant(config: tuple[str, dict[str, str]]) -> Variant:
    name, options = config
    return variant(name, **options)


def _walk(v: Variant, seed: int, policy: Policy, deals: int | None = None) -> Iterator[GameState]:
    """The states of a random game, one per step before its action (and the final state); stops
    early once ``deals`` deals are recorded. The consumer must not change the state. The policy is
    (seed, eager): an eager policy declares whenever it can (reaching multiple declarations, claims
    held to score and higher combinations far more often than uniform choice does)."""
    state = GameState.new(v, seed)
    rng = random.Random(policy[0])
    eager = policy[1]
    for _ in range(MAX_STEPS):
        yield state
        if state.is_terminal() or (deals is not None and len(state.deals) >= deals):
            return
        legal = state.legal_actions()
        if eager and len(legal) > 1 and legal[-1] == DONE:
            legal = legal[:-1]  # "done" sorts last: declare or exchange while there is anything
        state.apply(legal[rng.randrange(len(legal))])
    raise AssertionError(f"no end after {MAX_STEPS} steps (seed {seed}, policy {policy})")


def permute_hidden(state: GameState, seats: list[int], rng: random.Random) -> GameState:
    """A clone in which the hidden cards (kind codes) of ``seats`` and the rest of the stock are
    shuffled among themselves, every hand and the stock keeping its size."""
    copy = state.clone()
    slots = [(s, i) for s in seats for i, c in enumerate(copy.hands[s]) if c >= ANY_COPY]
    pos = copy.stock_pos
    pool = [copy.hands[s][i] - ANY_COPY for s, i in slots] + list(copy.stock[pos:])
    rng.shuffle(pool)
    hands = [h[:] for h in copy.hands]
    for (s, i), kind in zip(slots, pool, strict=False):
        hands[s][i] = ANY_COPY + kind
    copy.hands = hands
    copy.stock = list(copy.stock[:pos]) + pool[len(slots) :]
    copy._legal = None  # the clone shares the cached legal list; the hands changed under it
    copy._reindex()  # and the hands' index of plays
    return copy


def check_pack_numbers(physical: Iterable[int]) -> None:
    """A card made public takes the lowest pack number not yet used for its kind in this deal: each
    kind's physical cards have the pack numbers 0, 1, ... without a gap. (One pass over the cards: the
    conservation checks run at every step of many games.)"""
    by_kind: dict[int, list[int]] = {kind: [] for kind in range(32)}
    for card in physical:
        by_kind[card & 31].append(card >> 5)
    for kind, packs in by_kind.items():
        packs.sort()
        assert packs == list(range(len(packs))), (kind, packs)
