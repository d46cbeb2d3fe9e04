"""Helpers shared by test_properties.py, test_properties_legality.py."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from arena.game import (
    DONE,
    GameState,
    Variant,
    variant,
)

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
