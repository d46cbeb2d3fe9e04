"""A guard in front of each network listener: connection caps, per-client caps, deadlines, and room
kept for authenticated clients.

gRPC's own cap (``grpc.max_allowed_incoming_connections``) counts every connection alike, and knows
neither who holds them nor whether they ever said anything: 1,100 idle TCP connections from one
client held the bots' listener of ``arena serve`` until a registered remote entrant could not connect
and lost its game as "never connected", and 20,174 idle connections to the submission port spent the
competition server's open files until its ledger could open no file and it exited.

So a listener that anyone on the network may reach is this guard's: it accepts the TCP connections
itself and relays each, once it is admitted, to the gRPC server listening on a Unix socket in a
private folder (mode 0700: nobody else can reach it, or get around the guard). A connection is

- refused at once (closed as it is accepted) when the listener holds :attr:`Caps.connections` already,
  or :attr:`Caps.anonymous` connections not yet authenticated (the rest is room kept for clients that
  have shown a token: a registered entrant's stream, an author's or the organiser's call), or its
  client (an IPv4 address, an IPv6 /64: one machine's addresses) holds :attr:`Caps.per_client`
  anonymous connections already;
- closed unless it sends HTTP/2's preface within :attr:`Caps.preface_seconds`, and unless it is
  authenticated within :attr:`Caps.anonymous_seconds` (a bot's Hello with its token, a call with an
  author's or the admin's token): a connection that never shows a token holds its slot that long at
  most, whatever it sends;
- authenticated by the service behind the guard, which calls :meth:`Guard.authenticated` with the
  call's peer: each relayed connection reaches the gRPC server from a socket of its own name, which is
  the peer gRPC reports.

Each relayed connection costs three file descriptors (the client's, the relay's and gRPC's); a
listener's :attr:`Caps.connections` is sized from a share of the process's open files
(:func:`caps_for`), so that the ledger, the logs and the bots keep the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import ipaddress
import os
import shutil
import socket
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from arena.common.scratch_dirs import scratch_dir

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"  # what every HTTP/2 client sends first
FDS_PER_CONNECTION = 3  # the client's socket, the relay's to gRPC, and gRPC's end of it
MAX_BUFFERED = 256 * 1024  # bytes held for a side that is not ready; reading stops past it
BACKLOG = 1024  # connections the kernel holds for the listener before they are accepted
ACCEPT_BATCH = 64  # accepted in one turn of the event loop before it does anything else


@dataclass(frozen=True, slots=True)
class Caps:
    """One listener's caps (see the module's docstring)."""

    connections: int = 1024
    anonymous: int = 768
    per_client: int = 16
    preface_seconds: float = 5.0
    anonymous_seconds: float = 20.0

    def __post_init__(self) -> None:
        if not 1 <= self.per_client <= self.anonymous <= self.connections:
            raise ValueError(
                "listener caps: expected 1 <= per_client <= anonymous <= connections, got "
                f"{self.per_client}, {self.anonymous}, {self.connections}"
            )


def caps_for(
    open_files: int,
    share: int,
    most: int,
    least: int = 16,
    per_client: int = 16,
    anonymous_seconds: float = 20.0,
) -> Caps:
    """A listener's caps for a process of ``open_files``: its connections take at most 1/``share`` of
    them (three descriptors each), between ``least`` and ``most``; a quarter of them is kept for
    authenticated clients."""
    connections = max(least, min(most, open_files // share // FDS_PER_CONNECTION))
    anonymous = max(1, connections - connections // 4)
    return Caps(
        connections=connections,
        anonymous=anonymous,
        per_client=min(per_client, anonymous),
        anonymous_seconds=anonymous_seconds,
    )


def client_of(host: str) -> str:
    """Whose a connection is, for the per-client cap: an IPv4 address, or an IPv6 address's /64 (one
    machine is given a /64 and may use any address in it); anything else as it is."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Guard:
    """One listener's guard: :meth:`listen` on the public address, relaying to :attr:`backend`, the
    Unix socket the gRPC server is to listen on (``unix:`` + it)."""

    def __init__(self, what: str, caps: Caps) -> None:
        self.what = what
        self.caps = caps
        self.folder = scratch_dir("guard-")
        self.folder.chmod(0o700)
        self.backend = self.folder / "grpc.sock"
        self.total = 0
        self.anonymous = 0
        self.by_client: Counter[str] = Counter()  # anonymous connections, by client
        self.refused = 0  # connections refused at once, for reports
        self._relays: dict[str, _Relay] = {}  # by the peer gRPC reports for it
        self._live: set[_Relay] = set()  # every admitted connection, relayed or not yet
        self._count = 0
        self._listening: list[socket.socket] = []
        self._opening: set[asyncio.Task[None]] = set()  # relays connecting to gRPC

    @property
    def backend_address(self) -> str:
        return f"unix:{self.backend}"

    async def listen(self, address: str) -> int:
        """Listen on ``address`` (HOST:PORT; port 0: any free port; a host of several addresses on
        each); the port bound. Connections are accepted here, a batch at a time, and one past a cap
        is closed before the event loop makes anything of it: a flood of them costs an accept and a
        close each."""
        host, _, port_text = address.rpartition(":")
        try:
            port = int(port_text)
            found = socket.getaddrinfo(
                host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )
        except (OSError, ValueError, UnicodeError) as exc:
            raise OSError(f"cannot listen for {self.what} on {address}: {exc}") from exc
        loop = asyncio.get_running_loop()
        seen = set()
        try:
            for family, kind, proto, _, where in found:
                if (family, where) in seen:
                    continue
                seen.add((family, where))
                sock = socket.socket(family, kind, proto)
                self._listening.append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                if port == 0 and len(self._listening) > 1:  # one port for all its addresses
                    where = (where[0], self._listening[0].getsockname()[1], *where[2:])
                sock.bind(where)
                sock.listen(BACKLOG)
                sock.setblocking(False)
        except OSError as exc:
            self._stop_listening()
            raise OSError(
                f"cannot listen for {self.what} on {address}: {exc.strerror or exc}"
            ) from exc
        if not self._listening:
            raise OSError(f"cannot listen for {self.what} on {address}: no address resolved")
        for sock in self._listening:
            loop.add_reader(sock.fileno(), self._accept, sock)
        return int(self._listening[0].getsockname()[1])

    def _accept(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        for _ in range(ACCEPT_BATCH):  # then the loop's other work, then the next batch
            try:
                conn, peer = sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of descriptors (EMFILE), say: try again in a moment
                loop.remove_reader(sock.fileno())
                loop.call_later(0.1, self._resume, sock)
                return
            client = client_of(str(peer[0])) if isinstance(peer, tuple) and peer else "?"
            if not self._admit(client):
                conn.close()  # past a cap: closed as it is accepted, before a byte is read
                continue
            conn.setblocking(False)
            task = loop.create_task(self._serve(conn, client))
            self._opening.add(task)
            task.add_done_callback(self._opening.discard)

    def _resume(self, sock: socket.socket) -> None:
        if sock in self._listening:
            asyncio.get_running_loop().add_reader(sock.fileno(), self._accept, sock)

    async def _serve(self, conn: socket.socket, client: str) -> None:
        try:
            await asyncio.get_running_loop().connect_accepted_socket(
                lambda: _Front(self, client), conn
            )
        except BaseException:
            conn.close()
            self._unadmit(client)
            raise

    def _stop_listening(self) -> None:
        loop = asyncio.get_running_loop()
        for sock in self._listening:
            with contextlib.suppress(Exception):
                loop.remove_reader(sock.fileno())
            sock.close()
        self._listening.clear()

    def authenticated(self, peer: str) -> None:
        """The connection of gRPC's ``peer`` has shown a token: it no longer counts as anonymous (nor
        against its client's cap), and no deadline closes it."""
        relay = self._relays.get(peer)
        if relay is not None and not relay.trusted:
            relay.trusted = True
            self._forget_anonymous(relay.client)
            relay.cancel_deadline()

    def knows(self, peer: str) -> bool:
        return peer in self._relays

    def _forget_anonymous(self, client: str) -> None:
        self.anonymous -= 1
        self.by_client[client] -= 1
        if self.by_client[client] <= 0:
            del self.by_client[client]

    def _admit(self, client: str) -> bool:
        caps = self.caps
        if (
            self.total >= caps.connections
            or self.anonymous >= caps.anonymous
            or self.by_client[client] >= caps.per_client
        ):
            self.refused += 1
            return False
        self.total += 1
        self.anonymous += 1
        self.by_client[client] += 1
        return True

    def _unadmit(self, client: str) -> None:
        """An admitted connection that never became a relay."""
        self.total -= 1
        self._forget_anonymous(client)

    def _release(self, relay: _Relay) -> None:
        self._live.discard(relay)
        self.total -= 1
        if not relay.trusted:
            self._forget_anonymous(relay.client)
        if relay.peer:
            self._relays.pop(relay.peer, None)

    def _upstream_name(self) -> Path:
        self._count += 1
        return self.folder / f"c{self._count}"

    async def close(self) -> None:
        """Stop listening and close every relayed connection; remove the private folder."""
        self._stop_listening()
        for relay in list(self._live):
            relay.abort()
        for task in list(self._opening):
            task.cancel()
        shutil.rmtree(self.folder, ignore_errors=True)


class _Relay:
    """One admitted connection: its client's side, and once its preface has come, gRPC's."""

    def __init__(self, guard: Guard, client: str, front: asyncio.Transport) -> None:
        self.guard = guard
        self.client = client
        self.front = front
        self.up: asyncio.Transport | None = None
        self.peer = ""
        self.trusted = False
        self.pending = bytearray()  # from the client, before gRPC's side is open
        self.closed = False
        guard._live.add(self)
        loop = asyncio.get_running_loop()
        caps = guard.caps
        self._preface = loop.call_later(caps.preface_seconds, self.abort)
        self._deadline: asyncio.TimerHandle | None = loop.call_later(
            caps.anonymous_seconds, self.abort
        )

    def cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def from_client(self, data: bytes) -> None:
        if self.up is not None:
            self.up.write(data)
            return
        had = len(self.pending)
        self.pending += data
        if had < len(PREFACE):
            head = bytes(self.pending[: len(PREFACE)])
            if not PREFACE.startswith(head):
                self.abort()  # not HTTP/2: closed at once
                return
            if len(head) == len(PREFACE):
                self._preface.cancel()
                task = asyncio.get_running_loop().create_task(self._open_upstream())
                self.guard._opening.add(task)  # held until done: the loop keeps weak references
                task.add_done_callback(self.guard._opening.discard)
        if len(self.pending) > MAX_BUFFERED:
            self.front.pause_reading()

    async def _open_upstream(self) -> None:
        name = self.guard._upstream_name()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(name))
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, str(self.guard.backend))
            up, _ = await asyncio.get_running_loop().create_connection(lambda: _Up(self), sock=sock)
        except OSError:
            sock.close()
            self.abort()
            return
        finally:
            with contextlib.suppress(OSError):
                os.unlink(name)
        if self.closed:
            up.abort()
            return
        self.up = up
        self.peer = f"unix:{name}"
        self.guard._relays[self.peer] = self
        up.write(bytes(self.pending))
        self.pending.clear()
        self.front.resume_reading()

    def abort(self) -> None:
        """Close both sides now (a cap, a deadline, a side gone)."""
        if self.closed:
            return
        self.closed = True
        self._preface.cancel()
        self.cancel_deadline()
        self.front.abort()
        if self.up is not None:
            self.up.abort()
        self.guard._release(self)


class _Front(asyncio.Protocol):
    """The client's side of a connection."""

    def __init__(self, guard: Guard, client: str) -> None:
        self.guard = guard
        self.client = client  # admitted already (Guard._accept)
        self.relay: _Relay | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.set_write_buffer_limits(high=MAX_BUFFERED)
        self.relay = _Relay(self.guard, self.client, transport)

    def data_received(self, data: bytes) -> None:
        if self.relay is not None and not self.relay.closed:
            self.relay.from_client(data)

    def eof_received(self) -> bool | None:
        if self.relay is not None and self.relay.up is not None:
            with contextlib.suppress(OSError, RuntimeError):
                self.relay.up.write_eof()
            return True
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.relay is not None:
            self.relay.abort()

    def pause_writing(self) -> None:  # the client reads slowly: read less from gRPC
        if self.relay is not None and self.relay.up is not None:
            self.relay.up.pause_reading()

    def resume_writing(self) -> None:
        if self.relay is not None and self.relay.up is not None:
            self.relay.up.resume_reading()


class _Up(asyncio.Protocol):
    """gRPC's side of a relayed connection."""

    def __init__(self, relay: _Relay) -> None:
        self.relay = relay

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.set_write_buffer_limits(high=MAX_BUFFERED)

    def data_received(self, data: bytes) -> None:
        if not self.relay.closed:
            self.relay.front.write(data)

    def eof_received(self) -> bool | None:
        with contextlib.suppress(OSError, RuntimeError):
            self.relay.front.write_eof()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self.relay.abort()

    def pause_writing(self) -> None:  # gRPC reads slowly: read less from the client
        self.relay.front.pause_reading()

    def resume_writing(self) -> None:
        self.relay.front.resume_reading()


# ------------------------------------------------------------------ telling the guard who showed a token

if TYPE_CHECKING:
    from typing import TypeAlias

    Handler: TypeAlias = grpc.RpcMethodHandler[Any, Any]  # not subscriptable at run time


def marking(handler: Handler, on_authenticated: Callable[[str], None]) -> Handler:
    """``handler`` (of a call whose token has been checked) that first tells the guard its peer is
    authenticated."""

    def wrap(behaviour: Any) -> Any:
        if behaviour is None:
            return None
        if inspect.isasyncgenfunction(behaviour):  # a response stream: yields what it yields

            async def streaming(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                on_authenticated(context.peer())
                async for item in behaviour(request, context):
                    yield item

            return streaming

        async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            on_authenticated(context.peer())
            result = behaviour(request, context)
            if isinstance(result, Awaitable):
                return await result
            return result

        return call

    kinds = {
        (False, False): grpc.unary_unary_rpc_method_handler,
        (False, True): grpc.unary_stream_rpc_method_handler,
        (True, False): grpc.stream_unary_rpc_method_handler,
        (True, True): grpc.stream_stream_rpc_method_handler,
    }
    behaviour = (
        handler.unary_unary or handler.unary_stream or handler.stream_unary or handler.stream_stream
    )
    make: Any = kinds[(handler.request_streaming, handler.response_streaming)]
    return make(  # type: ignore[no-any-return]
        wrap(behaviour),
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )
