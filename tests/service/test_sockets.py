"""Each sandboxed bot's Unix socket (arena.service.sockets): a listener of its own, with a cap on the
connections it keeps, that one bot's flood does not touch another's, and that is gone once closed."""

from __future__ import annotations

import asyncio
import socket

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from raw_connections import raw, settled

from arena.service.server import SERVER_OPTIONS
from arena.service.sockets import MAX_CONNECTIONS_PER_BOT, BotSockets


async def _flood(path: str, count: int) -> list[socket.socket]:
    conns = []
    for _ in range(count):
        conns.append(raw(socket.AF_UNIX, path))
    return conns


async def _serving(path: str) -> bool:
    async with grpc.aio.insecure_channel(f"unix:{path}") as channel:
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=5
            )
        except grpc.aio.AioRpcError:
            return False
    return reply.status == health_pb2.HealthCheckResponse.SERVING


def test_a_bots_socket_keeps_a_few_connections_and_leaves_others_alone() -> None:
    async def go() -> None:
        checks = health.aio.HealthServicer()
        await checks.set("", health_pb2.HealthCheckResponse.SERVING)
        sockets = BotSockets(
            lambda s: health_pb2_grpc.add_HealthServicer_to_server(checks, s), SERVER_OPTIONS
        )
        try:
            flooded, other = await sockets.open(), await sockets.open()
            assert flooded.path != other.path and sockets.open_count == 2
            assert (flooded.path.stat().st_mode & 0o777, sockets.folder.stat().st_mode & 0o777) == (
                0o666,
                0o700,
            )
            conns = await _flood(str(flooded.path), 3 * MAX_CONNECTIONS_PER_BOT)
            assert settled(conns, MAX_CONNECTIONS_PER_BOT) == MAX_CONNECTIONS_PER_BOT
            assert not await _serving(str(flooded.path))  # full: its owner's own business
            assert await _serving(str(other.path))
            for conn in conns:
                conn.close()
            await asyncio.sleep(0.5)
            assert await _serving(str(flooded.path))  # the connections closed are counted no more
            await flooded.close()
            assert not flooded.path.exists() and sockets.open_count == 1
            await flooded.close()  # again: nothing
        finally:
            await sockets.close()
        assert not sockets.folder.exists() and sockets.open_count == 0

    asyncio.run(go())
