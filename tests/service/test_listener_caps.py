"""The guard in front of a listener (arena.service.listener_caps), with small caps and short deadlines:
per-client caps, the HTTP/2 preface's deadline, the deadline to show a token, and room kept for the
clients that showed one. Conditions are waited for, never timed: a loaded machine only makes them
come later."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from arena.service.listener_caps import PREFACE, Caps, Guard, caps_for, client_of, marking

CAPS = Caps(connections=6, anonymous=4, per_client=2, preface_seconds=0.5, anonymous_seconds=1.5)
METADATA = (("authorization", "Bearer ok"),)


class _Tokens(grpc.aio.ServerInterceptor):
    """A call with the token tells the guard its connection is authenticated."""

    def __init__(self, guard: Guard) -> None:
        self.guard = guard

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]],
        details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = await continuation(details)
        if ("authorization", "Bearer ok") in tuple(details.invocation_metadata or ()):
            return marking(handler, self.guard.authenticated)
        return handler


async def _until(condition: Callable[[], bool], seconds: float = 20.0) -> bool:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def _connect(port: int, source: str, send: bytes = PREFACE) -> asyncio.StreamReader:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    if send:
        writer.write(send)
    _open.append(writer)
    return reader


_open: list[asyncio.StreamWriter] = []


async def _closed(reader: asyncio.StreamReader, seconds: float = 20.0) -> bool:
    """Whether the guard closed the connection (end of stream, or reset) within ``seconds``."""
    try:
        async with asyncio.timeout(seconds):
            while await reader.read(65536):
                pass
    except TimeoutError:
        return False
    except OSError:
        return True
    return True


async def _scenario() -> None:
    guard = Guard("the test service", CAPS)
    server = grpc.aio.server(interceptors=[_Tokens(guard)])
    servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    server.add_insecure_port(guard.backend_address)
    await server.start()
    port = await guard.listen("127.0.0.1:0")
    try:
        # The organiser shows a token: its connection is no longer anonymous.
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        stub = health_pb2_grpc.HealthStub(channel)
        await stub.Check(health_pb2.HealthCheckRequest(), metadata=METADATA, timeout=20)
        assert (guard.total, guard.anonymous) == (1, 0)

        # Not HTTP/2: closed at once. Silent: closed at the preface's deadline.
        assert await _closed(await _connect(port, "127.0.0.2", b"GET / HTTP/1.1\r\n\r\n"))
        silent = await _connect(port, "127.0.0.2", b"")
        assert await _closed(silent)

        # One client holds at most per_client anonymous connections; past them, refused at once.
        refused = guard.refused
        held = [await _connect(port, "127.0.0.3") for _ in range(2)]
        third = await _connect(port, "127.0.0.3")
        assert await _closed(third, 5.0)
        assert guard.refused == refused + 1
        # Another client is not held to the first one's cap, up to the anonymous cap in all.
        others = [await _connect(port, "127.0.0.4") for _ in range(2)]
        assert await _until(lambda: guard.anonymous == 4)
        fifth = await _connect(port, "127.0.0.5")
        assert await _closed(fifth, 5.0), "past the anonymous cap"
        # ... while the room kept for authenticated clients serves the organiser on.
        await stub.Check(health_pb2.HealthCheckRequest(), metadata=METADATA, timeout=20)

        # A connection that never shows a token is closed at its deadline, whatever it sends; the
        # organiser's is not.
        for reader in [*held, *others]:
            assert await _closed(reader)
        assert await _until(lambda: (guard.total, guard.anonymous) == (1, 0))
        await stub.Check(health_pb2.HealthCheckRequest(), metadata=METADATA, timeout=20)
        anonymous = grpc.aio.insecure_channel(  # a connection of its own, not the organiser's
            f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]
        )
        await health_pb2_grpc.HealthStub(anonymous).Check(
            health_pb2.HealthCheckRequest(), timeout=20
        )
        assert guard.anonymous == 1
        assert await _until(lambda: guard.anonymous == 0), "no token: closed at its deadline"
        await anonymous.close()
        await channel.close()
    finally:
        for writer in _open:
            writer.close()
        _open.clear()
        await guard.close()
        await server.stop(None)


def test_the_guard_holds_its_caps_and_deadlines() -> None:
    asyncio.run(_scenario())


def test_caps_are_a_share_of_the_open_files() -> None:
    caps = caps_for(20_000, 4, 1024)
    assert caps.connections == 1024 and caps.anonymous == 768 and caps.per_client == 16
    small = caps_for(400, 4, 1024, least=16)
    assert small.connections == 400 // 4 // 3
    assert small.connections * 3 <= 400 // 4, "three descriptors a connection, within its share"
    with pytest.raises(ValueError, match="per_client <= anonymous <= connections"):
        Caps(connections=4, anonymous=8)


def test_a_client_is_an_address_or_a_machines_ipv6_prefix() -> None:
    assert client_of("203.0.113.9") == "203.0.113.9"
    assert client_of("2001:db8:1:2::1") == client_of("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert client_of("2001:db8:1:3::1") != client_of("2001:db8:1:2::1")
    assert client_of("::ffff:198.51.100.7") == "198.51.100.7"


def test_local_light_bots_dial_past_the_guard() -> None:
    """Bots the referee starts itself in the light mode dial its gRPC socket, not the guarded TCP
    address: a crowd of them starting at once from 127.0.0.1 must not meet the caps for anonymous
    clients. A remote seat's address is still the guarded one."""
    import sys

    from arena.bots.limits import Limits
    from arena.referee import MatchConfig
    from arena.service.match_manager import PlayerSpec
    from arena.service.server import create_server

    async def go() -> tuple[object, str, str, str]:
        server, _, manager = await create_server("127.0.0.1:0", guarded=True)
        try:
            command = f"{sys.executable} -m arena_bot.first_bot"
            entry = manager.create(
                MatchConfig(seed=1),
                [[PlayerSpec("one", command)], [PlayerSpec("two", command)]],
                30.0,
                Limits(sandbox="none"),
            )
            await manager.start(entry)
            await asyncio.wait_for(entry.done.wait(), 120)
            outcome = entry.record.to_dict()["games"][0]["outcome"] if entry.record else ""
            return outcome, entry.error, manager.address, manager.local_address
        finally:
            await manager.close()
            await server.stop(None)

    outcome, error, public, local = asyncio.run(go())
    assert (outcome, error) == ("normal", "")
    assert public.startswith("127.0.0.1:") and local.startswith("unix:")
