"""The leaderboard query: one board's entrants by mu - 3 sigma, with their names, versions, languages,
ratings and games, and for a competition's entrant the author and status of the submission it plays as.

It is the one read of a leaderboard, shared by ``arena leaderboard`` (:meth:`arena.ledger.Ledger.leaderboard`),
a standing competition (:meth:`arena.ledger.competitions.Competitions.board`: ``arena compete
leaderboard`` and the submission service) and the web pages (:func:`arena.web.queries.leaderboard`), so
that the three always list the same entrants in the same order.

When the competition is named, its versions in play that have no game yet are listed too (at the
initial rating, with no game), and the versions out of play (withdrawn, replaced, suspended) come after
those in play, unranked.
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from arena.ledger.boards import COMPETITION
from arena.rating import initial as rating_initial


class Placing(NamedTuple):
    """One entrant's line on a leaderboard (a tuple: a board may have thousands, each made in a
    fraction of a frozen dataclass's time)."""

    rank: int  # 1 for the highest mu - 3 sigma; 0 for a competition's version out of play
    entrant_id: int
    name: str
    version: str
    language: str
    author: str  # the author of the competition submission it plays as; "" for a tournament file's
    status: str  # that submission's status (active, replaced, suspended, withdrawn); "" likewise
    mu: float
    sigma: float
    exposed: float
    games: int


def _submission(what: str) -> str:
    """SQL for ``what`` of the submission entrant ``e`` plays as on board ``b`` (``s``: the
    submission, ``a``: its author): its latest, on a competition's board the one of that competition;
    '' for an entrant of a tournament file."""
    return (
        f"coalesce((SELECT {what} FROM submissions s JOIN authors a ON a.id = s.author_id "
        "WHERE s.entrant_id = e.id "
        f"AND (b.kind != '{COMPETITION}' OR s.competition_id = b.tournament_id) "
        "ORDER BY s.id DESC LIMIT 1), '')"
    )


_RATED = f"""
SELECT e.id AS id, e.name AS name, e.version AS version, e.language, {_submission("a.name")} AS author,
    {_submission("s.status")} AS status, r.mu, r.sigma, r.exposed AS exposed, r.games
FROM ratings r JOIN boards b ON b.id = r.board_id JOIN entrants e ON e.id = r.entrant_id
WHERE r.board_id = ?
"""

# A competition's versions in play with no rating on its board yet (none at all before its first game).
_UNPLAYED = """
SELECT e.id, e.name, e.version, e.language, a.name AS author, s.status,
    ? AS mu, ? AS sigma, ? AS exposed, 0 AS games
FROM submissions s JOIN entrants e ON e.id = s.entrant_id JOIN authors a ON a.id = s.author_id
WHERE s.competition_id = ? AND s.status = 'active'
    AND s.entrant_id NOT IN (SELECT entrant_id FROM ratings WHERE board_id = ?)
"""

# By mu - 3 sigma, then name and version (the id only orders entrants alike in all three). The
# rated part alone is ordered by its tables' columns: ordered outside a subquery instead, the
# submission lookups cost four times the query.
IN_PLAY = "active"  # a competition submission's status while it plays
_STATUS = 5  # the status's column in a line's row

_ORDER_RATED = " ORDER BY r.exposed DESC, e.name, e.version, e.id"
_ORDER = " ORDER BY exposed DESC, name, version, id"  # of the union, by its columns' names


def placings(
    conn: sqlite3.Connection, board_id: int | None, *, competition_id: int | None = None
) -> list[Placing]:
    """Board ``board_id``'s entrants by mu - 3 sigma (then name, version), ranked from 1; with
    ``competition_id``, also that competition's active versions not yet rated on the board (a
    competition before its first game has no board: ``board_id`` None), and its versions out of play
    after those in play, with rank 0."""
    if competition_id is None:
        rows = conn.execute(_RATED + _ORDER_RATED, (board_id,)).fetchall()
    else:
        start = rating_initial()
        rows = conn.execute(
            f"{_RATED} UNION ALL {_UNPLAYED}{_ORDER}",
            (board_id, start.mu, start.sigma, start.exposed, competition_id, board_id),
        ).fetchall()
    if competition_id is None:
        return [Placing(rank, *row) for rank, row in enumerate(rows, start=1)]
    # A competition's versions in play ranked; those out of play (withdrawn, replaced, suspended)
    # after them, unranked (0), with their last rating.
    rows.sort(key=lambda row: row[_STATUS] != IN_PLAY)  # stable: each part stays by rating
    out, ranked = [], 0
    for row in rows:
        in_play = row[_STATUS] == IN_PLAY
        ranked += in_play
        out.append(Placing(ranked if in_play else 0, *row))
    return out


def competition_board(conn: sqlite3.Connection, competition_id: int) -> int | None:
    """The id of a competition's board, None before its first game is rated."""
    row = conn.execute(
        "SELECT id FROM boards WHERE kind = ? AND tournament_id = ?", (COMPETITION, competition_id)
    ).fetchone()
    return int(row[0]) if row else None
