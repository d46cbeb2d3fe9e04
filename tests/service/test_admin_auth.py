"""The admin service lives on a listener of its own, with a token on every call, loopback included
(issue 12); the bot listener serves no admin; a port already in use is refused, not shared (issue
13.3)."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from arena.service.server import (
    MAX_RECEIVE_BYTES,
    admin_channel,
    check_free,
    create_server,
    is_loopback,
)
from arena.wire.v1 import admin_pb2, admin_pb2_grpc


def test_loopback_addresses() -> None:
    assert is_loopback("127.0.0.1:0")
    assert is_loopback("localhost:50051")
    assert is_loopback("[::1]:50051")
    assert not is_loopback("0.0.0.0:50051")
    assert not is_loopback("[::]:50051")


def test_a_token_without_an_admin_listener_is_a_mistake() -> None:
    with pytest.raises(ValueError, match="admin address"):
        asyncio.run(create_server("127.0.0.1:0", admin_token="s3cret"))


def test_in_process_referees_serve_no_admin() -> None:
    async def scenario() -> grpc.StatusCode:
        server, port, manager = await create_server("127.0.0.1:0")
        try:
            assert server.admin is None and server.admin_address == ""
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await admin_pb2_grpc.AdminStub(channel).ListMatches(
                        admin_pb2.ListMatchesRequest()
                    )
            return caught.value.code()
        finally:
            await manager.close()
            await server.stop(None)

    assert asyncio.run(scenario()) is grpc.StatusCode.UNIMPLEMENTED


@pytest.mark.parametrize("given", ["s3cret", None])
def test_every_admin_call_needs_the_token_on_loopback_too(given: str | None) -> None:
    async def scenario() -> dict[str, object]:
        server, port, manager = await create_server(
            "127.0.0.1:0", admin_token=given, admin_address="127.0.0.1:0"
        )
        out: dict[str, object] = {"token": server.admin_token}
        try:
            assert is_loopback(server.admin_address)
            assert server.admin_address != f"127.0.0.1:{port}"
            async with grpc.aio.insecure_channel(server.admin_address) as channel:
                admin = admin_pb2_grpc.AdminStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as missing:
                    await admin.ListMatches(admin_pb2.ListMatchesRequest())
                with pytest.raises(grpc.aio.AioRpcError) as wrong:
                    await admin.ListMatches(
                        admin_pb2.ListMatchesRequest(), metadata=(("authorization", "Bearer nope"),)
                    )
                with pytest.raises(grpc.aio.AioRpcError) as watch:
                    async for _ in admin.WatchMatch(admin_pb2.WatchMatchRequest(match_id="x")):
                        pass
                out["missing"] = missing.value.code()
                out["wrong"] = wrong.value.code()
                out["watch"] = watch.value.code()
            async with admin_channel(server.admin_address, server.admin_token) as channel:
                out["listed"] = await admin_pb2_grpc.AdminStub(channel).ListMatches(
                    admin_pb2.ListMatchesRequest()
                )
            return out
        finally:
            await manager.close()
            await server.stop(None)

    out = asyncio.run(scenario())
    if given:
        assert out["token"] == given
    else:
        assert isinstance(out["token"], str) and len(out["token"]) >= 32  # a fresh secret
    assert out["missing"] is out["wrong"] is out["watch"] is grpc.StatusCode.UNAUTHENTICATED
    assert isinstance(out["listed"], admin_pb2.ListMatchesResponse)


def test_a_call_without_the_token_is_refused_unread() -> None:
    """Its request is never read: one over the listener's message limit is refused for want of the
    token, not for its size (a handler that read it would have held it whole first)."""

    async def scenario() -> grpc.StatusCode:
        server, _, manager = await create_server("127.0.0.1:0", admin_address="127.0.0.1:0")
        try:
            async with grpc.aio.insecure_channel(server.admin_address) as channel:
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await admin_pb2_grpc.AdminStub(channel).StartMatch(
                        admin_pb2.StartMatchRequest(variant="x" * (MAX_RECEIVE_BYTES + 1))
                    )
            return refused.value.code()
        finally:
            await manager.close()
            await server.stop(None)

    assert asyncio.run(scenario()) is grpc.StatusCode.UNAUTHENTICATED


def test_a_port_in_use_is_refused_not_shared() -> None:
    async def scenario() -> list[str]:
        server, port, manager = await create_server("127.0.0.1:0", admin_address="127.0.0.1:0")
        errors = []
        try:
            for bots, admin in (
                (f"127.0.0.1:{port}", None),
                ("127.0.0.1:0", server.admin_address),
            ):
                with pytest.raises(OSError) as caught:
                    await create_server(bots, admin_address=admin)
                errors.append(str(caught.value))
        finally:
            await manager.close()
            await server.stop(None)
        return errors

    errors = asyncio.run(scenario())
    assert "in use" in errors[0] and "bots" in errors[0]
    assert "in use" in errors[1] and "admin" in errors[1]


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1:x", "expected HOST:PORT"),
        ("no-such-host.invalid:50071", "unknown host"),
        ("192.0.2.1:50071", "not an address this machine can listen on"),  # TEST-NET-1
    ],
)
def test_an_address_that_cannot_be_listened_on_is_named(address: str, why: str) -> None:
    with pytest.raises(OSError) as caught:
        check_free(address, "bots")
    assert str(caught.value).startswith(f"cannot listen for bots on {address}: {why}")


def test_port_zero_and_unix_sockets_are_always_free() -> None:
    check_free("127.0.0.1:0", "bots")
    check_free("unix:/nonexistent/referee.sock", "bots")
