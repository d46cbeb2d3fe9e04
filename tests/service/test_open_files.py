"""The referee's own file descriptors under a flood of TCP connections: the bot listener keeps a share
of its open files (arena.service.server.tcp_connections), and the referee goes on opening files and
serving sandboxed bots' sockets. The referee runs in a process of its own, with few open files."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

from raw_connections import raw, settled

from arena.service.server import MAX_TCP_CONNECTIONS, MIN_TCP_CONNECTIONS, tcp_connections

OPEN_FILES = 400
REFEREE = f"""
import asyncio, json, resource, sys, tempfile
resource.setrlimit(resource.RLIMIT_NOFILE, ({OPEN_FILES}, {OPEN_FILES}))
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from arena.service.server import create_server

async def main():
    server, port, manager = await create_server("127.0.0.1:0")
    print(json.dumps({{"port": port}}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)  # flooded
    files = [tempfile.TemporaryFile() for _ in range(50)]  # as records and logs are written
    sock = await manager.sockets.open()
    async with grpc.aio.insecure_channel(f"unix:{{sock.path}}") as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=10
        )
    print(json.dumps({{"files": len(files), "socket": reply.status}}), flush=True)
    await manager.close()
    await server.stop(None)

asyncio.run(main())
"""


def test_a_flood_of_tcp_connections_leaves_the_referee_its_files() -> None:
    cap = tcp_connections(OPEN_FILES)
    assert cap < OPEN_FILES // 2
    referee = subprocess.Popen(
        [sys.executable, "-c", REFEREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    conns: list[socket.socket] = []
    try:
        assert referee.stdout is not None and referee.stdin is not None
        port = json.loads(referee.stdout.readline())["port"]
        for _ in range(OPEN_FILES):  # as many as the referee may open: it would have none left
            conns.append(raw(socket.AF_INET, ("127.0.0.1", port)))
        assert 0 < settled(conns, cap) <= cap
        referee.stdin.write("go\n")
        referee.stdin.flush()
        after = json.loads(referee.stdout.readline())
        assert after == {"files": 50, "socket": 1}  # SERVING
    finally:
        for conn in conns:
            conn.close()
        referee.kill()
        referee.wait()


def test_the_tcp_connections_are_capped_whatever_the_open_files() -> None:
    """Each connection costs memory before any token is checked: a red-team client held some 1.1 MB
    per connection, and a referee whose hard limit is a million open files kept a quarter of a
    million connections. The cap is a quarter of the open files between its bounds."""
    assert tcp_connections(100) == MIN_TCP_CONNECTIONS
    assert tcp_connections(OPEN_FILES) == OPEN_FILES // 4
    for open_files in (1 << 16, 1 << 20, 1 << 30):
        assert tcp_connections(open_files) == MAX_TCP_CONNECTIONS
