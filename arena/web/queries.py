"""Read-only queries over the ledger for the web pages and the JSON API: events, boards,
leaderboards, entrants (the game list and replays: :mod:`arena.web.game_queries`; the read-only
connection: :mod:`arena.web.reader`). No query selects the tournaments' ``deal_key``: it never leaves
the ledger.

Text that bots or tournament files provide (entrant names, versions, languages, authors, failure details)
is data: it is capped here (:data:`MAX_TEXT`) and escaped by the templates.

Win rates need every game of a board: on a large ledger that is the costly part of a leaderboard, so
:class:`arena.web.game_counts.Tally` keeps them per board (and the games of each event) and brings them up
to date incrementally from the games added since (game ids only grow; voiding, the only deletion, starts
the count again). The queries that need those counts take the app's :class:`Tally`, which reads through
the :class:`Reader` it was given.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from arena.ledger import seat_reports, status_history
from arena.ledger.leaderboard import Placing, like_pattern, placings, placings_page, rank_of
from arena.ledger.leases import RENEW_SECONDS
from arena.tournament.summary import wilson
from arena.web.game_counts import Tally

MAX_TEXT = 200  # characters of any bot- or file-provided text served
MAX_DETAIL = 500  # characters of a game's failure detail
GAMES_PAGE = 50
BOARD_PAGE = 100  # leaderboard lines a page shows
MAX_SEARCH = 100  # characters of a name searched for

# Outcomes a game can have (arena/referee): the game list's filter offers these.
OUTCOMES = (
    "normal",
    "timeout",
    "illegal-action",
    "crash",
    "disconnect",
    "protocol-error",
    "adjudicated",
)
EVENT_KINDS = ("tournament", "competition")


class NotFound(LookupError):
    """No such event, board, entrant or game; the message says which."""


def whole_number(text: str, most_digits: int = 18) -> int | None:
    """``text`` read as a whole number written in ASCII digits (at most ``most_digits`` of them), or
    None: ``str.isdigit`` alone also takes '²', which ``int`` refuses, and other scripts' digits, which
    it reads."""
    if not 0 < len(text) <= most_digits or not text.isascii() or not text.isdigit():
        return None
    return int(text)


def cap(value: object, limit: int = MAX_TEXT) -> str:
    """``value`` as text, cut at ``limit`` characters (an ellipsis marks the cut)."""
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _has_table(conn: sqlite3.Connection, table: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    return row is not None


def _submission_sql(conn: sqlite3.Connection, alias: str, what: str) -> str:
    """SQL for ``what`` of the competition submission the entrant ``alias`` plays as, its latest
    (``s``: the submission, ``a``: its author); '' for an entrant of a tournament file."""
    if not _has_table(conn, "submissions"):
        return "''"
    return (
        f"coalesce((SELECT {what} FROM submissions s JOIN authors a ON a.id = s.author_id "
        f"WHERE s.entrant_id = {alias}.id ORDER BY s.id DESC LIMIT 1), '')"
    )


def _author_sql(conn: sqlite3.Connection, alias: str) -> str:
    """An entrant's author: the author of the competition submission it plays as."""
    return _submission_sql(conn, alias, "a.name")


# ---------------------------------------------------------------- events and boards


def _status(finished_at: str | None, renewed_at: float | None, paused: bool = False) -> str:
    if finished_at:
        return "finished"
    if renewed_at is not None and time.time() - renewed_at < 3 * RENEW_SECONDS:
        return "paused" if paused else "running"  # paused: a competition pairing no new games
    return "stopped"


def _paused(conn: sqlite3.Connection) -> set[int]:
    """The competitions their organiser has paused."""
    if not _has_table(conn, "competition_state"):
        return set()
    rows = conn.execute("SELECT competition_id FROM competition_state WHERE paused")
    return {int(r[0]) for r in rows}


def _settings(spec_text: str) -> dict[str, Any]:
    """The public settings of an event, from its stored spec (never the bots' command lines)."""
    try:
        spec = json.loads(spec_text)
    except ValueError:
        return {}
    if not isinstance(spec, dict):
        return {}
    out: dict[str, Any] = {}
    for key in ("format", "deals_per_pairing", "duplicate", "rounds", "challenger", "seed"):
        if key in spec and isinstance(spec[key], str | int | bool):
            out[key] = cap(spec[key]) if isinstance(spec[key], str) else spec[key]
    for key in ("options", "time_control", "policies"):
        value = spec.get(key)
        if isinstance(value, dict):
            out[key] = {
                cap(k): (cap(v) if isinstance(v, str) else v)
                for k, v in value.items()
                if isinstance(v, str | int | float | bool)
            }
    return out


# A competition's board is of kind competition; a tournament's, and an A/B test's (kind sprt), of kind
# tournament.
_BOARD_KIND = "(CASE t.kind WHEN 'competition' THEN 'competition' ELSE 'tournament' END)"

_EVENT_SQL = f"""
SELECT t.id, t.name, t.kind, t.variant, t.created_at, t.finished_at, t.spec,
    coalesce(c.planned, 0) AS planned, coalesce(c.played, 0) AS played,
    coalesce(c.failures, 0) AS failures, coalesce(c.voided, 0) AS voided,
    (SELECT b.id FROM boards b WHERE b.tournament_id = t.id AND b.kind = {_BOARD_KIND}) AS board_id,
    (SELECT l.renewed_at FROM leases l WHERE l.tournament_id = t.id) AS renewed_at
FROM tournaments t LEFT JOIN event_counts c ON c.tournament_id = t.id
"""


def _event(row: sqlite3.Row, paused: set[int]) -> dict[str, Any]:
    tid = row["id"]
    return {
        "id": tid,
        "name": cap(row["name"]),
        "kind": row["kind"],
        "variant": row["variant"],
        "created_at": row["created_at"],
        "finished_at": row["finished_at"],
        "status": _status(row["finished_at"], row["renewed_at"], tid in paused),
        "planned": row["planned"],
        "played": row["played"],
        "failures": row["failures"],
        "voided": row["voided"],
        "board_id": row["board_id"],
        "settings": _settings(row["spec"]),
    }


def events(tally: Tally) -> list[dict[str, Any]]:
    """Tournaments and competitions, newest first, with their games counted as the ledger keeps
    them (``event_counts``: a row an event, whatever the games)."""
    with tally.reader.read() as conn:
        rows = conn.execute(_EVENT_SQL + " ORDER BY t.id DESC").fetchall()
        paused = _paused(conn)
    return [_event(r, paused) for r in rows]


def event(tally: Tally, event_id: int) -> dict[str, Any]:
    with tally.reader.read() as conn:
        row = conn.execute(_EVENT_SQL + " WHERE t.id = ?", (event_id,)).fetchone()
        paused = _paused(conn)
    if row is None:
        raise NotFound(f"no tournament or competition {event_id}")
    return _event(row, paused)


def boards(conn: sqlite3.Connection, kind: str | None = None) -> list[dict[str, Any]]:
    where, args = ("WHERE b.kind = ?", [kind]) if kind else ("", [])
    rows = conn.execute(
        "SELECT b.id, b.kind, b.name, b.variant, b.tournament_id, "
        "(SELECT count(*) FROM ratings r WHERE r.board_id = b.id) AS entrants "
        f"FROM boards b {where} ORDER BY b.kind, b.name",
        args,
    )
    return [_board(r) for r in rows]


def _board(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "kind": row["kind"],
        "name": cap(row["name"]),
        "variant": row["variant"],
        "event_id": row["tournament_id"],
        "entrants": row["entrants"],
    }


def board(conn: sqlite3.Connection, board_id: int) -> dict[str, Any]:
    row = conn.execute(
        "SELECT b.id, b.kind, b.name, b.variant, b.tournament_id, "
        "(SELECT count(*) FROM ratings r WHERE r.board_id = b.id) AS entrants "
        "FROM boards b WHERE b.id = ?",
        (board_id,),
    ).fetchone()
    if row is None:
        raise NotFound(f"no leaderboard {board_id}")
    return _board(row)


def warm(tally: Tally) -> None:
    """Count what the pages need (every board's win rates) ahead of the first request; on a ledger
    of many games the first count takes a moment."""
    with tally.reader.read() as conn:
        found = boards(conn)
    for b in found:
        tally.board(b)


def _win_rate(firsts: float, games: int) -> dict[str, Any]:
    low, high = wilson(firsts, games)
    return {
        "played": games,
        "firsts": round(firsts, 3),
        "win_rate": firsts / games if games else None,
        "win_low": low,
        "win_high": high,
    }


# ---------------------------------------------------------------- leaderboards


def leaderboard(tally: Tally, b: dict[str, Any]) -> list[dict[str, Any]]:
    """A whole board by mu - 3 sigma, with each entrant's win rate (first places over games recorded
    on the board) and its 95% Wilson interval."""
    games, firsts = tally.board(b)
    with tally.reader.read() as conn:
        found = placings(conn, b["id"], competition_id=_competition(b))
    return _board_rows(found, games, firsts)


def _competition(b: dict[str, Any]) -> int | None:
    return b["event_id"] if b["kind"] == "competition" else None


def leaderboard_page(
    tally: Tally, b: dict[str, Any], page: int, search: str | None = None
) -> tuple[list[dict[str, Any]], int]:
    """Page ``page`` (from 1) of a board's lines, :data:`BOARD_PAGE` a page, those whose name holds
    ``search`` when given (each with its rank on the whole board); and how many lines match."""
    games, firsts = tally.board(b)
    with tally.reader.read() as conn:
        found, total = placings_page(
            conn,
            b["id"],
            competition_id=_competition(b),
            offset=(page - 1) * BOARD_PAGE,
            limit=BOARD_PAGE,
            name=search,
        )
    return _board_rows(found, games, firsts), total


def board_place(
    conn: sqlite3.Connection, b: dict[str, Any], entrant_id: int
) -> tuple[int | None, int] | None:
    """An entrant's rank on a board, as the board's page ranks it (None: a competition's version out
    of play, listed apart unranked), and the place of its line on the whole board, from 1 (the page
    that shows it is the one holding that place); None when it has no line. Both counted from the
    lines before it, with no ranking of the board."""
    found = rank_of(conn, b["id"], entrant_id, competition_id=_competition(b))
    return (found[0] or None, found[1]) if found else None


def board_rank(conn: sqlite3.Connection, b: dict[str, Any], entrant_id: int) -> int | None:
    """An entrant's rank on a board (None: not on it, or out of play)."""
    place = board_place(conn, b, entrant_id)
    return place[0] if place else None


def _board_rows(
    found: list[Placing], games: dict[int, int], firsts: dict[int, float]
) -> list[dict[str, Any]]:
    return [
        {
            "rank": p.rank or None,  # None: a competition's version out of play, listed apart
            "entrant_id": p.entrant_id,
            "entrant": cap(p.name),
            "version": cap(p.version),
            "language": cap(p.language),
            "author": cap(p.author),
            "status": p.status,  # a competition's: active, replaced, suspended, withdrawn
            "exposed": p.exposed,
            "mu": p.mu,
            "sigma": p.sigma,
            "games": p.games,
            **_win_rate(firsts.get(p.entrant_id, 0.0), games.get(p.entrant_id, 0)),
        }
        # The ledger's one leaderboard query, as arena leaderboard and arena compete read it.
        for p in found
    ]


def board_order(conn: sqlite3.Connection, b: dict[str, Any]) -> list[int]:
    """A board's entrants in its lines' order (for a small board: it ranks the whole board)."""
    return [p.entrant_id for p in placings(conn, b["id"], competition_id=_competition(b))]


def board_size(conn: sqlite3.Connection, board_id: int) -> int:
    """How many entrants a board rates."""
    row = conn.execute("SELECT count(*) FROM ratings WHERE board_id = ?", (board_id,)).fetchone()
    return int(row[0])


def event_board(conn: sqlite3.Connection, event_id: int) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT b.id FROM boards b JOIN tournaments t ON t.id = b.tournament_id "
        f"AND b.kind = {_BOARD_KIND} WHERE t.id = ?",
        (event_id,),
    ).fetchone()
    return board(conn, row[0]) if row else None


# ---------------------------------------------------------------- entrants


def competition_side(conn: sqlite3.Connection, entrant_id: int) -> dict[str, Any] | None:
    """A competition entrant's public status history (no reason that may quote its output) and its
    time use per decision and failures by kind; None for an entrant of no competition."""
    if not _has_table(conn, "submission_history"):
        return None
    row = conn.execute(
        "SELECT competition_id FROM submissions WHERE entrant_id = ? LIMIT 1", (entrant_id,)
    ).fetchone()
    if row is None:
        return None
    use = seat_reports.time_use(conn, int(row[0]), entrant_id)
    return {
        "status_history": [
            {"status": c.status, "reason": cap(c.reason), "at": c.at}
            for c in status_history.public(conn, entrant_id)
        ],
        "time_use": {
            "games": use.games,
            "decisions": use.decisions,
            "median_ms": use.median_ms,
            "p99_ms": use.p99_ms,
            "bank_left_ms": use.bank_left_ms,
            "failures": use.failures,
        },
    }


def search_entrants(conn: sqlite3.Connection, text: str, limit: int) -> list[dict[str, Any]]:
    """Entrants whose name holds ``text`` (any case), by name and version, at most ``limit`` (for
    choosing one without sending every name)."""
    like = like_pattern(text)
    rows = conn.execute(
        "SELECT id, name, version FROM entrants WHERE name LIKE ? ESCAPE '\\' "
        "ORDER BY name, version, id LIMIT ?",
        (like, limit),
    )
    return [{"id": r["id"], "name": cap(r["name"]), "version": cap(r["version"])} for r in rows]


def entrant(conn: sqlite3.Connection, entrant_id: int) -> dict[str, Any]:
    row = conn.execute(
        f"SELECT e.id, e.name, e.version, e.language, {_author_sql(conn, 'e')} AS author, "
        "e.created_at FROM entrants e WHERE e.id = ?",
        (entrant_id,),
    ).fetchone()
    if row is None:
        raise NotFound(f"no entrant {entrant_id}")
    others = conn.execute(
        "SELECT id, version FROM entrants WHERE name = ? AND id != ? ORDER BY id",
        (row["name"], entrant_id),
    ).fetchall()
    return {
        "id": row["id"],
        "name": cap(row["name"]),
        "version": cap(row["version"]),
        "language": cap(row["language"]),
        "author": cap(row["author"]),
        "created_at": row["created_at"],
        "other_versions": [{"id": o["id"], "version": cap(o["version"])} for o in others],
    }


def entrant_board_ids(conn: sqlite3.Connection, entrant_id: int) -> list[int]:
    """The boards an entrant is rated on: events' boards first, newest first, then pooled ones."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT b.id FROM ratings r JOIN boards b ON b.id = r.board_id WHERE r.entrant_id = ? "
            "ORDER BY b.kind = 'pooled', b.id DESC",
            (entrant_id,),
        )
    ]


def entrant_boards(tally: Tally, entrant_id: int) -> list[dict[str, Any]]:
    """The boards an entrant is rated on, with its rating, rank and win rate on each."""
    with tally.reader.read() as conn:
        rows = conn.execute(
            "SELECT b.id, b.kind, b.name, b.variant, b.tournament_id, r.mu, r.sigma, r.exposed, "
            "r.games, (SELECT count(*) FROM ratings o WHERE o.board_id = r.board_id) AS entrants "
            "FROM ratings r JOIN boards b ON b.id = r.board_id WHERE r.entrant_id = ? "
            "ORDER BY b.kind = 'pooled', b.id DESC",
            (entrant_id,),
        ).fetchall()
        ranks = [board_rank(conn, _board(r), entrant_id) for r in rows]
    out = []
    for r, rank in zip(rows, ranks, strict=True):
        b = _board(r)
        games, firsts = tally.board(b)
        out.append(
            {
                "board": b,
                "rank": rank,
                "page": 1 + (rank - 1) // BOARD_PAGE if rank else 1,
                "mu": r["mu"],
                "sigma": r["sigma"],
                "exposed": r["exposed"],
                "games": r["games"],
                **_win_rate(firsts.get(entrant_id, 0.0), games.get(entrant_id, 0)),
            }
        )
    return out


def history(conn: sqlite3.Connection, entrant_id: int, board_id: int) -> list[dict[str, Any]]:
    """An entrant's rating on a board game by game, in rating order."""
    rows = conn.execute(
        "SELECT h.game_id, h.mu_before, h.sigma_before, h.mu_after, h.sigma_after, g.finished_at "
        "FROM rating_history h JOIN games g ON g.id = h.game_id "
        "WHERE h.entrant_id = ? AND h.board_id = ? ORDER BY g.rating_seq",
        (entrant_id, board_id),
    )
    return [
        {
            "n": n,
            "game_id": r["game_id"],
            "mu_before": r["mu_before"],
            "sigma_before": r["sigma_before"],
            "mu": r["mu_after"],
            "sigma": r["sigma_after"],
            "finished_at": r["finished_at"],
        }
        for n, r in enumerate(rows, start=1)
    ]


def thinned(points: list[dict[str, Any]], most: int) -> list[dict[str, Any]]:
    """At most about ``most`` points, evenly spread, the first and the last kept (a chart of tens of
    thousands of games draws the same line from a few thousand)."""
    if len(points) <= most:
        return points
    step = -(-len(points) // most)
    kept = points[::step]
    return kept if kept[-1] is points[-1] else [*kept, points[-1]]
