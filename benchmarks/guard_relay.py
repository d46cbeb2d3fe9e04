"""What the listener guard's relay costs a remote bot per decision (issue 47).

A remote entrant's connection reaches the referee through :class:`arena.service.listener_caps.Guard`:
the guard accepts the TCP connection in the referee's own process and relays its bytes to the gRPC
server behind it on a Unix socket. This measures one exchange (a request of a DecisionRequest's size
out, a Reply's size back, as a bot's stream carries them) between a gRPC server process and a client
process, once straight to the server's TCP port and once through a guard in the server's process, and
prints for each the median and 99th percentile round trip and the server process's CPU per exchange:

    python benchmarks/guard_relay.py --exchanges 5000

The difference is the relay's cost per decision; compare it with a move's time budget (seconds) and
with the referee's own per-move overhead (``benchmarks/referee.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc

from arena.service.listener_caps import Caps, Guard

METHOD = "/bench.Echo/Play"
REQUEST_BYTES = 600  # about a two-handed DecisionRequest
REPLY_BYTES = 40  # about a Reply naming an action


def _same(data: bytes) -> bytes:
    return data


async def _play(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
    answer = b"r" * REQUEST_BYTES
    async for _ in requests:
        yield answer


async def serve() -> None:
    """The server process: an echo stream on TCP (direct) and behind a guard (relayed). Prints the two
    ports, then, for each line ``cpu`` read on stdin, its own CPU seconds so far."""
    handler = grpc.stream_stream_rpc_method_handler(
        _play, request_deserializer=_same, response_serializer=_same
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("bench.Echo", {"Play": handler})]
    )
    direct = server.add_insecure_port("127.0.0.1:0")
    # Every connection here is the benchmark's own: none is closed for being anonymous meanwhile.
    guard = Guard("the benchmark", Caps(anonymous_seconds=3600.0))
    server.add_insecure_port(guard.backend_address)
    await server.start()
    relayed = await guard.listen("127.0.0.1:0")
    print(direct, relayed, flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        print(time.process_time(), flush=True)
    await guard.close()
    await server.stop(None)


async def exchanges(port: int, count: int) -> list[float]:
    """Round trips (seconds) of ``count`` exchanges on one stream to 127.0.0.1:``port``."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.stream_stream(
            METHOD, request_serializer=_same, response_deserializer=_same
        )()
        message = b"q" * REPLY_BYTES
        trips = []
        for _ in range(count):
            start = time.perf_counter()
            await call.write(message)
            await call.read()
            trips.append(time.perf_counter() - start)
        await call.done_writing()
        return trips


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exchanges", type=int, default=5000, help="round trips per path")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve())
        return 0
    if args.exchanges < 10:
        parser.error("--exchanges must be at least 10")
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        direct, relayed = (int(p) for p in server.stdout.readline().split())

        def cpu() -> float:
            assert server.stdin is not None and server.stdout is not None
            server.stdin.write("cpu\n")
            server.stdin.flush()
            return float(server.stdout.readline())

        asyncio.run(exchanges(direct, 200))  # warm both ends up
        asyncio.run(exchanges(relayed, 200))
        for name, port in (("direct", direct), ("guarded", relayed)):
            before = cpu()
            trips = asyncio.run(exchanges(port, args.exchanges))
            spent = cpu() - before
            trips.sort()
            p99 = trips[min(len(trips) - 1, int(len(trips) * 0.99))]
            print(
                f"{name}: median_us={statistics.median(trips) * 1e6:.0f} p99_us={p99 * 1e6:.0f} "
                f"server_cpu_us_per_exchange={spent / args.exchanges * 1e6:.0f}"
            )
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
