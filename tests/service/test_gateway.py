"""Gateway: garbage on the bot stream is a protocol error; a Hello of another protocol version is
refused, and so is a stream that never says Hello; what a bot says of itself is capped and printable;
a reply must name its match."""

from __future__ import annotations

import asyncio
import shlex
import socket
import struct
import sys

import grpc
import pytest
from raw_connections import (
    DATA,
    END_HEADERS,
    HEADERS,
    PREFACE,
    SETTINGS,
    frame,
    frames_until,
    headers,
)

from arena.referee import MatchConfig, TimeControl
from arena.service import servicers
from arena.service.match_manager import MatchEntry, PlayerSpec
from arena.service.server import (
    MAX_BOT_RECEIVE_BYTES,
    MAX_STREAMS_PER_BOT_CONNECTION,
    create_server,
)
from arena.wire.v1 import bot_pb2


async def _raw_session(
    garbage: bool, protocol_version: int, name: str = "", match_id: str | None = None
) -> tuple[list[str], str, MatchEntry]:
    server, port, manager = await create_server()
    try:
        random_bot = f"{shlex.quote(sys.executable)} -m arena_bot.random_bot"
        entry = manager.create(
            MatchConfig(seed=3, time_control=TimeControl(5000, 30_000, 1000)),
            [[PlayerSpec("raw")], [PlayerSpec("py", random_bot)]],
            60 if protocol_version == 1 else 3,
        )
        await manager.start(entry)
        hello = bot_pb2.BotMessage(
            hello=bot_pb2.Hello(
                token=entry.players[0][0].token, name=name, protocol_version=protocol_version
            )
        )
        kinds: list[str] = []
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.stream_stream(
                "/arena.v1.BotGateway/Play",
                request_serializer=lambda b: b,
                response_deserializer=bot_pb2.RefereeMessage.FromString,
            )()
            await call.write(hello.SerializeToString())
            async for message in call:
                kinds.append(message.WhichOneof("body") or "")
                if kinds[-1] == "request" and garbage:
                    await call.write(b"\xff\xff\xff\xff not a BotMessage")
                elif kinds[-1] == "request":
                    req = message.request
                    reply = bot_pb2.Reply(
                        request_id=req.request_id,
                        match_id=req.match_id if match_id is None else match_id,
                        action=req.legal_actions[0].text,
                    )
                    await call.write(bot_pb2.BotMessage(reply=reply).SerializeToString())
                if kinds[-1] in ("refused", "match_over"):
                    break
        await asyncio.wait_for(entry.done.wait(), 120)
        assert entry.record is not None
        return kinds, entry.record.games[0].outcome, entry
    finally:
        await manager.close()
        await server.stop(None)


def test_garbage_bytes_are_a_protocol_error() -> None:
    _, outcome, _ = asyncio.run(_raw_session(garbage=True, protocol_version=1))
    assert outcome == "protocol-error"


def test_a_hello_of_another_protocol_version_is_refused() -> None:
    kinds, _, _ = asyncio.run(_raw_session(garbage=False, protocol_version=99))
    assert kinds[0] == "refused"


def test_a_bots_name_is_capped_and_printable() -> None:
    name = "[bold red]evil[/] \x1b[2J" + "x" * 10_000
    _, outcome, entry = asyncio.run(_raw_session(False, 1, name=name))
    assert outcome == "normal"
    said = entry.players[0][0].bot_name
    assert len(said) == servicers.MAX_NAME_CHARS
    assert said.startswith("[bold red]evil[/] \ufffd[2J")  # kept as text, without the escape


def test_a_reply_must_name_its_match() -> None:
    """An empty match_id is a protocol error (a stream may carry several matches, each numbering its
    requests from 1), as is another match's."""
    for given, detail in (("", "without match_id"), ("m-other", "'m-other'")):
        _, _, entry = asyncio.run(_raw_session(False, 1, match_id=given))
        assert entry.record is not None
        game = entry.record.games[0]
        assert (game.outcome, game.culprit) == ("protocol-error", 0)
        assert detail in game.detail


async def _silent_stream(close: bool) -> list[str]:
    server, port, manager = await create_server()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.stream_stream(
                "/arena.v1.BotGateway/Play",
                request_serializer=lambda b: b,
                response_deserializer=bot_pb2.RefereeMessage.FromString,
            )()
            if close:
                await call.done_writing()
            reasons = [m.refused.reason async for m in call if m.HasField("refused")]
            assert await call.code() is grpc.StatusCode.OK
            return reasons
    finally:
        await manager.close()
        await server.stop(None)


def test_a_stream_that_never_says_hello_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(servicers, "HELLO_TIMEOUT", 0.5)
    assert asyncio.run(_silent_stream(close=False)) == [
        "no Hello within 0.5 s of opening the stream"
    ]
    assert asyncio.run(_silent_stream(close=True)) == ["the stream ended before a Hello"]


class _Counting(servicers.BotGateway):
    """The gateway, counting the streams it is serving."""

    serving = 0

    async def Play(self, request_iterator, context):  # type: ignore[no-untyped-def,override]
        type(self).serving += 1
        try:
            await super().Play(request_iterator, context)
        finally:
            type(self).serving -= 1


def test_a_bot_connection_gets_a_bounded_number_of_streams_at_a_time() -> None:
    """A red-team bot opened a thousand streams on each connection, none saying Hello, and the
    referee held some 5 KB for each. The streams past MAX_STREAMS_PER_BOT_CONNECTION on one
    connection wait on the bot's side (here a connection of 20: 16 served, the rest as those end)."""

    async def scenario() -> list[int]:
        server, port, manager = await create_server(gateway=_Counting)
        seen: list[int] = []
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                play = channel.stream_stream("/arena.v1.BotGateway/Play")
                calls = [play() for _ in range(MAX_STREAMS_PER_BOT_CONNECTION + 4)]
                deadline = asyncio.get_running_loop().time() + 60  # a loaded machine is slow
                while (
                    _Counting.serving < MAX_STREAMS_PER_BOT_CONNECTION
                    and asyncio.get_running_loop().time() < deadline
                ):
                    await asyncio.sleep(0.05)
                for _ in range(20):  # and no more come, as long as those last
                    seen.append(_Counting.serving)
                    await asyncio.sleep(0.05)
                for call in calls:
                    call.cancel()
        finally:
            await manager.close()
            await server.stop(None)
        return seen

    seen = asyncio.run(scenario())
    assert max(seen) == MAX_STREAMS_PER_BOT_CONNECTION, seen


def test_a_first_message_over_the_transports_limit_is_refused_before_its_bytes_arrive() -> None:
    """gRPC holds a message whole before the gateway sees it, and a stream waiting for its Hello has a
    read pending. A red-team client announced a 4 MB first message on each stream and sent all of it
    but the last byte: at 4 MiB a message, the referee held 64 MB per connection (500 MB for one
    sandboxed bot, and as much per connection for anyone who could reach the TCP address). The bot
    listeners refuse such a message on its announced length, before the Hello timeout, on the TCP
    address and on a sandboxed bot's socket alike."""

    async def scenario() -> list[list[tuple[int, int]]]:
        server, port, manager = await create_server()
        assert manager.sockets is not None
        sock = await manager.sockets.open()
        seen = []
        try:
            for family, address in (
                (socket.AF_INET, ("127.0.0.1", port)),
                (socket.AF_UNIX, str(sock.path)),
            ):
                conn = socket.socket(family)
                try:
                    await asyncio.to_thread(conn.connect, address)
                    announced = 16 * MAX_BOT_RECEIVE_BYTES
                    start = b"\0" + struct.pack(">I", announced) + b"\x0a" + b"A" * 16_000
                    conn.sendall(
                        PREFACE
                        + frame(SETTINGS, 0, 0)
                        + frame(HEADERS, END_HEADERS, 1, headers("/arena.v1.BotGateway/Play"))
                        + frame(DATA, 0, 1, start)
                    )
                    seen.append(await asyncio.to_thread(frames_until, conn, 1, 5.0))
                finally:
                    conn.close()
        finally:
            await manager.close()
            await server.stop(None)
        return seen

    for frames in asyncio.run(scenario()):
        assert frames, "the stream was left open, its message awaited"  # the Hello timeout is 10 s


def test_refusals_past_a_burst_are_paced_and_a_good_hello_still_plays() -> None:
    """A red-team bot opened stream after stream with a Hello the referee refuses: 3.8 s of the
    referee's CPU in one game, at no cost to itself. Past a burst of FREE_REFUSALS, refusals are
    answered at about one a second per listener (slept, not spent), while a Hello with its seat's
    token is served at once."""

    async def scenario() -> tuple[list[str], float, str]:
        server, port, manager = await create_server()
        try:
            first_bot = f"{shlex.quote(sys.executable)} -m arena_bot.first_bot"
            entry = manager.create(
                MatchConfig(seed=3, time_control=TimeControl(5000, 30_000, 1000)),
                [[PlayerSpec("raw")], [PlayerSpec("py", first_bot)]],
                120,
            )
            await manager.start(entry)
            reasons: list[str] = []
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                play = channel.stream_stream(
                    "/arena.v1.BotGateway/Play",
                    request_serializer=lambda b: b,
                    response_deserializer=bot_pb2.RefereeMessage.FromString,
                )
                bad = bot_pb2.BotMessage(hello=bot_pb2.Hello(token="nope", protocol_version=1))
                started = asyncio.get_running_loop().time()
                for _ in range(servicers.FREE_REFUSALS + 6):
                    call = play()
                    await call.write(bad.SerializeToString())
                    reasons += [m.refused.reason async for m in call if m.HasField("refused")]
                took = asyncio.get_running_loop().time() - started
                good = bot_pb2.BotMessage(
                    hello=bot_pb2.Hello(token=entry.players[0][0].token, protocol_version=1)
                )
                call = play()
                await call.write(good.SerializeToString())
                first = await call.read()
                kind = first.WhichOneof("body") or ""
                call.cancel()
            return reasons, took, kind
        finally:
            await manager.close()
            await server.stop(None)

    reasons, took, kind = asyncio.run(scenario())
    assert len(reasons) == servicers.FREE_REFUSALS + 6 and all(reasons), reasons
    # Six past the burst: three paused a second each at the least (a second's wait refills one).
    assert took >= 3 * servicers.REFUSAL_PAUSE, took
    assert kind == "welcome"
