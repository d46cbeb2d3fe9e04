"""The ledger on SQLite, through sqlite-utils: migrations, writes in transactions, queries.

Every finished game is written in one transaction with its seats, its full record and the rating
updates it makes possible. Ratings are updated in the schedule's canonical order: a game that finishes
before an earlier one waits, unrated, and is rated in the transaction of the game that completes the
prefix; so concurrency never changes a rating, and :meth:`Ledger.rebuild_ratings` recomputes exactly
the stored numbers. A game is keyed by (tournament, key): recording it twice is a no-op.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import sqlite_utils

from arena.ledger.schema import MIGRATIONS
from arena.rating import Rating, initial, rate_game
from arena.tournament.schedule import ScheduledGame
from arena.tournament.spec import Entrant, TournamentSpec


class LedgerError(Exception):
    """The ledger file cannot be used (not a database, locked, read-only, newer schema); the message
    names the file and the problem. Nothing stored is changed."""


@dataclass(frozen=True, slots=True)
class BoardRow:
    entrant: str
    variant: str
    mu: float
    sigma: float
    exposed: float
    games: int


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _guarded(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """SQLite's errors (locked, read-only, corrupt) become LedgerError naming the file."""

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(*args, **kwargs)
        except sqlite3.DatabaseError as exc:
            ledger = args[0]
            path = getattr(ledger, "path", "ledger")
            raise LedgerError(f"{path}: {exc}") from exc

    return wrapper


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Ledger:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
            conn.execute("PRAGMA foreign_keys = ON")
            # The default rollback journal, not WAL: the ledger stays one self-contained file that can
            # be copied or opened read-only at any time.
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{self.path}: not a usable SQLite ledger: {exc}") from exc
        self.conn = conn
        self.db = sqlite_utils.Database(conn)
        self._migrate()

    def close(self) -> None:
        self.conn.close()

    # ------------------------------------------------------------------ schema

    def _migrate(self) -> None:
        try:
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master")}
            if "_migrations" in tables:
                done = {r[0] for r in self.conn.execute("SELECT version FROM _migrations")}
                if done == set(range(1, len(MIGRATIONS) + 1)):
                    return  # up to date: nothing to write (a read-only ledger can still be read)
            with self.transaction():
                self.conn.execute(
                    "CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, applied_at TEXT)"
                )
                done = {r[0] for r in self.conn.execute("SELECT version FROM _migrations")}
                if done and max(done) > len(MIGRATIONS):
                    raise LedgerError(
                        f"{self.path}: schema version {max(done)} is newer than this arena "
                        f"({len(MIGRATIONS)}); upgrade the arena"
                    )
                for version, sql in enumerate(MIGRATIONS, start=1):
                    if version not in done:
                        for statement in sql.split(";"):
                            if statement.strip():
                                self.conn.execute(statement)
                        self.conn.execute(
                            "INSERT INTO _migrations VALUES (?, ?)", (version, _now())
                        )
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{self.path}: cannot prepare the ledger: {exc}") from exc

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (taken at once: a second writer waits, then fails clearly)."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise LedgerError(f"{self.path}: cannot write: {exc}") from exc
        try:
            yield
        except sqlite3.DatabaseError as exc:
            with contextlib.suppress(sqlite3.DatabaseError):
                self.conn.execute("ROLLBACK")
            raise LedgerError(f"{self.path}: cannot write: {exc}") from exc
        except BaseException:
            with contextlib.suppress(sqlite3.DatabaseError):
                self.conn.execute("ROLLBACK")
            raise
        else:
            try:
                self.conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                self.conn.execute("ROLLBACK")
                raise LedgerError(f"{self.path}: cannot write: {exc}") from exc

    # ------------------------------------------------------------------ tournaments and entrants

    @_guarded
    def tournament(self, spec: TournamentSpec) -> tuple[int, bool]:
        """The tournament's id, and whether it was already in the ledger (then it is resumed)."""
        canonical = json.dumps(spec.to_dict(), sort_keys=True)
        digest = hashlib.sha256(canonical.encode()).hexdigest()
        row = self.conn.execute(
            "SELECT id FROM tournaments WHERE spec_hash = ?", (digest,)
        ).fetchone()
        if row is not None:
            return int(row[0]), True
        with self.transaction():
            cur = self.conn.execute(
                "INSERT INTO tournaments (name, spec_hash, spec, variant, source, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (spec.name, digest, canonical, spec.variant, spec.source, _now()),
            )
        return int(cur.lastrowid or 0), False

    @_guarded
    def entrant_ids(self, entrants: Sequence[Entrant]) -> dict[str, int]:
        out = {}
        with self.transaction():
            for e in entrants:
                self.conn.execute(
                    "INSERT OR IGNORE INTO entrants (name, command, command_hash, language, version, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (e.name, e.command, e.command_hash, e.language, e.version, _now()),
                )
                row = self.conn.execute(
                    "SELECT id FROM entrants WHERE name = ? AND command_hash = ?",
                    (e.name, e.command_hash),
                ).fetchone()
                out[e.name] = int(row[0])
        return out

    @_guarded
    def plan(self, tournament_id: int, games: Sequence[ScheduledGame]) -> None:
        with self.transaction():
            self.conn.executemany(
                "INSERT OR IGNORE INTO planned_games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (tournament_id, g.key, g.ord, g.round, g.pairing, g.deal, g.rotation, g.seed,
                     json.dumps([list(s) for s in g.seats]), json.dumps(list(g.group)))
                    for g in games
                ],
            )  # fmt: skip

    @_guarded
    def planned(self, tournament_id: int, round_: int) -> list[ScheduledGame]:
        """The games planned for one round, in canonical order."""
        rows = self.conn.execute(
            "SELECT key, ord, round, pairing, deal, rotation, seed, seats, grp FROM planned_games "
            "WHERE tournament_id = ? AND round = ? ORDER BY ord",
            (tournament_id, round_),
        ).fetchall()
        out = []
        for key, ord_, rnd, pairing, deal, rotation, seed, seats, grp in rows:
            seat_names = tuple(tuple(s) for s in json.loads(seats))
            group = tuple(json.loads(grp))
            out.append(
                ScheduledGame(key, ord_, rnd, pairing, deal, rotation, seed, seat_names, group)
            )
        return out

    @_guarded
    def done_keys(self, tournament_id: int) -> set[str]:
        rows = self.conn.execute("SELECT key FROM games WHERE tournament_id = ?", (tournament_id,))
        return {r[0] for r in rows}

    @_guarded
    def finish_tournament(self, tournament_id: int) -> None:
        with self.transaction():
            self.conn.execute(
                "UPDATE tournaments SET finished_at = ? WHERE id = ? AND finished_at IS NULL",
                (_now(), tournament_id),
            )

    # ------------------------------------------------------------------ games

    @_guarded
    def record_game(
        self,
        tournament_id: int,
        variant: str,
        game: ScheduledGame,
        entrant_ids: dict[str, int],
        record: dict[str, Any],
    ) -> int:
        """Write a finished game (its seats, record and the rating updates it unblocks) in one
        transaction; a game already recorded is left as it is."""
        g = record["games"][0]
        result = g["result"]
        with self.transaction():
            row = self.conn.execute(
                "SELECT id FROM games WHERE tournament_id = ? AND key = ?",
                (tournament_id, game.key),
            ).fetchone()
            if row is not None:
                return int(row[0])
            cur = self.conn.execute(
                "INSERT INTO games (tournament_id, key, ord, round, pairing, deal, rotation, variant, "
                "seed, outcome, detail, culprit, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (tournament_id, game.key, game.ord, game.round, game.pairing, game.deal,
                 game.rotation, variant, game.seed, g["outcome"], g["detail"], g["culprit"], _now()),
            )  # fmt: skip
            game_id = int(cur.lastrowid or 0)
            sides = result["sides"]
            for side, seats in enumerate(sides):
                for seat in seats:
                    for member, name in enumerate(game.seats[seat]):
                        self.conn.execute(
                            "INSERT INTO game_seats VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (game_id, seat, member, entrant_ids[name], side,
                             result["ranking"][side], result["scores"][seat]),
                        )  # fmt: skip
            self.conn.execute(
                "INSERT INTO game_records VALUES (?, ?)", (game_id, json.dumps(record))
            )
            self._rate_ready(tournament_id)
        return game_id

    def _rate_ready(self, tournament_id: int) -> None:
        """Rate, in canonical order, every finished game with no unfinished planned game before it."""
        # Rated games form a prefix of the schedule: start after the last of them.
        row = self.conn.execute(
            "SELECT max(ord) FROM games WHERE tournament_id = ? AND rating_seq IS NOT NULL",
            (tournament_id,),
        ).fetchone()
        last = row[0] if row[0] is not None else -1
        row = self.conn.execute(
            "SELECT p.ord FROM planned_games p WHERE p.tournament_id = ? AND p.ord > ? AND NOT EXISTS "
            "(SELECT 1 FROM games g WHERE g.tournament_id = p.tournament_id AND g.key = p.key) "
            "ORDER BY p.ord LIMIT 1",
            (tournament_id, last),
        ).fetchone()
        limit = row[0] if row is not None else 2**62
        ready = self.conn.execute(
            "SELECT id, variant FROM games WHERE tournament_id = ? AND rating_seq IS NULL "
            "AND ord > ? AND ord < ? ORDER BY ord",
            (tournament_id, last, limit),
        ).fetchall()
        if not ready:
            return
        seq = self.conn.execute("SELECT coalesce(max(rating_seq), 0) FROM games").fetchone()[0]
        for game_id, variant in ready:
            seq += 1
            self._rate_game(int(game_id), variant, self._current)
            self.conn.execute("UPDATE games SET rating_seq = ? WHERE id = ?", (seq, game_id))

    def _current(self, entrant_id: int, variant: str) -> tuple[Rating, int]:
        row = self.conn.execute(
            "SELECT mu, sigma, games FROM ratings WHERE entrant_id = ? AND variant = ?",
            (entrant_id, variant),
        ).fetchone()
        if row is None:
            return initial(), 0
        return Rating(row[0], row[1]), int(row[2])

    def _rate_game(
        self, game_id: int, variant: str, current: Any
    ) -> list[tuple[int, Rating, Rating, int]]:
        """Rate one game from its seats and write the result: (entrant, before, after, games)."""
        seats = self.conn.execute(
            "SELECT side, place, entrant_id FROM game_seats WHERE game_id = ? ORDER BY side, seat, member",
            (game_id,),
        ).fetchall()
        updates = _rate_seats(seats, variant, current)
        for entrant, old, new, games in updates:
            self.conn.execute(
                "INSERT OR REPLACE INTO ratings VALUES (?, ?, ?, ?, ?, ?)",
                (entrant, variant, new.mu, new.sigma, new.exposed, games),
            )
            self.conn.execute(
                "INSERT OR REPLACE INTO rating_history VALUES (?, ?, ?, ?, ?, ?, ?)",
                (game_id, entrant, variant, old.mu, old.sigma, new.mu, new.sigma),
            )
        return updates

    # ------------------------------------------------------------------ queries

    @_guarded
    def leaderboard(self, variant: str) -> list[BoardRow]:
        rows = self.conn.execute(
            "SELECT e.name, r.variant, r.mu, r.sigma, r.exposed, r.games FROM ratings r "
            "JOIN entrants e ON e.id = r.entrant_id WHERE r.variant = ? ORDER BY r.exposed DESC, e.name",
            (variant,),
        ).fetchall()
        return [BoardRow(*r) for r in rows]

    @_guarded
    def variants(self) -> list[str]:
        return [
            r[0] for r in self.conn.execute("SELECT DISTINCT variant FROM ratings ORDER BY variant")
        ]

    @_guarded
    def games(self, tournament_id: int | None = None, limit: int = 50) -> list[dict[str, Any]]:
        where, args = ("WHERE g.tournament_id = ?", [tournament_id]) if tournament_id else ("", [])
        rows = self.db.query(
            "SELECT g.id, t.name AS tournament, g.key, g.variant, g.outcome, g.detail, g.finished_at, "
            "(SELECT group_concat(e.name || ':' || s.score, ' ') FROM game_seats s "
            " JOIN entrants e ON e.id = s.entrant_id WHERE s.game_id = g.id) AS players "
            f"FROM games g JOIN tournaments t ON t.id = g.tournament_id {where} "
            "ORDER BY g.id DESC LIMIT ?",
            [*args, limit],
        )
        return list(rows)

    @_guarded
    def game_record(self, game_id: int) -> dict[str, Any]:
        row = self.conn.execute(
            "SELECT record FROM game_records WHERE game_id = ?", (game_id,)
        ).fetchone()
        if row is None:
            raise LedgerError(f"{self.path}: no game {game_id}")
        data: dict[str, Any] = json.loads(row[0])
        return data

    @_guarded
    def seat_rows(self, tournament_id: int) -> list[dict[str, Any]]:
        """Every seat of every game of a tournament, with the game's key parts, for summaries."""
        return list(
            self.db.query(
                "SELECT g.id AS game_id, g.key, g.pairing, g.deal, g.rotation, g.outcome, s.seat, "
                "s.side, s.place, s.score, e.name AS entrant FROM games g "
                "JOIN game_seats s ON s.game_id = g.id JOIN entrants e ON e.id = s.entrant_id "
                "WHERE g.tournament_id = ? ORDER BY g.ord, s.seat, s.member",
                [tournament_id],
            )
        )

    # ------------------------------------------------------------------ rebuild

    @_guarded
    def rebuild_ratings(self) -> float:
        """Recompute every rating from the games, in rating order; rewrite them and return the largest
        difference from the numbers stored before (0.0 when the ledger was consistent)."""
        stored = {
            (r[0], r[1]): (r[2], r[3])
            for r in self.conn.execute("SELECT entrant_id, variant, mu, sigma FROM ratings")
        }
        seats: dict[int, list[tuple[int, int, int]]] = {}
        for game_id, side, place, entrant in self.conn.execute(
            "SELECT s.game_id, s.side, s.place, s.entrant_id FROM game_seats s "
            "JOIN games g ON g.id = s.game_id WHERE g.rating_seq IS NOT NULL "
            "ORDER BY s.game_id, s.side, s.seat, s.member"
        ):
            seats.setdefault(game_id, []).append((side, place, entrant))
        games = self.conn.execute(
            "SELECT id, variant FROM games WHERE rating_seq IS NOT NULL ORDER BY rating_seq"
        ).fetchall()
        current: dict[tuple[int, str], tuple[Rating, int]] = {}
        history = []
        for game_id, variant in games:
            updates = _rate_seats(
                seats.get(game_id, []), variant, lambda e, v: current.get((e, v), (initial(), 0))
            )
            for entrant, old, new, count in updates:
                current[(entrant, variant)] = (new, count)
                history.append((game_id, entrant, variant, old.mu, old.sigma, new.mu, new.sigma))
        with self.transaction():
            self.conn.execute("DELETE FROM ratings")
            self.conn.execute("DELETE FROM rating_history")
            self.conn.executemany(
                "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?)",
                [(e, v, r.mu, r.sigma, r.exposed, n) for (e, v), (r, n) in current.items()],
            )
            self.conn.executemany(
                "INSERT INTO rating_history VALUES (?, ?, ?, ?, ?, ?, ?)", history
            )
        diff = 0.0 if set(stored) == set(current) else float("inf")
        for key, (mu, sigma) in stored.items():
            if key in current:
                r = current[key][0]
                diff = max(diff, abs(r.mu - mu), abs(r.sigma - sigma))
        return diff


def _rate_seats(
    seats: Sequence[tuple[int, int, int]], variant: str, current: Any
) -> list[tuple[int, Rating, Rating, int]]:
    """TrueSkill update of one game from its (side, place, entrant) rows."""
    teams: dict[int, list[int]] = {}
    places: dict[int, int] = {}
    for side, place, entrant in seats:
        teams.setdefault(side, []).append(entrant)
        places[side] = place
    order = sorted(teams)
    before = {e: current(e, variant) for side in order for e in teams[side]}
    new = rate_game([[before[e][0] for e in teams[s]] for s in order], [places[s] for s in order])
    out = []
    for side, ratings in zip(order, new, strict=True):
        for entrant, r in zip(teams[side], ratings, strict=True):
            old, games = before[entrant]
            out.append((entrant, old, r, games + 1))
    return out
