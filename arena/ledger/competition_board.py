"""A standing competition's leaderboard as its authors and its submission service read it: the
versions in play ranked, those out of play listed apart, each with when it last played and the places it
gained over the last 24 hours. A part of :class:`arena.ledger.competitions.Competitions`."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from arena.ledger.boards import COMPETITION
from arena.ledger.errors import guarded as _guarded
from arena.ledger.leaderboard import IN_PLAY, competition_board, placings


@dataclass(frozen=True, slots=True)
class BoardLine:
    rank: int
    bot: str
    version: str
    author: str
    exposed: float
    mu: float
    sigma: float
    games: int
    status: str
    entrant_id: int
    language: str = ""  # its manifest's (python, cpp, binary...) or a remote entrant's label
    in_play: bool = True  # ranked; else withdrawn, replaced or suspended: listed apart (rank 0)
    last_played: str = ""  # when it last finished a game ("" never)
    rank_change: int | None = None  # places gained over the last 24 hours (None: not ranked then)


# A rank's change is measured over this long (ISO times compare as text in the ledger's one zone).
RANK_CHANGE_OVER = timedelta(hours=24)


class CompetitionBoard:
    """The leaderboard reads of :class:`arena.ledger.competitions.Competitions`."""

    conn: sqlite3.Connection
    path: str

    @_guarded
    def board(self, competition_id: int, now: datetime | None = None) -> list[BoardLine]:
        """The competition's leaderboard by mu - 3 sigma: the versions in play ranked (one with no
        game yet at the initial rating), then those out of play (suspended, withdrawn, replaced)
        apart, unranked, with their last rating. Each with its author, status, when it last played
        and the places it gained over the last 24 hours among the versions in play (by their
        ratings then; None for one not rated then)."""
        board = competition_board(self.conn, competition_id)
        last = dict(
            self.conn.execute(
                "SELECT gs.entrant_id, max(g.finished_at) FROM game_seats gs "
                "JOIN games g ON g.id = gs.game_id WHERE g.tournament_id = ? GROUP BY gs.entrant_id",
                (competition_id,),
            ).fetchall()
        )
        # Read by arena.ledger.leaderboard.placings, as every leaderboard is.
        lines = [
            BoardLine(
                p.rank, p.name, p.version, p.author, p.exposed, p.mu, p.sigma, p.games, p.status,
                p.entrant_id, p.language, p.status == IN_PLAY, last.get(p.entrant_id) or "",
            )
            for p in placings(self.conn, board, competition_id=competition_id)
        ]  # fmt: skip
        in_play = [r for r in lines if r.in_play]
        cutoff = ((now or datetime.now(UTC)) - RANK_CHANGE_OVER).isoformat(timespec="seconds")
        then = self._ranks_at(competition_id, [r.entrant_id for r in in_play], cutoff)
        return [
            replace(r, rank_change=then[r.entrant_id] - r.rank if r.entrant_id in then else None)
            if r.in_play
            else r
            for r in lines
        ]

    def _ranks_at(self, competition_id: int, entrants: list[int], cutoff: str) -> dict[int, int]:
        """The ranks ``entrants`` held among themselves by their ratings on the competition's board
        after the last game rated that finished before ``cutoff`` (those rated by then)."""
        if not entrants:
            return {}
        marks = ", ".join("?" * len(entrants))
        rows = self.conn.execute(
            "SELECT h.entrant_id, h.mu_after, h.sigma_after, g.rating_seq FROM rating_history h "
            "JOIN boards b ON b.id = h.board_id AND b.kind = ? AND b.tournament_id = ? "
            "JOIN games g ON g.id = h.game_id "
            f"WHERE h.entrant_id IN ({marks}) AND g.finished_at < ? AND g.rating_seq IS NOT NULL",
            (COMPETITION, competition_id, *entrants, cutoff),
        ).fetchall()
        latest: dict[int, tuple[int, float]] = {}
        for entrant, mu, sigma, seq in rows:
            if entrant not in latest or seq > latest[entrant][0]:
                latest[entrant] = (seq, mu - 3 * sigma)
        order = sorted(latest, key=lambda e: -latest[e][1])
        return {entrant: rank for rank, entrant in enumerate(order, start=1)}
