"""A standing competition's leaderboard as its authors and its submission service read it: the
versions in play ranked, those out of play listed apart, each with when it last played and the places it
gained over the last 24 hours. A part of :class:`arena.ledger.competitions.Competitions`."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from arena.ledger.errors import guarded as _guarded
from arena.ledger.leaderboard import IN_PLAY, competition_board, placings
from arena.ledger.times import stamp


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
# A game is recorded within this long of finishing (its match's other games, a busy ledger): reading
# the history back from the newest, the games recorded this long before the cut-off end the read.
RECORDED_WITHIN = timedelta(hours=1)


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
        found = placings(self.conn, board, competition_id=competition_id)
        last = last_played(self.conn, [p.entrant_id for p in found])
        # Read by arena.ledger.leaderboard.placings, as every leaderboard is.
        lines = [
            BoardLine(
                p.rank, p.name, p.version, p.author, p.exposed, p.mu, p.sigma, p.games, p.status,
                p.entrant_id, p.language, p.status == IN_PLAY, last.get(p.entrant_id) or "",
            )
            for p in found
        ]  # fmt: skip
        in_play = [r for r in lines if r.in_play]
        cutoff = (now or datetime.now(UTC)) - RANK_CHANGE_OVER
        then = ranks_at(self.conn, board, [r.entrant_id for r in in_play], cutoff) if board else {}
        return [
            replace(r, rank_change=then[r.entrant_id] - r.rank if r.entrant_id in then else None)
            if r.in_play
            else r
            for r in lines
        ]


def last_played(conn: sqlite3.Connection, entrants: list[int]) -> dict[int, str]:
    """When each of ``entrants`` finished its last game: that of its seat recorded last (a
    competition's entrant plays in that competition alone), one index lookup each, never a scan
    of the competition's games."""
    out = {}
    for entrant in entrants:
        row = conn.execute(
            "SELECT g.finished_at FROM games g WHERE g.id = (SELECT game_id FROM game_seats "
            "WHERE entrant_id = ? ORDER BY rowid DESC LIMIT 1)",
            (entrant,),
        ).fetchone()
        if row is not None:
            out[entrant] = row[0]
    return out


def ranks_at(
    conn: sqlite3.Connection, board: int, entrants: list[int], cutoff: datetime
) -> dict[int, int]:
    """The ranks ``entrants`` held among themselves by their ratings on the competition's board
    ``board`` as they stood before the first game rated that finished at or after ``cutoff``
    (those rated by then).

    Read backwards from the ratings now: an entrant's rating then is the one before its first
    game rated since (``mu_before``), or its rating now when it has played none since; one
    whose every game is since was not rated then. Only the board's history since ``cutoff`` is
    read (newest first by game id, until games recorded :data:`RECORDED_WITHIN` before it), not
    the whole history: its cost follows the last day's games, not the competition's."""
    if not entrants:
        return {}
    wanted = set(entrants)
    stop = stamp(cutoff, ago=RECORDED_WITHIN)
    since = stamp(cutoff)
    first: dict[int, tuple[int, float, float]] = {}  # rating_seq, mu and sigma before
    count: dict[int, int] = {}  # games rated since
    rows = conn.execute(
        "SELECT h.entrant_id, h.mu_before, h.sigma_before, g.rating_seq, g.finished_at "
        "FROM rating_history h JOIN games g ON g.id = h.game_id "
        "WHERE h.board_id = ? ORDER BY h.game_id DESC",
        (board,),
    )
    for entrant, mu, sigma, seq, finished in rows:
        if finished < stop:
            break
        if finished < since or seq is None or entrant not in wanted:
            continue
        count[entrant] = count.get(entrant, 0) + 1
        if entrant not in first or seq < first[entrant][0]:
            first[entrant] = (seq, mu, sigma)
    marks = ", ".join("?" * len(wanted))
    now = conn.execute(
        f"SELECT entrant_id, mu, sigma, games FROM ratings WHERE board_id = ? "
        f"AND entrant_id IN ({marks})",
        (board, *wanted),
    ).fetchall()
    exposed: dict[int, float] = {}
    for entrant, mu, sigma, games in now:
        if count.get(entrant, 0) >= games:
            continue  # every game it has is since: not rated then
        if entrant in first:
            _, mu, sigma = first[entrant]
        exposed[entrant] = mu - 3 * sigma
    order = sorted(exposed, key=lambda e: (-exposed[e], e))
    return {entrant: rank for rank, entrant in enumerate(order, start=1)}


def in_play(conn: sqlite3.Connection, competition_id: int) -> list[int]:
    """The entrants of a competition's versions in play (those its board ranks)."""
    rows = conn.execute(
        "SELECT entrant_id FROM submissions WHERE competition_id = ? AND status = ? "
        "AND entrant_id IS NOT NULL",
        (competition_id, IN_PLAY),
    )
    return [int(r[0]) for r in rows]


def page_recent(
    conn: sqlite3.Connection,
    board: int,
    competition_id: int,
    shown: list[tuple[int, int | None]],
    now: datetime | None = None,
) -> dict[int, tuple[str, int | None]]:
    """For a page of a competition's board (``shown``: each line's entrant and rank, None for a
    version out of play), what :meth:`CompetitionBoard.board` gives each line: when it last played
    ("" never) and the places it gained over the last 24 hours (None: out of play, or not rated
    then), read as the board reads them. The last games are looked up for the page's lines alone;
    the ranks then, among the versions in play, from the board's last day of history."""
    last = last_played(conn, [entrant for entrant, _ in shown])
    ranked = [(entrant, rank) for entrant, rank in shown if rank is not None]
    then: dict[int, int] = {}
    if ranked:
        cutoff = (now or datetime.now(UTC)) - RANK_CHANGE_OVER
        then = ranks_at(conn, board, in_play(conn, competition_id), cutoff)
    changes = {e: then[e] - rank for e, rank in ranked if e in then}
    return {entrant: (last.get(entrant) or "", changes.get(entrant)) for entrant, _ in shown}
