"""An entrant's page: its boards with its rating, rank and win rate on each, its rating history on one
board (a chart), and its recent games; and the same as JSON."""

from __future__ import annotations

import sqlite3
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from arena.web import game_queries as gq
from arena.web import head_to_head as h2h
from arena.web import queries as q
from arena.web.handlers.common import BadRequest, int_param, page, path_int, state

RECENT_GAMES = 20
CHART_POINTS = 2000  # most points a rating chart is sent (the JSON API gives every game)


def _entrant_data(request: Request) -> dict[str, Any]:
    st = state(request)
    entrant_id = path_int(request)
    chosen = int_param(request, "board")
    with st.reader.read() as conn:
        who = q.entrant(conn, entrant_id)
    on = q.entrant_boards(st.tally, entrant_id)
    ids = [b["board"]["id"] for b in on]
    if chosen is not None and chosen not in ids:
        raise q.NotFound(f"entrant {entrant_id} is not rated on board {chosen}")
    board_id = chosen if chosen is not None else (ids[0] if ids else None)
    event_id = next((b["board"]["event_id"] for b in on if b["board"]["id"] == board_id), None)
    with st.reader.read() as conn:
        hist = q.history(conn, entrant_id, board_id) if board_id is not None else []
        recent, _ = gq.games(conn, gq.GameFilter(entrant=entrant_id, limit=RECENT_GAMES))
        competition = q.competition_side(conn, entrant_id)
        opponents = _opponents(conn, request, event_id, entrant_id)
    return {
        "entrant": who,
        "boards": on,
        "board_id": board_id,
        "history": hist,
        "recent": recent,
        "competition": competition,
        "opponents": opponents,
    }


def _opponents(
    conn: sqlite3.Connection, request: Request, event_id: int | None, entrant_id: int
) -> dict[str, Any] | None:
    """The entrant's head to head against each opponent in the chosen board's event, a page
    (``opponents``, from 1) of them, most games first; None on a pooled board (no event)."""
    number = int_param(request, "opponents", 1) or 1
    if event_id is None:
        return None
    lines, total = h2h.opponents(conn, event_id, entrant_id, number)
    pages = max(1, -(-total // h2h.OPPONENTS_PAGE))
    if number > pages:
        raise BadRequest(
            f"opponents must be at most {pages} (its opponents, {h2h.OPPONENTS_PAGE} a page)"
        )
    return {
        "event_id": event_id,
        "lines": lines,
        "shown": [h2h.shown(p) for p in lines],
        "page": number,
        "pages": pages,
        "total": total,
        "page_size": h2h.OPPONENTS_PAGE,
    }


def entrant_page(request: Request) -> Response:
    data = _entrant_data(request)
    data["chart"] = q.thinned(data["history"], CHART_POINTS)
    return page(request, "entrant.html", **data)


def api_entrant(request: Request) -> Response:
    data = _entrant_data(request)
    del data["history"], data["board_id"]
    if data["opponents"]:
        del data["opponents"]["shown"]
    return JSONResponse(data)


def api_history(request: Request) -> Response:
    entrant_id = path_int(request)
    board_id = int_param(request, "board")
    with state(request).reader.read() as conn:
        q.entrant(conn, entrant_id)
        on = q.entrant_board_ids(conn, entrant_id)
        if board_id is None:
            board_id = on[0] if on else None
        elif board_id not in on:
            raise q.NotFound(f"entrant {entrant_id} is not rated on board {board_id}")
        hist = q.history(conn, entrant_id, board_id) if board_id is not None else []
    return JSONResponse({"entrant_id": entrant_id, "board_id": board_id, "history": hist})
