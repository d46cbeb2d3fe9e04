"""The events (tournaments and competitions) and their leaderboards, the pooled boards, and the front
page that lists them: pages and JSON."""

from __future__ import annotations

from typing import Any, NamedTuple

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from arena.web import head_to_head as h2h
from arena.web import queries as q
from arena.web.handlers.common import WebState, number, page, path_int, percent, state


class BoardLine(NamedTuple):
    """A leaderboard row as the page shows it, formatted once (the page may have thousands)."""

    rank: int | None  # None: a competition version out of play, listed apart
    entrant_id: int
    entrant: str  # cut to the column's width
    full_name: str  # the whole name when it was cut (the link's title), else ""
    version: str
    author: str
    status: str  # a competition entrant's ("" in a tournament)
    exposed: str
    mu: str
    sigma: str
    games: int
    win: tuple[str, str, str] | None  # rate, low, high; None before any game


def board_lines(rows: list[dict[str, Any]]) -> list[BoardLine]:
    cap = q.cap
    return [
        BoardLine(
            r["rank"],
            r["entrant_id"],
            cap(r["entrant"], 40),
            r["entrant"] if len(r["entrant"]) > 40 else "",
            cap(r["version"], 24),
            cap(r["author"], 24),
            r["status"],
            number(r["exposed"]),
            number(r["mu"]),
            number(r["sigma"]),
            r["games"],
            (percent(r["win_rate"]), percent(r["win_low"]), percent(r["win_high"]))
            if r["played"]
            else None,
        )
        for r in rows
    ]


def index(request: Request) -> Response:
    st = state(request)
    found = q.events(st.tally)
    with st.reader.read() as conn:
        pooled = q.boards(conn, "pooled")
    return page(request, "index.html", events=found, pooled=pooled)


def api_events(request: Request) -> Response:
    return JSONResponse({"events": q.events(state(request).tally)})


def _event_data(st: WebState, event_id: int) -> dict[str, Any]:
    ev = q.event(st.tally, event_id)
    with st.reader.read() as conn:
        b = q.event_board(conn, event_id)
    rows = q.leaderboard(st.tally, b) if b else []
    with st.reader.read() as conn:
        # The board's rows are the event's rated entrants; without a board, count them.
        entrants = len(rows) if b else h2h.pairing_entrants(conn, event_id)
        heads = h2h.pairings(conn, event_id) if entrants <= h2h.MAX_PAIRING_ENTRANTS else None
    omitted = (
        f"head to head is shown for events of up to {h2h.MAX_PAIRING_ENTRANTS} entrants; "
        f"this one has {entrants}"
        if heads is None
        else ""
    )
    return {
        "event": ev,
        "board": b,
        "leaderboard": rows,
        "pairings": heads,
        # Without duplicate deals each game is a set of its own: no column for the sets.
        "duplicate_sets": any(
            p["sets_won"] + p["sets_lost"] + p["sets_tied"] < p["games"] for p in heads or []
        ),
        "pairings_omitted": omitted,
    }


def event_page(request: Request) -> Response:
    data = _event_data(state(request), path_int(request))
    return page(request, "board.html", lines=board_lines(data.pop("leaderboard")), **data)


def api_event(request: Request) -> Response:
    return JSONResponse(_event_data(state(request), path_int(request)))


def _board_data(st: WebState, board_id: int) -> dict[str, Any]:
    with st.reader.read() as conn:
        b = q.board(conn, board_id)
    rows = q.leaderboard(st.tally, b)
    return {"event": None, "board": b, "leaderboard": rows}


def board_page(request: Request) -> Response:
    data = _board_data(state(request), path_int(request))
    if data["board"]["event_id"] is not None:
        return RedirectResponse(f"/events/{data['board']['event_id']}", status_code=307)
    return page(request, "board.html", lines=board_lines(data.pop("leaderboard")), **data)


def api_boards(request: Request) -> Response:
    with state(request).reader.read() as conn:
        return JSONResponse({"boards": q.boards(conn)})


def api_board(request: Request) -> Response:
    return JSONResponse(_board_data(state(request), path_int(request)))
