"""The referee's gRPC servers.

Bots and the admin never share a listener. The bot listener (a TCP address, and a Unix socket of its
own for each sandboxed bot, which has no network: arena.service.sockets) serves the bot gateway and
health, nothing else: a bot that calls the admin service on the address it was given finds no such service. The admin
listener, only when asked for (``arena serve``; in-process referees such as ``arena run`` and
``arena match`` have none), serves the admin and spectator service, health and reflection on an
address of its own, and every call on it, loopback included, must carry its token
(``authorization: Bearer TOKEN``). Neither listener shares its port: a second server on a port already
in use is refused (gRPC's default of SO_REUSEPORT is turned off).
"""

from __future__ import annotations

import contextlib
import errno
import hmac
import ipaddress
import resource
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.bots.limits import Limits
from arena.common.secret_tokens import new_token
from arena.service.listener_caps import Caps, Guard, caps_for, marking
from arena.service.match_manager import ManagerOptions, MatchManager
from arena.service.servicers import GATEWAY_SERVICE, Admin, BotGateway, add_gateway
from arena.service.sockets import BotSockets
from arena.wire.v1 import admin_pb2, admin_pb2_grpc

ADMIN_SERVICE = admin_pb2.DESCRIPTOR.services_by_name["Admin"].full_name
HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name

# The admin listener's transport limit on a message (its callers carry the token).
MAX_RECEIVE_BYTES = 4 * 1024 * 1024
SERVER_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
    ("grpc.so_reuseport", 0),  # a port in use is an error, not shared with another server
]
# The bot listeners' transport limit: above it gRPC drops the stream; below it, the gateway reports a
# message over its own (smaller) limit as the bot's protocol error. gRPC holds a message whole before
# the gateway sees it, and every stream waiting for its Hello has a read pending: with 4 MiB here, a
# red-team client that sent all but the last byte of a 4 MB first message on each of its streams had
# the referee hold 64 MB per connection (500 MB for one sandboxed bot on its own socket, and as much
# per connection for anyone who can reach the TCP address, before any token is checked).
MAX_BOT_RECEIVE_BYTES = 64 * 1024
# A bot plays over one stream, and bots run in one process share a connection (gRPC shares one
# between the channels of a process to the same address: a team's bots, a test's). A red-team bot
# opened a thousand streams on each of its connections, that never said Hello: some 5 KB of the
# referee's memory each, 500 MB in all. The streams past these on one connection wait on the bot's
# side, in its memory.
MAX_STREAMS_PER_BOT_CONNECTION = 16
# The bot listener's TCP connections at a time (remote bots, and light-mode local ones), as a share of
# the referee's open files: a flood of connections from the network is refused past it, and leaves the
# referee descriptors for its records and logs, its bots' pipes and sandboxed bots' own sockets.
TCP_SHARE_OF_OPEN_FILES = 4  # a quarter
MIN_TCP_CONNECTIONS = 64
# ... and at most this many, whatever the open files: each connection costs memory too, before any
# token is checked. A red-team client held some 1.1 MB per connection (16 streams, each waiting for
# its Hello with 64 KiB of it sent but its last byte), and the referee raises its open files to the
# hard limit, a million on many systems: a quarter of that was 290 GB to be had from the network.
MAX_TCP_CONNECTIONS = 1024
MAX_OPEN_FILES = 1 << 20  # the most the referee asks for, under an unlimited hard limit
# Every listener: a connection that has not sent HTTP/2's preface (and its first SETTINGS) within this
# is closed by gRPC itself (its handshake's deadline: 120 s unless set). Behind a guard the guard's own
# deadline comes first; a server without one (arena run's in-process referee) has this.
HANDSHAKE_SECONDS = 10
HANDSHAKE_OPTIONS = [("grpc.server_handshake_timeout_ms", HANDSHAKE_SECONDS * 1000)]
BOT_SERVER_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_BOT_RECEIVE_BYTES),
    ("grpc.so_reuseport", 0),
    ("grpc.max_concurrent_streams", MAX_STREAMS_PER_BOT_CONNECTION),
]


def open_files_limit() -> int:
    """This process's limit on open files, its soft limit raised first to its hard limit (at most
    MAX_OPEN_FILES). The referee holds a descriptor for each bot connection, bot process and log, and
    its ledger; the soft limit many systems give a shell (1024) is small beside the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = MAX_OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, MAX_OPEN_FILES)
    if soft != resource.RLIM_INFINITY and soft < want:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
    return MAX_OPEN_FILES if soft == resource.RLIM_INFINITY else soft


def tcp_connections(open_files: int) -> int:
    """How many TCP connections the bot listener keeps at a time, for a referee of this many open
    files."""
    return max(MIN_TCP_CONNECTIONS, min(MAX_TCP_CONNECTIONS, open_files // TCP_SHARE_OF_OPEN_FILES))


def bot_caps(open_files: int) -> Caps:
    """The guarded bots' listener's caps: a quarter of the open files (as unguarded), at most
    MAX_TCP_CONNECTIONS; a connection must have a Hello with a seat's token accepted within 20 s (the
    gateway's own deadline for the Hello is HELLO_TIMEOUT, on each stream)."""
    return caps_for(open_files, TCP_SHARE_OF_OPEN_FILES, MAX_TCP_CONNECTIONS, MIN_TCP_CONNECTIONS)


def admin_caps(open_files: int) -> Caps:
    """The guarded admin listener's: the organiser's tools and the web's Live page, a few dozen."""
    return caps_for(open_files, 32, 128)


def is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    if address.startswith("unix:"):
        return True
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class AdminGuard(grpc.aio.ServerInterceptor):
    """Every call on the admin listener (admin, health, reflection) must carry
    ``authorization: Bearer <token>``."""

    def __init__(self, token: str, on_authenticated: Callable[[str], None] | None = None) -> None:
        self.expected = f"Bearer {token}"
        self.on_authenticated = on_authenticated  # the listener's guard, told of a token shown

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        metadata = dict(handler_call_details.invocation_metadata or ())
        given = metadata.get("authorization", "")
        if not isinstance(given, str) or not hmac.compare_digest(
            given.encode(), self.expected.encode()
        ):
            handler = await continuation(handler_call_details)
            return _deny(handler)
        handler = await continuation(handler_call_details)
        if handler is not None and self.on_authenticated is not None:
            return marking(handler, self.on_authenticated)
        return handler


def _deny(handler: grpc.RpcMethodHandler[Any, Any] | None) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler that refuses the call without reading its request: a request-streaming one whatever
    the method (on the wire a unary request is a stream of one message), which gRPC reads only when
    asked. A unary handler would receive and decode the whole message first: up to the listener's
    limit for each call of anyone who can reach the port."""

    async def abort(requests: object, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the admin service needs its token")

    async def abort_stream(requests: object, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await abort(requests, context)

    if handler is not None and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(abort_stream)
    return grpc.stream_unary_rpc_method_handler(abort)


class _Token:
    """Puts the admin token on a call (gRPC takes one interceptor object per kind of call)."""

    def __init__(self, token: str) -> None:
        self.entry = ("authorization", f"Bearer {token}")

    def _with_token(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()), self.entry)
        return grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )


class _UnaryUnaryToken(_Token, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_token(details), request)


class _UnaryStreamToken(_Token, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_token(details), request)


class _StreamStreamToken(_Token, grpc.aio.StreamStreamClientInterceptor):
    async def intercept_stream_stream(
        self, continuation: Any, details: Any, request_iterator: Any
    ) -> Any:
        return await continuation(self._with_token(details), request_iterator)


def admin_channel(address: str, token: str) -> grpc.aio.Channel:
    """A channel to an admin listener that presents ``token`` on every call."""
    return grpc.aio.insecure_channel(
        address,
        interceptors=[_UnaryUnaryToken(token), _UnaryStreamToken(token), _StreamStreamToken(token)],
    )


class ArenaServer:
    """The referee's listeners: the bot gateway's, and the admin's when there is one."""

    def __init__(
        self,
        bots: grpc.aio.Server,
        gateway: BotGateway,
        admin: grpc.aio.Server | None = None,
        admin_address: str = "",
        admin_token: str = "",
    ) -> None:
        self.bots = bots
        self.gateway = gateway
        self.admin = admin
        self.admin_address = admin_address  # HOST:PORT, the port as bound
        self.admin_token = admin_token
        self.guards: list[Guard] = []  # in front of its TCP listeners, when guarded

    async def stop(self, grace: float | None) -> None:
        for guard in self.guards:
            await guard.close()
        if self.admin is not None:
            await self.admin.stop(grace)
        await self.bots.stop(grace)

    async def wait_for_termination(self) -> None:
        await self.bots.wait_for_termination()


def check_free(address: str, what: str) -> None:
    """Raise OSError naming ``address`` when a TCP listener could not bind it: in use, or not an
    address of this machine. Checked with a socket of our own before gRPC binds, so that the error is
    ours alone (gRPC's own log line and its advice about GRPC_VERBOSITY are not shown), and before
    anything is done that a refused start would leave behind. Like gRPC, a host that resolves to
    several addresses is fine when any of them can be bound; port 0 and Unix sockets always are."""
    if address.startswith("unix:"):
        return
    host, _, port_text = address.rpartition(":")
    host = host.strip("[]")
    try:
        port = int(port_text)
    except ValueError:
        raise OSError(f"cannot listen for {what} on {address}: expected HOST:PORT") from None
    if port == 0:
        return
    try:
        found = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except (socket.gaierror, UnicodeError) as exc:
        raise OSError(f"cannot listen for {what} on {address}: unknown host ({exc})") from None
    why = ""
    for family, kind, proto, _, where in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC binds
            try:
                probe.bind(where)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    why = "the address is in use (by another server, or this one already running?)"
                elif not why:
                    why = f"not an address this machine can listen on ({exc.strerror})"
            else:
                return
    raise OSError(f"cannot listen for {what} on {address}: {why or 'no address resolved'}")


def bind(server: grpc.aio.Server, address: str, what: str) -> int:
    """Listen on ``address``; the port bound. A clear error when it cannot (in use, bad host)."""
    check_free(address, what)
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise OSError(
            f"cannot listen for {what} on {address}: the address is in use or not available ({exc})"
        ) from exc
    if port == 0 and not address.startswith("unix:"):
        raise OSError(
            f"cannot listen for {what} on {address}: the address is in use or not available"
        )
    return port


async def bind_guarded(
    server: grpc.aio.Server, guard: Guard | None, address: str, what: str
) -> int:
    """Bind ``server`` to ``address``: behind ``guard`` when there is one (the server on the guard's
    private socket, the guard listening on ``address``; the guard closed when it cannot), else
    directly. The port bound."""
    if guard is None:
        return bind(server, address, what)
    bind(server, guard.backend_address, what)
    try:
        return await guard.listen(address)
    except OSError:
        await guard.close()
        raise


async def start_guarded(server: grpc.aio.Server, guard: Guard | None) -> None:
    """Start a server bound by :func:`bind_guarded`; its guard closed when it cannot start."""
    try:
        await server.start()
    except BaseException:
        if guard is not None:
            await guard.close()
        raise


async def create_server(
    address: str = "127.0.0.1:0",
    records_dir: Path | None = None,
    logs_dir: Path | None = None,
    admin_token: str | None = None,
    *,
    admin_address: str | None = None,
    limits: Limits | None = None,
    deal_key: bytes = b"",
    gateway: Callable[[MatchManager], BotGateway] = BotGateway,
    guarded: bool = False,
    options: ManagerOptions | None = None,
) -> tuple[ArenaServer, int, MatchManager]:
    """A started referee: the bot listener on ``address`` (port 0: any free port; at most
    :func:`tcp_connections` at a time, this process's open files raised to their hard limit), a Unix
    socket for each sandboxed bot (arena.service.sockets), its port, and its manager. With ``admin_address``, also the admin listener there, whose calls must
    carry ``admin_token`` (a fresh one is made when none is given: ``server.admin_token``). ``limits``
    and ``deal_key`` are the server's policy for matches that name none (those started through the
    admin service). ``gateway`` makes the bot gateway servicer (a subclass may watch the streams);
    ``options``, how the manager treats the bots it launches. ``guarded``: each TCP listener (the
    bots', the admin's) is a :class:`listener_caps.Guard`'s, with caps per client, deadlines and room
    kept for clients that showed a token (for a server anyone on the network may reach: ``arena
    serve``, a competition)."""
    if admin_token and not admin_address:
        raise ValueError("an admin token was given without an admin address to serve it on")
    open_files = open_files_limit()
    tcp_cap = ("grpc.max_allowed_incoming_connections", tcp_connections(open_files))
    guards: list[Guard] = []
    bot_guard = admin_guard = None
    if guarded and not address.startswith("unix:"):
        check_free(address, "bots")
        if admin_address and not admin_address.startswith("unix:"):
            check_free(admin_address, "the admin service")
        bot_guard = Guard("bots", bot_caps(open_files))
        guards.append(bot_guard)
        tcp_cap = ("grpc.max_allowed_incoming_connections", bot_guard.caps.connections)
    bots = grpc.aio.server(options=[*BOT_SERVER_OPTIONS, tcp_cap, *HANDSHAKE_OPTIONS])
    bot_health = health.aio.HealthServicer()
    # Bound first, so that the manager is made knowing where its bots dial in; the services are
    # added before the server starts.
    port = await bind_guarded(bots, bot_guard, address, "bots")
    host = address.rsplit(":", 1)[0]

    # A Unix socket for each sandboxed bot (no network): see arena.service.sockets.
    def register(server: grpc.aio.Server) -> None:
        add_gateway(servicer, server)
        health_pb2_grpc.add_HealthServicer_to_server(bot_health, server)

    sockets = BotSockets(register, BOT_SERVER_OPTIONS)
    manager = MatchManager(
        records_dir=records_dir,
        logs_dir=logs_dir,
        limits=limits,
        deal_key=deal_key,
        address=f"{host}:{port}",
        local_address=bot_guard.backend_address if bot_guard is not None else "",
        sockets=sockets,
        options=options,
    )
    servicer = gateway(manager)
    if bot_guard is not None:
        servicer.on_authenticated = bot_guard.authenticated
    add_gateway(servicer, bots)
    health_pb2_grpc.add_HealthServicer_to_server(bot_health, bots)

    admin: grpc.aio.Server | None = None
    admin_health = health.aio.HealthServicer()
    bound_admin = ""
    token = ""
    if admin_address:
        token = admin_token or new_token(32)
        if guarded and not admin_address.startswith("unix:"):
            admin_guard = Guard("the admin service", admin_caps(open_files))
            guards.append(admin_guard)
        interceptor = AdminGuard(token, admin_guard.authenticated if admin_guard else None)
        admin = grpc.aio.server(
            interceptors=[interceptor], options=[*SERVER_OPTIONS, *HANDSHAKE_OPTIONS]
        )
        admin_pb2_grpc.add_AdminServicer_to_server(Admin(manager), admin)
        health_pb2_grpc.add_HealthServicer_to_server(admin_health, admin)
        reflection.enable_server_reflection(
            (ADMIN_SERVICE, HEALTH_SERVICE, reflection.SERVICE_NAME), admin
        )
        try:
            admin_port = await bind_guarded(admin, admin_guard, admin_address, "the admin service")
        except OSError:
            await sockets.close()
            for guard in guards:
                await guard.close()
            raise
        bound_admin = f"{admin_address.rsplit(':', 1)[0]}:{admin_port}"
    try:
        await bots.start()
        if admin is not None:
            await admin.start()
            for name in ("", ADMIN_SERVICE):
                await admin_health.set(name, health_pb2.HealthCheckResponse.SERVING)
    except BaseException:
        await bots.stop(None)
        await sockets.close()
        for guard in guards:
            await guard.close()
        raise
    for name in ("", GATEWAY_SERVICE):
        await bot_health.set(name, health_pb2.HealthCheckResponse.SERVING)
    server = ArenaServer(bots, servicer, admin, bound_admin, token)
    server.guards = guards
    return server, port, manager
