"""The author area's state and what its pages share: the competition's submission service, the
sessions, finding the session of a request and checking a POST's CSRF token, and reading a small
form. Made once by :func:`arena.web.app.create_app` when given the submission service's address.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from arena.web.sessions import COOKIE, Session, SessionStore, SignInGuard, csrf_matches
from arena.web.submissions import SubmissionService

MAX_FORM = 16 * 1024  # bytes of a form that is not an upload (a name, a reason, the CSRF token)
NO_STORE = {"cache-control": "no-store"}  # pages with a CSRF token or a secret shown once
# Uploads read at once (each is held whole, up to the bundle's cap, until it is submitted): by one
# author, and in all. Without them, forty uploads of one author's at once held forty bundles'
# worth of the web's memory; the submission service takes an author's calls a few at a time anyway.
UPLOADS_PER_AUTHOR = 2
UPLOADS_AT_ONCE = 8


@dataclass(frozen=True, slots=True)
class AuthorArea:
    service: SubmissionService
    secure: bool  # cookies marked Secure (the web is served beyond loopback)
    sessions: SessionStore = field(default_factory=SessionStore)
    signin: SignInGuard = field(default_factory=SignInGuard)
    uploading: Counter[str] = field(default_factory=Counter)  # uploads being read, by author


class SignInNeeded(Exception):
    """A page of the author area asked for with no live session: the sign-in page is shown."""


def area_of(request: Request) -> AuthorArea:
    found: AuthorArea | None = request.app.state.web.area
    if found is None:
        raise HTTPException(404, "this web serves no author area (arena web --submissions)")
    return found


def session_of(request: Request, role: str) -> Session:
    """The request's live session, of ``role``. A page with none: :class:`SignInNeeded`; a POST
    with none (never signed in, signed out, expired): refused, 403. The other role's session: 403."""
    session = area_of(request).sessions.find(request.cookies.get(COOKIE))
    if session is None:
        if request.method == "GET":
            raise SignInNeeded()
        raise HTTPException(403, "no session (signed out or expired): sign in again")
    if session.role != role:
        raise HTTPException(
            403, f"this page is the {role}'s; you are signed in as the {session.role}"
        )
    return session


async def small_form(request: Request) -> dict[str, str]:
    """An url-encoded form of at most :data:`MAX_FORM` bytes, each field's first value; none (its
    body unread) for a body of another kind, which has then no CSRF token either."""
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        return {}
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM:
            raise HTTPException(413, f"the form is over {MAX_FORM} bytes")
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {key: values[0] for key, values in fields.items()}


async def call_service(request: Request, session: Session, call: Any) -> Any:
    """A call of the submission service made with the session's token (``call(stub, metadata)``)."""
    return await area_of(request).service.call(session.token, call)


def check_csrf(session: Session, given: str | None) -> None:
    if not csrf_matches(session.csrf, given):
        raise HTTPException(403, "the form's CSRF token is missing or stale: reload the page")


async def posted(request: Request, role: str) -> tuple[Session, dict[str, str]]:
    """A POST's session (of ``role``) and its form, its CSRF token checked."""
    session = session_of(request, role)
    form = await small_form(request)
    check_csrf(session, form.get("csrf"))
    return session, form


def see_other(url: str) -> Response:
    return RedirectResponse(url, status_code=303)
