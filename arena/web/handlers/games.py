"""The games: the filtered list, a game's page (the replay player), its record, and its replay frames
in one view, built once and kept (:class:`arena.web.handlers.common.FrameCache`)."""

from __future__ import annotations

import json
import zlib
from dataclasses import replace
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from arena.referee.record import MatchRecord
from arena.web import game_queries as gq
from arena.web import queries as q
from arena.web.handlers.common import BadRequest, int_param, page, path_int, search_param, state
from arena.web.replay import ReplayError, frames


def game_filter(request: Request) -> gq.GameFilter:
    outcome = request.query_params.get("outcome") or None
    if outcome is not None and outcome not in q.OUTCOMES:
        raise BadRequest(
            f"outcome must be one of {', '.join(q.OUTCOMES)}, got {q.cap(outcome, 40)!r}"
        )
    limit = int_param(request, "limit", 1)
    return gq.GameFilter(
        event=int_param(request, "event"),
        entrant=int_param(request, "entrant"),
        outcome=outcome,
        before=int_param(request, "before", 1),
        limit=min(limit or q.GAMES_PAGE, 500),
    )


def seat_view(request: Request) -> int | None:
    raw = request.query_params.get("view", "full")
    if raw == "full":
        return None
    seat = q.whole_number(raw, 2)
    if seat is None:
        raise BadRequest(f"view must be full or a seat number, got {q.cap(raw, 40)!r}")
    return seat


ENTRANT_CHOICES = 20  # entrants a name search offers (the games page, /api/entrants)


def games_page(request: Request) -> Response:
    """The games, filtered. An entrant is chosen by id (``entrant``), or by a name searched for
    (``who``, the page's search box without its script): one entrant of that very name is chosen,
    else the page offers the entrants whose names hold it. The page never lists every entrant."""
    st = state(request)
    f = game_filter(request)
    search = search_param(request, "who")
    evs = q.events(st.tally)
    choices: list[dict[str, object]] = []
    with st.reader.read() as conn:
        if f.entrant is None and search is not None:
            choices = q.search_entrants(conn, search, ENTRANT_CHOICES)
            exact = [c for c in choices if c["name"] == search]
            if len(exact) == 1:
                f = replace(f, entrant=int(str(exact[0]["id"])))
                choices = []
        found, more = gq.games(conn, f) if not choices else ([], None)
        who = q.entrant(conn, f.entrant) if f.entrant is not None else None
    return page(
        request,
        "games.html",
        games=found,
        next_before=more,
        filter=f,
        events=evs,
        entrant=who,
        search=search if who is None else None,
        choices=choices,
        outcomes=q.OUTCOMES,
    )


def api_entrants(request: Request) -> Response:
    """Entrants whose name holds ``q`` (any case), at most ``limit`` (20, and 50 at most), by name:
    what a search box offers."""
    text = search_param(request)
    if text is None:
        raise BadRequest("q must name what to search for (part of an entrant's name)")
    limit = min(int_param(request, "limit", 1) or ENTRANT_CHOICES, 50)
    with state(request).reader.read() as conn:
        return JSONResponse({"entrants": q.search_entrants(conn, text, limit)})


def api_games(request: Request) -> Response:
    with state(request).reader.read() as conn:
        found, more = gq.games(conn, game_filter(request))
    return JSONResponse({"games": found, "next_before": more})


def game_page(request: Request) -> Response:
    with state(request).reader.read() as conn:
        g = gq.game(conn, path_int(request))
    return page(request, "game.html", game=g)


def api_game(request: Request) -> Response:
    game_id = path_int(request)
    with state(request).reader.read() as conn:
        g = gq.game(conn, game_id)
        g["record"] = None if g["sealed"] else gq.record(conn, game_id)
    return JSONResponse(g)


def api_replay(request: Request) -> Response:
    st = state(request)
    game_id = path_int(request)
    view = seat_view(request)
    with st.reader.read() as conn:
        if gq.game(conn, game_id)["sealed"]:
            raise HTTPException(403, _sealed_message(game_id))
        encoding, blob = gq.stored_record(conn, game_id)
    # A game's record never changes; the checksum tells a game played again after voiding (which
    # may get a voided game's id) from the game replayed before.
    key = (
        game_id,
        encoding,
        zlib.crc32(blob if isinstance(blob, bytes) else blob.encode()),
        view,
    )
    found = st.replays.get(key)
    if found is None:
        found = st.replays.put(
            key, _replay(game_id, gq.decode_record(game_id, encoding, blob), view)
        )
    return Response(found, media_type="application/json")


def _replay(game_id: int, data: dict[str, Any], view: int | None) -> bytes:
    """A game's replay frames in one view, as JSON."""
    try:
        record = MatchRecord.from_dict(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise ReplayError(
            f"game {game_id}: the stored record is not a match record: {exc}"
        ) from exc
    if not record.games:
        raise ReplayError(f"game {game_id}: the record holds no game")
    if view is not None and view >= len(record.players):
        raise BadRequest(f"seat must be 0..{len(record.players) - 1} for game {game_id}")
    body = frames(record, record.games[0], view)
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _sealed_message(game_id: int) -> str:
    return (
        f"game {game_id}'s deal is still to be played in another seat rotation, or by another "
        "pairing or round on a deal suite: its cards stay secret until every game of the deal is "
        "finished"
    )
