"""The events (tournaments and competitions) and their leaderboards, the pooled boards, and the front
page that lists them: pages and JSON."""

from __future__ import annotations

from typing import Any, NamedTuple

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from arena.ledger import competition_board
from arena.web import head_to_head as h2h
from arena.web import queries as q
from arena.web.handlers.common import (
    BadRequest,
    WebState,
    int_param,
    number,
    page,
    path_int,
    percent,
    search_param,
    state,
)


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
    last_played: str  # a competition version's last game ("never"; "" in a tournament)
    change: str  # its places gained over 24 hours: +2, -1, =, new (not ranked then), - (apart)


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
            _last_played(r),
            _change(r),
        )
        for r in rows
    ]


def _last_played(r: dict[str, Any]) -> str:
    if "last_played" not in r:
        return ""
    return r["last_played"].replace("T", " ").removesuffix("+00:00") or "never"


def _change(r: dict[str, Any]) -> str:
    """As ``arena compete leaderboard`` shows it: +2, -1, = (none), new (not ranked a day ago),
    - (a version out of play, listed apart); "" in a tournament."""
    if "rank_change" not in r:
        return ""
    if r["rank"] is None:
        return "-"
    change = r["rank_change"]
    if change is None:
        return "new"
    return f"{change:+d}" if change else "="


def index(request: Request) -> Response:
    st = state(request)
    found = q.events(st.tally)
    with st.reader.read() as conn:
        pooled = q.boards(conn, "pooled")
    return page(request, "index.html", events=found, pooled=pooled)


def api_events(request: Request) -> Response:
    return JSONResponse({"events": q.events(state(request).tally)})


class BoardView(NamedTuple):
    """Which part of a board a request asks for: a page, a name searched for, an entrant whose page
    to show (its own rank)."""

    page: int
    search: str | None
    entrant: int | None


def board_view(request: Request) -> BoardView:
    return BoardView(
        int_param(request, "page", 1) or 1, search_param(request), int_param(request, "entrant")
    )


def _lines(st: WebState, b: dict[str, Any], view: BoardView) -> dict[str, Any]:
    """The page of board ``b`` a request asks for: its lines, and where they stand (``page``,
    ``pages``, ``total`` lines, the ``search``, the ``entrant`` shown and its ``rank``)."""
    number_ = view.page
    rank = None
    if view.entrant is not None:
        with st.reader.read() as conn:
            place = q.board_place(conn, b, view.entrant)
        if place is None:
            raise q.NotFound(f"entrant {view.entrant} is not on leaderboard {b['id']}")
        rank, line = place
        if view.search is None:
            number_ = 1 + (line - 1) // q.BOARD_PAGE
    rows, total = q.leaderboard_page(st.tally, b, number_, view.search)
    if b["kind"] == "competition" and rows:
        # What the CLI's board shows too, from the same ledger reads, for this page's lines.
        with st.reader.read() as conn:
            recent = competition_board.page_recent(
                conn, b["id"], b["event_id"], [(r["entrant_id"], r["rank"]) for r in rows]
            )
        for r in rows:
            r["last_played"], r["rank_change"] = recent[r["entrant_id"]]
    pages = max(1, -(-total // q.BOARD_PAGE))
    if number_ > pages:
        raise BadRequest(f"page must be at most {pages} (the board's lines, {q.BOARD_PAGE} a page)")
    return {
        "leaderboard": rows,
        "page": number_,
        "pages": pages,
        "total": total,
        "search": view.search,
        "shown_entrant": view.entrant,
        "page_size": q.BOARD_PAGE,
        "rank": rank,
    }


def _no_lines(view: BoardView) -> dict[str, Any]:
    """What :func:`_lines` gives for an event with no board yet."""
    return {"leaderboard": [], "page": 1, "pages": 1, "total": 0, "search": view.search,
            "shown_entrant": None, "rank": None, "page_size": q.BOARD_PAGE}  # fmt: skip


def _event_data(st: WebState, event_id: int, view: BoardView) -> dict[str, Any]:
    ev = q.event(st.tally, event_id)
    with st.reader.read() as conn:
        b = q.event_board(conn, event_id)
    shown = _lines(st, b, view) if b else _no_lines(view)
    with st.reader.read() as conn:
        # Every line of a board is one of the event's rated entrants; without a board, count them.
        entrants = q.board_size(conn, b["id"]) if b else h2h.pairing_entrants(conn, event_id)
        heads = h2h.pairings(conn, event_id) if entrants <= h2h.MAX_PAIRING_ENTRANTS else None
        cross = None
        if entrants <= h2h.MAX_CROSSTABLE_ENTRANTS:
            order = q.board_order(conn, b) if b else []
            cross = h2h.crosstable(conn, event_id, order)
    # Without the head to head, each board line links its entrant's opponents (its Elo and LOS
    # against each), and the crosstable below gives each two entrants' score while it is shown.
    omitted = ""
    if heads is None:
        omitted = (
            f"head to head is shown for events of up to {h2h.MAX_PAIRING_ENTRANTS} entrants; "
            f"this one has {entrants}: "
            + ("the crosstable below gives each two entrants' score, and " if cross else "")
            + "each entrant's opponents, with the Elo and LOS against each, are on its page"
        )
    cross_omitted = (
        f"the crosstable is shown for {h2h.MAX_CROSSTABLE_ENTRANTS} entrants at most; this one "
        f"has {entrants}: each entrant's opponents are on its page"
        if entrants > h2h.MAX_CROSSTABLE_ENTRANTS
        else ""
    )
    return {
        "event": ev,
        "board": b,
        **shown,
        "pairings": heads,
        # Without duplicate deals each game is a set of its own: no column for the sets.
        "duplicate_sets": any(
            p["sets_won"] + p["sets_lost"] + p["sets_tied"] < p["games"] for p in heads or []
        ),
        "pairings_omitted": omitted,
        "crosstable": cross,
        "crosstable_omitted": cross_omitted,
    }


def event_page(request: Request) -> Response:
    data = _event_data(state(request), path_int(request), board_view(request))
    heads, cross = data.pop("pairings"), data.pop("crosstable")
    return page(
        request,
        "board.html",
        lines=board_lines(data.pop("leaderboard")),
        # Formatted once in Python: a field of 32 has 496 lines, 40 make 1,600 cells.
        pairings=[h2h.shown(p) for p in heads] if heads else None,
        crosstable=h2h.cross_rows(cross) if cross else None,
        **data,
    )


def api_event(request: Request) -> Response:
    return JSONResponse(_event_data(state(request), path_int(request), board_view(request)))


def _board_data(st: WebState, board_id: int, view: BoardView) -> dict[str, Any]:
    with st.reader.read() as conn:
        b = q.board(conn, board_id)
    return {"event": None, "board": b, **_lines(st, b, view)}


def board_page(request: Request) -> Response:
    st = state(request)
    board_id = path_int(request)
    with st.reader.read() as conn:
        event_id = q.board(conn, board_id)["event_id"]
    if event_id is not None:
        query = f"?{request.url.query}" if request.url.query else ""
        return RedirectResponse(f"/events/{event_id}{query}", status_code=307)
    data = _board_data(st, board_id, board_view(request))
    return page(request, "board.html", lines=board_lines(data.pop("leaderboard")), **data)


def api_boards(request: Request) -> Response:
    with state(request).reader.read() as conn:
        return JSONResponse({"boards": q.boards(conn)})


def api_board(request: Request) -> Response:
    return JSONResponse(_board_data(state(request), path_int(request), board_view(request)))
