"""``arena match``'s summary and progress line: a row per bot. In a consultation series (docs/rules.md
§3.2) the players change seats from game to game, so a row per seat ("whoever plays alone", "the
allies") tallied roles, not bots: the summary is per player there."""

from __future__ import annotations

from rich.console import Console

from arena.cli.match import _Live, _status, _summary
from arena.game import GameResult
from arena.referee import GameEnd, MatchConfig, Outcome
from arena.service.match_manager import MatchEntry, PlayerSpec

SINGLE, ALLIES, DRAW = (0, 1), (1, 0), (0, 0)  # each side's place (side 0: the single seat)


Seating = tuple[tuple[int, ...], ...]


def _end(game: int, ranking: tuple[int, int], scores: tuple[int, int], seating: Seating) -> GameEnd:
    result = GameResult(((0,), (1,)), ranking, scores, scores, (), (1, 2))
    return GameEnd(game, result, Outcome.NORMAL, "", -1, seating)


def _entry(
    variant: str, options: tuple[tuple[str, str], ...], specs: list[list[str]]
) -> MatchEntry:
    config = MatchConfig(variant=variant, options=options, seed=1, games=4)
    players = [[PlayerSpec(n, "bot") for n in seat] for seat in specs]
    return MatchEntry("m", config, [[] for _ in specs], players, 1.0, status="running")


def _text(entry: MatchEntry) -> str:
    console = Console(record=True, width=200)
    console.print(_summary([entry], entry.ends))
    return console.export_text()


def _rows(entry: MatchEntry) -> dict[str, list[str]]:
    rows = {}
    for line in _text(entry).splitlines():
        cells = [c.strip() for c in line.replace("┃", "│").strip("│ ").split("│")]
        if len(cells) == 6:
            rows[cells[0]] = cells[1:]
    return rows


def test_a_consultation_series_is_summed_up_per_player_not_per_seat() -> None:
    entry = _entry(
        "three-handed-consultation", (("consultation", "series"),), [["ann"], ["bob", "cat"]]
    )
    cat_alone, bob_alone = ((2,), (0, 1)), ((1,), (0, 2))  # indexes into ann, bob, cat
    entry.ends = [
        _end(0, SINGLE, (900, 500), cat_alone),  # cat wins alone
        _end(1, ALLIES, (400, 800), cat_alone),  # ann and bob win
        _end(2, SINGLE, (1000, 300), bob_alone),  # the allies cut: bob alone, and wins
        _end(3, DRAW, (600, 600), bob_alone),
    ]
    rows = _rows(entry)
    assert "a row per player" in _text(entry)
    # player: games alone, wins, draws, losses, points
    assert rows["player"] == ["games alone", "wins", "draws", "losses", "points"]
    assert {k: v for k, v in rows.items() if k != "player"} == {
        "ann": ["0", "1", "1", "2", "2200"],
        "bob": ["2", "2", "1", "1", "2900"],
        "cat": ["2", "1", "1", "2", "2200"],
    }
    line = _status([entry], _Live(), 4)
    assert line.endswith("won-drawn-lost: ann 1-1-2, bob 2-1-1, cat 1-1-2")
    entry.ends = []  # before the first game ends: per player already
    assert _status([entry], _Live(), 4).endswith("won-drawn-lost: ann 0-0-0, bob 0-0-0, cat 0-0-0")


def test_players_who_keep_their_seats_are_summed_up_per_seat() -> None:
    entry = _entry("three-handed-consultation", (), [["ann"], ["bob", "cat"]])
    entry.ends = [
        _end(0, SINGLE, (900, 500), ()),
        _end(1, ALLIES, (400, 800), ()),
        _end(2, DRAW, (600, 600), ()),
    ]
    rows = _rows(entry)
    assert rows["seat"] == ["name", "wins", "draws", "losses", "points"]
    assert rows["0"] == ["ann", "1", "1", "1", "1900"]
    assert rows["1"] == ["bob + cat", "1", "1", "1", "1900"]
    line = _status([entry], _Live(), 3)
    assert line.endswith("won-drawn-lost: ann 1-1-1, bob + cat 1-1-1")


def test_a_games_verdict_agrees_with_its_winners_players() -> None:
    """Issue 45: the allies' seat won as "bob + cat wins"; two players win."""
    from arena.cli.match import _print_result

    entry = _entry("three-handed-consultation", (), [["ann"], ["bob", "cat"]])
    entry.ends = [_end(0, ALLIES, (400, 800), ()), _end(1, SINGLE, (900, 500), ())]
    series = _entry(
        "three-handed-consultation", (("consultation", "series"),), [["ann"], ["bob", "cat"]]
    )
    series.ends = [
        _end(0, ALLIES, (400, 800), ((2,), (0, 1))),
        _end(1, DRAW, (1, 1), ((2,), (0, 1))),
    ]
    console = Console(record=True, width=200)
    _print_result(console, [entry])
    _print_result(console, [series])
    verdicts = [
        line.rsplit("| ", 1)[1] for line in console.export_text().splitlines() if "| " in line
    ]
    assert verdicts == ["bob + cat win", "ann wins", "ann + bob win", "draw"]
