"""Counts that need every game of a board (its entrants' games and first places, for win rates),
kept up to date incrementally by :class:`Tally` for :mod:`arena.web.queries`, instead of counted on
every page: game ids only grow, and voiding, the only deletion, starts a count again. (An event's
games played, failed, planned and voided the ledger keeps itself: ``event_counts``.) A
:class:`Tally` reads through the :class:`arena.web.reader.Reader` it is given."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.web.reader import Reader


def _scope(b: dict[str, Any]) -> tuple[str, list[Any]]:
    """SQL (over games ``g``) choosing the games that count on a board, as the ledger rates them: an
    event's board has its games; a pooled board every tournament's game of its variant."""
    if b["kind"] == "pooled":
        return (
            "g.variant = ? AND g.tournament_id IN "
            "(SELECT id FROM tournaments WHERE kind != 'competition')",
            [b["variant"]],
        )
    return "g.tournament_id = ?", [b["event_id"]]


@dataclass(frozen=True, slots=True)
class Marks:
    """Where the ledger stands: its last game and voided game (row ids only grow)."""

    game: int
    voided: int


def marks(conn: sqlite3.Connection) -> Marks:
    row = conn.execute(
        "SELECT (SELECT coalesce(max(id), 0) FROM games), "
        "(SELECT coalesce(max(id), 0) FROM voided_games)"
    ).fetchone()
    return Marks(*row)


@dataclass(slots=True)
class _Count:
    """Per-entrant games and first places of one board, counted up to game ``last_game``."""

    last_game: int = 0
    last_voided: int = 0
    games: dict[int, int] = field(default_factory=dict)
    firsts: dict[int, float] = field(default_factory=dict)

    def copy(self) -> _Count:
        return _Count(self.last_game, self.last_voided, dict(self.games), dict(self.firsts))


class Tally:
    """Counts that need every game of a board (win rates per board), kept up to date incrementally
    instead of counted on every page.

    Games are only ever added, with growing ids, except by voiding, which also adds a row to
    ``voided_games``. So a count is brought up to date from the rows whose id is above the last one
    counted, and counted again from scratch when a game was voided since. The catching up reads in chunks of :data:`CHUNK` games, each in a transaction of
    its own: even the first count of a large ledger never holds the ledger's lock for long. (Call
    these outside any read transaction of your own.) One count is brought up to date by one thread at
    a time; the others wait for it rather than count the same games again."""

    CHUNK = 20_000

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self._boards: dict[int, _Count] = {}
        self._lock = threading.Lock()
        self._catching: dict[object, threading.Lock] = {}

    def _catch_up(self, key: object) -> threading.Lock:
        with self._lock:
            return self._catching.setdefault(key, threading.Lock())

    def board(self, b: dict[str, Any]) -> tuple[dict[int, int], dict[int, float]]:
        """(games, first places) per entrant on board ``b``. A first place shared by k sides counts
        1/k (a draw between two is half a win)."""
        with self._catch_up(("board", b["id"])):
            return self._board(b)

    def _board(self, b: dict[str, Any]) -> tuple[dict[int, int], dict[int, float]]:
        with self._lock:
            count = self._boards.get(b["id"]) or _Count()
        where, args = _scope(b)
        fresh = False
        while True:
            with self.reader.read() as conn:
                m = marks(conn)
                if count.last_voided != m.voided or count.last_game > m.game:
                    count, fresh = _Count(last_voided=m.voided), True
                if count.last_game >= m.game:
                    break
                upto = min(m.game, count.last_game + self.CHUNK)
                rows = conn.execute(
                    "SELECT s.game_id, s.entrant_id, s.side, s.place FROM games g JOIN game_seats s "
                    f"ON s.game_id = g.id WHERE g.id > ? AND g.id <= ? AND {where}",
                    [count.last_game, upto, *args],
                ).fetchall()
            if not fresh:
                count, fresh = count.copy(), True  # the cached count is shared: add to a copy
            _add(count, rows)
            count.last_game = upto
        with self._lock:
            stored = self._boards.get(b["id"])
            if stored is None or (stored.last_voided, stored.last_game) != (
                count.last_voided,
                count.last_game,
            ):
                self._boards[b["id"]] = count
        return count.games, count.firsts


def _add(count: _Count, rows: Sequence[sqlite3.Row] | Sequence[tuple[int, int, int, int]]) -> None:
    by_game: dict[int, list[tuple[int, int, int]]] = {}
    for game_id, entrant, side, place in rows:
        by_game.setdefault(game_id, []).append((entrant, side, place))
    games, firsts = count.games, count.firsts
    for seats in by_game.values():
        first_sides = {side for _, side, place in seats if place == 0}
        share = 1.0 / len(first_sides) if first_sides else 0.0
        for entrant in {e for e, _, _ in seats}:
            games[entrant] = games.get(entrant, 0) + 1
        for entrant in {e for e, _, place in seats if place == 0}:
            firsts[entrant] = firsts.get(entrant, 0.0) + share
