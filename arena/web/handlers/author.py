"""The author area: signing in (an author's or the organiser's token exchanged for a session) and
out, and the author's pages: their bots and submissions, a submission's build and check log, status
history, failures and time use, their own bots' output of a game, uploading a bundle (a new version),
and withdrawing a bot. Every action is a call to the competition's submission service
(:mod:`arena.web.submissions`) with the session's token; the token itself is never put in a page, a
URL, a cookie or a log line.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from arena.web import game_queries as gq
from arena.web.area import (
    NO_STORE,
    UPLOADS_AT_ONCE,
    UPLOADS_PER_AUTHOR,
    area_of,
    call_service,
    check_csrf,
    posted,
    see_other,
    session_of,
    small_form,
)
from arena.web.handlers.common import page, path_int, state
from arena.web.handlers.games import _replay as replay_frames
from arena.web.handlers.games import seat_view
from arena.web.sessions import (
    COOKIE,
    MOST_SECONDS,
    SIGNIN_COOKIE,
    Session,
    clear_cookie,
    set_cookie,
)
from arena.web.submissions import ServiceError
from arena.web.uploads import UploadError, boundary_of, parse_form, read_capped
from arena.wire.v1 import competition_pb2 as pb

log = logging.getLogger(__name__)

MAX_TOKEN = 200  # characters of a token pasted
IN_INTAKE = ("building", "checking")
GAMES_SHOWN = 20  # an entrant's last games on its submission's page


def private(request: Request, name: str, status: int = 200, **context: Any) -> Response:
    """A page of the area: never cached (it carries the session's CSRF token)."""
    response = page(request, name, status=status, **context)
    response.headers.update(NO_STORE)
    return response


# ---------------------------------------------------------------- signing in and out


def _signin_page(request: Request, problem: str = "", status: int = 200) -> Response:
    area = area_of(request)
    nonce, token = area.signin.pair()
    response = private(request, "signin.html", status=status, csrf=token, problem=problem)
    set_cookie(response, SIGNIN_COOKIE, nonce, area.secure, 3600)
    return response


async def signin_page(request: Request) -> Response:
    area = area_of(request)
    found = area.sessions.find(request.cookies.get(COOKIE))
    if found is not None:
        return see_other("/organiser" if found.role == "organiser" else "/author")
    return _signin_page(request)


async def signin(request: Request) -> Response:
    """The token pasted in the sign-in form (a POST: never a URL's parameter), checked by the
    submission service (WhoAmI); a session for it."""
    area = area_of(request)
    form = await small_form(request)
    if not area.signin.check(request.cookies.get(SIGNIN_COOKIE), form.get("csrf")):
        raise HTTPException(403, "the sign-in form's CSRF token is missing or stale: reload it")
    token = form.get("token", "").strip()
    if not token or len(token) > MAX_TOKEN or not token.isprintable():
        return _signin_page(request, "paste your token (from the organiser)", 400)
    try:
        me = await area.service.call(
            token, lambda stub, md: stub.WhoAmI(pb.WhoAmIRequest(), metadata=md)
        )
    except ServiceError as exc:
        if exc.status in (401, 403):
            return _signin_page(
                request, "that token is no author's or organiser's of this competition", 401
            )
        raise
    session = area.sessions.start(token, me.role, me.name, me.competition, me.max_bundle_mb)
    log.info("signed in: the %s%s", me.role, f" {me.name!r}" if me.name else "")
    response = see_other("/organiser" if me.role == "organiser" else "/author")
    set_cookie(response, COOKIE, session.id, area.secure, MOST_SECONDS)
    clear_cookie(response, SIGNIN_COOKIE, area.secure)
    return response


async def signout(request: Request) -> Response:
    area = area_of(request)
    session = area.sessions.find(request.cookies.get(COOKIE))
    if session is None:
        raise HTTPException(403, "no session (signed out or expired)")
    form = await small_form(request)
    check_csrf(session, form.get("csrf"))
    area.sessions.end(session.id)
    log.info("signed out: the %s%s", session.role, f" {session.name!r}" if session.name else "")
    response = see_other("/")
    clear_cookie(response, COOKIE, area.secure)
    return response


# ---------------------------------------------------------------- the author's pages


async def author_page(request: Request) -> Response:
    session = session_of(request, "author")
    listed = await call_service(
        request,
        session,
        lambda stub, md: stub.ListSubmissions(pb.ListSubmissionsRequest(), metadata=md),
    )
    subs = sorted(listed.submissions, key=lambda s: s.submission_id, reverse=True)
    bots: dict[str, list[pb.SubmissionInfo]] = {}
    for s in subs:
        bots.setdefault(s.bot, []).append(s)
    withdrawable = {
        bot
        for bot, versions in bots.items()
        if any(v.status in (*IN_INTAKE, "active", "suspended") for v in versions)
    }
    return private(
        request,
        "author.html",
        session=session,
        bots=bots,
        withdrawable=withdrawable,
        in_intake=any(s.status in IN_INTAKE for s in subs),
    )


async def submission_page(request: Request) -> Response:
    session = session_of(request, "author")
    sid = path_int(request)
    answer = await call_service(
        request,
        session,
        lambda stub, md: stub.GetLog(pb.GetLogRequest(submission_id=sid), metadata=md),
    )
    listed = await call_service(
        request,
        session,
        lambda stub, md: stub.ListSubmissions(pb.ListSubmissionsRequest(), metadata=md),
    )
    sub = next((s for s in listed.submissions if s.submission_id == sid), None)
    if sub is None:  # withdrawn and gone between the two calls: as the service says of it
        raise HTTPException(404, f"you have no submission {sid}")
    games: list[dict[str, Any]] = []
    if sub.entrant_id:

        def last_games() -> list[dict[str, Any]]:
            with state(request).reader.read() as conn:
                return gq.games(conn, gq.GameFilter(entrant=sub.entrant_id, limit=GAMES_SHOWN))[0]

        games = await run_in_threadpool(last_games)
    return private(
        request,
        "author_submission.html",
        session=session,
        sub=sub,
        log=answer.log,
        history=list(answer.history),
        failures=list(answer.failures),
        time_use=answer.time_use if answer.HasField("time_use") else None,
        games=games,
        in_intake=sub.status in IN_INTAKE,
    )


async def game_log_page(request: Request) -> Response:
    session = session_of(request, "author")
    game_id = path_int(request)
    answer = await call_service(
        request,
        session,
        lambda stub, md: stub.GetGameLog(pb.GetGameLogRequest(game_id=game_id), metadata=md),
    )
    return private(request, "author_game.html", session=session, game=answer)


async def open_game(request: Request) -> Response:
    """The form "a game's log": its id, to the game's log page."""
    session_of(request, "author")
    raw = request.query_params.get("game", "").strip().removeprefix("#")
    if not raw.isdigit() or len(raw) > 18:
        raise HTTPException(400, f"a game's id is a whole number, got {raw[:40]!r}")
    return see_other(f"/author/games/{int(raw)}")


async def upload(request: Request) -> Response:
    """A bundle from the browser: refused before it is read when its declared length is over the
    competition's cap, and as it arrives when its bytes are (413); then submitted."""
    session = session_of(request, "author")  # no session: refused before the body is read
    uploading = area_of(request).uploading
    # Refused before the body is read, too: each upload is held whole until it is submitted.
    if uploading[session.name] >= UPLOADS_PER_AUTHOR:
        raise HTTPException(
            429, f"you have {UPLOADS_PER_AUTHOR} uploads under way, the most at once; wait for one"
        )
    if uploading.total() >= UPLOADS_AT_ONCE:
        raise HTTPException(
            503, f"the server reads {UPLOADS_AT_ONCE} uploads at once; try again in a moment"
        )
    uploading[session.name] += 1
    try:
        return await _take_upload(request, session)
    finally:
        uploading[session.name] -= 1
        if uploading[session.name] <= 0:
            del uploading[session.name]


async def _take_upload(request: Request, session: Session) -> Response:
    try:
        boundary = boundary_of(request.headers.get("content-type"))
        body = await read_capped(
            request.stream(), request.headers.get("content-length"), session.max_bundle_mb
        )
        form = parse_form(body, boundary)
    except UploadError as exc:
        raise HTTPException(exc.status, str(exc)) from None
    csrf = form.get("csrf")
    check_csrf(session, csrf.data.decode("utf-8", "replace") if csrf else None)
    bundle = form.get("bundle")
    if bundle is None or not bundle.data:
        raise HTTPException(400, "choose a bundle to upload (a .tar.gz of your bot's folder)")
    data = bundle.data
    del body, form
    answer = await call_service(
        request,
        session,
        lambda stub, md: stub.Submit(pb.SubmitRequest(bundle=data), metadata=md),
    )
    log.info("%r uploaded %s %s", session.name, answer.bot, answer.version)
    return see_other(f"/author/submissions/{answer.submission_id}")


async def withdraw_page(request: Request) -> Response:
    session = session_of(request, "author")
    return private(request, "author_withdraw.html", session=session, bot=request.path_params["bot"])


async def withdraw(request: Request) -> Response:
    session, _ = await posted(request, "author")
    bot = request.path_params["bot"]
    answer = await call_service(
        request,
        session,
        lambda stub, md: stub.Withdraw(pb.WithdrawRequest(bot=bot), metadata=md),
    )
    log.info("%r withdrew %s (%d submissions)", session.name, bot, answer.withdrawn)
    return see_other("/author")


# ---------------------------------------------------------------- challenges

MAX_CHALLENGE_NAME = 120  # characters of NAME@VERSION typed in the challenge form


async def _challenges_page(
    request: Request, session: Session, problem: str = "", status: int = 200, **asked: str
) -> Response:
    listed = await call_service(
        request,
        session,
        lambda stub, md: stub.ListChallenges(pb.ListChallengesRequest(), metadata=md),
    )
    subs = await call_service(
        request,
        session,
        lambda stub, md: stub.ListSubmissions(pb.ListSubmissionsRequest(), metadata=md),
    )
    in_play = sorted({s.bot for s in subs.submissions if s.status == "active"})
    return private(
        request,
        "author_challenges.html",
        status=status,
        session=session,
        challenges=list(listed.challenges),
        in_play=in_play,
        problem=problem,
        asked=asked,
    )


async def challenges_page(request: Request) -> Response:
    """The author's challenges (theirs alone: the service lists the caller's), and the form that
    asks for one."""
    session = session_of(request, "author")
    return await _challenges_page(request, session)


async def challenge(request: Request) -> Response:
    """Ask for a challenge: N games of a bot of the author's against an entrant in play. The
    service's refusal (quota, cap, a remote entrant, no such bot...) is shown on the form."""
    session, form = await posted(request, "author")
    bot = form.get("bot", "").strip()
    against = form.get("against", "").strip()
    raw_games = form.get("games", "").strip()
    asked = {"bot": bot, "against": against, "games": raw_games}
    problem = ""
    if not bot or not against:
        problem = "choose your bot and the entrant it plays against (NAME or NAME@VERSION)"
    elif len(bot) > MAX_CHALLENGE_NAME or len(against) > MAX_CHALLENGE_NAME:
        problem = f"a bot's NAME@VERSION is at most {MAX_CHALLENGE_NAME} characters"
    elif not raw_games.isdigit() or not 1 <= int(raw_games) <= 2**31:
        problem = f"games: a whole number of games, 1 or more; got {raw_games[:20]!r}"
    if problem:
        return await _challenges_page(request, session, problem, 400, **asked)
    games = int(raw_games)
    try:
        answer = await call_service(
            request,
            session,
            lambda stub, md: stub.Challenge(
                pb.ChallengeRequest(bot=bot, against=against, games=games), metadata=md
            ),
        )
    except ServiceError as exc:
        if exc.status >= 500 or exc.status == 401:
            raise
        return await _challenges_page(request, session, str(exc), exc.status, **asked)
    log.info("%r asked for challenge %d: %s v %s", session.name, answer.challenge_id, bot, against)
    return see_other(f"/author/challenges#challenge-{answer.challenge_id}")


async def cancel_challenge(request: Request) -> Response:
    session, _ = await posted(request, "author")
    challenge_id = path_int(request)
    try:
        await call_service(
            request,
            session,
            lambda stub, md: stub.CancelChallenge(
                pb.CancelChallengeRequest(challenge_id=challenge_id), metadata=md
            ),
        )
    except ServiceError as exc:
        if exc.status >= 500 or exc.status == 401:
            raise
        return await _challenges_page(request, session, str(exc), exc.status)
    log.info("%r cancelled challenge %d", session.name, challenge_id)
    return see_other(f"/author/challenges#challenge-{challenge_id}")


async def _challenge_replay(request: Request, session: Session) -> pb.ChallengeReplayResponse:
    game_id = path_int(request)
    answer: pb.ChallengeReplayResponse = await call_service(
        request,
        session,
        lambda stub, md: stub.ChallengeReplay(
            pb.ChallengeReplayRequest(game_id=game_id), metadata=md
        ),
    )
    return answer


async def challenge_game_page(request: Request) -> Response:
    """A challenge game's replay, played as the public game page plays a ranked game's: its frames
    come from :func:`challenge_frames`; below it, the author's own bots' output of the game. The
    service decides whether the game may be shown (its author's, its deal over); its refusal is
    shown as the page."""
    session = session_of(request, "author")
    answer = await _challenge_replay(request, session)
    return private(
        request,
        "author_challenge_game.html",
        session=session,
        game=answer.game,
        seats=list(answer.seats),
    )


async def challenge_frames(request: Request) -> Response:
    """A challenge game's replay frames in one view (``view``: full or a seat), as JSON."""
    session = session_of(request, "author")
    view = seat_view(request)
    answer = await _challenge_replay(request, session)
    try:
        data = json.loads(answer.record)
    except ValueError as exc:
        raise HTTPException(502, f"the service's record is not JSON: {exc}") from None
    body = await run_in_threadpool(replay_frames, answer.game.game_id, data, view)
    response = Response(body, media_type="application/json")
    response.headers.update(NO_STORE)
    return response
