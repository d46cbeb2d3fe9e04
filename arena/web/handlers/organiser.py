"""The organiser's pages: the competition's state (paused or running, every submission), pause and
resume, suspend a bot with a reason and reinstate it, the authors and adding one (their token shown
once, on the answer to that POST alone). Each action is one of the submission service's organiser
calls, with the organiser's token kept in the session."""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import Response

from arena.web.area import call_service, posted, see_other, session_of
from arena.web.handlers.author import private
from arena.wire.v1 import competition_pb2 as pb

log = logging.getLogger(__name__)


async def organiser_page(request: Request) -> Response:
    session = session_of(request, "organiser")
    status = await call_service(
        request,
        session,
        lambda stub, md: stub.OrganiserStatus(pb.OrganiserStatusRequest(), metadata=md),
    )
    authors = await call_service(
        request, session, lambda stub, md: stub.ListAuthors(pb.ListAuthorsRequest(), metadata=md)
    )
    subs = sorted(status.submissions, key=lambda s: s.submission_id, reverse=True)
    return private(
        request,
        "organiser.html",
        session=session,
        competition=status.competition,
        paused=status.paused,
        submissions=subs,
        active_bots=sorted({s.bot for s in subs if s.status == "active"}),
        suspended_bots=sorted({s.bot for s in subs if s.status == "suspended"}),
        authors=list(authors.authors),
    )


async def _set_paused(request: Request, paused: bool) -> Response:
    session, _ = await posted(request, "organiser")
    await call_service(
        request,
        session,
        lambda stub, md: stub.SetPaused(pb.SetPausedRequest(paused=paused), metadata=md),
    )
    log.info("the organiser %s the competition", "paused" if paused else "resumed")
    return see_other("/organiser")


async def pause(request: Request) -> Response:
    return await _set_paused(request, True)


async def resume(request: Request) -> Response:
    return await _set_paused(request, False)


async def suspend(request: Request) -> Response:
    session, form = await posted(request, "organiser")
    bot, reason = form.get("bot", ""), form.get("reason", "")
    await call_service(
        request,
        session,
        lambda stub, md: stub.Suspend(pb.SuspendRequest(bot=bot, reason=reason), metadata=md),
    )
    log.info("the organiser suspended %s", bot)
    return see_other("/organiser")


async def reinstate(request: Request) -> Response:
    session, form = await posted(request, "organiser")
    bot = form.get("bot", "")
    await call_service(
        request,
        session,
        lambda stub, md: stub.Reinstate(pb.ReinstateRequest(bot=bot), metadata=md),
    )
    log.info("the organiser reinstated %s", bot)
    return see_other("/organiser")


async def add_author(request: Request) -> Response:
    """A new author; their token is shown on this answer alone (never cached, never again)."""
    session, form = await posted(request, "organiser")
    name = form.get("name", "")
    added = await call_service(
        request,
        session,
        lambda stub, md: stub.AddAuthor(pb.AddAuthorRequest(name=name), metadata=md),
    )
    log.info("the organiser added the author %r", added.name)
    return private(request, "organiser_author_added.html", session=session, added=added)
