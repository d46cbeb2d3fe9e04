"""``arena match --deals FILE``: the match plays the suite's deals in order (its seeds, dealers and
decks), each once per seat; options that choose the deals otherwise are refused."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from typer.testing import CliRunner

from arena.cli.main import app
from arena.game import GameState, variant
from arena.referee.record import deck_texts

PYTHON = shlex.quote(sys.executable)
FIRST = "{python} -m arena_bot.first_bot"
RANDOM = f"{PYTHON} -m arena_bot.random_bot"
SLOW_CLOCK = ["--budget-ms", "10000", "--bank-ms", "60000"]  # a loaded machine is never a timeout

runner = CliRunner(env={"COLUMNS": "2000"})  # error boxes on one line


def flat(output: str) -> str:
    return " ".join(output.replace("│", " ").split())


def a_deck(seed: int) -> str:
    return ",".join(deck_texts(GameState.new(variant("rubicon"), seed)))


def suite(tmp_path: Path, name: str = "rubicon") -> Path:
    path = tmp_path / "suite.txt"
    path.write_text(
        f"bezique-arena-deals 1\nvariant {name}\n"
        f"deal 11 dealer=1 deck={a_deck(5) if name == 'rubicon' else ''}\ndeal 22\n"
    )
    return path


def test_match_plays_the_suites_deals_once_per_seat(tmp_path: Path) -> None:
    record = tmp_path / "match.json"
    result = runner.invoke(
        app,
        [
            "match", "--bot", FIRST, "--bot", RANDOM, "--variant", "rubicon",
            "--deals", str(suite(tmp_path)), "--record", str(record), *SLOW_CLOCK,
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "deal suite" in result.output
    games = json.loads(record.read_text())["games"]
    # Two deals, each once per seat: the first dealer rotates, the cards stay.
    assert [g["seed"] for g in games] == [11, 22, 11, 22]
    assert [g["dealer"] for g in games[::2]] == [1, 0], "the suite's dealer, then the other seat"
    assert ",".join(games[0]["decks"][0]) == a_deck(5) == ",".join(games[2]["decks"][0])
    assert games[1]["decks"][0] == games[3]["decks"][0]
    assert games[1]["dealer"] != games[3]["dealer"]
    # from the seeds alone: the same cards as any other match on this suite
    v = variant("rubicon")
    dealt = GameState.new(v, 22, dealer=games[1]["dealer"])
    assert games[1]["decks"][0] == deck_texts(dealt)


def test_games_play_the_first_deals_and_no_more_than_the_suite(tmp_path: Path) -> None:
    record = tmp_path / "match.json"
    path = suite(tmp_path)
    result = runner.invoke(
        app,
        [
            "match", "--bot", FIRST, "--bot", FIRST, "--variant", "rubicon", "--deals", str(path),
            "--games", "2", "--record", str(record), *SLOW_CLOCK,
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert [g["seed"] for g in json.loads(record.read_text())["games"]] == [11, 11]
    result = runner.invoke(
        app,
        ["match", "--bot", FIRST, "--bot", FIRST, "--variant", "rubicon", "--deals", str(path),
         "--games", "6"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "holds 2 deals: at most 4 games" in flat(result.output)


def test_deals_and_seed_are_refused_together(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["match", "--bot", FIRST, "--bot", FIRST, "--variant", "rubicon",
         "--deals", str(suite(tmp_path)), "--seed", "3"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--deals and --seed both choose the deals" in flat(result.output)


def test_a_suite_for_another_variant_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "suite.txt"
    path.write_text("bezique-arena-deals 1\nvariant three-handed\ndeal 5\n")
    result = runner.invoke(
        app, ["match", "--bot", FIRST, "--bot", FIRST, "--variant", "rubicon", "--deals", str(path)]
    )
    assert result.exit_code == 2
    assert f"{path}:2: this suite was made for three-handed, not rubicon" in flat(result.output)
