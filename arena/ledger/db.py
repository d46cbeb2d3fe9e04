"""The ledger on SQLite: migrations, writes in transactions, queries.

Every finished game is written in one transaction with its seats, its full record and the rating
updates it makes possible. Ratings are updated in the schedule's canonical order: a game that finishes
before an earlier one waits, unrated, and is rated in the transaction of the game that completes the
prefix; so concurrency never changes a rating, and :meth:`Ledger.rebuild_ratings` recomputes exactly
the stored numbers. A game is keyed by (tournament, key): recording it twice is a no-op.

Every statement is plain SQL through the standard library's sqlite3: the writes run inside explicit
``BEGIN IMMEDIATE`` transactions whose every statement must be checked against the schedule (a
library that manages transactions of its own would take that from us), the schema is made and
migrated by numbered migrations (:mod:`.schema`), and the read side's rows come from
:class:`arena.ledger.queries.Queries`. Browsing the file needs no part of the arena: any SQLite tool
opens it (sqlite3, sqlite-utils, Datasette).

The tournament runner and the competition server give a ledger a thread of their own, so that no lock
wait or fsync ever runs on the event loop that times the bots. Another thread may still use the same
ledger (a test, a benchmark, the organiser's code beside a server): each of its calls and transactions
runs whole, one at a time (:attr:`Ledger.lock`), never inside another thread's transaction.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.ledger import boards, head_to_head, leases, records
from arena.ledger.errors import LOCKED, LeaseHeld, LedgerError, TournamentChanged, explain
from arena.ledger.errors import guarded as _guarded
from arena.ledger.identity import Registrable, canonical_spec, changed_fields, digest, harmless
from arena.ledger.queries import Queries, fits
from arena.ledger.rows import Entrant, FinishedGame, ScheduledGame
from arena.ledger.schema import APPLICATION_ID, HEAD_TO_HEAD_AFTER, MIGRATIONS, REBUILD_AFTER
from arena.ledger.times import stamp

BUSY_TIMEOUT = 10.0  # seconds a write waits for another program's lock before failing
LEDGER_TABLES = frozenset({"_migrations", "entrants", "tournaments", "games"})


def _now() -> str:
    return stamp()


@dataclass(frozen=True, slots=True)
class TournamentEntry:
    """A tournament as registered: found again (resumed) or new."""

    id: int
    name: str
    resumed: bool
    # The secret its deals are drawn with; None for a tournament recorded before secret deals (its
    # deals follow the public seed alone, as they did when it started).
    deal_key: bytes | None
    changes: tuple[str, ...] = ()  # fields changed in ways that cannot change any game


# A planned game's columns, in the order :func:`planned_game` reads them.
PLANNED_COLUMNS = "key, ord, round, pairing, deal, rotation, seed, seats, grp"


def planned_game(row: Sequence[Any]) -> ScheduledGame:
    """A row of ``planned_games`` (its :data:`PLANNED_COLUMNS`) as the game it plans."""
    key, ord_, rnd, pairing, deal, rotation, seed, seats, grp = row
    seat_names = tuple(tuple(s) for s in json.loads(seats))
    return ScheduledGame(
        key, ord_, rnd, pairing, deal, rotation, seed, seat_names, tuple(json.loads(grp))
    )


def statements(sql: str) -> list[str]:
    """A migration's statements, each whole: a trigger's body holds semicolons of its own."""
    out: list[str] = []
    pending = ""
    for piece in sql.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                out.append(pending)
            pending = ""
    if pending.strip(" \n;"):
        out.append(pending)
    return out


class Ledger(Queries):
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            # Not bound to the thread that opened it: the tournament runner hands the ledger to a
            # writer thread of its own (one thread at a time uses it).
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA foreign_keys = ON")
            # The default rollback journal, not WAL: the ledger stays one self-contained file that can
            # be copied or opened read-only at any time.
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            why = explain(exc)
            if why.startswith(LOCKED):  # a good ledger, busy: not to be taken for a broken file
                raise LedgerError(f"{self.path}: {why}; try again once it is done") from exc
            raise LedgerError(f"{self.path}: not a usable SQLite ledger: {why}") from exc
        others = sorted(t for t in tables if not t.startswith("sqlite_"))
        # A ledger with any table has these (the first migration made them with _migrations): a
        # database with a _migrations table of its own and none of them is another program's.
        if (app_id not in (0, APPLICATION_ID)) or (others and not tables >= LEDGER_TABLES):
            conn.close()
            listed = ", ".join(others[:6]) + (", ..." if len(others) > 6 else "")
            raise LedgerError(
                f"{self.path}: this SQLite database belongs to another program (tables: "
                f"{listed or 'none'}; application id {app_id}), not an arena ledger: give another "
                "file with --ledger"
            )
        self.conn = conn
        # Held by every call (errors.guarded) and transaction: the connection's one transaction is
        # never shared by two threads. Re-entrant: a call makes others.
        self.lock = threading.RLock()
        self._migrate()

    def close(self) -> None:
        self.conn.close()

    # ------------------------------------------------------------------ schema

    def _migrate(self) -> None:
        stored = 0  # the schema version found (0: a new ledger)
        try:
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master")}
            if "_migrations" in tables:
                done = {r[0] for r in self.conn.execute("SELECT version FROM _migrations")}
                if done == set(range(1, len(MIGRATIONS) + 1)):
                    return  # up to date: nothing to write (a read-only ledger can still be read)
                # Refused before taking the write lock: a newer arena writing the ledger holds it.
                self._refuse_newer(done)
                stored = max(done, default=0)
            with self.transaction():
                self.conn.execute(
                    "CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, applied_at TEXT)"
                )
                done = {r[0] for r in self.conn.execute("SELECT version FROM _migrations")}
                self._refuse_newer(done)
                rebuild = count_heads = False
                for version, sql in enumerate(MIGRATIONS, start=1):
                    if version not in done:
                        for statement in statements(sql):
                            self.conn.execute(statement)
                        self.conn.execute(
                            "INSERT INTO _migrations VALUES (?, ?)", (version, _now())
                        )
                        rebuild = rebuild or (version in REBUILD_AFTER and bool(done))
                        count_heads = count_heads or (version in HEAD_TO_HEAD_AFTER and bool(done))
                if rebuild:
                    boards.rebuild(self.conn)
                if count_heads:
                    head_to_head.rebuild(self.conn)
                self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{self.path}: cannot prepare the ledger: {explain(exc)}") from exc
        except LedgerError as exc:
            cause = exc.__cause__
            if stored and isinstance(cause, sqlite3.Error) and "read-only" in explain(cause):
                raise LedgerError(
                    f"{self.path}: the ledger's schema (version {stored}) must be upgraded to this "
                    f"arena's ({len(MIGRATIONS)}), which writes it once, and {explain(cause)}: open "
                    "it once with write access (any arena command upgrades it)"
                ) from exc
            raise

    def _refuse_newer(self, done: set[int]) -> None:
        if done and max(done) > len(MIGRATIONS):
            raise LedgerError(
                f"{self.path}: schema version {max(done)} is newer than this arena "
                f"({len(MIGRATIONS)}); upgrade the arena"
            )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (taken at once: a second writer waits, then fails clearly). A
        thread of this process that wants one while another thread's is open waits for it to end."""
        with self.lock:
            yield from self._transaction()

    def _transaction(self) -> Iterator[None]:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise LedgerError(f"{self.path}: cannot write: {explain(exc)}") from exc
        try:
            yield
        except sqlite3.DatabaseError as exc:
            self._rollback()
            raise LedgerError(f"{self.path}: cannot write: {explain(exc)}") from exc
        except BaseException:
            self._rollback()
            raise
        else:
            try:
                self.conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                # SQLite may have rolled back already (a full disk does): the commit's error is the
                # one to report.
                self._rollback()
                raise LedgerError(f"{self.path}: cannot write: {explain(exc)}") from exc

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            with contextlib.suppress(sqlite3.DatabaseError):
                self.conn.execute("ROLLBACK")

    # ------------------------------------------------------------------ tournaments and entrants

    @_guarded
    def tournament(self, spec: Registrable) -> tuple[int, bool]:
        """The tournament's id, and whether it was already in the ledger (then it is resumed)."""
        entry = self.register(spec)
        return entry.id, entry.resumed

    @_guarded
    def register(
        self, spec: Registrable, deal_key: bytes | None = None, kind: str = "tournament"
    ) -> TournamentEntry:
        """Find the tournament of this name, or make it (with ``deal_key``, or a fresh random one).

        A tournament is known by its name. Run again with a spec that differs only in fields that
        cannot change any game (concurrency, an entrant's language label, the log size), it is resumed
        and its stored spec updated; any other change raises :class:`TournamentChanged` naming the
        fields. The check and the insert are one transaction: two processes registering the same new
        tournament get the same one."""
        canonical = canonical_spec(spec)
        found = self._find(spec.name, canonical, kind)
        if found is not None and not found.changes:
            return found  # nothing to write: a read-only ledger can still be resumed from
        with self.transaction():
            found = self._find(spec.name, canonical, kind)
            if found is not None:
                self.conn.execute(
                    "UPDATE tournaments SET spec = ?, spec_hash = ? WHERE id = ?",
                    (canonical, digest(canonical), found.id),
                )
                return found
            key = deal_key if deal_key is not None else secrets.token_bytes(32)
            cur = self.conn.execute(
                "INSERT INTO tournaments (name, spec_hash, spec, variant, source, created_at, "
                "deal_key, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (spec.name, digest(canonical), canonical, spec.variant, spec.source, _now(),
                 key.hex(), kind),
            )  # fmt: skip
        return TournamentEntry(int(cur.lastrowid or 0), spec.name, False, key)

    def _find(self, name: str, canonical: str, kind: str) -> TournamentEntry | None:
        row = self.conn.execute(
            "SELECT id, spec, deal_key, kind FROM tournaments WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            return None
        tid, stored, key = int(row[0]), json.loads(row[1]), row[2]
        if row[3] != kind:
            raise LedgerError(
                f"{self.path}: {name!r} is the name of a {row[3]} in this ledger, not of a {kind}: "
                "choose another name"
            )
        changes = changed_fields(stored, json.loads(canonical))
        harmful = [f for f in changes if not harmless(f)]
        if harmful:
            anew = (
                "give the competition a new name in the file (a new competition, with a board of "
                "its own)"
                if kind == "competition"
                else "run the new file as a new tournament (arena run FILE --name NEW)"
            )
            raise TournamentChanged(
                f"{self.path}: {kind} {name!r} was started from a different file: "
                f"{', '.join(harmful)} changed, which would change its games. Put the file back as it "
                f"was to resume it, or {anew}",
                harmful,
            )
        return TournamentEntry(tid, name, True, bytes.fromhex(key) if key else None, tuple(changes))

    @_guarded
    def take_lease(self, tournament_id: int) -> None:
        """Claim the right to run this tournament, or raise :class:`LeaseHeld` saying who has it."""
        with self.transaction():
            held = leases.take(self.conn, tournament_id)
        if held is not None:
            name, kind = self._name_of(tournament_id)
            raise LeaseHeld(
                f"{self.path}: {kind} {name!r} is being run by {held.describe()}; wait for it to "
                "finish or stop it (a lease whose process is gone is taken over)"
            )

    @_guarded
    def renew_lease(self, tournament_id: int) -> None:
        with self.transaction():
            leases.renew(self.conn, tournament_id)

    @_guarded
    def release_lease(self, tournament_id: int) -> None:
        with self.transaction():
            leases.release(self.conn, tournament_id)

    def _name_of(self, tournament_id: int) -> tuple[str, str]:
        """A tournament's name and kind (tournament or competition)."""
        row = self.conn.execute(
            "SELECT name, kind FROM tournaments WHERE id = ?", (tournament_id,)
        ).fetchone()
        return (str(row[0]), str(row[1])) if row else (f"#{tournament_id}", "tournament")

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
        """Plan these games (those planned already are left as they are). A game newly planned
        leaves the tournament unfinished again (an A/B test run on with more games)."""
        with self.transaction():
            cur = self.conn.executemany(
                "INSERT OR IGNORE INTO planned_games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (tournament_id, g.key, g.ord, g.round, g.pairing, g.deal, g.rotation, g.seed,
                     json.dumps([list(s) for s in g.seats]), json.dumps(list(g.group)))
                    for g in games
                ],
            )  # fmt: skip
            if cur.rowcount > 0:
                self.conn.execute(
                    "UPDATE tournaments SET finished_at = NULL WHERE id = ? "
                    "AND finished_at IS NOT NULL",
                    (tournament_id,),
                )

    @_guarded
    def planned(self, tournament_id: int, round_: int) -> list[ScheduledGame]:
        """The games planned for one round, in canonical order."""
        rows = self.conn.execute(
            f"SELECT {PLANNED_COLUMNS} FROM planned_games "
            "WHERE tournament_id = ? AND round = ? ORDER BY ord",
            (tournament_id, round_),
        ).fetchall()
        return [planned_game(row) for row in rows]

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
        played: FinishedGame,
    ) -> int:
        """Write a finished game (its seats, record and the rating updates it unblocks) in one
        transaction; a game already recorded is left as it is."""
        encoding, schema, blob = records.encode(played.record)
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
                 game.rotation, variant, game.seed, played.outcome, played.detail, played.culprit,
                 _now()),
            )  # fmt: skip
            game_id = int(cur.lastrowid or 0)
            for side, seats in enumerate(played.sides):
                for seat in seats:
                    for member, name in enumerate(game.seats[seat]):
                        self.conn.execute(
                            "INSERT INTO game_seats VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (game_id, seat, member, entrant_ids[name], side,
                             played.ranking[side], played.scores[seat]),
                        )  # fmt: skip
            self.conn.execute(
                "INSERT INTO game_records (game_id, record, encoding, schema) VALUES (?, ?, ?, ?)",
                (game_id, blob, encoding, schema),
            )
            head_to_head.record(self.conn, game_id)
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
            "SELECT id FROM games WHERE tournament_id = ? AND rating_seq IS NULL "
            "AND ord > ? AND ord < ? ORDER BY ord",
            (tournament_id, last, limit),
        ).fetchall()
        if not ready:
            return
        seq = self.conn.execute("SELECT coalesce(max(rating_seq), 0) FROM games").fetchone()[0]
        for (game_id,) in ready:
            seq += 1
            boards.rate(self.conn, int(game_id))
            self.conn.execute("UPDATE games SET rating_seq = ? WHERE id = ?", (seq, game_id))

    @_guarded
    def void_games(
        self,
        tournament_id: int,
        reason: str,
        game_ids: Sequence[int] = (),
        outcomes: Sequence[str] = (),
    ) -> list[str]:
        """Take games out of a tournament's results: the chosen ids, or every game with one of these
        outcomes, or (neither given) all of its games. Their records move to ``voided_games``; the
        games after them in the schedule wait to be rated again, every board is rebuilt, and a later
        run plays the voided games again. Returns the voided games' keys."""
        where = ["tournament_id = ?"]
        args: list[Any] = [tournament_id]
        if game_ids:
            # An id SQLite cannot hold is no game: it is reported missing below.
            known = [i for i in game_ids if fits(i)]
            where.append(f"id IN ({', '.join('?' * len(known))})")
            args.extend(known)
        if outcomes:
            where.append(f"outcome IN ({', '.join('?' * len(outcomes))})")
            args.extend(outcomes)
        with self.transaction():
            rows = self.conn.execute(
                f"SELECT id, key, ord, variant, outcome, detail, finished_at FROM games "
                f"WHERE {' AND '.join(where)} ORDER BY ord",
                args,
            ).fetchall()
            if game_ids:
                found = {r[0] for r in rows}
                missing = [i for i in game_ids if i not in found]
                if missing:
                    raise LedgerError(
                        f"{self.path}: no game {', '.join(map(str, missing))} in tournament "
                        f"{self._name_of(tournament_id)[0]!r}"
                    )
            if not rows:
                return []
            now = _now()
            for game_id, key, _ord, variant, outcome, detail, finished in rows:
                players = self.conn.execute(
                    "SELECT group_concat(e.name || ':' || s.score, ' ') FROM game_seats s "
                    "JOIN entrants e ON e.id = s.entrant_id WHERE s.game_id = ?",
                    (game_id,),
                ).fetchone()[0]
                rec = self.conn.execute(
                    "SELECT encoding, record FROM game_records WHERE game_id = ?", (game_id,)
                ).fetchone()
                self.conn.execute(
                    "INSERT INTO voided_games (tournament_id, key, variant, outcome, detail, players, "
                    "finished_at, reason, voided_at, encoding, record) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (tournament_id, key, variant, outcome, detail, players or "", finished, reason,
                     now, rec[0] if rec else "json", rec[1] if rec else "{}"),
                )  # fmt: skip
                for table in ("rating_history", "game_records", "game_seats", "seat_reports"):
                    self.conn.execute(f"DELETE FROM {table} WHERE game_id = ?", (game_id,))
                self.conn.execute("DELETE FROM games WHERE id = ?", (game_id,))
            first = rows[0][2]
            self.conn.execute(
                "UPDATE games SET rating_seq = NULL WHERE tournament_id = ? AND ord > ?",
                (tournament_id, first),
            )
            self.conn.execute(
                "UPDATE tournaments SET finished_at = NULL WHERE id = ?", (tournament_id,)
            )
            boards.rebuild(self.conn)
            head_to_head.rebuild(self.conn, tournament_id)
            self._rate_ready(tournament_id)
        return [r[1] for r in rows]

    # ------------------------------------------------------------------ queries

    @_guarded
    def rebuild_ratings(self) -> float:
        """Recompute every board from the games, in rating order; rewrite them and return the largest
        difference from the numbers stored before (0.0 when the ledger was consistent)."""
        with self.transaction():
            return boards.rebuild(self.conn)

    @_guarded
    def check_ratings(self) -> float:
        """What :meth:`rebuild_ratings` would return, writing nothing (a read-only ledger too): the
        boards are rebuilt in a copy of the ledger in memory."""
        copy = sqlite3.connect(":memory:")
        try:
            self.conn.backup(copy)
            copy.execute("BEGIN")
            return boards.rebuild(copy)
        finally:
            copy.close()
