"""The admin service is safe by default: loopback only, or a token on every call (issue 6)."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from arena.service.server import create_server, is_loopback
from arena.wire.v1 import admin_pb2, admin_pb2_grpc


def test_loopback_addresses() -> None:
    assert is_loopback("127.0.0.1:0")
    assert is_loopback("localhost:50051")
    assert is_loopback("[::1]:50051")
    assert not is_loopback("0.0.0.0:50051")
    assert not is_loopback("[::]:50051")


def test_binding_beyond_loopback_needs_a_token() -> None:
    with pytest.raises(ValueError, match="admin token"):
        asyncio.run(create_server("0.0.0.0:0"))


def test_admin_calls_need_the_token_when_one_is_set() -> None:
    async def scenario() -> tuple[grpc.StatusCode, grpc.StatusCode, int]:
        server, port, manager = await create_server("127.0.0.1:0", admin_token="s3cret")
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                admin = admin_pb2_grpc.AdminStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as missing:
                    await admin.ListMatches(admin_pb2.ListMatchesRequest())
                with pytest.raises(grpc.aio.AioRpcError) as wrong:
                    await admin.ListMatches(
                        admin_pb2.ListMatchesRequest(), metadata=(("authorization", "Bearer nope"),)
                    )
                ok = await admin.ListMatches(
                    admin_pb2.ListMatchesRequest(), metadata=(("authorization", "Bearer s3cret"),)
                )
                with pytest.raises(grpc.aio.AioRpcError) as watch:
                    async for _ in admin.WatchMatch(admin_pb2.WatchMatchRequest(match_id="x")):
                        pass
                assert watch.value.code() is grpc.StatusCode.UNAUTHENTICATED
            return missing.value.code(), wrong.value.code(), len(ok.matches)
        finally:
            await manager.close()
            await server.stop(None)

    missing, wrong, count = asyncio.run(scenario())
    assert missing is grpc.StatusCode.UNAUTHENTICATED
    assert wrong is grpc.StatusCode.UNAUTHENTICATED
    assert count == 0
