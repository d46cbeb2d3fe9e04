"""Tournaments on a deal suite (``deals = "FILE"``): every pairing plays the suite's deals (their seeds,
dealers and decks, dealt with the ledger's secret); the suite's content is part of the tournament's
identity; a suite for another variant, too short or missing is refused with the file named."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.game import GameState, variant
from arena.ledger import Ledger, TournamentChanged
from arena.referee.record import deck_texts
from arena.tournament.runner import Progress, TournamentRunner
from arena.tournament.schedule import full_schedule
from arena.tournament.spec import TournamentFileError, TournamentSpec, load

RUN_TIMEOUT = 300.0  # seconds, for a whole tournament on a loaded machine


def tournament_file(directory: Path, name: str, entrants: int, **top: Any) -> Path:
    """A small tournament of the example bots, with a clock no game ends on."""
    lines = [f'name = "{name}"']
    top = {"variant": "two-handed", "deals_per_pairing": 1, "concurrency": 2, "seed": 7, **top}
    for key, value in top.items():
        lines.append(f"{key} = {value!r}" if isinstance(value, int) else f'{key} = "{value}"')
    lines += ["[time_control]", "budget_ms = 10000", "bank_ms = 120000", "grace_ms = 2000"]
    for i, module in enumerate(["random_bot", "first_bot", "random_bot"][:entrants]):
        lines += [
            "[[entrants]]",
            f'name = "bot{i}"',
            f'command = "{{python}} -m arena_bot.{module}"',
            f'version = "{i}"',
        ]
    path = directory / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(spec: TournamentSpec, path: Path) -> tuple[int, Progress]:
    led = Ledger(path)
    runner = TournamentRunner(spec, led)
    try:
        tid = asyncio.run(asyncio.wait_for(runner.run(), RUN_TIMEOUT))
    finally:
        led.close()
    return tid, runner.progress


def query(path: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path, timeout=30.0)
    try:
        return [tuple(r) for r in conn.execute(sql, args).fetchall()]
    finally:
        conn.close()


HEADER = "bezique-arena-deals 1\nvariant {variant}\n"


def a_deck(seed: int, name: str = "two-handed") -> str:
    return ",".join(deck_texts(GameState.new(variant(name), seed)))


def write_suite(path: Path, lines: list[str], name: str = "two-handed") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER.format(variant=name) + "\n".join(lines) + "\n")
    return path


SUITE = ["deal 11 dealer=1 deck={deck}", "deal 22"]


def suite_lines() -> list[str]:
    return [line.format(deck=a_deck(5)) for line in SUITE]


def test_the_suite_is_read_relative_to_the_file_and_sets_the_deals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_suite(tmp_path / "books" / "suite.txt", suite_lines())
    toml = tournament_file(tmp_path, "t", 3, deals="books/suite.txt")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    spec = load(toml)
    assert spec.deals is not None and len(spec.deals) == 2
    assert spec.deals_file == str((tmp_path / "books" / "suite.txt").resolve())
    # deals_per_pairing is given in the file (1): the first deal only
    assert spec.deals_per_pairing == 1
    assert {g.seed for g in full_schedule(spec)} == {11}


def test_without_deals_per_pairing_the_whole_suite_is_played(tmp_path: Path) -> None:
    write_suite(tmp_path / "suite.txt", suite_lines())
    toml = tournament_file(tmp_path, "t", 3, deals="suite.txt")
    text = toml.read_text().replace("deals_per_pairing = 1\n", "")
    toml.write_text(text)
    spec = load(toml)
    assert spec.deals_per_pairing == 2
    games = full_schedule(spec)
    assert len(games) == 3 * 2 * 2  # three pairings, two deals, both seatings
    assert all(g.seed == (11, 22)[g.deal] for g in games), "every pairing meets the same deals"


def test_a_suite_is_part_of_the_identity_and_a_tournament_without_one_is_unchanged(
    tmp_path: Path,
) -> None:
    write_suite(tmp_path / "suite.txt", suite_lines())
    plain = load(tournament_file(tmp_path, "plain", 3)).to_dict()
    assert "deals" not in plain
    spec = load(tournament_file(tmp_path, "t", 3, deals="suite.txt"))
    assert spec.to_dict()["deals"].startswith("sha256:")
    # a comment does not change the deals; another seed does
    (tmp_path / "suite.txt").write_text("# a note\n" + (tmp_path / "suite.txt").read_text())
    assert load(tournament_file(tmp_path, "t", 3, deals="suite.txt")).to_dict() == spec.to_dict()
    write_suite(tmp_path / "suite.txt", [*suite_lines()[:1], "deal 23"])
    changed = load(tournament_file(tmp_path, "t", 3, deals="suite.txt")).to_dict()
    assert changed["deals"] != spec.to_dict()["deals"]


def test_a_suite_for_another_variant_is_refused_naming_the_file(tmp_path: Path) -> None:
    write_suite(tmp_path / "three.txt", ["deal 5"], "three-handed")
    with pytest.raises(TournamentFileError) as info:
        load(tournament_file(tmp_path, "t", 3, deals="three.txt"))
    message = str(info.value)
    assert "deals:" in message and "three.txt" in message
    assert "made for three-handed, not two-handed" in message


def test_a_suite_shorter_than_the_deals_per_pairing_is_refused(tmp_path: Path) -> None:
    write_suite(tmp_path / "suite.txt", suite_lines())
    with pytest.raises(TournamentFileError) as info:
        load(tournament_file(tmp_path, "t", 3, deals="suite.txt", deals_per_pairing=3))
    message = str(info.value)
    assert "deals_per_pairing: 3 deals per pairing" in message
    assert "'suite.txt' holds 2" in message


def test_a_missing_suite_is_refused_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(TournamentFileError, match=r"deals: .*nowhere\.txt: cannot read"):
        load(tournament_file(tmp_path, "t", 3, deals="nowhere.txt"))


def test_the_suite_is_hidden_from_the_bots(tmp_path: Path) -> None:
    write_suite(tmp_path / "suite.txt", suite_lines())
    spec = load(tournament_file(tmp_path, "t", 3, deals="suite.txt"))
    led = Ledger(tmp_path / "ledger.sqlite")
    try:
        hidden = TournamentRunner(spec, led)._hidden()
    finally:
        led.close()
    assert (tmp_path / "suite.txt").resolve() in hidden


def test_a_tournament_plays_the_suites_deals_and_refuses_an_edited_suite(tmp_path: Path) -> None:
    write_suite(tmp_path / "suite.txt", suite_lines())
    toml = tournament_file(tmp_path, "t", 2, deals="suite.txt", deals_per_pairing=2)
    spec = load(toml)
    path = tmp_path / "ledger.sqlite"
    run(spec, path)
    led = Ledger(path)
    try:
        rows = query(path, "SELECT id, key FROM games ORDER BY ord")
        assert len(rows) == 4  # one pairing, two deals, both seatings
        played = {key: led.game_record(gid)["games"][0] for gid, key in rows}
    finally:
        led.close()
    v = variant("two-handed")
    for key, game in played.items():
        deal = int(key.split("-d")[1][:4])
        assert game["seed"] == (11, 22)[deal]
        if deal == 0:
            assert game["dealer"] == 1
            assert ",".join(game["decks"][0]) == a_deck(5), "the suite's explicit deck"
    by_deal = {d: [g for k, g in played.items() if f"-d{d:04d}-" in k] for d in (0, 1)}
    first, second = by_deal[1]
    assert first["decks"][0] == second["decks"][0], "both seatings meet the same cards"
    assert first["dealer"] == second["dealer"]
    # dealt with the ledger's secret, not from the public seed alone
    assert ",".join(first["decks"][0]) != ",".join(deck_texts(GameState.new(v, 22)))

    # A comment in the suite: the same deals, the run resumes (nothing left to play).
    suite = tmp_path / "suite.txt"
    suite.write_text("# reviewed\n" + suite.read_text())
    _, progress = run(load(toml), path)
    assert (progress.done, progress.resumed) == (4, 4)

    # Another deal in the suite: refused, naming the deals.
    write_suite(suite, [*suite_lines()[:1], "deal 23"])
    with pytest.raises(TournamentChanged, match="deals changed"):
        run(load(toml), path)
    assert query(path, "SELECT count(*) FROM games") == [(4,)]


def test_the_same_spec_sends_the_suite_with_the_rules(tmp_path: Path) -> None:
    """The rules a game is played with (here and on a cluster's node) carry the suite."""
    write_suite(tmp_path / "suite.txt", suite_lines())
    spec = load(tournament_file(tmp_path, "t", 2, deals="suite.txt"))
    led = Ledger(tmp_path / "ledger.sqlite")
    seen = []
    runner = TournamentRunner(spec, led)

    async def play(rules: object) -> None:
        seen.append(rules)

    async def nothing() -> None:
        return None

    try:
        asyncio.run(runner._run_ledger(nothing, play))  # type: ignore[arg-type]
    finally:
        led.close()
    (rules,) = seen
    assert rules.deals == spec.deals  # type: ignore[attr-defined]
