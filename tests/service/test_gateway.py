"""Gateway: garbage on the bot stream is a protocol error; a Hello of another protocol version is refused."""

from __future__ import annotations

import asyncio
import shlex
import sys

import grpc

from arena.referee import MatchConfig, TimeControl
from arena.service.manager import PlayerSpec
from arena.service.server import create_server
from arena.wire.v1 import bot_pb2


async def _raw_session(garbage: bool, protocol_version: int) -> tuple[list[str], str]:
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
            hello=bot_pb2.Hello(token=entry.players[0][0].token, protocol_version=protocol_version)
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
                        match_id=req.match_id,
                        action=req.legal_actions[0].text,
                    )
                    await call.write(bot_pb2.BotMessage(reply=reply).SerializeToString())
                if kinds[-1] in ("refused", "match_over"):
                    break
        await asyncio.wait_for(entry.done.wait(), 120)
        assert entry.record is not None
        return kinds, entry.record.games[0].outcome
    finally:
        await manager.close()
        await server.stop(None)


def test_garbage_bytes_are_a_protocol_error() -> None:
    _, outcome = asyncio.run(_raw_session(garbage=True, protocol_version=1))
    assert outcome == "protocol-error"


def test_a_hello_of_another_protocol_version_is_refused() -> None:
    kinds, _ = asyncio.run(_raw_session(garbage=False, protocol_version=99))
    assert kinds[0] == "refused"
