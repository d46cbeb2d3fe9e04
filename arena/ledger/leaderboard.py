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


def _lines(competition_id: int | None, out: bool = True) -> str:
    """SQL of a board's lines (``:board``; with ``:competition``, its active versions not yet rated
    too), unranked and unordered, with only the columns the order and a page need; with ``out``, the
    column ``out``: 1 for a competition's version out of play (0 in a tournament)."""
    if competition_id is None:
        return (
            "SELECT e.id, e.name, e.version, e.language, r.mu, r.sigma, r.exposed, r.games"
            + (", 0 AS out" if out else "")
            + " FROM ratings r JOIN entrants e ON e.id = r.entrant_id WHERE r.board_id = :board"
        )
    # A version is out of play when the latest submission it plays as in the competition is not
    # active: listed after those in play, unranked, as placings lists it.
    flag = (
        ", coalesce((SELECT s.status != 'active' FROM submissions s WHERE s.entrant_id = e.id "
        "AND s.competition_id = :competition ORDER BY s.id DESC LIMIT 1), 0) AS out"
        if out
        else ""
    )
    return (
        f"SELECT e.id, e.name, e.version, e.language, r.mu, r.sigma, r.exposed, r.games{flag} "
        "FROM ratings r JOIN entrants e ON e.id = r.entrant_id WHERE r.board_id = :board"
        " UNION ALL SELECT e.id, e.name, e.version, e.language, :mu, :sigma, :exposed, 0"
        + (", 0" if out else "")
        + " FROM submissions s JOIN entrants e ON e.id = s.entrant_id "
        "WHERE s.competition_id = :competition AND s.status = 'active' "
        "AND s.entrant_id NOT IN (SELECT entrant_id FROM ratings WHERE board_id = :board)"
    )


def _ranked(competition_id: int | None) -> str:
    """SQL ranking a board's lines (:func:`_lines`) in :func:`placings`' order: the rank (0 for a
    competition's version out of play) and ``line``, the line's place on the whole board from 1."""
    if competition_id is None:
        return (
            "SELECT *, row_number() OVER (ORDER BY exposed DESC, name, version, id) AS rank, "
            "row_number() OVER (ORDER BY exposed DESC, name, version, id) AS line FROM ("
            f"{_lines(None)})"
        )
    return (
        "SELECT id, name, version, language, mu, sigma, exposed, games, "
        "CASE WHEN out THEN 0 ELSE row_number() OVER "
        "(PARTITION BY out ORDER BY exposed DESC, name, version, id) END AS rank, "
        "row_number() OVER (ORDER BY out, exposed DESC, name, version, id) AS line FROM ("
        f"{_lines(competition_id)})"
    )


def _page_submission(what: str) -> str:
    """SQL for ``what`` of the submission a ranked entrant ``p`` plays as (as :func:`_submission`)."""
    return (
        f"coalesce((SELECT {what} FROM submissions s JOIN authors a ON a.id = s.author_id "
        "WHERE s.entrant_id = p.id AND (:competition IS NULL OR s.competition_id = :competition) "
        "ORDER BY s.id DESC LIMIT 1), '')"
    )


def like_pattern(text: str) -> str:
    """A LIKE pattern (with ESCAPE '\\') matching names that hold ``text``."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _arguments(board_id: int | None, competition_id: int | None) -> dict[str, object]:
    start = rating_initial()
    return {
        "board": board_id,
        "competition": competition_id,
        "mu": start.mu,
        "sigma": start.sigma,
        "exposed": start.exposed,
    }


def placings_page(
    conn: sqlite3.Connection,
    board_id: int | None,
    *,
    competition_id: int | None = None,
    offset: int = 0,
    limit: int = 100,
    name: str | None = None,
) -> tuple[list[Placing], int]:
    """A page of :func:`placings` (the same lines, ranks and order): ``limit`` lines from ``offset``,
    only those whose name holds ``name`` (any case) when given; and how many lines there are in all
    (that match). The author and status are looked up for the page's lines alone.

    The board is ranked once at most: a tournament's page (its ranks are its lines' places) is read
    in order from the board's index, a search's or a competition's ranks by ranking the board; the
    count needs no ranking."""
    args = {**_arguments(board_id, competition_id), "limit": limit, "offset": offset}
    where = ""
    if name:
        where = " WHERE p.name LIKE :name ESCAPE '\\'"
        args["name"] = like_pattern(name)
    looked_up = f"{_page_submission('a.name')}, {_page_submission('s.status')}"
    columns = "p.id, p.name, p.version, p.language"
    ratings = "p.mu, p.sigma, p.exposed, p.games"
    if competition_id is None and not name:
        found = conn.execute(
            f"SELECT {columns}, {looked_up}, {ratings} FROM ({_lines(None, out=False)}) p "
            "ORDER BY p.exposed DESC, p.name, p.version, p.id LIMIT :limit OFFSET :offset",
            args,
        ).fetchall()
        rows = [(offset + k, *row) for k, row in enumerate(found, start=1)]
    else:
        rows = conn.execute(
            f"SELECT p.rank, {columns}, {looked_up}, {ratings} FROM ({_ranked(competition_id)}) p"
            f"{where} ORDER BY p.line LIMIT :limit OFFSET :offset",
            args,
        ).fetchall()
    total = conn.execute(
        f"SELECT count(*) FROM ({_lines(competition_id, out=False)}) p{where}", args
    )
    return [Placing(*row) for row in rows], int(total.fetchone()[0])


def rank_of(
    conn: sqlite3.Connection,
    board_id: int | None,
    entrant_id: int,
    *,
    competition_id: int | None = None,
) -> tuple[int, int] | None:
    """An entrant's rank on a board (as :func:`placings` ranks it: 0 for a competition's version out
    of play) and its line's place on the whole board (from 1, for the page that shows it); None when
    it has no line. Counted from the lines before it, without ranking the board."""
    args = {**_arguments(board_id, competition_id), "entrant": entrant_id}
    me = conn.execute(
        f"SELECT out, exposed, name, version FROM ({_lines(competition_id)}) WHERE id = :entrant",
        args,
    ).fetchone()
    if me is None:
        return None
    out, exposed, name, version = me
    args.update(out=out, x=exposed, name=name, version=version)
    # Before it in placings' order among the lines of its part (in play, or out of play).
    before = (
        "(p.exposed > :x OR (p.exposed = :x AND (p.name, p.version, p.id) < "
        "(:name, :version, :entrant)))"
    )
    if competition_id is None:
        row = conn.execute(
            f"SELECT count(*) FROM ({_lines(None, out=False)}) p WHERE {before}", args
        ).fetchone()
        return int(row[0]) + 1, int(row[0]) + 1
    row = conn.execute(
        f"SELECT coalesce(sum(p.out = :out AND {before}), 0), coalesce(sum(p.out < :out), 0) "
        f"FROM ({_lines(competition_id)}) p",
        args,
    ).fetchone()
    same, earlier = int(row[0]), int(row[1])
    return (0 if out else same + 1), earlier + same + 1
