"""A running referee's matches, followed live (``arena web --server``): the list, a match's page, its
JSON, and its public events as server-sent events. Without a referee to follow, the live page says so
and the rest answers 404."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from arena.web.handlers.common import page, state
from arena.web.live import LiveError, Referee, parse_last_id


def _referee(request: Request) -> Referee:
    referee = state(request).referee
    if referee is None:
        raise HTTPException(
            404, "no referee to follow: start arena web with --server ADDR (see arena serve)"
        )
    return referee


async def live_page(request: Request) -> Response:
    referee = state(request).referee
    if referee is None:
        return page(request, "live.html", matches=[], problem=None, server=None)
    try:
        found = await referee.matches()
        problem = None
    except LiveError as exc:
        found, problem = [], str(exc)
    return page(request, "live.html", matches=found, problem=problem, server=referee.address)


async def live_match_page(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    try:
        info = await _referee(request).match(match_id)
    except LiveError as exc:
        raise HTTPException(exc.status, str(exc)) from exc
    return page(request, "live_match.html", match=info)


async def api_live_matches(request: Request) -> Response:
    try:
        return JSONResponse({"matches": await _referee(request).matches()})
    except LiveError as exc:
        raise HTTPException(exc.status, str(exc)) from exc


async def api_live_match(request: Request) -> Response:
    try:
        return JSONResponse(await _referee(request).match(request.path_params["match_id"]))
    except LiveError as exc:
        raise HTTPException(exc.status, str(exc)) from exc


async def live_events(request: Request) -> Response:
    after = parse_last_id(request.headers.get("last-event-id"))
    client = request.client.host if request.client is not None else ""
    stream = _referee(request).stream(request.path_params["match_id"], after, client)
    return StreamingResponse(
        stream,
        media_type="text/event-stream",
        headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
    )
