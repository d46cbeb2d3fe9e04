"""Notifications (issue 45) against a receiver on loopback: an author's webhook is told, signed, when a
submission is built, fails, enters play, is suspended or replaced; a failed delivery is retried with
backoff; a receiver failing again and again is disabled and its author told; a host the organiser does
not allow is refused; and a slow receiver never delays a game being recorded."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest
from intake_helpers import Gates, bundle, run, until
from typer.testing import CliRunner

from arena.cli.main import app
from arena.competition import intake, notifications
from arena.competition.notifications import DeliveryError, post, resolve, url_problem, verify
from arena.competition.server import CompetitionServer
from arena.competition.spec import parse
from arena.competition.submission_api import serve_submissions
from arena.ledger import Ledger
from arena.ledger import competitions as store
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc


class Receiver:
    """A webhook's receiver on loopback: answers each request with the next of ``answers`` (then
    ``default``); while ``hold`` is set up and not yet set, a request waits for it."""

    def __init__(self, answers: tuple[int, ...] = (), default: int = 200) -> None:
        self.answers = list(answers)
        self.default = default
        self.requests: list[tuple[str, dict[str, str], bytes, float]] = []
        self.hold: asyncio.Event | None = None
        self.holding = 0

    async def __aenter__(self) -> Receiver:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.hold is not None:
            self.hold.set()
        self.server.close()

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        line, *rest = head.split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in rest if h)}
        body = await reader.readexactly(int(headers["content-length"]))
        self.requests.append((line, headers, body, time.monotonic()))
        if self.hold is not None:
            self.holding += 1
            await self.hold.wait()
        code = self.answers.pop(0) if self.answers else self.default
        writer.write(f"HTTP/1.1 {code} X\r\nContent-Length: 0\r\n\r\n".encode())
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, _, body, _ in self.requests]


@contextlib.asynccontextmanager
async def serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gates: Gates, **settings: Any
) -> AsyncIterator[tuple[CompetitionServer, store.Competitions, str]]:
    """A competition server (its build and check ``gates``'), its notifications' ``settings``
    (loopback allowed), with one author, ada: (the server, its store, ada's token)."""
    monkeypatch.setattr(intake, "build", gates.build)
    monkeypatch.setattr(intake, "check", gates.check)
    monkeypatch.setattr(notifications, "POLL_SECONDS", 0.05)
    led = Ledger(tmp_path / "ledger.sqlite")
    spec = parse(
        {
            "name": "Notify",
            "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
            "notifications": {
                "allowed_hosts": ["127.0.0.1"],
                "first_retry_seconds": 0.05,
                **settings,
            },
        }
    )
    server = CompetitionServer(spec, led, tmp_path / "data", serve_submissions=serve_submissions)
    await server.start()
    server.notifier.poll = 0.05
    try:
        comp = store.Competitions(led)
        comp.set_paused(server.cid, True)  # no games: the stood-in build makes no folder
        await server._refresh()
        token = comp.add_author(server.cid, "ada")
        yield server, comp, token
    finally:
        await server.stop()
        led.close()


def stub(address: str) -> tuple[grpc.aio.Channel, competition_pb2_grpc.CompetitionStub]:
    channel = grpc.aio.insecure_channel(address)
    return channel, competition_pb2_grpc.CompetitionStub(channel)


def bundle_built(version: str) -> bytes:
    return bundle(version, b'build = "make"\n')


def test_each_event_arrives_signed_with_the_reason_in_the_authors_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(events_arrive, tmp_path, monkeypatch)


async def events_arrive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gates = Gates()
    gates.errors["3"] = OSError("disk full")
    async with (
        Receiver() as receiver,
        serving(tmp_path, monkeypatch, gates, deliveries_at_once=1) as (server, comp, token),
    ):
        channel, calls = stub(server.submissions_address)
        mine = (("authorization", f"Bearer {token}"),)
        answer = await calls.SetWebhook(pb.SetWebhookRequest(url=receiver.url()), metadata=mine)
        secret = answer.secret
        assert len(secret) == 64 and answer.webhook.enabled
        assert secret not in json.dumps(
            [list(r) for r in comp.conn.execute("SELECT * FROM webhooks")]
        ), "the ledger keeps no secret"
        ada = comp.authors(server.cid)[0]
        for version in ("1", "2", "3"):
            await server.submit(ada, bundle_built(version))
            await until(lambda: not server._tasks, lambda: server._tasks)
        two = next(s for s in comp.submissions(server.cid) if s.version == "2")
        # A suspension whose reason names a file of the bot's build by the server's path.
        where = f"{server.builds}/{two.id}/bot.py"
        comp.set_status(two.id, store.SUSPENDED, f"suspended: crash: File {where}, line 3")
        await until(lambda: len(receiver.requests) >= 7, lambda: receiver.events())
        await asyncio.sleep(0.3)  # nothing more arrives
        told = [(e["event"], e["version"]) for e in receiver.events()]
        assert told == [
            ("built", "1"),
            ("active", "1"),
            ("built", "2"),
            ("replaced", "1"),
            ("active", "2"),
            ("failed", "3"),
            ("suspended", "2"),
        ]
        for line, headers, body, _ in receiver.requests:
            assert line == "POST /hook HTTP/1.1"
            assert headers["content-type"] == "application/json"
            stamp = headers["x-arena-timestamp"]
            assert abs(int(stamp) - time.time()) < 600
            assert verify(secret, stamp, body, headers["x-arena-signature"])
            assert not verify(secret, str(int(stamp) + 1), body, headers["x-arena-signature"])
            event = json.loads(body)
            assert headers["x-arena-event"] == event["event"]
            assert headers["x-arena-delivery"] == str(event["delivery"])
            assert event["competition"] == "Notify" and event["bot"] == "b"
            assert set(event) == {
                "event", "competition", "bot", "version", "submission_id", "status", "reason",
                "at", "delivery",
            }  # fmt: skip
        events = receiver.events()
        assert events[5]["status"] == "failed" and "could not build" in events[5]["reason"]
        assert events[6]["reason"] == "suspended: crash: File bot.py, line 3"
        assert str(server.builds) not in receiver.requests[6][2].decode()
        shown = await calls.ShowWebhook(pb.ShowWebhookRequest(), metadata=mine)
        assert (shown.webhook.delivered, shown.webhook.queued) == (7, 0)
        await calls.RemoveWebhook(pb.RemoveWebhookRequest(), metadata=mine)
        shown = await calls.ShowWebhook(pb.ShowWebhookRequest(), metadata=mine)
        assert not shown.HasField("webhook")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await calls.RemoveWebhook(pb.RemoveWebhookRequest(), metadata=mine)
        assert info.value.code() is grpc.StatusCode.NOT_FOUND
        await channel.close()


def test_a_failed_delivery_is_retried_with_backoff_until_the_receiver_accepts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(retried, tmp_path, monkeypatch)


async def retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with (
        Receiver(answers=(500, 503)) as receiver,
        serving(tmp_path, monkeypatch, Gates(), first_retry_seconds=0.3) as (server, comp, _),
    ):
        ada = comp.authors(server.cid)[0]
        _, secret = await server.set_webhook(ada, receiver.url())
        await server.submit(ada, bundle("1"))  # no build: checked at once, then in play
        await until(lambda: len(receiver.requests) >= 3, lambda: receiver.requests)
        await asyncio.sleep(0.3)
        assert len(receiver.requests) == 3, "delivered once accepted, never again"
        ids = {headers["x-arena-delivery"] for _, headers, _, _ in receiver.requests}
        assert len(ids) == 1, "one delivery, attempted three times"
        times = [t for _, _, _, t in receiver.requests]
        assert times[1] - times[0] >= 0.3 and times[2] - times[1] >= 0.6, "backoff doubled"
        for _, headers, body, _ in receiver.requests:
            assert verify(secret, headers["x-arena-timestamp"], body, headers["x-arena-signature"])
        hook = await server.webhook(ada)
        assert hook is not None
        assert (hook.delivered, hook.failures, hook.queued, hook.abandoned) == (1, 0, 0, 0)
        assert hook.last_error == "the receiver answered 503"


def test_a_receiver_failing_again_and_again_is_disabled_and_its_author_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(disabled, tmp_path, monkeypatch)


async def disabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    async with (
        Receiver(default=500) as receiver,
        serving(
            tmp_path, monkeypatch, Gates(), disable_after=3, attempts=2, deliveries_at_once=1
        ) as (server, comp, token),
    ):
        server.notifier.say = said.append
        ada = comp.authors(server.cid)[0]
        await server.set_webhook(ada, receiver.url())
        for version in ("1", "2"):  # three events: in play, replaced, in play
            await server.submit(ada, bundle(version))
            await until(lambda: not server._tasks, lambda: server._tasks)
        await until(lambda: len(receiver.requests) >= 3, lambda: receiver.requests)
        await asyncio.sleep(0.5)
        assert len(receiver.requests) == 3, "nothing more sent once disabled"
        hook = await server.webhook(ada)
        assert hook is not None and hook.disabled_at is not None
        assert hook.disabled_reason.startswith(
            "disabled after 3 failed deliveries in a row; the last: the receiver answered 500"
        )
        assert any("webhook is disabled" in line for line in said)
        result = await asyncio.to_thread(
            CliRunner().invoke,
            app,
            ["compete", "webhook", "show", "--server", server.submissions_address, "--token",
             token],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "status: disabled at" in result.output
        assert "the receiver answered 500" in result.output
        result = await asyncio.to_thread(
            CliRunner().invoke,
            app,
            ["compete", "submissions", "--server", server.submissions_address, "--token", token],
        )
        assert result.exit_code == 0, result.output
        assert "your webhook is disabled (since " in result.output
        assert "after 3 failed deliveries in a row" in result.output
        # Set again: enabled, and what waited is sent.
        receiver.default = 200
        result = await asyncio.to_thread(
            CliRunner().invoke,
            app,
            ["compete", "webhook", "set", receiver.url("/again"), "--server",
             server.submissions_address, "--token", token],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        secret = result.output.strip().splitlines()[-1]
        await until(
            lambda: any(line.startswith("POST /again") for line, *_ in receiver.requests),
            lambda: receiver.requests,
        )
        _, headers, body, _ = receiver.requests[-1]
        assert verify(secret, headers["x-arena-timestamp"], body, headers["x-arena-signature"])


def test_a_host_the_organiser_does_not_allow_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(refused_hosts, tmp_path, monkeypatch)


async def refused_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert url_problem("http://example.org/hook", ()) == (
        "a webhook is an https URL; http only to a host the organiser allows "
        "([notifications] allowed_hosts), and example.org is not one"
    )
    assert "no user or password" in (url_problem("https://u:p@example.org/", ()) or "")
    assert "http(s) URL" in (url_problem("ftp://example.org/", ()) or "")
    assert "printable" in (url_problem("https://example.org/\r\nX: y", ()) or "")
    assert url_problem("https://example.org/hook", ()) is None
    assert url_problem("https://example.org/" + "a" * 5000, ()) == (
        "a webhook is an http(s) URL of at most 2000 printable characters, got "
        "'https://example.org/" + "a" * 60 + "' (5020 characters)"
    )
    assert "port is not a number" in (url_problem("https://example.org:99999/", ()) or "")
    for host in ("127.0.0.1", "localhost", "10.1.2.3", "169.254.169.254", "::1", "::ffff:7f00:1"):
        with pytest.raises(DeliveryError, match="not a public address"):
            await resolve(host, 443, ())
    assert await resolve("127.0.0.1", 443, ("127.0.0.1",)) == ["127.0.0.1"]
    async with Receiver(answers=(302,)) as receiver:
        # Loopback, not allowed: refused before any connection.
        with pytest.raises(DeliveryError, match="http only to a host the organiser allows"):
            await post(receiver.url(), b"{}", {}, 5.0, ())
        https = f"https://127.0.0.1:{receiver.port}/hook"
        with pytest.raises(DeliveryError, match="not a public address"):
            await post(https, b"{}", {}, 5.0, ())
        assert receiver.requests == []
        with pytest.raises(DeliveryError, match="answered 302: redirects are not followed"):
            await post(receiver.url(), b"{}", {}, 5.0, ("127.0.0.1",))
    async with serving(tmp_path, monkeypatch, Gates()) as (server, _, token):
        channel, calls = stub(server.submissions_address)
        mine = (("authorization", f"Bearer {token}"),)
        for url, why in (
            ("http://example.org/hook", "http only to a host the organiser allows"),
            ("https://localhost:9/hook", "localhost resolves to"),
            ("https://10.0.0.1/hook", "not a public address"),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await calls.SetWebhook(pb.SetWebhookRequest(url=url), metadata=mine)
            assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
            assert why in (info.value.details() or "")
        shown = await calls.ShowWebhook(pb.ShowWebhookRequest(), metadata=mine)
        assert not shown.HasField("webhook")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await calls.ShowWebhook(pb.ShowWebhookRequest())
        assert info.value.code() is grpc.StatusCode.UNAUTHENTICATED
        await channel.close()


def test_a_slow_receiver_never_delays_a_game_being_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(slow_receiver, tmp_path, monkeypatch)


async def slow_receiver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with (
        Receiver() as receiver,
        serving(tmp_path, monkeypatch, Gates(), timeout_seconds=120) as (server, comp, _),
    ):
        receiver.hold = asyncio.Event()  # every request waits, unanswered, until the end
        ada = comp.authors(server.cid)[0]
        await server.set_webhook(ada, receiver.url())
        sub = await server.submit(ada, bundle("1"))
        await until(lambda: receiver.holding == 1, lambda: receiver.requests)
        bob = comp.author_of(server.cid, comp.add_author(server.cid, "bob"))
        assert bob is not None
        other, _ = comp.submit(server.cid, bob.id, "o", "1", "python", bundle="o" * 64)
        ids = {"b": comp.submission(sub.id).entrant_id, "o": comp.activate(other, "bundle:o")}
        game = ScheduledGame("c000000000-s0", 0, 0, 0, 0, 0, 0, (("b",), ("o",)), ("b", "o"))
        record = {
            "games": [
                {
                    "outcome": "crash", "detail": "boom", "culprit": 0, "decisions": [],
                    "result": {"sides": [[0], [1]], "ranking": [1, 0], "scores": [0, 1000]},
                }
            ]
        }  # fmt: skip
        # The play loop's writes while the receiver holds its request: the game recorded, and the
        # suspension that follows (a delivery queued), each at once.
        await server.db.call(server.ledger.plan, server.cid, [game])
        async with asyncio.timeout(30):
            await server.db.call(
                server.ledger.record_game,
                server.cid,
                "two-handed",
                game,
                ids,
                FinishedGame.from_data(record),
            )
            await server.db.call(comp.set_status, sub.id, store.SUSPENDED, "suspended: crash")
        assert receiver.holding == 1 and not receiver.hold.is_set(), "the receiver still holds"
        assert len(comp.play_failures(server.cid, ids["b"])) == 1
        hook = await server.webhook(ada)
        assert hook is not None and (hook.queued, hook.delivered) == (2, 0)


def test_the_competition_files_notifications_are_checked_by_name() -> None:
    with pytest.raises(ValueError) as info:
        parse({"name": "x", "notifications": {"allowed_hosts": ["http://x/"], "attempts": 0}}, "c")
    assert str(info.value).splitlines() == [
        "c: notifications.allowed_hosts: a host name or address, got 'http://x/'",
        "c: notifications.attempts: expected an integer >= 1, got 0",
    ]
    spec = parse({"name": "x", "notifications": {"allowed_hosts": ["LocalHost", "[::1]"]}})
    assert spec.notifications.allowed_hosts == ("localhost", "::1")
    assert parse({"name": "x"}).notifications.allowed_hosts == ()


def test_the_daily_digest_arrives_signed_once_a_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(digest_arrives, tmp_path, monkeypatch)


async def digest_arrives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with (
        Receiver() as receiver,
        serving(tmp_path, monkeypatch, Gates()) as (server, comp, _),
    ):
        ada = comp.authors(server.cid)[0]
        sub = await server.submit(ada, bundle("1"))
        await until(lambda: not server._tasks, lambda: server._tasks)
        _, secret = await server.set_webhook(ada, receiver.url())
        bob = comp.author_of(server.cid, comp.add_author(server.cid, "bob"))
        assert bob is not None
        other, _ = comp.submit(server.cid, bob.id, "o", "1", "python", bundle="o" * 64)
        ids = {"b": comp.submission(sub.id).entrant_id, "o": comp.activate(other, "bundle:o")}
        games = [
            ScheduledGame(f"c{i:09d}-s0", i, 0, i, 0, 0, i, (("b",), ("o",)), ("b", "o"))
            for i in range(3)
        ]
        await server.db.call(server.ledger.plan, server.cid, games)
        for g, outcome in zip(games, ("crash", "timeout", "crash"), strict=True):
            record = {
                "games": [
                    {
                        "outcome": outcome, "detail": "boom", "culprit": 0, "decisions": [],
                        "result": {"sides": [[0], [1]], "ranking": [1, 0], "scores": [0, 1000]},
                    }
                ]
            }  # fmt: skip
            await server.db.call(
                server.ledger.record_game,
                server.cid,
                "two-handed",
                g,
                ids,
                FinishedGame.from_data(record),
            )
        now = datetime.now(UTC) + timedelta(seconds=1)
        await server.notifier.digests(now)
        await until(lambda: len(receiver.requests) == 1, lambda: receiver.requests)
        _, headers, body, _ = receiver.requests[0]
        assert headers["x-arena-event"] == "digest"
        assert verify(secret, headers["x-arena-timestamp"], body, headers["x-arena-signature"])
        digest = json.loads(body)
        assert digest["bots"] == [
            {"bot": "b", "version": "1", "failed": {"crash": 2, "timeout": 1}, "games": 3}
        ]
        await server.notifier.digests(now + timedelta(hours=1))  # not again the same day
        await asyncio.sleep(0.3)
        assert len(receiver.requests) == 1


def test_the_servers_key_is_made_once_for_its_owner_alone_and_each_nonce_has_its_secret(
    tmp_path: Path,
) -> None:
    path = tmp_path / "data" / notifications.KEY_FILE
    key = notifications.load_key(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert notifications.load_key(path) == key and len(key) == 64
    path.chmod(0o644)
    assert notifications.load_key(path) == key and path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == [notifications.KEY_FILE]
    one, two = notifications.secret_of(key, "n1"), notifications.secret_of(key, "n2")
    assert one != two and notifications.secret_of(b"another key" * 4, "n1") != one
    body, stamp = b'{"event": "built"}', "1700000000"
    assert verify(one, stamp, body, notifications.sign(one, stamp, body))
    assert not verify(two, stamp, body, notifications.sign(one, stamp, body))
    assert not verify(one, stamp, body + b" ", notifications.sign(one, stamp, body))
