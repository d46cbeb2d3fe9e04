"""Perft: counts of legal action sequences that pin the rules engine (python-chess, OpenSpiel).

``perft(state, depth)`` is the number of sequences of ``depth`` legal actions from ``state``: a leaf at
depth 0 counts 1, and so does a finished game at any depth. Every action is applied to a clone, so a
count exercises ``legal_actions``, ``apply`` and ``clone`` together; any change in what the engine
allows (a card it wrongly offers or withholds, a declaration it misses) changes some count.

The positions are seeded deals, taken either at their start or after a number of steps of a fixed
policy (:func:`policy_action`: at step ``k`` of the game, the ``k % len(legal)``-th legal action), so
that the counts also reach declaring, the seven of trumps, the last draws, the last eight (nine)
tricks with their follow-suit rules, the end of a deal and the end of a game.

    python -m arena.game.perft --write tests/data/perft.json   # recompute every case and write the file
    python -m arena.game.perft --check tests/data/perft.json   # recompute and diff; exit 1 on mismatch

The cases are chosen by :data:`CASE_SPECS`; the data file stores, for each, the steps played to reach
the position, a short description of the position and the count.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.game.actions import Action
from arena.game.state import DECLARE, PHASE_NAMES, PLAY, GameState
from arena.game.variants import variant

FORMAT_VERSION = 1


def perft(state: GameState, depth: int) -> int:
    """The number of legal action sequences of length ``depth`` from ``state`` (a finished game counts
    1 at any depth). ``state`` itself is not changed."""
    if depth <= 0 or state.is_terminal():
        return 1
    total = 0
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        total += perft(child, depth - 1)
    return total


def policy_action(state: GameState, step: int) -> Action:
    """The fixed policy that leads to the positions: at step ``step`` of the game, the
    ``step % len(legal)``-th legal action."""
    legal = state.legal_actions()
    return legal[step % len(legal)]


def new_game(variant_name: str, options: Mapping[str, str], seed: int, dealer: int) -> GameState:
    return GameState.new(variant(variant_name, **options), seed, dealer=dealer)


def play_policy(state: GameState, steps: int, start: int = 0) -> GameState:
    """Play ``steps`` steps of :func:`policy_action` on ``state`` (in place), numbering the steps from
    ``start``; returns ``state``."""
    for step in range(start, start + steps):
        if state.is_terminal():
            raise ValueError(f"the game ended after {step} steps, before step {start + steps}")
        state.apply(policy_action(state, step))
    return state


def position(
    variant_name: str, options: Mapping[str, str], seed: int, dealer: int, steps: int
) -> GameState:
    """The position of a case: a new game, then ``steps`` steps of the policy."""
    return play_policy(new_game(variant_name, options, seed, dealer), steps)


def describe(state: GameState) -> dict[str, Any]:
    """A short description of a position, stored beside each count so that a changed count can be
    told from a changed path to the position."""
    return {
        "deal": state.deal_index + 1,
        "trick": state.tricks_done + 1,
        "cards_in_trick": len(state.trick),
        "phase": PHASE_NAMES[state.phase],
        "to_act": state.to_act,
        "stock_size": state.stock_size,
        "legal": len(state.legal_actions()),
    }


# ---------------------------------------------------------------------- choosing the positions

Selector = Callable[[GameState], bool]


@dataclass(frozen=True, slots=True)
class CaseSpec:
    """A case to compute: the game, where to stop the policy, and the depth.

    ``where`` is one of: ``start`` (the position as dealt), ``steps:N`` (after N policy steps),
    ``before-trick:T`` (the first time trick T of the first deal is about to be led),
    ``declare:N`` (the N-th declare phase of the game, counted from 1), ``richest-declare`` (the first of
    the declare phases with the most choices in the first deal), ``before-end:N`` (N steps before the
    policy's game ends).
    """

    variant: str
    options: Mapping[str, str] = field(default_factory=dict)
    seed: int = 1
    dealer: int = 0
    where: str = "start"
    depth: int = 4
    note: str = ""


def _find_steps(spec: CaseSpec) -> int:
    """Policy steps from the start to the position named by ``spec.where``."""
    kind, _, arg = spec.where.partition(":")
    if kind == "start":
        return 0
    if kind == "steps":
        return int(arg)
    state = new_game(spec.variant, spec.options, spec.seed, spec.dealer)
    if kind == "before-end":
        steps = 0
        while not state.is_terminal():
            state.apply(policy_action(state, steps))
            steps += 1
        if steps < int(arg):
            raise ValueError(f"{spec}: the game has only {steps} steps")
        return steps - int(arg)
    want = int(arg) if arg else 0
    seen = 0
    steps = 0
    best = (0, -1)  # (choices, steps) of the richest declare phase so far
    while not state.is_terminal():
        if kind == "richest-declare":
            if state.deal_index > 0:
                break
            if state.phase == DECLARE and len(state.legal_actions()) > best[0]:
                best = (len(state.legal_actions()), steps)
        elif kind == "before-trick":
            if state.deal_index > 0:
                break
            if state.phase == PLAY and not state.trick and state.tricks_done + 1 == want:
                return steps
        elif kind == "declare":
            if state.phase == DECLARE:
                seen += 1
                if seen == want:
                    return steps
        else:
            raise ValueError(f"unknown position selector {spec.where!r}")
        state.apply(policy_action(state, steps))
        steps += 1
    if kind == "richest-declare" and best[1] >= 0:
        return best[1]
    raise ValueError(f"{spec}: no such position in the policy's game")


_ONE = {"declarations_per_trick": "one"}

# Depths are chosen so that the whole perft test stays within a few seconds. Branching is about 8 in
# play phases; declare phases add their declarations and "done".
CASE_SPECS: tuple[CaseSpec, ...] = (
    # Ordinary two-handed (002), default options.
    CaseSpec("two-handed", {}, 1, 0, "start", 5, "the first leads, the first declare phase"),
    CaseSpec("two-handed", {}, 2, 1, "start", 5, "the first leads, the other dealer"),
    CaseSpec("two-handed", {}, 1, 0, "declare:1", 5, "a declare phase with several choices"),
    CaseSpec("two-handed", {}, 3, 0, "declare:2", 5, "a declare phase with several choices"),
    CaseSpec("two-handed", {}, 1, 0, "before-trick:24", 6, "the last stock trick and draws"),
    CaseSpec("two-handed", {}, 4, 1, "before-trick:25", 7, "the first of the last eight tricks"),
    CaseSpec("two-handed", {}, 2, 0, "before-trick:31", 8, "the last tricks into the next deal"),
    CaseSpec("two-handed", {}, 5, 0, "before-end:6", 8, "the end of the game"),
    # Ordinary two-handed, one declaration per trick (Portland Club).
    CaseSpec("two-handed", _ONE, 1, 0, "declare:1", 5, "one declaration per trick"),
    CaseSpec("two-handed", _ONE, 3, 0, "declare:2", 5, "one declaration per trick"),
    CaseSpec("two-handed", _ONE, 1, 0, "before-trick:24", 6, "the last stock trick and draws"),
    # Polish (000): open cards, compound declarations, declaring in the last eight tricks.
    CaseSpec("polish", {}, 1, 0, "start", 5, "the first leads"),
    CaseSpec("polish", {}, 1, 0, "declare:1", 4, "a compound declare phase"),
    CaseSpec("polish", {}, 2, 1, "declare:3", 4, "a compound declare phase"),
    CaseSpec("polish", {}, 1, 0, "before-trick:24", 6, "the last stock trick and draws"),
    CaseSpec("polish", {}, 3, 1, "before-trick:27", 6, "declaring in the last eight tricks"),
    CaseSpec("polish", {}, 2, 0, "before-trick:31", 8, "the last tricks into the next deal"),
    CaseSpec("polish", {}, 4, 0, "before-end:6", 8, "the end of the game"),
    # Rubicon (000, 004): four packs, carte blanche, no turn-up, last nine tricks.
    CaseSpec("rubicon", {}, 1, 0, "start", 4, "the first leads"),
    CaseSpec("rubicon", {}, 543, 0, "start", 4, "carte blanche at the deal"),
    CaseSpec("rubicon", {}, 2, 0, "declare:1", 5, "a declare phase with several choices"),
    CaseSpec("rubicon", {}, 1, 1, "before-trick:55", 5, "the last stock trick, no turn-up"),
    CaseSpec("rubicon", {}, 3, 0, "before-trick:57", 6, "the last nine tricks"),
    CaseSpec("rubicon", {}, 2, 1, "before-end:7", 9, "the end of the game"),
)


def compute_case(spec: CaseSpec) -> dict[str, Any]:
    steps = _find_steps(spec)
    state = position(spec.variant, spec.options, spec.seed, spec.dealer, steps)
    return {
        "variant": spec.variant,
        "options": dict(sorted(spec.options.items())),
        "seed": spec.seed,
        "dealer": spec.dealer,
        "steps": steps,
        "depth": spec.depth,
        "count": perft(state, spec.depth),
        "where": spec.where,
        "note": spec.note,
        "position": describe(state),
    }


def compute_all(specs: Sequence[CaseSpec] = CASE_SPECS) -> dict[str, Any]:
    return {
        "format": FORMAT_VERSION,
        "about": (
            "Perft counts of legal action sequences (OpenSpiel/python-chess style). Each case: a new "
            "game GameState.new(variant(variant, **options), seed, dealer=dealer), then `steps` steps "
            "of the policy 'at step k, the (k % len(legal))-th legal action', then count sequences "
            "of `depth` legal actions (a finished game counts 1). Regenerate with "
            "`python -m arena.game.perft --write tests/data/perft.json`."
        ),
        "cases": [compute_case(s) for s in specs],
    }


def dumps(data: Mapping[str, Any]) -> str:
    """The data file's text: one case per line, so that a diff names the case that changed."""
    lines = ["{"]
    lines.append(f'  "format": {json.dumps(data["format"])},')
    lines.append(f'  "about": {json.dumps(data["about"])},')
    lines.append('  "cases": [')
    cases = data["cases"]
    for i, case in enumerate(cases):
        comma = "," if i < len(cases) - 1 else ""
        lines.append("    " + json.dumps(case, sort_keys=False) + comma)
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m arena.game.perft",
        description="Write or check the perft data file (counts of legal action sequences).",
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="PATH", help="recompute every case and write the file")
    group.add_argument("--check", metavar="PATH", help="recompute and diff against the file")
    args = parser.parse_args(argv)
    text = dumps(compute_all())
    if args.write:
        path = Path(args.write)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {len(CASE_SPECS)} cases to {path}")
        return 0
    path = Path(args.check)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if old == text:
        print(f"{path}: all {len(CASE_SPECS)} cases agree")
        return 0
    diff = difflib.unified_diff(
        old.splitlines(keepends=True),
        text.splitlines(keepends=True),
        fromfile=str(path),
        tofile="recomputed",
    )
    sys.stdout.writelines(diff)
    print(f"{path}: differs from the recomputed counts", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
