"""Perft: counts of legal action sequences that pin the rules engine (python-chess, OpenSpiel).

``perft(state, depth)`` is the number of sequences of ``depth`` legal actions from ``state``: a leaf at
depth 0 counts 1, and so does a finished game at any depth. Every action is applied to a clone, so a
count exercises ``legal_actions``, ``apply`` and ``clone`` together; any change in what the engine
allows (a card it wrongly offers or withholds, a declaration it misses) changes some count.

The positions are seeded deals (or an arranged first deal), taken at their start or after a number of
steps of a fixed policy (:func:`policy_action`: at step ``k`` of the game, the ``k % len(legal)``-th
legal action), so that the counts also reach declaring, the seven of trumps, combinations held "to
score", the last draws, the last eight (nine) tricks with their follow-suit rules, the end of a deal
and the end of a game.

    python -m arena.game.perft --write tests/data/perft.json   # recompute every case, write the file
    python -m arena.game.perft --check tests/data/perft.json   # recompute and diff; exit 1 on mismatch

The cases are chosen by :data:`CASE_SPECS`; the data file stores, for each, the steps played to reach
the position, a short description of the position and the count.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.game.actions import Action
from arena.game.deals import arrange_deck
from arena.game.events import DECLARE, PHASE_NAMES, PLAY
from arena.game.state import GameState
from arena.game.variants import variant

FORMAT_VERSION = 1
REGENERATE = "python -m arena.game.perft --write tests/data/perft.json"


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
    """The fixed policy that leads to the positions: at step ``step`` of the game (counted from 0),
    the ``step % len(legal)``-th legal action."""
    legal = state.legal_actions()
    return legal[step % len(legal)]


@dataclass(frozen=True, slots=True)
class Arranged:
    """A first deal laid out with :func:`arrange_deck`: each seat's (partial) hand, the turn-up and the
    top of the stock; the rest of the deck in arrange_deck's fixed order."""

    hands: tuple[tuple[str, ...], ...]
    turn_up: str | None = None
    stock: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "hands": [list(h) for h in self.hands],
            "turn_up": self.turn_up,
            "stock": list(self.stock),
        }


def new_game(
    variant_name: str,
    options: Mapping[str, str],
    seed: int,
    dealer: int,
    arranged: Mapping[str, Any] | None = None,
) -> GameState:
    """A new game; ``arranged`` (the keys of :meth:`Arranged.to_dict`) lays out the first deal."""
    v = variant(variant_name, **options)
    decks: list[list[int]] = []
    if arranged is not None:
        deck = arrange_deck(
            v,
            dealer,
            hands=arranged["hands"],
            turn_up=arranged.get("turn_up"),
            stock=arranged.get("stock", ()),
        )
        decks.append(deck)
    return GameState.new(v, seed, dealer=dealer, decks=decks)


def play_policy(state: GameState, steps: int, start: int = 0) -> GameState:
    """Play ``steps`` steps of :func:`policy_action` on ``state`` (in place), numbering the steps of
    the game from ``start``; returns the state."""
    for step in range(start, start + steps):
        if state.is_terminal():
            raise ValueError(f"the game ended before step {step}")
        state.apply(policy_action(state, step))
    return state


def play_moves(state: GameState, moves: Sequence[str]) -> GameState:
    """Apply actions given by their text forms (in place); returns the state."""
    for text in moves:
        state.apply(Action.parse(text))
    return state


def case_position(case: Mapping[str, Any]) -> GameState:
    """The position of a case of the data file: a new game, its ``moves`` (action texts) if any, then
    ``steps`` steps of the policy."""
    game = new_game(
        case["variant"], case["options"], case["seed"], case["dealer"], case.get("arranged")
    )
    moves = case.get("moves", [])
    play_moves(game, moves)
    return play_policy(game, case["steps"], start=len(moves))


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
        "legal": [a.text for a in state.legal_actions()],
    }


# ---------------------------------------------------------------------- choosing the positions


@dataclass(frozen=True, slots=True)
class CaseSpec:
    """A case to compute: the game, where to stop the policy, and the depth.

    ``where`` is one of: ``start`` (the position as dealt), ``steps:N`` (after N policy steps),
    ``before-trick:T`` (trick T of the first deal is about to be led), ``declare:N`` (the N-th declare
    phase of the game, counted from 1), ``richest-declare`` (the first of the declare phases with the
    most choices in the first deal), ``to-score:N`` (the N-th declare phase in which a combination held
    "to score" may be scored), ``before-end:N`` (N steps before the policy's game ends).
    """

    variant: str
    options: Mapping[str, str] = field(default_factory=dict)
    seed: int = 1
    dealer: int = 0
    where: str = "start"
    depth: int = 4
    note: str = ""
    arranged: Arranged | None = None
    moves: tuple[str, ...] = ()  # actions (text forms) played before the policy's steps


def _arranged(spec: CaseSpec) -> dict[str, Any] | None:
    return None if spec.arranged is None else spec.arranged.to_dict()


def find_steps(spec: CaseSpec) -> int:
    """Policy steps from the start to the position named by ``spec.where``."""
    kind, _, arg = spec.where.partition(":")
    if kind == "start":
        return 0
    if kind == "steps":
        return int(arg)
    state = new_game(spec.variant, spec.options, spec.seed, spec.dealer, _arranged(spec))
    play_moves(state, spec.moves)
    first = len(spec.moves)
    if kind == "before-end":
        steps = 0
        while not state.is_terminal():
            state.apply(policy_action(state, first + steps))
            steps += 1
        if steps < int(arg):
            raise ValueError(f"{spec}: the game has only {steps} steps")
        return steps - int(arg)
    if kind not in ("before-trick", "declare", "richest-declare", "to-score"):
        raise ValueError(f"unknown position selector {spec.where!r}")
    want = int(arg) if arg else 0
    seen = 0
    steps = 0
    best = (0, -1)  # (choices, steps) of the richest declare phase so far
    while not state.is_terminal():
        if kind in ("before-trick", "richest-declare") and state.deal_index > 0:
            break
        declaring = state.phase == DECLARE
        if kind == "richest-declare":
            if declaring and len(state.legal_actions()) > best[0]:
                best = (len(state.legal_actions()), steps)
        elif kind == "before-trick":
            if state.phase == PLAY and not state.trick and state.tricks_done + 1 == want:
                return steps
        elif declaring and (
            kind == "declare"
            or any(a in state.reserves[state.to_act] for a in state.legal_actions())
        ):
            seen += 1
            if seen == want:
                return steps
        state.apply(policy_action(state, first + steps))
        steps += 1
    if kind == "richest-declare" and best[1] >= 0:
        return best[1]
    raise ValueError(f"{spec}: no such position in the policy's game")


_ONE = {"declarations_per_trick": "one"}
_INQUIRY = {"inquiry": "on"}

# First deals rich in declarations for both seats. Two-handed: hearts trumps, the two sevens of trumps
# on top of the stock; seat 1 leads holding the trump sequence and a bezique, seat 0 four kings.
_TWO_HANDED_RICH = Arranged(
    hands=(
        ("KS", "KD", "KC", "KH", "QD", "QC", "QS", "JD"),
        ("AH", "TH", "KH", "QH", "JH", "QS", "JD", "KS"),
    ),
    turn_up="9H",
    stock=("7H", "7H"),
)
# Seat 1 wins the first trick with the ace of trumps and declares four kings, then wins the second
# with a declared king; the position is its declare phase, where it may declare four queens: with one
# declaration per trick, the marriages the queens make with the kings on the table are then held "to
# score" (004) and scored on later tricks.
_KINGS_QUEENS = Arranged(
    hands=(
        ("7S", "8S", "9S", "7D", "8D", "9D", "7C", "8C"),
        ("KS", "KH", "KD", "KC", "QS", "QH", "QD", "AH"),
    ),
    turn_up="9H",
    stock=("QC", "9C", "JS", "JC"),
)
_KINGS_QUEENS_MOVES = (
    "play AH",
    "play 7S",
    "declare four-kings KS KH KD KC",
    "play KH.1",
    "play 7D",
)
# Rubicon: no trumps until the first marriage or sequence; a spade sequence, marriages, beziques and
# four kings.
_RUBICON_RICH = Arranged(
    hands=(
        ("KC", "KD", "KH", "KS", "QC", "QD", "QS", "JD", "JD"),
        ("AS", "TS", "KS", "QS", "JS", "QS", "JD", "KH", "QH"),
    ),
)

# Depths are chosen so that the whole perft test stays within a few seconds (about 10 microseconds a
# node). Branching is about 8 in play phases; declare phases add their declarations and "done".
CASE_SPECS: tuple[CaseSpec, ...] = (
    # Ordinary two-handed (002), default options.
    CaseSpec("two-handed", {}, 1, 0, "start", 5, "the first leads and declare phase"),
    CaseSpec("two-handed", {}, 2, 1, "start", 4, "the first leads, the other dealer"),
    CaseSpec("two-handed", {}, 1, 0, "start", 5, "arranged: rich declarations", _TWO_HANDED_RICH),
    CaseSpec("two-handed", {}, 1, 0, "richest-declare", 5, "a declare phase with choices"),
    CaseSpec("two-handed", {}, 3, 0, "declare:2", 5, "a declare phase in the second deal"),
    CaseSpec("two-handed", {}, 1, 0, "before-trick:24", 6, "the last stock trick and draws"),
    CaseSpec("two-handed", {}, 4, 1, "before-trick:25", 7, "the last eight tricks"),
    CaseSpec("two-handed", {}, 2, 0, "before-trick:31", 8, "the last tricks into the next deal"),
    CaseSpec("two-handed", {}, 5, 0, "before-end:10", 10, "the end of the game"),
    # Ordinary two-handed, one declaration per trick (Portland Club).
    CaseSpec("two-handed", _ONE, 1, 0, "start", 4, "arranged: one per trick", _TWO_HANDED_RICH),
    CaseSpec(
        "two-handed",
        {},
        1,
        0,
        "start",
        5,
        "kings on the table, queens to declare",
        _KINGS_QUEENS,
        _KINGS_QUEENS_MOVES,
    ),
    CaseSpec(
        "two-handed",
        _ONE,
        1,
        0,
        "start",
        5,
        "queens to declare, marriages held to score",
        _KINGS_QUEENS,
        _KINGS_QUEENS_MOVES,
    ),
    # Polish (000): open cards, compound declarations, declaring in the last eight tricks.
    CaseSpec("polish", {}, 1, 0, "start", 5, "the first leads"),
    CaseSpec("polish", {}, 1, 0, "declare:1", 5, "the first declare phase"),
    CaseSpec("polish", {}, 2, 0, "richest-declare", 5, "a compound declare phase"),
    CaseSpec("polish", {}, 6, 0, "richest-declare", 7, "declaring in the last eight tricks"),
    CaseSpec("polish", {}, 1, 0, "before-trick:24", 6, "the last stock trick and draws"),
    CaseSpec("polish", {}, 3, 1, "before-trick:27", 8, "the last eight tricks"),
    CaseSpec("polish", {}, 2, 0, "before-trick:31", 9, "the last tricks into the next deal"),
    CaseSpec("polish", {}, 4, 0, "before-end:10", 10, "the end of the game"),
    # Rubicon (000, 004): four packs, carte blanche, no turn-up, last nine tricks.
    CaseSpec("rubicon", {}, 1, 0, "start", 5, "the first leads"),
    CaseSpec("rubicon", {}, 543, 0, "start", 5, "carte blanche at the deal"),
    CaseSpec("rubicon", {}, 1, 0, "start", 4, "arranged: rich declarations", _RUBICON_RICH),
    CaseSpec("rubicon", {}, 5, 0, "richest-declare", 5, "a declare phase with choices"),
    CaseSpec("rubicon", {}, 1, 1, "before-trick:55", 6, "the last stock trick, no turn-up"),
    CaseSpec("rubicon", {}, 3, 0, "before-trick:57", 9, "the last nine tricks"),
    CaseSpec("rubicon", {}, 2, 1, "before-end:9", 10, "the end of the game"),
    # Issue 3: three and four players (docs/rules.md §3 and §4).
    CaseSpec("three-handed", {}, 1, 0, "start", 4, "the first trick of three"),
    CaseSpec("three-handed", {}, 2, 1, "before-trick:25", 6, "the last eight tricks of three"),
    CaseSpec("four-handed", {}, 1, 0, "start", 4, "the first trick of four"),
    CaseSpec("four-handed", {}, 1, 2, "before-trick:25", 6, "the duels of the last eight"),
    CaseSpec("four-handed-partners", {}, 3, 0, "richest-declare", 4, "partners declaring"),
    CaseSpec("three-handed-consultation", {}, 1, 0, "start", 5, "the allies' shared hand"),
    CaseSpec("four-handed-consultation", {}, 2, 1, "start", 5, "two teams sharing hands"),
    # Issue 48: Polish played further up (000: "not less than 2000 up").
    CaseSpec("polish", {"target": "2500"}, 4, 0, "before-end:10", 10, "the end of a game to 2500"),
    CaseSpec("polish", {"target": "5000"}, 1, 1, "before-trick:31", 8, "a deal of a game to 5000"),
    # Issue 48: four-handed partners inquiring (003).
    CaseSpec("four-handed-partners", _INQUIRY, 3, 0, "richest-declare", 4, "partners inquiring"),
    CaseSpec("four-handed-partners", _INQUIRY, 1, 0, "declare:3", 5, "an inquiry or not"),
)


def compute_case(spec: CaseSpec) -> dict[str, Any]:
    case: dict[str, Any] = {
        "variant": spec.variant,
        "options": dict(sorted(spec.options.items())),
        "seed": spec.seed,
        "dealer": spec.dealer,
    }
    arranged = _arranged(spec)
    if arranged is not None:
        case["arranged"] = arranged
    if spec.moves:
        case["moves"] = list(spec.moves)
    case["steps"] = find_steps(spec)
    state = case_position(case)
    case["depth"] = spec.depth
    case["count"] = perft(state, spec.depth)
    case["where"] = spec.where
    case["note"] = spec.note
    case["position"] = describe(state)
    return case


def compute_all(specs: Sequence[CaseSpec] = CASE_SPECS) -> dict[str, Any]:
    return {
        "format": FORMAT_VERSION,
        "about": (
            "Perft counts of legal action sequences (OpenSpiel/python-chess style). Each case: a new "
            "game GameState.new(variant(variant, **options), seed, dealer=dealer), its first deal laid "
            "out by arrange_deck when `arranged` is given; then `steps` steps of the policy 'at step "
            "k, the (k % len(legal))-th legal action'; then `count` = the number of sequences of "
            "`depth` legal actions (a finished game counts 1). `position` describes the position "
            f"reached. Regenerate with `{REGENERATE}`."
        ),
        "cases": [compute_case(s) for s in specs],
    }


def dumps(data: Mapping[str, Any]) -> str:
    """The data file's text: one case per line, so that a diff names the case that changed."""
    cases = data["cases"]
    lines = [
        "{",
        f'  "format": {json.dumps(data["format"])},',
        f'  "about": {json.dumps(data["about"])},',
        '  "cases": [',
    ]
    lines.extend(
        "    " + json.dumps(case) + ("," if i < len(cases) - 1 else "")
        for i, case in enumerate(cases)
    )
    lines += ["  ]", "}"]
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
    print(f"{path}: differs from the recomputed counts; if the change is intended: {REGENERATE}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
