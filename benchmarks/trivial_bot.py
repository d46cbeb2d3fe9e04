"""The benchmark's trivial bot: answers every request with its first legal action, straight from the
message (no SDK, no observation built), so that benchmarks/referee.py measures the referee.

    python benchmarks/trivial_bot.py     # ARENA_ADDRESS and ARENA_TOKEN from the environment
"""

from __future__ import annotations

import asyncio
import contextlib
import os

# The arena's package before grpc: it chooses gRPC's transport (arena/__init__.py), so that the
# benchmark's processes use the one the arena's do.
import arena  # noqa: F401

# isort: split
import grpc

from arena.wire.v1 import bot_pb2, bot_pb2_grpc


def answer(message: bot_pb2.RefereeMessage) -> bot_pb2.BotMessage | None:
    """The trivial bot's answer to a message: to a request, a Reply naming its first legal action;
    to anything else, nothing."""
    if message.WhichOneof("body") != "request":
        return None
    req = message.request
    reply = bot_pb2.Reply(
        request_id=req.request_id, match_id=req.match_id, action=req.legal_actions[0].text
    )
    return bot_pb2.BotMessage(reply=reply)


async def main() -> None:
    hello = bot_pb2.Hello(
        token=os.environ["ARENA_TOKEN"], name="trivial", version="1", protocol_version=1
    )
    async with grpc.aio.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
        call = bot_pb2_grpc.BotGatewayStub(channel).Play()
        await call.write(bot_pb2.BotMessage(hello=hello))
        while (message := await call.read()) is not grpc.aio.EOF:
            assert isinstance(message, bot_pb2.RefereeMessage)
            if (out := answer(message)) is not None:
                await call.write(out)


if __name__ == "__main__":
    with contextlib.suppress(grpc.aio.AioRpcError):
        asyncio.run(main())
