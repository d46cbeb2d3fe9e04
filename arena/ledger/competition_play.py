"""What a standing competition's matchmaker and play loop read and write in the ledger: its pause
switch, its entrants' standings, the failures they caused, and the planned games of its pairings. A
part of :class:`arena.ledger.competitions.Competitions`."""

from __future__ import annotations

import sqlite3
import threading

from arena.ledger.boards import COMPETITION
from arena.ledger.db import PLANNED_COLUMNS, Ledger, _now, planned_game
from arena.ledger.errors import guarded as _guarded
from arena.ledger.rows import ScheduledGame


class CompetitionPlay:
    """The matchmaking reads and writes of :class:`arena.ledger.competitions.Competitions`."""

    ledger: Ledger
    conn: sqlite3.Connection
    path: str
    lock: threading.RLock

    @_guarded
    def paused(self, competition_id: int) -> bool:
        row = self.conn.execute(
            "SELECT paused FROM competition_state WHERE competition_id = ?", (competition_id,)
        ).fetchone()
        return bool(row and row[0])

    @_guarded
    def set_paused(self, competition_id: int, paused: bool) -> None:
        with self.ledger.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO competition_state VALUES (?, ?, ?)",
                (competition_id, int(paused), _now()),
            )

    @_guarded
    def standings(self, competition_id: int) -> dict[int, tuple[float, float, int, int]]:
        """Per entrant on the competition's board: (mu, sigma, games, order of its last game). Read
        from the board and, per entrant, its last seat (an index step each): no pass over the
        games, which took 8.6 s at a million."""
        out = {}
        for entrant, mu, sigma, games in self.conn.execute(
            "SELECT r.entrant_id, r.mu, r.sigma, r.games FROM ratings r JOIN boards b "
            "ON b.id = r.board_id WHERE b.kind = ? AND b.tournament_id = ?",
            (COMPETITION, competition_id),
        ):
            out[int(entrant)] = (float(mu), float(sigma), int(games), -1)
        for entrant, (mu, sigma, games, _) in out.items():
            out[entrant] = (mu, sigma, games, self._last_order(competition_id, entrant))
        return out

    def _last_order(self, competition_id: int, entrant_id: int) -> int:
        """The order of the entrant's last game in the competition (-1: none): its last seat row
        is that game's, unless the same program also played elsewhere (then its games are read)."""
        row = self.conn.execute(
            "SELECT g.ord, g.tournament_id FROM game_seats s JOIN games g ON g.id = s.game_id "
            "WHERE s.rowid = (SELECT max(rowid) FROM game_seats WHERE entrant_id = ?)",
            (entrant_id,),
        ).fetchone()
        if row is None:
            return -1
        if row[1] == competition_id:
            return int(row[0])
        row = self.conn.execute(
            "SELECT max(g.ord) FROM game_seats s JOIN games g ON g.id = s.game_id "
            "WHERE s.entrant_id = ? AND g.tournament_id = ?",
            (entrant_id, competition_id),
        ).fetchone()
        return -1 if row[0] is None else int(row[0])

    def _rated(
        self, competition_id: int, after: int, upto: int
    ) -> dict[int, tuple[float, float, int, int]]:
        """The standings of the entrants whose games were rated after ``after`` up to ``upto``."""
        last: dict[int, int] = {}
        for entrant, order in self.conn.execute(
            "SELECT s.entrant_id, g.ord FROM games g JOIN game_seats s ON s.game_id = g.id "
            # "+": by the rating order's index (what was rated since), never by the competition's
            # (every game it holds: 0.5 s at a million).
            "WHERE g.rating_seq > ? AND g.rating_seq <= ? AND +g.tournament_id = ?",
            (after, upto, competition_id),
        ):
            last[int(entrant)] = max(last.get(int(entrant), -1), int(order))
        if not last:
            return {}
        board = self.conn.execute(
            "SELECT id FROM boards WHERE kind = ? AND tournament_id = ?",
            (COMPETITION, competition_id),
        ).fetchone()
        out = {}
        ids = sorted(last)
        for start in range(0, len(ids), 500):  # within SQLite's count of bound values
            chunk = ids[start : start + 500]
            for entrant, mu, sigma, games in self.conn.execute(
                "SELECT entrant_id, mu, sigma, games FROM ratings WHERE board_id = ? "
                f"AND entrant_id IN ({', '.join('?' * len(chunk))})",
                (board[0] if board else -1, *chunk),
            ):
                out[int(entrant)] = (float(mu), float(sigma), int(games), last[int(entrant)])
        return out

    @_guarded
    def failures(self, competition_id: int, entrant_id: int, window: int) -> tuple[int, int]:
        """Of the entrant's last ``window`` games: how many it caused to fail, and how many there were."""
        rows = self.conn.execute(
            "SELECT g.outcome, g.culprit, s.seat FROM games g JOIN game_seats s ON s.game_id = g.id "
            "WHERE g.tournament_id = ? AND s.entrant_id = ? ORDER BY g.ord DESC LIMIT ?",
            (competition_id, entrant_id, window),
        ).fetchall()
        caused = sum(
            1 for outcome, culprit, seat in rows if outcome != "normal" and culprit == seat
        )
        return caused, len(rows)

    @_guarded
    def last_failure(self, competition_id: int, entrant_id: int) -> str:
        """The last game the entrant caused to fail: its outcome and why (empty when none)."""
        row = self.conn.execute(
            "SELECT g.outcome, g.detail FROM games g JOIN game_seats s ON s.game_id = g.id "
            "WHERE g.tournament_id = ? AND s.entrant_id = ? AND g.outcome != 'normal' "
            "AND g.culprit = s.seat ORDER BY g.ord DESC LIMIT 1",
            (competition_id, entrant_id),
        ).fetchone()
        return f"{row[0]}: {row[1]}" if row else ""

    @_guarded
    def next_ord(self, competition_id: int) -> int:
        row = self.conn.execute(
            "SELECT coalesce(max(ord), -1) FROM planned_games WHERE tournament_id = ?",
            (competition_id,),
        ).fetchone()
        return int(row[0]) + 1

    @_guarded
    def unplan_unplayed(
        self, competition_id: int, keys: tuple[str, ...] = (), *, keep_begun: bool = False
    ) -> int:
        """Forget planned games that were never recorded (all of them, or these keys): a competition
        that stopped mid-game pairs afresh, and the games after them can be rated. With
        ``keep_begun`` the rest of a pairing begun (a deal played in some of its seat rotations)
        stays planned, for :meth:`begun_pairings` to finish."""
        where = f"AND key IN ({', '.join('?' * len(keys))})" if keys else ""
        if keep_begun:
            where += (
                " AND NOT EXISTS (SELECT 1 FROM games g WHERE g.tournament_id = "
                "planned_games.tournament_id AND g.pairing = planned_games.pairing)"
            )
        with self.ledger.transaction():
            cur = self.conn.execute(
                "DELETE FROM planned_games WHERE tournament_id = ? AND NOT EXISTS "
                "(SELECT 1 FROM games g WHERE g.tournament_id = planned_games.tournament_id "
                f"AND g.key = planned_games.key) {where}",
                (competition_id, *keys),
            )
            self.ledger._rate_ready(competition_id)
        return int(cur.rowcount)

    @_guarded
    def begun_pairings(
        self, competition_id: int
    ) -> list[tuple[list[ScheduledGame], dict[str, int]]]:
        """The rest of every pairing a stop cut short: its planned games never recorded, in order,
        with the entrant that played under each name in its recorded games."""
        rows = self.conn.execute(
            f"SELECT {PLANNED_COLUMNS} FROM planned_games p WHERE p.tournament_id = ? "
            "AND NOT EXISTS (SELECT 1 FROM games g WHERE g.tournament_id = p.tournament_id "
            "AND g.key = p.key) AND EXISTS (SELECT 1 FROM games g WHERE g.tournament_id = "
            "p.tournament_id AND g.pairing = p.pairing) ORDER BY p.ord",
            (competition_id,),
        ).fetchall()
        pairings: dict[int, list[ScheduledGame]] = {}
        for row in rows:
            game = planned_game(row)
            pairings.setdefault(game.pairing, []).append(game)
        out = []
        for pairing, games in pairings.items():
            played = self.conn.execute(
                "SELECT DISTINCT e.name, e.id FROM games g JOIN game_seats s ON s.game_id = g.id "
                "JOIN entrants e ON e.id = s.entrant_id "
                "WHERE g.tournament_id = ? AND g.pairing = ?",
                (competition_id, pairing),
            ).fetchall()
            out.append((games, {str(name): int(entrant) for name, entrant in played}))
        return out
