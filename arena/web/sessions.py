"""The author area's sessions: a signed-in author's (or the organiser's) token exchanged for a random
session id, kept server-side with its expiry; the cookie carries the id alone (HttpOnly,
SameSite=Strict, Secure when the web is served beyond loopback). Each session has its CSRF token,
which every state-changing request (a POST) must carry; sign-out ends the session here.

Before a session exists (the sign-in form), the form's CSRF token is tied to a random value in a
cookie of its own, by an HMAC under a key made at start (:class:`SignInGuard`): nothing is kept per
visitor, so a flood of visits to the sign-in page costs no memory.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.responses import Response

COOKIE = "arena_session"
SIGNIN_COOKIE = "arena_signin"
IDLE_SECONDS = 2 * 3600  # a session unused this long ends
MOST_SECONDS = 12 * 3600  # and any session ends this long after sign-in
MOST_SESSIONS = 10_000  # past it, the least recently used session ends


@dataclass(slots=True)
class Session:
    """A signed-in author's or the organiser's session. ``token`` is their secret: it never leaves
    the server (never in a cookie, a URL, a page or a log line), only the calls to the competition's
    submission service carry it."""

    id: str
    token: str = field(repr=False)
    role: str  # "author" or "organiser"
    name: str
    competition: str
    max_bundle_mb: int
    csrf: str = field(repr=False)
    started: float
    used: float

    def __repr__(self) -> str:  # never the token, nor the CSRF token
        return f"Session(role={self.role!r}, name={self.name!r})"


class SessionStore:
    """The sessions by id, each ended when idle for ``idle`` seconds or ``most`` seconds after it
    began; at most ``capacity`` at a time (the least recently used ends first)."""

    def __init__(
        self,
        idle: float = IDLE_SECONDS,
        most: float = MOST_SECONDS,
        capacity: int = MOST_SESSIONS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.idle = idle
        self.most = most
        self.capacity = capacity
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def start(
        self, token: str, role: str, name: str, competition: str, max_bundle_mb: int
    ) -> Session:
        now = self.clock()
        session = Session(
            id=secrets.token_urlsafe(32),
            token=token,
            role=role,
            name=name,
            competition=competition,
            max_bundle_mb=max_bundle_mb,
            csrf=secrets.token_urlsafe(32),
            started=now,
            used=now,
        )
        with self._lock:
            self._sessions[session.id] = session
            while len(self._sessions) > self.capacity:
                self._sessions.popitem(last=False)
        return session

    def find(self, session_id: str | None) -> Session | None:
        """The live session of that id (its use noted), None when there is none or it expired."""
        if not session_id:
            return None
        now = self.clock()
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return None
            if now - session.used > self.idle or now - session.started > self.most:
                del self._sessions[session_id]
                return None
            session.used = now
            self._sessions.move_to_end(session_id)
            return session

    def end(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    def __len__(self) -> int:
        return len(self._sessions)


def csrf_matches(expected: str, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(expected.encode(), (given or "").encode())


class SignInGuard:
    """The sign-in form's CSRF token: an HMAC of a random value the browser holds in a cookie of its
    own (SameSite=Strict, so another site's page cannot send it), under a key made at start."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def pair(self) -> tuple[str, str]:
        """(the cookie's value, the form's token)."""
        nonce = secrets.token_urlsafe(24)
        return nonce, self.token_for(nonce)

    def token_for(self, nonce: str) -> str:
        return hmac.new(self._key, nonce.encode(), hashlib.sha256).hexdigest()

    def check(self, nonce: str | None, given: str | None) -> bool:
        return bool(nonce) and csrf_matches(self.token_for(nonce or ""), given)


def set_cookie(response: Response, name: str, value: str, secure: bool, max_age: int) -> None:
    response.set_cookie(
        name, value, max_age=max_age, path="/", httponly=True, samesite="strict", secure=secure
    )


def clear_cookie(response: Response, name: str, secure: bool) -> None:
    response.delete_cookie(name, path="/", httponly=True, samesite="strict", secure=secure)
