"""The referee's gRPC server: bot gateway, admin/spectator service, health and reflection."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.scratch import scratch_dir
from arena.service.manager import MatchManager
from arena.service.servicers import Admin, BotGateway
from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2, bot_pb2_grpc

ADMIN_SERVICE = admin_pb2.DESCRIPTOR.services_by_name["Admin"].full_name

# The transport's limit: above it gRPC drops the stream; below it, the gateway reports a message over
# its own (much smaller) limit as the bot's protocol error.
MAX_RECEIVE_BYTES = 4 * 1024 * 1024


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
    """The admin service starts matches and launches commands: with a token, every admin call must
    carry ``authorization: Bearer <token>``."""

    def __init__(self, token: str) -> None:
        self.expected = f"Bearer {token}"

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method = handler_call_details.method or ""
        if method.startswith(f"/{ADMIN_SERVICE}/"):
            metadata = dict(handler_call_details.invocation_metadata or ())
            given = metadata.get("authorization", "")
            if not isinstance(given, str) or not hmac.compare_digest(given, self.expected):
                return _deny(method)
        return await continuation(handler_call_details)


def _deny(method: str) -> grpc.RpcMethodHandler[Any, Any]:
    async def abort(request: object, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the admin service needs its token")

    if method.endswith("/WatchMatch"):
        return grpc.unary_stream_rpc_method_handler(abort)
    return grpc.unary_unary_rpc_method_handler(abort)


async def create_server(
    address: str = "127.0.0.1:0",
    records_dir: Path | None = None,
    logs_dir: Path | None = None,
    admin_token: str | None = None,
) -> tuple[grpc.aio.Server, int, MatchManager]:
    """A started server bound to ``address`` (port 0: any free port), the port, and its manager. The
    default binds to loopback only; binding elsewhere requires an admin token, which every admin call
    must then present."""
    if not is_loopback(address) and not admin_token:
        raise ValueError(
            f"the referee would listen on {address}, beyond this machine: give an admin token, or the "
            "admin service (which launches commands) would be open to anyone who can reach it"
        )
    manager = MatchManager(records_dir=records_dir, logs_dir=logs_dir)
    interceptors = [AdminGuard(admin_token)] if admin_token else []
    server = grpc.aio.server(
        interceptors=interceptors,
        options=[("grpc.max_receive_message_length", MAX_RECEIVE_BYTES)],
    )
    bot_pb2_grpc.add_BotGatewayServicer_to_server(BotGateway(manager), server)
    admin_pb2_grpc.add_AdminServicer_to_server(Admin(manager), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = (
        bot_pb2.DESCRIPTOR.services_by_name["BotGateway"].full_name,
        admin_pb2.DESCRIPTOR.services_by_name["Admin"].full_name,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
    )
    reflection.enable_server_reflection(names, server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot bind the referee to {address}")
    host = address.rsplit(":", 1)[0]
    manager.address = f"{host}:{port}"
    # Also a Unix socket in a private folder: sandboxed bots (bubblewrap, no network) reach the
    # referee through it.
    socket_dir = scratch_dir("referee-")
    socket_dir.chmod(0o700)
    unix_address = f"unix:{socket_dir / 'referee.sock'}"
    if server.add_insecure_port(unix_address) == 0:
        raise OSError(f"cannot bind the referee to {unix_address}")
    manager.unix_address = unix_address
    manager.socket_dir = socket_dir
    await server.start()
    for name in ("", *names[:2]):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, port, manager
