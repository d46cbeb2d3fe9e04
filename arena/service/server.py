"""The referee's gRPC server: bot gateway, admin/spectator service, health and reflection."""

from __future__ import annotations

from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.service.manager import MatchManager
from arena.service.servicers import Admin, BotGateway
from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2, bot_pb2_grpc

# Bots send small messages; refuse anything larger (an oversized message ends that stream only).
MAX_RECEIVE_BYTES = 256 * 1024


async def create_server(
    address: str = "127.0.0.1:0",
    records_dir: Path | None = None,
    logs_dir: Path | None = None,
) -> tuple[grpc.aio.Server, int, MatchManager]:
    """A started server bound to ``address`` (port 0: any free port), the port, and its manager. The
    default binds to loopback only."""
    manager = MatchManager(records_dir=records_dir, logs_dir=logs_dir)
    server = grpc.aio.server(options=[("grpc.max_receive_message_length", MAX_RECEIVE_BYTES)])
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
    await server.start()
    for name in ("", *names[:2]):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, port, manager
