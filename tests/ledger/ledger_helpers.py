"""Helpers shared by test_ledger.py, test_ledger_files.py."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.ledger import Ledger
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.tournament.schedule import full_schedule
from arena.tournament.spec import TournamentSpec, parse

REAL_CONNECT: Callable[..., sqlite3.Connection] = sqlite3.connect


def make_spec(n: int = 3, **fields: Any) -> TournamentSpec:
    data: dict[str, Any] = {
        "name": fields.pop("name", "Synthetic"),
        "entrants": [{"name": f"e{i}", "command": "bot", "version": "1"} for i in range(n)],
        **fields,
    }
    return parse(data, "synthetic.toml")


def sides_of(variant: str) -> list[list[int]]:
    if variant == "four-handed-partners":
        return [[0, 2], [1, 3]]
    seats = {"two-handed": 2, "three-handed": 3, "three-handed-consultation": 2}[variant]
    return [[s] for s in range(seats)]


def ranking_of(game: ScheduledGame, sides: int) -> list[int]:
    """A synthetic result fixed by the game's seed: a ranking of the sides, sometimes a draw."""
    k = game.seed % 7
    if sides == 2:
        return [[0, 1], [1, 0], [0, 0]][k % 3]
    ranks = [(k + s) % sides for s in range(sides)]
    if k == 0:
        ranks[0] = ranks[1] = min(ranks[0], ranks[1])  # a shared place
    return ranks


def synthetic_record(game: ScheduledGame, variant: str) -> dict[str, Any]:
    sides = sides_of(variant)
    ranking = ranking_of(game, len(sides))
    scores = [0] * len(game.seats)
    for side, seats in enumerate(sides):
        for seat in seats:
            scores[seat] = 1000 - 300 * ranking[side] + seat
    return {
        "match_id": game.key,
        "games": [
            {
                "outcome": "normal",
                "detail": "",
                "culprit": -1,
                "result": {"sides": sides, "ranking": ranking, "scores": scores},
            }
        ],
    }


class Fixture:
    def __init__(self, led: Ledger, spec: TournamentSpec) -> None:
        self.led = led
        self.spec = spec
        self.tid, _ = led.tournament(spec)
        self.ids = led.entrant_ids(spec.entrants)
        self.games = full_schedule(spec)
        led.plan(self.tid, self.games)

    def record(self, game: ScheduledGame) -> int:
        return self.led.record_game(
            self.tid,
            self.spec.variant,
            game,
            self.ids,
            FinishedGame.from_data(synthetic_record(game, self.spec.variant)),
        )


def dump(path: Path | str) -> list[str]:
    conn = REAL_CONNECT(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def play_in_order(
    led: Ledger,
    spec: TournamentSpec,
    order: list[int],
    check: Callable[[Fixture], None] | None = None,
) -> Fixture:
    f = Fixture(led, spec)
    for i in order:
        f.record(f.games[i])
        if check:
            check(f)
    return f
