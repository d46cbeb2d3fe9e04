"""Perft counts pin the rules engine: the number of legal action sequences from seeded positions of
two-handed (002, both declarations_per_trick options), Polish (000) and Rubicon (000, 004).

Each case of ``tests/data/perft.json`` is recomputed here. A failing count means the engine now allows a
different set of action sequences from that position (see the case's ``note`` and ``position``). If the
change is intended (a rules fix), regenerate the file from the repository root with

    python -m arena.game.perft --write tests/data/perft.json

and review the diff of the data file; ``--check`` recomputes and prints the diff without writing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arena.game import GameState, observe, variant
from arena.game.perft import CASE_SPECS, case_position, describe, perft, policy_action

DATA = Path(__file__).resolve().parent.parent / "data" / "perft.json"
CASES: list[dict[str, Any]] = json.loads(DATA.read_text(encoding="utf-8"))["cases"]


def _case_id(case: dict[str, Any]) -> str:
    opts = ",".join(f"{k}={v}" for k, v in case["options"].items())
    name = f"{case['variant']}[{opts}]" if opts else case["variant"]
    where = "arranged" if "arranged" in case else case["where"]
    return f"{name}-seed{case['seed']}-{where}-d{case['depth']}"


def test_data_file_covers_every_case_spec() -> None:
    """The data file holds one case per spec in arena.game.perft (else it needs regenerating)."""
    assert [(c["variant"], c["seed"], c["where"], c["depth"]) for c in CASES] == [
        (s.variant, s.seed, s.where, s.depth) for s in CASE_SPECS
    ]


def test_data_file_covers_the_variants_and_phases() -> None:
    """The counted positions include declaring, the last eight (nine) tricks and a game's end for
    every variant, and the two-handed "one declaration per trick" option (002, 000, 004)."""
    seen = {(c["variant"], c["options"].get("declarations_per_trick", "")) for c in CASES}
    assert {("two-handed", ""), ("two-handed", "one"), ("polish", ""), ("rubicon", "")} <= seen
    for name in ("two-handed", "polish", "rubicon"):
        phases = {c["position"]["phase"] for c in CASES if c["variant"] == name}
        assert "declare" in phases, name
        assert any(c["variant"] == name and c["position"]["stock_size"] == 0 for c in CASES), name
        assert any(c["variant"] == name and c["where"].startswith("before-end") for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{_case_id(c)}" for i, c in enumerate(CASES)])
def test_perft_count(case: dict[str, Any]) -> None:
    """002 / 000 / 004: the number of legal action sequences from the case's position."""
    state = case_position(case)
    assert describe(state) == case["position"], "the policy no longer reaches the same position"
    assert perft(state, case["depth"]) == case["count"]


def test_perft_base_cases() -> None:
    """perft counts 1 at depth 0, the number of legal actions at depth 1, and the sum over the
    children at depth 2; it does not change the state it counts from."""
    state = GameState.new(variant("two-handed"), seed=7, dealer=0)
    before = observe(state, 0).to_dict()
    assert perft(state, 0) == 1
    assert perft(state, 1) == len(state.legal_actions()) > 0
    children = []
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        children.append(len(child.legal_actions()))
    assert perft(state, 2) == sum(children)
    assert observe(state, 0).to_dict() == before
    assert len(state.history) == 0


def test_perft_counts_a_finished_game_once_at_any_depth() -> None:
    """A terminal state counts 1 whatever the depth (OpenSpiel convention)."""
    state = GameState.new(variant("rubicon"), seed=3, dealer=0)
    step = 0
    while not state.is_terminal():
        state.apply(policy_action(state, step))
        step += 1
    assert state.legal_actions() == []
    assert [perft(state, d) for d in (0, 1, 5)] == [1, 1, 1]
