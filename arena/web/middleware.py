"""The web app's middleware: security headers on every answer, and, for a server listening on
loopback, requests only from this machine's own pages."""

from __future__ import annotations

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Everything from this server only; scripts only from files (no inline script runs); the JSON a page
# carries sits in <script type="application/json">, which is data.
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        b"frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


class LoopbackOnly:
    """Answer only requests that name this machine in their Host header (for a server listening on
    loopback). A page of another site can make a browser send requests to a name of its own that it
    then points at 127.0.0.1 (DNS rebinding), and read the answers as its own: such a request names
    that other site, and is refused. A page of another site may still make the browser send requests
    to 127.0.0.1 itself, unread but not harmless: a red-team page held every one of the Live page's
    watcher slots with event streams. Such a request (the browser says so in ``Sec-Fetch-Site``, or
    its ``Origin`` names another site) is refused too, unless it is a navigation: a link from
    elsewhere still opens the leaderboard."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = None
            headers = _headers(scope)
            if host_name(headers.get(b"host", "")) not in LOOPBACK_NAMES:
                refusal = PlainTextResponse(
                    "this server answers only requests for this machine (127.0.0.1 or localhost)",
                    421,
                )
            elif _from_another_site(headers, scope.get("scheme", "http")):
                refusal = PlainTextResponse("this server answers no other site's pages", 403)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _headers(scope: Scope) -> dict[bytes, str]:
    """A request's headers by name, each value stripped and in lower case (the first of a name)."""
    found: dict[bytes, str] = {}
    for key, value in scope.get("headers", ()):
        found.setdefault(bytes(key), bytes(value).decode("latin-1").strip().lower())
    return found


def _from_another_site(headers: dict[bytes, str], scheme: str) -> bool:
    """A request a page of another site made the browser send, other than a navigation."""
    if headers.get(b"sec-fetch-mode") == "navigate":
        return False
    if headers.get(b"sec-fetch-site", "") in ("cross-site", "same-site"):
        return True
    origin = headers.get(b"origin", "")  # browsers without Sec-Fetch-* headers
    return bool(origin) and origin != f"{scheme}://{headers.get(b'host', '')}"


def host_name(host: str) -> str:
    """The host a Host header names, without its port ("" for none): ``[::1]:8000`` is ``::1``."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
