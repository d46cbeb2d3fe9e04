"""The arena on the web: an ASGI app (Starlette) over one ledger, read-only, and optionally a running
referee to follow live.

Pages (Jinja2 templates, autoescaped everywhere) and a JSON API under ``/api`` serve the same data:

    /                       events (tournaments and competitions) and the pooled boards
    /events/ID              an event and its leaderboard          /api/events, /api/events/ID
    /boards/ID              any leaderboard (the pooled ones)     /api/boards, /api/boards/ID
    /entrants/ID            rating history and recent games       /api/entrants/ID, .../history
    /games                  games, filtered                       /api/games
    /games/ID               the replay player                     /api/games/ID, .../replay
    /live, /live/MATCH      a running referee's matches, live     /api/live/matches[/MATCH],
                                                                  /live/MATCH/events (server-sent events)

Every asset is served from the package (``static/``): no page loads anything from another host, and the
Content-Security-Policy says so to the browser too.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import threading
import zlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from pathlib import Path
from typing import Any, NamedTuple

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from arena.referee.record import MatchRecord
from arena.stats import elo_text
from arena.tournament.summary import counted
from arena.web import game_queries as gq
from arena.web import head_to_head as h2h
from arena.web import queries as q
from arena.web.game_counts import Tally
from arena.web.live import LiveError, Referee, parse_last_id
from arena.web.middleware import LoopbackOnly, SecurityHeaders
from arena.web.reader import LedgerUnavailable, Reader
from arena.web.replay import ReplayError, frames

HERE = Path(__file__).parent
log = logging.getLogger(__name__)
RECENT_GAMES = 20
REPLAYS_KEPT = 64  # replays kept built (each is some hundreds of kilobytes of JSON)
CHART_POINTS = 2000  # most points a rating chart is sent (the JSON API gives every game)


class BadRequest(ValueError):
    """A query parameter that cannot be used; the message names it."""


# ---------------------------------------------------------------- templates


def _number(value: float | None, places: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return f"{value:.{places}f}"


def _percent(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}%"


class BoardLine(NamedTuple):
    """A leaderboard row as the page shows it, formatted once (the page may have thousands)."""

    rank: int
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
            _number(r["exposed"]),
            _number(r["mu"]),
            _number(r["sigma"]),
            r["games"],
            (_percent(r["win_rate"]), _percent(r["win_low"]), _percent(r["win_high"]))
            if r["played"]
            else None,
        )
        for r in rows
    ]


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template, whatever its name: bot text is data
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["cap"] = q.cap
    env.filters["number"] = _number
    env.filters["percent"] = _percent
    env.filters["elo"] = lambda x: elo_text(x, "+.0f")  # >2400 for a bound held at the limit
    env.filters["count"] = counted  # 1 pair, 2 pairs
    return env


# ---------------------------------------------------------------- parameters


def _int(request: Request, name: str, minimum: int = 0) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    value = q.whole_number(raw)
    if value is None or value < minimum:
        raise BadRequest(
            f"{name} must be a whole number of at least {minimum}, got {q.cap(raw, 40)!r}"
        )
    return value


def _path_int(request: Request, name: str = "id") -> int:
    value: int = request.path_params[name]
    if value >= 2**63:  # no row has such an id (SQLite's integers are 64-bit)
        raise q.NotFound(f"nothing at {q.cap(request.url.path, 100)}")
    return value


def _filter(request: Request) -> gq.GameFilter:
    outcome = request.query_params.get("outcome") or None
    if outcome is not None and outcome not in q.OUTCOMES:
        raise BadRequest(
            f"outcome must be one of {', '.join(q.OUTCOMES)}, got {q.cap(outcome, 40)!r}"
        )
    limit = _int(request, "limit", 1)
    return gq.GameFilter(
        event=_int(request, "event"),
        entrant=_int(request, "entrant"),
        outcome=outcome,
        before=_int(request, "before", 1),
        limit=min(limit or q.GAMES_PAGE, 500),
    )


def _view(request: Request) -> int | None:
    raw = request.query_params.get("view", "full")
    if raw == "full":
        return None
    seat = q.whole_number(raw, 2)
    if seat is None:
        raise BadRequest(f"view must be full or a seat number, got {q.cap(raw, 40)!r}")
    return seat


# ---------------------------------------------------------------- the app


def create_app(
    ledger: str | Path,
    server: str | None = None,
    admin_token: str | None = None,
    *,
    loopback_only: bool = False,
) -> Starlette:
    """The web app over ``ledger`` (opened read-only; :class:`reader.LedgerUnavailable` if it cannot
    be read), following the referee at ``server`` live when given. ``loopback_only``: for a server
    listening on loopback, answer only requests whose Host names this machine (:class:`LoopbackOnly`)."""
    reader = Reader(ledger)
    tally = Tally(reader)
    referee = Referee(server, admin_token) if server else None
    templates = Jinja2Templates(env=environment())

    def page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
        return templates.TemplateResponse(
            request, name, {"live": referee is not None, **context}, status_code=status
        )

    # ------------------------------------------------------------ events and boards

    def index(request: Request) -> Response:
        found = q.events(tally)
        with reader.read() as conn:
            pooled = q.boards(conn, "pooled")
        return page(request, "index.html", events=found, pooled=pooled)

    def api_events(request: Request) -> Response:
        return JSONResponse({"events": q.events(tally)})

    def _event_data(event_id: int) -> dict[str, Any]:
        ev = q.event(tally, event_id)
        with reader.read() as conn:
            b = q.event_board(conn, event_id)
        rows = q.leaderboard(tally, b) if b else []
        with reader.read() as conn:
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
        data = _event_data(_path_int(request))
        return page(request, "board.html", lines=board_lines(data.pop("leaderboard")), **data)

    def api_event(request: Request) -> Response:
        return JSONResponse(_event_data(_path_int(request)))

    def _board_data(board_id: int) -> dict[str, Any]:
        with reader.read() as conn:
            b = q.board(conn, board_id)
        rows = q.leaderboard(tally, b)
        return {"event": None, "board": b, "leaderboard": rows}

    def board_page(request: Request) -> Response:
        data = _board_data(_path_int(request))
        if data["board"]["event_id"] is not None:
            return RedirectResponse(f"/events/{data['board']['event_id']}", status_code=307)
        return page(request, "board.html", lines=board_lines(data.pop("leaderboard")), **data)

    def api_boards(request: Request) -> Response:
        with reader.read() as conn:
            return JSONResponse({"boards": q.boards(conn)})

    def api_board(request: Request) -> Response:
        return JSONResponse(_board_data(_path_int(request)))

    # ------------------------------------------------------------ entrants

    def _entrant_data(request: Request) -> dict[str, Any]:
        entrant_id = _path_int(request)
        chosen = _int(request, "board")
        with reader.read() as conn:
            who = q.entrant(conn, entrant_id)
        on = q.entrant_boards(tally, entrant_id)
        ids = [b["board"]["id"] for b in on]
        if chosen is not None and chosen not in ids:
            raise q.NotFound(f"entrant {entrant_id} is not rated on board {chosen}")
        board_id = chosen if chosen is not None else (ids[0] if ids else None)
        with reader.read() as conn:
            hist = q.history(conn, entrant_id, board_id) if board_id is not None else []
            recent, _ = gq.games(conn, gq.GameFilter(entrant=entrant_id, limit=RECENT_GAMES))
        return {
            "entrant": who,
            "boards": on,
            "board_id": board_id,
            "history": hist,
            "recent": recent,
        }

    def entrant_page(request: Request) -> Response:
        data = _entrant_data(request)
        data["chart"] = q.thinned(data["history"], CHART_POINTS)
        return page(request, "entrant.html", **data)

    def api_entrant(request: Request) -> Response:
        data = _entrant_data(request)
        del data["history"], data["board_id"]
        return JSONResponse(data)

    def api_history(request: Request) -> Response:
        entrant_id = _path_int(request)
        board_id = _int(request, "board")
        with reader.read() as conn:
            q.entrant(conn, entrant_id)
            on = q.entrant_board_ids(conn, entrant_id)
            if board_id is None:
                board_id = on[0] if on else None
            elif board_id not in on:
                raise q.NotFound(f"entrant {entrant_id} is not rated on board {board_id}")
            hist = q.history(conn, entrant_id, board_id) if board_id is not None else []
        return JSONResponse({"entrant_id": entrant_id, "board_id": board_id, "history": hist})

    # ------------------------------------------------------------ games

    def games_page(request: Request) -> Response:
        f = _filter(request)
        evs = q.events(tally)
        with reader.read() as conn:
            found, more = gq.games(conn, f)
            everyone = q.entrants(conn)
            who = q.entrant(conn, f.entrant) if f.entrant is not None else None
        return page(
            request,
            "games.html",
            games=found,
            next_before=more,
            filter=f,
            events=evs,
            entrant=who,
            entrants=everyone,
            outcomes=q.OUTCOMES,
        )

    def api_games(request: Request) -> Response:
        with reader.read() as conn:
            found, more = gq.games(conn, _filter(request))
        return JSONResponse({"games": found, "next_before": more})

    def game_page(request: Request) -> Response:
        with reader.read() as conn:
            g = gq.game(conn, _path_int(request))
        return page(request, "game.html", game=g)

    replays = FrameCache(REPLAYS_KEPT)

    def api_game(request: Request) -> Response:
        game_id = _path_int(request)
        with reader.read() as conn:
            g = gq.game(conn, game_id)
            g["record"] = None if g["sealed"] else gq.record(conn, game_id)
        return JSONResponse(g)

    def api_replay(request: Request) -> Response:
        game_id = _path_int(request)
        view = _view(request)
        with reader.read() as conn:
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
        found = replays.get(key)
        if found is None:
            found = replays.put(
                key, _replay(game_id, gq.decode_record(game_id, encoding, blob), view)
            )
        return Response(found, media_type="application/json")

    # ------------------------------------------------------------ live

    def _referee() -> Referee:
        if referee is None:
            raise HTTPException(
                404, "no referee to follow: start arena web with --server ADDR (see arena serve)"
            )
        return referee

    async def live_page(request: Request) -> Response:
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
            info = await _referee().match(match_id)
        except LiveError as exc:
            raise HTTPException(exc.status, str(exc)) from exc
        return page(request, "live_match.html", match=info)

    async def api_live_matches(request: Request) -> Response:
        try:
            return JSONResponse({"matches": await _referee().matches()})
        except LiveError as exc:
            raise HTTPException(exc.status, str(exc)) from exc

    async def api_live_match(request: Request) -> Response:
        try:
            return JSONResponse(await _referee().match(request.path_params["match_id"]))
        except LiveError as exc:
            raise HTTPException(exc.status, str(exc)) from exc

    async def live_events(request: Request) -> Response:
        after = parse_last_id(request.headers.get("last-event-id"))
        stream = _referee().stream(request.path_params["match_id"], after)
        return StreamingResponse(
            stream,
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    def api_index(request: Request) -> Response:
        return JSONResponse(
            {
                "events": "/api/events",
                "event": "/api/events/{id}",
                "boards": "/api/boards",
                "board": "/api/boards/{id}",
                "entrant": "/api/entrants/{id}",
                "entrant_history": "/api/entrants/{id}/history?board={board_id}",
                "games": "/api/games?event=&entrant=&outcome=&before=&limit=",
                "game": "/api/games/{id}",
                "replay": "/api/games/{id}/replay?view=full|{seat}",
                "live_matches": "/api/live/matches",
                "live_match": "/api/live/matches/{match_id}",
                "live_events": "/live/{match_id}/events",
            }
        )

    # ------------------------------------------------------------ errors

    def _error(request: Request, status: int, message: str) -> Response:
        if request.url.path.startswith("/api/") or request.url.path.endswith("/events"):
            return JSONResponse({"error": message}, status_code=status)
        return page(request, "error.html", status=status, status_code=status, message=message)

    def _handler(status: int) -> Callable[[Request, Exception], Awaitable[Response]]:
        async def handle(request: Request, exc: Exception) -> Response:
            return _error(request, status, str(exc))

        return handle

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        message = (
            exc.detail
            if exc.status_code != 404 or exc.detail != "Not Found"
            else (f"nothing at {q.cap(request.url.path, 100)}")
        )
        return _error(request, exc.status_code, str(message))

    routes = [
        Route("/", index),
        Route("/events/{id:int}", event_page),
        Route("/boards/{id:int}", board_page),
        Route("/entrants/{id:int}", entrant_page),
        Route("/games", games_page),
        Route("/games/{id:int}", game_page),
        Route("/live", live_page),
        Route("/live/{match_id:str}", live_match_page),
        Route("/live/{match_id:str}/events", live_events),
        Route("/api", api_index),
        Route("/api/events", api_events),
        Route("/api/events/{id:int}", api_event),
        Route("/api/boards", api_boards),
        Route("/api/boards/{id:int}", api_board),
        Route("/api/entrants/{id:int}", api_entrant),
        Route("/api/entrants/{id:int}/history", api_history),
        Route("/api/games", api_games),
        Route("/api/games/{id:int}", api_game),
        Route("/api/games/{id:int}/replay", api_replay),
        Route("/api/live/matches", api_live_matches),
        Route("/api/live/matches/{match_id:str}", api_live_match),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]

    def warm() -> None:
        try:
            q.warm(tally)
        except LedgerUnavailable as exc:  # the pages will say so when asked
            log.warning("counting the ledger's games ahead of the first page failed: %s", exc)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        threading.Thread(target=warm, name="arena-web-warm", daemon=True).start()
        yield

    return Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            *([Middleware(LoopbackOnly)] if loopback_only else []),
            Middleware(SecurityHeaders),
            Middleware(GZipMiddleware, minimum_size=1000, compresslevel=3),
        ],
        exception_handlers={
            HTTPException: http_error,
            BadRequest: _handler(400),
            q.NotFound: _handler(404),
            ReplayError: _handler(500),
            LedgerUnavailable: _handler(503),
        },
    )


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


class FrameCache:
    """The last replays served (building one steps through the whole game), least recently used out."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: Hashable, value: bytes) -> bytes:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value


def _sealed_message(game_id: int) -> str:
    return (
        f"game {game_id}'s deal is still to be played in another seat rotation, or by another "
        "pairing or round on a deal suite: its cards stay secret until every game of the deal is "
        "finished"
    )
