"""Golden playthroughs: seeded games played by a seeded random policy, rendered step by step as text.

OpenSpiel's playthrough files, for Bezique: every step shows the deal, trick, phase and seat to act,
the legal actions, the action chosen, the public events and score items it caused, and the scores. Each
seat's full observation (``observe(state, seat).to_dict()`` as sorted-key compact JSON, one line per
seat) is shown at the first step of a deal and at every declare (and carte blanche) phase; at the other
steps each seat's hand and the trick. The public log is shown as ``event`` lines as it grows rather than
repeated inside every observation (an observation whose log differs from the public log is shown in
full). A regenerated file that differs from the committed one shows exactly which step changed.

    python -m arena.game.playthrough --write tests/data/golden   # regenerate every golden file
    python -m arena.game.playthrough --check tests/data/golden   # regenerate in memory and diff

To keep the files readable, multi-deal games show their first deal step by step and the later deals
(played on by the same policy) by their results, with every score item; each file says so.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.game.actions import Action
from arena.game.cards import card_text, ref_text
from arena.game.cutting import draw_cut
from arena.game.events import CARTE_BLANCHE, DECLARE
from arena.game.observe import Observation, observe
from arena.game.results import DealResult, ScoreItem
from arena.game.state import GameState
from arena.game.variants import RULES_VERSION, variant

REGENERATE = "python -m arena.game.playthrough --write tests/data/golden"


@dataclass(frozen=True, slots=True)
class GameSpec:
    """One golden game: the file's name, the variant, the game seed (which also draws the first
    dealer) and the policy's seed; ``detail_deals`` deals are shown step by step. ``shows`` are texts
    the file must contain (what the game was chosen for; tests/game/test_golden.py checks them)."""

    name: str
    variant: str
    options: Mapping[str, str] = field(default_factory=dict)
    seed: int = 1
    policy_seed: int = 1
    detail_deals: int = 1
    why: str = ""
    shows: tuple[str, ...] = ()
    # The players cut for the deal (drawn from the game seed, as the referee draws it from its own).
    cut: bool = False


_ONE = {"declarations_per_trick": "one"}

GAMES: tuple[GameSpec, ...] = (
    GameSpec(
        "two-handed-seed1",
        "two-handed",
        seed=1,
        policy_seed=1,
        why="four queens, a marriage with one of them, a royal marriage, the seven exchanged",
        shows=("declares four-queens", "declares royal-marriage", "exchanges 7"),
    ),
    GameSpec(
        "two-handed-seed7",
        "two-handed",
        seed=7,
        policy_seed=7,
        why="two declarations on one trick (declarations_per_trick = disjoint), bezique",
        shows=("declares bezique", "declares seven-of-trumps"),
    ),
    GameSpec(
        "two-handed-one-seed7041",
        "two-handed",
        _ONE,
        seed=7041,
        policy_seed=7041,
        why="one declaration per trick: a bezique held to score and scored on a later trick",
        shows=('"to_score":["declare bezique', "declares bezique"),
    ),
    GameSpec(
        "polish-seed1",
        "polish",
        seed=1,
        policy_seed=1,
        why="open cards, compound declarations, double bezique, a sequence, the seven exchanged",
        shows=("declares double-bezique", "declares sequence", "exchanges 7"),
    ),
    GameSpec(
        "polish-seed2",
        "polish",
        seed=2,
        policy_seed=2,
        why="open cards, compound declarations",
        shows=("declares four-",),
    ),
    GameSpec(
        "rubicon-seed543",
        "rubicon",
        seed=543,
        policy_seed=543,
        why="carte blanche at the deal and on draws, four aces re-formed, trumps fixed, settlement",
        shows=(
            "shows carte blanche",
            "declares four-aces",
            "fixes trumps",
            "settlement:",
            '"brisques":',  # counted once the stock holds twelve cards or fewer (issue 48)
        ),
    ),
    # Issue 3: the multi-player games (docs/rules.md §3 and §4).
    GameSpec(
        "three-handed-seed1",
        "three-handed",
        seed=1,
        policy_seed=1,
        why="three players: three draws per trick, last eight tricks of three",
        shows=("seat 2 wins trick",),
    ),
    GameSpec(
        "four-handed-partners-seed1",
        "four-handed-partners",
        seed=1,
        policy_seed=1,
        why="partners: the partner declares on his partner's trick; the last eight as two duels",
        shows=("wins trick 40",),
    ),
    GameSpec(
        "three-handed-consultation-seed1",
        "three-handed-consultation",
        seed=1,
        policy_seed=1,
        why="one against two allies sharing a hand, the decision alternating trick by trick",
        shows=("deciding_member",),
    ),
    # Issue 48: the seeds' last rules.
    GameSpec(
        "polish-target3000-seed1",
        "polish",
        {"target": "3000"},
        seed=1,
        policy_seed=1,
        why="Polish played to 3000 (option target): the game goes on past 2000",
        shows=('"target":"3000"', "target=3000"),
    ),
    GameSpec(
        "two-handed-cut-seed17",
        "two-handed",
        seed=17,
        policy_seed=17,
        why="the players cut for the deal, a tie cut again; the highest cutter deals (002)",
        shows=("seat 0 cuts TD for the deal", "seat 1 cuts TC", "seat 1 cuts KS", "seat 1 deals"),
        cut=True,
    ),
    GameSpec(
        "rubicon-cut-seed4",
        "rubicon",
        seed=4,
        policy_seed=4,
        why="Rubicon deals as Polish and ordinary bezique: the players cut for the deal (000)",
        shows=("cuts",),
        cut=True,
    ),
    GameSpec(
        "four-handed-partners-inquiry-seed1",
        "four-handed-partners",
        {"inquiry": "on"},
        seed=1,
        policy_seed=1,
        why="partners inquiring (003): the winner asks, his partner declares or answers first",
        shows=("inquires of seat", "answers: nothing to declare", "chose: inquire"),
    ),
)


def _json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _items(state: GameState) -> list[ScoreItem]:
    """Every score item of the game so far, in order (recorded deals, then the current deal)."""
    out = [item for deal in state.deals for item in deal.items]
    if not state.is_terminal():
        out.extend(state.items)
    return out


def _scores_line(obs: Observation) -> str:
    deal = " ".join(str(si.deal_points) for si in obs.seats)
    total = " ".join(str(si.total) for si in obs.seats)
    return f"  scores: deal {deal} | total {total}"


def _deal_lines(deal: DealResult) -> list[str]:
    """A deal's result with every score item."""
    status = "completed" if deal.completed else "not completed"
    head = (
        f"== deal {deal.index + 1} over ({status}): dealer {deal.dealer}, "
        f"points {_join(deal.points)}, totals {_join(deal.totals)}, brisques {_join(deal.brisques)}"
    )
    return [head, *(f"  item: {item.text}" for item in deal.items)]


def _join(values: Sequence[object]) -> str:
    return " ".join(str(v) for v in values)


def render(spec: GameSpec) -> str:
    """The golden text of one game."""
    v = variant(spec.variant, **spec.options)
    cut = draw_cut(spec.seed, range(v.seats), v.packs) if spec.cut else None
    state = GameState.new(v, spec.seed, cut=cut)
    rng = random.Random(spec.policy_seed)
    n = v.seats
    opts = " ".join(f"{k}={val}" for k, val in v.options) or "none"
    shown = "deal 1 is" if spec.detail_deals == 1 else f"deals 1 to {spec.detail_deals} are"
    out = [
        f"# Golden playthrough, regenerate with: {REGENERATE}",
        f"# {spec.why}" if spec.why else "#",
        f"# variant {v.name}; options: {opts}; rules version {RULES_VERSION}",
        f"# game seed {spec.seed} (GameState.new(variant, {spec.seed}); the first dealer is drawn "
        "from the seed)"
        if cut is None
        else f"# game seed {spec.seed} (GameState.new(variant, {spec.seed}, cut=draw_cut({spec.seed}, "
        f"seats, packs)); the players cut for the deal: {cut.text})",
        f"# policy: rng = random.Random({spec.policy_seed}); at each step the legal action at index "
        "rng.randrange(len(legal))",
        f"# {shown} shown step by step; 'obs S' lines are seat S's full "
        "observation (sorted-key JSON, its log",
        "#   replaced by its length: the log is shown as 'event' lines) at the first step of a deal "
        "and at every declare or",
        "#   carte-blanche phase; at other steps 'hand S' is seat S's hand as it sees it.",
        "# any later deals are played on by the same policy and shown by their results only.",
        f"first dealer: {state.dealer}",
    ]
    public = observe(state, None)
    for text in public.log:
        out.append(f"  event: {text}")
    for item in _items(state):
        out.append(f"  item: {item.text}")
    log_len = len(public.log)
    items_len = len(_items(state))
    step = 0
    last_full_deal = -1
    summarized = False
    while not state.is_terminal():
        if step > 100_000:
            raise RuntimeError(f"{spec.name}: the game did not end in 100000 steps")
        detail = state.deal_index < spec.detail_deals
        legal = state.legal_actions()
        action: Action = legal[rng.randrange(len(legal))]
        if detail:
            public = observe(state, None)
            out.append(
                f"step {step} | deal {state.deal_index + 1} | trick {state.tricks_done + 1} | "
                f"{public.phase} | seat {state.to_act} to act | trumps {public.trump or '-'} | "
                f"stock {public.stock_size}"
            )
            if v.team_size(state.to_act) > 1:
                out.append(f"  deciding_member: {state.deciding_member()}")
            full = state.phase in (DECLARE, CARTE_BLANCHE) or state.deal_index != last_full_deal
            last_full_deal = state.deal_index
            for s in range(n):
                obs = observe(state, s)
                if full:
                    d = obs.to_dict()
                    d["log"] = len(d["log"]) if obs.log == public.log else d["log"]
                    out.append(f"  obs {s}: {_json(d)}")
                else:
                    hand = " ".join(ref_text(r) for r in obs.hand)
                    out.append(f"  hand {s}: {hand}")
                    if obs.log != public.log:
                        out.append(f"  log {s} differs from the public log: {_json(obs.log)}")
            if state.trick:
                trick = " ".join(f"{s}:{card_text(c)}" for s, c in public.trick)
                out.append(f"  trick: {trick}")
            out.append(f"  legal ({len(legal)}): {' | '.join(a.text for a in legal)}")
            out.append(f"  chose: {action.text}")
        deals_before = len(state.deals)
        state.apply(action)
        step += 1
        if detail:
            public = observe(state, None)
            if len(public.log) < log_len:
                out.append("  the public log shrank!")
            out.extend(f"  event: {text}" for text in public.log[log_len:])
            items = _items(state)
            out.extend(f"  item: {item.text}" for item in items[items_len:])
            out.append(_scores_line(public))
            log_len = len(public.log)
            items_len = len(items)
        for deal in state.deals[deals_before:]:
            if deal.index >= spec.detail_deals and not summarized:
                summarized = True
                out.append(
                    f"-- deals {spec.detail_deals + 1} on: played by the same policy, "
                    "shown by their results only"
                )
            out.extend(_deal_lines(deal))
    result = state.result()
    out.append(f"== game over after {step} steps and {len(state.deals)} deals")
    out.append(
        f"result: sides {_json(result.sides)} ranking {_json(result.ranking)} "
        f"scores {_json(result.scores)} side_scores {_json(result.side_scores)} "
        f"winners {_json(result.winners)}"
    )
    for item in result.settlement:
        out.append(f"  settlement: {item.text}")
    return "\n".join(out) + "\n"


def render_all(specs: Sequence[GameSpec] = GAMES) -> dict[str, str]:
    """File name -> text of every golden game."""
    return {f"{s.name}.txt": render(s) for s in specs}


def check(directory: Path, texts: Mapping[str, str], *, stale: bool = True) -> list[str]:
    """Unified diffs (one string per differing file) of ``directory`` against ``texts``; with
    ``stale``, also the golden files in ``directory`` that ``texts`` does not hold."""
    problems: list[str] = []
    for name, text in texts.items():
        path = directory / name
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old != text:
            diff = difflib.unified_diff(
                old.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=str(path) if path.exists() else f"{path} (missing)",
                tofile=f"{name} (regenerated)",
                n=2,
            )
            problems.append("".join(diff))
    if stale and directory.is_dir():
        for path in sorted(directory.glob("*.txt")):
            if path.name not in texts:
                problems.append(f"{path}: no longer generated (delete it)\n")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m arena.game.playthrough",
        description="Write or check the golden playthrough files.",
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="DIR", help="regenerate every golden file into DIR")
    group.add_argument("--check", metavar="DIR", help="regenerate in memory and diff against DIR")
    args = parser.parse_args(argv)
    texts = render_all()
    if args.write:
        directory = Path(args.write)
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            (directory / name).write_text(text, encoding="utf-8")
        print(f"wrote {len(texts)} golden files to {directory}")
        return 0
    problems = check(Path(args.check), texts)
    if not problems:
        print(f"{args.check}: all {len(texts)} golden files agree")
        return 0
    for problem in problems:
        sys.stdout.write(problem)
    print(f"{len(problems)} golden file(s) differ; if the change is intended: {REGENERATE}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
