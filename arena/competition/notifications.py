"""Notifications (issue 45): an author's webhook, told of their submissions' changes of status (built,
failed, in play, suspended, replaced) and, once a day when there is anything to say, of the games
their bots caused to fail.

A change of status queues a row in the ledger, in the transaction that records it
(:mod:`arena.ledger.webhooks`): that is all the play loop, the intake or a command ever does. The
:class:`Notifier`, a task of its own, delivers the rows: ``deliveries_at_once`` at a time, each
attempt within ``timeout_seconds``, retried with a doubling backoff up to ``attempts`` times; a
receiver that fails ``disable_after`` attempts in a row is disabled, and ``arena compete webhook
show`` tells its author why. Deliveries queued survive a restart.

Each delivery is a POST of a JSON object (``Content-Type: application/json``) with these headers:

- ``X-Arena-Event``: the event (``built``, ``failed``, ``active``, ``suspended``, ``replaced``,
  ``digest``); ``X-Arena-Delivery``: the delivery's id (the same on each attempt: a receiver may
  drop one it has seen);
- ``X-Arena-Timestamp``: when it was sent (unix seconds);
- ``X-Arena-Signature``: ``sha256=`` and the hex HMAC-SHA256, keyed with the webhook's secret, of
  the timestamp, a dot and the raw body: a receiver checks it, and refuses a timestamp more than a
  few minutes old (a delivery replayed later).

The secret is shown once, when the webhook is set. The ledger keeps only a random nonce; the secret
is the HMAC-SHA256 of that nonce keyed with the server's own key, a file beside the submitted
bundles (``webhook.key``, readable by the server's user alone, never in the ledger, never in a
folder a bot sees): a copy of the ledger (the web reads it) gives no secret, and setting the webhook
again makes a new one.

A webhook's URL is https, or http only to a host the organiser allows (``[notifications]
allowed_hosts``). Its host is resolved at every attempt, and an address that is not public
(loopback, private, link-local, reserved...) is refused unless the host is allowed; the request goes
to the address checked, never resolved again (no rebinding between the check and the connection).
Redirects are not followed: a 3xx answer is a failed attempt.

The client is asyncio's own streams (with :mod:`ssl` for https): no HTTP client is among the
project's dependencies (httpx comes only with the tests), and urllib would resolve the host itself,
after the check, and follow redirects.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import socket
import ssl
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from arena.competition import intake
from arena.competition.desk_port import SubmissionError
from arena.competition.server_state import CompetitionState
from arena.competition.spec import Notifications
from arena.ledger import competitions as store
from arena.ledger.webhooks import Delivery, Webhook, Webhooks
from arena.play.ledger_thread import LedgerWorker

KEY_FILE = "webhook.key"
MAX_URL = 2000
MAX_STATUS_LINE = 8 * 1024
DIGEST_LOOK_SECONDS = 60.0  # how often the notifier looks for the daily digests due
POLL_SECONDS = 0.5  # how often it looks for deliveries due
SIGNATURE = "X-Arena-Signature"
TIMESTAMP = "X-Arena-Timestamp"


class DeliveryError(Exception):
    """A delivery's attempt that failed; the message says why (shown to the webhook's author)."""


# --------------------------------------------------------------------------- the secret, the signature


def load_key(path: Path) -> bytes:
    """The server's webhook key (made at first use, whole or not at all; readable by its owner
    alone: a looser mode is tightened)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        fd, made = tempfile.mkstemp(dir=path.parent, prefix=".webhook-key-")  # mode 0600
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
            with contextlib.suppress(FileExistsError):  # another server made it first
                os.link(made, path)
        finally:
            os.unlink(made)
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)
    key = path.read_text().strip()
    if len(key) < 32:
        raise ValueError(f"{path}: the webhook key is too short; remove the file to make a new one")
    return key.encode()


def secret_of(key: bytes, nonce: str) -> str:
    """A webhook's secret: its nonce (in the ledger) keyed with the server's key (not)."""
    return hmac.new(key, f"webhook:{nonce}".encode(), hashlib.sha256).hexdigest()


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature header's value: HMAC-SHA256 of ``timestamp``, ".", ``body``."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """What a receiver does (the README shows the same in a few lines)."""
    return hmac.compare_digest(sign(secret, timestamp, body).encode(), signature.encode())


# --------------------------------------------------------------------------- the URL and its host


def url_problem(url: str, allowed: tuple[str, ...]) -> str | None:
    """Why ``url`` cannot be a webhook (None: it can, as far as its text says)."""
    if not url or len(url) > MAX_URL or not url.isprintable() or any(c.isspace() for c in url):
        shown = repr(url[:80]) + (f" ({len(url)} characters)" if len(url) > 80 else "")
        return f"a webhook is an http(s) URL of at most {MAX_URL} printable characters, got {shown}"
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 (a port out of range raises)
    except ValueError:
        return f"the webhook's port is not a number from 0 to 65535: {url!r}"
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        return f"a webhook is an http(s) URL with a host, got {url!r}"
    if parts.username is not None or parts.password is not None:
        return "a webhook's URL carries no user or password (the signature says who sends)"
    if parts.scheme == "http" and host not in allowed:
        return (
            f"a webhook is an https URL; http only to a host the organiser allows "
            f"([notifications] allowed_hosts), and {host} is not one"
        )
    return None


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


async def resolve(host: str, port: int, allowed: tuple[str, ...]) -> list[str]:
    """The addresses of ``host`` a webhook may be sent to: all of them public, or the host allowed;
    DeliveryError naming the problem."""
    loop = asyncio.get_running_loop()
    try:
        found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise DeliveryError(f"cannot resolve {host}: {exc.strerror or exc}") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not addresses:
        raise DeliveryError(f"{host} has no address")
    if host.lower() not in allowed:
        private = [a for a in addresses if not _public(a)]
        if private:
            raise DeliveryError(
                f"{host} resolves to {private[0]}, not a public address; the organiser may allow "
                "the host ([notifications] allowed_hosts)"
            )
    return addresses


async def post(
    url: str, body: bytes, headers: dict[str, str], timeout: float, allowed: tuple[str, ...]
) -> int:
    """POST ``body`` to ``url`` within ``timeout`` seconds; the answer's status (2xx), or
    DeliveryError naming what went wrong (no redirect is followed)."""
    problem = url_problem(url, allowed)
    if problem is not None:
        raise DeliveryError(problem)
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    shown_host = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        shown_host += f":{port}"
    lines = [
        f"POST {target} HTTP/1.1",
        f"Host: {shown_host}",
        "User-Agent: bezique-arena-webhook",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout):
            addresses = await resolve(host, port, allowed)
            context = ssl.create_default_context() if https else None
            error: OSError | None = None
            for address in addresses:
                try:
                    reader, writer = await asyncio.open_connection(
                        address, port, ssl=context, server_hostname=host if https else None,
                        limit=MAX_STATUS_LINE,
                    )  # fmt: skip
                    break
                except OSError as exc:
                    error = exc
            if writer is None:
                raise DeliveryError(f"cannot connect to {host}:{port}: {error}")
            writer.write(request)
            await writer.drain()
            status_line = await reader.readline()
    except TimeoutError:
        raise DeliveryError(f"no answer within {timeout:g} s") from None
    except (OSError, ValueError, asyncio.LimitOverrunError, ssl.SSLError) as exc:
        raise DeliveryError(f"{type(exc).__name__}: {exc}") from exc
    finally:
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await writer.wait_closed()
    words = status_line.decode("latin-1").split()
    if len(words) < 2 or not words[0].startswith("HTTP/") or not words[1].isdigit():
        raise DeliveryError(f"not an HTTP answer: {status_line[:80]!r}")
    code = int(words[1])
    if 300 <= code < 400:
        raise DeliveryError(f"the receiver answered {code}: redirects are not followed")
    if not 200 <= code < 300:
        raise DeliveryError(f"the receiver answered {code}")
    return code


# --------------------------------------------------------------------------- delivering


class Notifier:
    """Delivers a competition's queued notifications (see the module's docstring), until cancelled.
    Its only ledger calls go through the competition's ledger worker, one short query at a time;
    the requests themselves are on the event loop, never holding the ledger."""

    def __init__(
        self,
        db: LedgerWorker,
        hooks: Webhooks,
        competition_id: int,
        settings: Notifications,
        key: bytes,
        builds: Path,
        say: Callable[[str], None],
        poll: float = POLL_SECONDS,
        digest_look: float = DIGEST_LOOK_SECONDS,
    ) -> None:
        self.db = db
        self.hooks = hooks
        self.cid = competition_id
        self.settings = settings
        self.key = key
        self.builds = builds
        self.say = say
        self.poll = poll
        self.digest_look = digest_look
        self.under_way: dict[int, asyncio.Task[None]] = {}
        self._next_digest = 0.0

    async def run(self) -> None:
        await self.db.call(self.hooks.set_caps, self.cid, self.settings.max_queued)
        try:
            while True:
                try:
                    if time.monotonic() >= self._next_digest:
                        self._next_digest = time.monotonic() + self.digest_look
                        await self.digests(datetime.now(UTC))
                    await self.deliver_due()
                except Exception as exc:  # the ledger's trouble is the play loop's to end the run
                    self.say(f"notifications: {type(exc).__name__}: {exc}")
                await asyncio.sleep(self.poll)
        finally:
            for task in self.under_way.values():
                task.cancel()
            await asyncio.gather(*self.under_way.values(), return_exceptions=True)

    async def digests(self, now: datetime) -> None:
        """Queue the daily digest of each author whose last look was a day ago."""
        for author_id in await self.db.call(self.hooks.digest_due, self.cid, now):
            await self.db.call(self.hooks.digest, self.cid, author_id, now)

    async def deliver_due(self) -> None:
        """Start the deliveries due, as many as there is room for."""
        free = self.settings.deliveries_at_once - len(self.under_way)
        due = await self.db.call(self.hooks.due, self.cid, time.time(), free, tuple(self.under_way))
        for delivery in due:
            self.under_way[delivery.id] = asyncio.create_task(self._deliver(delivery))

    def _done(self, delivery: Delivery) -> None:
        self.under_way.pop(delivery.id, None)

    def body(self, delivery: Delivery) -> bytes:
        """What is sent: the payload queued, its reason in the author's words (no path of the
        server's), and the delivery's id."""
        payload: dict[str, Any] = dict(delivery.payload)
        if isinstance(payload.get("reason"), str):
            payload["reason"] = intake.for_authors(payload["reason"], self.builds)
        payload["delivery"] = delivery.id
        return json.dumps(payload, sort_keys=True).encode()

    async def _deliver(self, delivery: Delivery) -> None:
        body = self.body(delivery)
        stamp = str(int(time.time()))
        headers = {
            "X-Arena-Event": delivery.kind,
            "X-Arena-Delivery": str(delivery.id),
            TIMESTAMP: stamp,
            SIGNATURE: sign(secret_of(self.key, delivery.nonce), stamp, body),
        }
        try:
            await self._attempt(delivery, body, headers)
        finally:
            self._done(delivery)

    async def _attempt(self, delivery: Delivery, body: bytes, headers: dict[str, str]) -> None:
        s = self.settings
        try:
            try:
                await post(delivery.url, body, headers, s.timeout_seconds, s.allowed_hosts)
            except DeliveryError:
                raise
            except Exception as exc:  # whatever else went wrong is this attempt's failure too
                raise DeliveryError(f"{type(exc).__name__}: {exc}") from exc
        except DeliveryError as exc:
            failure = await self.db.call(
                self.hooks.failed, delivery, str(exc), time.time(), attempts=s.attempts,
                first_retry=s.first_retry_seconds, disable_after=s.disable_after,
            )  # fmt: skip
            if failure.disabled:
                self.say(
                    f"author {delivery.author_id}'s webhook is disabled after "
                    f"{s.disable_after} failed deliveries in a row; the last: {exc}"
                )
        else:
            await self.db.call(self.hooks.delivered, delivery)


class WebhookDesk(CompetitionState):
    """The submissions desk's webhook calls (set, show, remove) and the notifier's start; a part of
    the competition's server (:mod:`.server`)."""

    notifier: Notifier

    @property
    def hooks(self) -> Webhooks:
        found: Webhooks | None = getattr(self, "_hooks", None)
        if found is None:
            found = self._hooks = Webhooks(self.ledger)
        return found

    @property
    def webhook_key(self) -> bytes:
        """The server's key its webhooks' secrets are derived with (made at first use)."""
        found: bytes | None = getattr(self, "_webhook_key", None)
        if found is None:
            found = self._webhook_key = load_key(self.builds.parent / KEY_FILE)
        return found

    def _start_notifier(self) -> asyncio.Task[None]:
        """The notifier, as a task of its own (called by the server's start, once its ledger worker
        and competition are known)."""
        self.notifier = Notifier(
            self.db, self.hooks, self.cid, self.spec.notifications, self.webhook_key, self.builds,
            self.say,
        )  # fmt: skip
        return asyncio.create_task(self.notifier.run())

    async def set_webhook(self, author: store.Author, url: str) -> tuple[Webhook, str]:
        """Register the author's webhook (replacing theirs): it and its secret (shown once)."""
        settings = self.spec.notifications
        problem = url_problem(url, settings.allowed_hosts)
        if problem is not None:
            raise SubmissionError(problem)
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            await resolve((parts.hostname or "").lower(), port, settings.allowed_hosts)
        except DeliveryError as exc:
            raise SubmissionError(str(exc)) from None
        nonce = secrets.token_hex(16)
        await self.db.call(self.hooks.set, author.id, url, nonce, settings.max_queued)
        hook = await self.db.call(self.hooks.get, author.id)
        assert hook is not None
        return hook, secret_of(self.webhook_key, nonce)

    async def webhook(self, author: store.Author) -> Webhook | None:
        return await self.db.call(self.hooks.get, author.id)

    async def remove_webhook(self, author: store.Author) -> bool:
        return await self.db.call(self.hooks.remove, author.id)
