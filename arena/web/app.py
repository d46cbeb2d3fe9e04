"""The arena on the web: an ASGI app (Starlette) over one ledger, read-only, and optionally a running
referee to follow live.

Pages (Jinja2 templates, autoescaped everywhere) and a JSON API under ``/api`` serve the same data:

    /                       events (tournaments and competitions) and the pooled boards
    /events/ID              an event and its leaderboard          /api/events, /api/events/ID
    /boards/ID              any leaderboard (the pooled ones)     /api/boards, /api/boards/ID
                            (100 lines a page: ?page=N, ?q=NAME searches, ?entrant=ID its page)
    /entrants/ID            rating history and recent games       /api/entrants/ID, .../history
                                                                  /api/entrants?q=NAME (a search)
    /games                  games, filtered                       /api/games
    /games/ID               the replay player                     /api/games/ID, .../replay
    /live, /live/MATCH      a running referee's matches, live     /api/live/matches[/MATCH],
                                                                  /live/MATCH/events (server-sent events)

With the address of a competition's submission service (``arena web --submissions``), its author area
too (:mod:`arena.web.handlers.author`, :mod:`arena.web.handlers.organiser`; sessions in
:mod:`arena.web.sessions`), every action a call to that service:

    /signin, /signout       an author's or the organiser's token exchanged for a session (POSTs)
    /author                 the author's bots and submissions; upload a bundle (POST /author/upload)
    /author/submissions/ID  its build and check log, status history, failures, time use, last games
    /author/games/ID        the author's own bots' output of a game
    /author/bots/BOT/withdraw   confirm, then POST
    /author/challenges      the author's challenges, asking for one and cancelling (POSTs)
    /author/challenges/games/ID the replay of a challenge game of theirs, once its deal is over
    /organiser              pause/resume, suspend/reinstate, authors (POSTs under /organiser/...)

Every asset is served from the package (``static/``): no page loads anything from another host, and the
Content-Security-Policy says so to the browser too.

The handlers live in :mod:`arena.web.handlers`, one module per page family; they share the app's state
(:class:`arena.web.handlers.common.WebState`, on ``app.state.web``), made here once.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from arena.stats import elo_text
from arena.tournament.summary import counted
from arena.web import queries as q
from arena.web.area import AuthorArea, SignInNeeded, see_other
from arena.web.game_counts import Tally
from arena.web.handlers import author, entrants, events, games, live, organiser
from arena.web.handlers.common import (
    REPLAYS_KEPT,
    BadRequest,
    FrameCache,
    WebState,
    number,
    page,
    percent,
)
from arena.web.live import Referee
from arena.web.middleware import LoopbackOnly, SecurityHeaders
from arena.web.reader import LedgerUnavailable, Reader
from arena.web.replay import ReplayError
from arena.web.submissions import ServiceError, SubmissionService

HERE = Path(__file__).parent
log = logging.getLogger(__name__)


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template, whatever its name: bot text is data
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["cap"] = q.cap
    env.filters["number"] = number
    env.filters["percent"] = percent
    env.filters["elo"] = lambda x: elo_text(x, "+.0f")  # >2400 for a bound held at the limit
    env.filters["count"] = counted  # 1 pair, 2 pairs
    return env


def api_index(request: Request) -> Response:
    return JSONResponse(
        {
            "events": "/api/events",
            "event": "/api/events/{id}?page=&q=&entrant=",
            "boards": "/api/boards",
            "board": "/api/boards/{id}?page=&q=&entrant=",
            "entrants": "/api/entrants?q=&limit=",
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


ROUTES = [
    Route("/", events.index),
    Route("/events/{id:int}", events.event_page),
    Route("/boards/{id:int}", events.board_page),
    Route("/entrants/{id:int}", entrants.entrant_page),
    Route("/games", games.games_page),
    Route("/games/{id:int}", games.game_page),
    Route("/live", live.live_page),
    Route("/live/{match_id:str}", live.live_match_page),
    Route("/live/{match_id:str}/events", live.live_events),
    Route("/api", api_index),
    Route("/api/events", events.api_events),
    Route("/api/events/{id:int}", events.api_event),
    Route("/api/boards", events.api_boards),
    Route("/api/boards/{id:int}", events.api_board),
    Route("/api/entrants", games.api_entrants),
    Route("/api/entrants/{id:int}", entrants.api_entrant),
    Route("/api/entrants/{id:int}/history", entrants.api_history),
    Route("/api/games", games.api_games),
    Route("/api/games/{id:int}", games.api_game),
    Route("/api/games/{id:int}/replay", games.api_replay),
    Route("/api/live/matches", live.api_live_matches),
    Route("/api/live/matches/{match_id:str}", live.api_live_match),
    Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
]

# The author area (arena web --submissions): signing in and out, the author's and the organiser's
# pages; each POST carries the session's CSRF token.
AREA_ROUTES = [
    Route("/signin", author.signin_page, methods=["GET"]),
    Route("/signin", author.signin, methods=["POST"]),
    Route("/signout", author.signout, methods=["POST"]),
    Route("/author", author.author_page),
    Route("/author/submissions/{id:int}", author.submission_page),
    Route("/author/games/{id:int}", author.game_log_page),
    Route("/author/game", author.open_game),
    Route("/author/upload", author.upload, methods=["POST"]),
    Route("/author/bots/{bot:str}/withdraw", author.withdraw_page, methods=["GET"]),
    Route("/author/bots/{bot:str}/withdraw", author.withdraw, methods=["POST"]),
    Route("/author/challenges", author.challenges_page, methods=["GET"]),
    Route("/author/challenges", author.challenge, methods=["POST"]),
    Route("/author/challenges/{id:int}/cancel", author.cancel_challenge, methods=["POST"]),
    Route("/author/challenges/games/{id:int}", author.challenge_game_page),
    Route("/author/challenges/games/{id:int}/replay", author.challenge_frames),
    Route("/organiser", organiser.organiser_page),
    Route("/organiser/pause", organiser.pause, methods=["POST"]),
    Route("/organiser/resume", organiser.resume, methods=["POST"]),
    Route("/organiser/suspend", organiser.suspend, methods=["POST"]),
    Route("/organiser/reinstate", organiser.reinstate, methods=["POST"]),
    Route("/organiser/authors", organiser.add_author, methods=["POST"]),
]


# ---------------------------------------------------------------- errors


def _error(request: Request, status: int, message: str) -> Response:
    if request.url.path.startswith("/api/") or request.url.path.endswith("/events"):
        return JSONResponse({"error": message}, status_code=status)
    return page(request, "error.html", status=status, status_code=status, message=message)


def _handler(status: int) -> Callable[[Request, Exception], Awaitable[Response]]:
    async def handle(request: Request, exc: Exception) -> Response:
        return _error(request, status, str(exc))

    return handle


async def service_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServiceError)
    return _error(request, exc.status, str(exc))


async def sign_in_needed(request: Request, exc: Exception) -> Response:
    return see_other("/signin")


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = (
        exc.detail
        if exc.status_code != 404 or exc.detail != "Not Found"
        else (f"nothing at {q.cap(request.url.path, 100)}")
    )
    return _error(request, exc.status_code, str(message))


# ---------------------------------------------------------------- the app


def _warm(tally: Tally) -> None:
    try:
        q.warm(tally)
    except LedgerUnavailable as exc:  # the pages will say so when asked
        log.warning("counting the ledger's games ahead of the first page failed: %s", exc)


@contextlib.asynccontextmanager
async def _lifespan(app: Starlette) -> AsyncIterator[None]:
    st: WebState = app.state.web
    threading.Thread(target=_warm, args=(st.tally,), name="arena-web-warm", daemon=True).start()
    yield


def create_app(
    ledger: str | Path,
    server: str | None = None,
    admin_token: str | None = None,
    *,
    loopback_only: bool = False,
    submissions: str | None = None,
    secure_cookies: bool = True,
) -> Starlette:
    """The web app over ``ledger`` (opened read-only; :class:`reader.LedgerUnavailable` if it cannot
    be read), following the referee at ``server`` live when given. ``loopback_only``: for a server
    listening on loopback, answer only requests whose Host names this machine (:class:`LoopbackOnly`).
    ``submissions``: a competition's submission address, whose author area it serves (its cookies
    Secure unless ``secure_cookies`` is false: for a web served on loopback alone)."""
    reader = Reader(ledger)
    area = (
        AuthorArea(SubmissionService(submissions), secure=secure_cookies) if submissions else None
    )
    app = Starlette(
        routes=[*ROUTES, *(AREA_ROUTES if area else [])],
        lifespan=_lifespan,
        middleware=[
            *([Middleware(LoopbackOnly)] if loopback_only else []),
            Middleware(SecurityHeaders),
            Middleware(GZipMiddleware, minimum_size=1000, compresslevel=3),
        ],
        exception_handlers={
            HTTPException: http_error,
            ServiceError: service_error,
            SignInNeeded: sign_in_needed,
            BadRequest: _handler(400),
            q.NotFound: _handler(404),
            ReplayError: _handler(500),
            LedgerUnavailable: _handler(503),
        },
    )
    app.state.web = WebState(
        reader=reader,
        tally=Tally(reader),
        referee=Referee(server, admin_token) if server else None,
        templates=Jinja2Templates(env=environment()),
        replays=FrameCache(REPLAYS_KEPT),
        area=area,
    )
    return app
