"""Golden playthroughs (OpenSpiel style): seeded games of two-handed (002, both declarations_per_trick
options), Polish (000) and Rubicon (000, 004), played by a seeded random policy and rendered step by step
(legal actions, action chosen, observations, events, score items, scores, deal and game results).

Each file of ``tests/data/golden`` is regenerated in memory and compared. A difference means the engine
now plays, scores or shows one of these games differently; the failure prints the unified diff. If the
change is intended, regenerate the files from the repository root with

    python -m arena.game.playthrough --write tests/data/golden

and review the diff of the golden files; ``--check`` prints the diff without writing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.game.playthrough import GAMES, REGENERATE, GameSpec, check, render, render_all

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden"


@pytest.mark.parametrize("spec", GAMES, ids=lambda s: s.name)
def test_golden_playthrough(spec: GameSpec) -> None:
    """The regenerated playthrough equals the committed golden file."""
    name = f"{spec.name}.txt"
    problems = check(GOLDEN, {name: render(spec)}, stale=False)
    if problems:
        pytest.fail(
            f"golden file {name} differs from the regenerated playthrough:\n{problems[0]}\n"
            f"If the change is intended, regenerate with: {REGENERATE}",
            pytrace=False,
        )


def test_no_stale_golden_files() -> None:
    """Every golden file is still generated (a renamed game leaves no orphan behind)."""
    assert sorted(p.name for p in GOLDEN.glob("*.txt")) == sorted(render_all())


def test_golden_games_cover_the_variants() -> None:
    """The golden games cover two-handed with both declarations_per_trick options, Polish, Rubicon
    and the multi-player games (issue 3), and each file ends with the game's result."""
    covered = {(s.variant, s.options.get("declarations_per_trick", "")) for s in GAMES}
    assert covered == {
        ("two-handed", ""),
        ("two-handed", "one"),
        ("polish", ""),
        ("rubicon", ""),
        ("three-handed", ""),
        ("four-handed-partners", ""),
        ("three-handed-consultation", ""),
    }
    for spec in GAMES:
        text = (GOLDEN / f"{spec.name}.txt").read_text(encoding="utf-8")
        assert "\n== game over after " in text
        assert "\nresult: sides " in text


@pytest.mark.parametrize("spec", GAMES, ids=lambda s: s.name)
def test_golden_game_shows_what_it_was_chosen_for(spec: GameSpec) -> None:
    """Each golden game still shows the rules it was chosen to exhibit (if an engine change alters
    the game, pick another seed for it in arena/game/playthrough.py)."""
    text = (GOLDEN / f"{spec.name}.txt").read_text(encoding="utf-8")
    missing = [s for s in spec.shows if s not in text]
    assert not missing, f"{spec.name} ({spec.why}) no longer shows {missing}"


def test_render_is_deterministic() -> None:
    """Rendering twice gives the same text (no global randomness, no dict-order effects)."""
    spec = GAMES[0]
    assert render(spec) == render(spec)
