"""The ledger's read side: tournaments, boards, leaderboards, games and their records."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from arena.ledger import boards, records
from arena.ledger.errors import LedgerError
from arena.ledger.errors import guarded as _guarded
from arena.ledger.leaderboard import placings

# The largest integer SQLite stores: an id or a count beyond it names nothing in the ledger (and
# binding it would raise OverflowError, not a LedgerError).
INT_MAX = 2**63 - 1


def fits(number: int) -> bool:
    """Whether ``number`` can be an integer in the ledger (an id, a count)."""
    return -INT_MAX - 1 <= number <= INT_MAX


@dataclass(frozen=True, slots=True)
class BoardRow:
    entrant: str
    version: str
    variant: str
    mu: float
    sigma: float
    exposed: float
    games: int
    entrant_id: int = 0


@dataclass(frozen=True, slots=True)
class BoardInfo:
    id: int
    kind: str  # "tournament", "pooled" or "competition"
    name: str
    variant: str
    entrants: int
    games: int


@dataclass(frozen=True, slots=True)
class TournamentInfo:
    id: int
    name: str
    variant: str
    source: str
    created_at: str
    finished_at: str | None
    planned: int
    played: int
    failures: int
    voided: int
    kind: str = "tournament"


class Queries:
    """Read-only queries, shared by :class:`arena.ledger.Ledger`."""

    path: str
    conn: sqlite3.Connection

    def _rows(self, sql: str, args: list[Any]) -> list[dict[str, Any]]:
        """The rows of a query as dictionaries by column name. (sqlite-utils' ``Database.query``
        does the same; importing it costs every command that opens the ledger some 70 ms.)"""
        cursor = self.conn.execute(sql, args)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    @_guarded
    def find_tournament(self, name_or_id: str) -> TournamentInfo:
        """A tournament by its name (or its id), or a LedgerError listing the names there are. When
        the text is one tournament's name and another's id (a tournament named "2"), it is refused as
        ambiguous rather than resolved to either: the caller may be about to void its games."""
        known = self.tournaments()
        named = [t for t in known if t.name == name_or_id]
        numbered = [t for t in known if str(t.id) == name_or_id]
        if named and numbered and named[0].id != numbered[0].id:
            n, i = named[0], numbered[0]
            raise LedgerError(
                f"{self.path}: {name_or_id!r} is both the name of tournament #{n.id} and the id of "
                f"tournament {i.name!r}: give the first by its id ({n.id}) or the second by its "
                f"name ({i.name!r})"
            )
        if named or numbered:
            return (named or numbered)[0]
        names = ", ".join(repr(t.name) for t in known) or "none yet"
        raise LedgerError(f"{self.path}: no tournament {name_or_id!r} (tournaments: {names})")

    @_guarded
    def finished(self, name: str) -> bool:
        """Whether the tournament of this name has played every planned game (False: unknown)."""
        row = self.conn.execute(
            "SELECT finished_at FROM tournaments WHERE name = ?", (name,)
        ).fetchone()
        return row is not None and row[0] is not None

    @_guarded
    def tournaments(self) -> list[TournamentInfo]:
        rows = self.conn.execute(
            # The counts kept as games come and go (event_counts, migration 15): a row each.
            "SELECT t.id, t.name, t.variant, t.source, t.created_at, t.finished_at, "
            "coalesce(c.planned, 0), coalesce(c.played, 0), coalesce(c.failures, 0), "
            "coalesce(c.voided, 0), t.kind "
            "FROM tournaments t LEFT JOIN event_counts c ON c.tournament_id = t.id ORDER BY t.id"
        ).fetchall()
        return [TournamentInfo(*r) for r in rows]

    @_guarded
    def board(self, kind: str, name: str) -> BoardInfo | None:
        for b in self.boards():
            if b.kind == kind and b.name == name:
                return b
        return None

    @_guarded
    def boards(self) -> list[BoardInfo]:
        rows = self.conn.execute(
            "SELECT b.id, b.kind, b.name, b.variant, count(r.entrant_id), "
            "coalesce(sum(r.games), 0) FROM boards b LEFT JOIN ratings r ON r.board_id = b.id "
            "GROUP BY b.id ORDER BY b.kind, b.id"
        ).fetchall()
        return [BoardInfo(*r) for r in rows]

    @_guarded
    def leaderboard(
        self, variant: str | None = None, *, tournament: str | None = None
    ) -> list[BoardRow]:
        """A board by mu - 3 sigma: a tournament's own (a standing competition's, given its name), or
        (given a variant) the pooled board of every tournament of that variant. Its entrants rated on
        it (:func:`arena.ledger.leaderboard.placings`, the query every leaderboard is read by)."""
        if (variant is None) == (tournament is None):
            raise ValueError("give a variant (the pooled board) or a tournament's name")
        kinds, name = (
            ((boards.TOURNAMENT, boards.COMPETITION), tournament)
            if tournament is not None
            else ((boards.POOLED, boards.POOLED), variant)
        )
        found = self.conn.execute(
            "SELECT id, variant FROM boards WHERE kind IN (?, ?) AND name = ? ORDER BY id LIMIT 1",
            (*kinds, name),
        ).fetchone()
        if found is None:
            return []
        variant_of_board = found[1]
        return [
            BoardRow(name, version, variant_of_board, mu, sigma, exposed, games, entrant_id)
            for _, entrant_id, name, version, _, _, _, mu, sigma, exposed, games in placings(
                self.conn, found[0]
            )
        ]

    @_guarded
    def variants(self) -> list[str]:
        """Variants with a pooled board."""
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT b.name FROM boards b JOIN ratings r ON r.board_id = b.id "
                "WHERE b.kind = ? ORDER BY b.name",
                (boards.POOLED,),
            )
        ]

    @_guarded
    def games(
        self, tournament_id: int | None = None, limit: int = 50, outcome: str | None = None
    ) -> list[dict[str, Any]]:
        where: list[str] = []
        args: list[Any] = []
        if tournament_id is not None:
            where.append("g.tournament_id = ?")
            args.append(tournament_id)
        if outcome is not None:
            where.append("g.outcome = ?")
            args.append(outcome)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._rows(
            "SELECT g.id, t.name AS tournament, g.key, g.variant, g.outcome, g.detail, g.finished_at, "
            "(SELECT group_concat(e.name || ':' || s.score, ' ') FROM game_seats s "
            " JOIN entrants e ON e.id = s.entrant_id WHERE s.game_id = g.id) AS players "
            f"FROM games g JOIN tournaments t ON t.id = g.tournament_id {clause} "
            "ORDER BY g.id DESC LIMIT ?",
            [*args, limit if fits(limit) else -1],  # more than SQLite counts: no limit
        )
        return rows

    @_guarded
    def game_record(self, game_id: int) -> dict[str, Any]:
        row = (
            self.conn.execute(
                "SELECT encoding, record FROM game_records WHERE game_id = ?", (game_id,)
            ).fetchone()
            if fits(game_id)
            else None
        )
        if row is None:
            raise LedgerError(f"{self.path}: no game {game_id}")
        try:
            return records.decode(row[0], row[1])
        except records.RecordError as exc:
            raise LedgerError(f"{self.path}: game {game_id}: {exc}") from exc

    @_guarded
    def recorded(self, tournament_id: int, key: str) -> dict[str, Any] | None:
        """The record of a tournament's game by its key; None while it is not recorded."""
        row = self.conn.execute(
            "SELECT g.id FROM games g WHERE g.tournament_id = ? AND g.key = ?",
            (tournament_id, key),
        ).fetchone()
        return None if row is None else self.game_record(int(row[0]))

    @_guarded
    def seat_rows(self, tournament_id: int) -> list[dict[str, Any]]:
        """Every seat of every game of a tournament, with the game's key parts, for summaries."""
        return self._rows(
            "SELECT g.id AS game_id, g.key, g.pairing, g.deal, g.rotation, g.outcome, g.culprit, "
            "s.seat, s.side, s.place, s.score, e.name AS entrant FROM games g "
            "JOIN game_seats s ON s.game_id = g.id JOIN entrants e ON e.id = s.entrant_id "
            "WHERE g.tournament_id = ? ORDER BY g.ord, s.seat, s.member",
            [tournament_id],
        )

    @_guarded
    def export_rows(self, what: str, tournament_id: int | None = None) -> list[dict[str, Any]]:
        """Rows for ``arena export``: ``games`` (one per seat of each game), ``records`` (each game's
        full match record) or ``ratings`` (one per entrant and board); all, or one tournament's."""
        tid = tournament_id
        where, args = ("WHERE g.tournament_id = ?", [tid]) if tid is not None else ("", [])
        if what == "games":
            return self._rows(
                "SELECT g.id AS game_id, t.name AS tournament, g.key, g.variant, g.seed, "
                "g.outcome, g.detail, s.seat, s.member, e.name AS entrant, e.version, s.side, "
                "s.place, s.score FROM games g JOIN tournaments t ON t.id = g.tournament_id "
                "JOIN game_seats s ON s.game_id = g.id JOIN entrants e ON e.id = s.entrant_id "
                f"{where} ORDER BY g.id, s.seat, s.member",
                args,
            )
        if what == "records":
            ids = [
                r["id"] for r in self._rows(f"SELECT g.id FROM games g {where} ORDER BY g.id", args)
            ]
            return [{"game_id": i, "record": self.game_record(i)} for i in ids]
        if what != "ratings":
            raise ValueError(f"export games, records or ratings, not {what!r}")
        board_where, board_args = (
            ("WHERE b.tournament_id = ?", [tid]) if tid is not None else ("", [])
        )
        return self._rows(
            "SELECT b.kind AS board_kind, b.name AS board, b.variant, e.name AS entrant, "
            "e.version, r.mu, r.sigma, r.exposed, r.games FROM ratings r "
            "JOIN boards b ON b.id = r.board_id JOIN entrants e ON e.id = r.entrant_id "
            f"{board_where} ORDER BY b.kind DESC, b.id, r.exposed DESC",
            board_args,
        )

    # ------------------------------------------------------------------ rebuild
