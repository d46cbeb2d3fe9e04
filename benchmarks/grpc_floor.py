"""The bare transport floors of ``benchmarks/referee.py``: the referee's exchanges with no referee.

(b) A ping-pong between a grpc.aio server process (in the referee's place) and one grpc.aio client
(in the bots'), the client writing a Reply's worth of bytes and the server answering with a
DecisionRequest's. (c) The same messages between a server process and two client processes that take
turns in the order the seats of a real two-handed game do: the server writes to the seat to act and
reads its answer straight from the stream. With ``--protocol``, (c) speaks the bots' protocol: the
server writes the serialised DecisionRequests of a real game, in turn, and each client parses every
request and answers a Reply naming its first legal action, as ``trivial_bot.py`` does (the work
every bot must do, which a ping-pong of raw bytes leaves out). Both listen on TCP and on a Unix
socket (the sandboxed bots' transport). ``referee.py`` starts the processes:

    python benchmarks/grpc_floor.py echo-server --answer-size N --socket PATH
    python benchmarks/grpc_floor.py seats-server --answer-size N --seed K --seconds S --socket PATH [--protocol] [--split]
    python benchmarks/grpc_floor.py seats-client ADDRESS --seat K --message-size N [--protocol]

A server prints its TCP port first; the seats' server then times its exchanges and prints
``exchanges N seconds T cpu C loop L trip P`` (C: its own CPU seconds, every thread; L: its event
loop's thread's alone; P, with ``--split``: the median microseconds from starting a write to having
the answer, else 0).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NamedTuple

import trivial_bot  # the benchmark's bot, beside this file: its answer is the clients' of (c)

# The arena's package before grpc: it chooses gRPC's transport (arena/__init__.py), so that the
# benchmark's processes use the one the arena's do.
import arena  # noqa: F401

# isort: split
import grpc

from arena.game import Action, GameState, Observation, observe, variant
from arena.referee import Decision
from arena.sandbox import procs
from arena.service.stream_port import request_bytes
from arena.wire.v1 import bot_pb2

ME = [sys.executable, os.path.abspath(__file__)]
ECHO_METHOD = "/bench.Echo/Play"


# ---------------------------------------------------------------------------------------- (b)


async def echo_server(answer_size: int, socket_path: str) -> None:
    """A grpc.aio server answering each message of its one stream method with ``answer_size`` bytes
    (as the referee answers a bot's reply with the next request), on a TCP port (printed) and on the
    Unix socket ``socket_path``."""
    reply = b"r" * answer_size

    async def play(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        async for _ in requests:
            yield reply

    server = await bench_server("bench.Echo", play, socket_path)
    await server.wait_for_termination()


async def bench_server(service: str, play: Any, socket_path: str) -> grpc.aio.Server:
    """A started grpc.aio server whose ``service`` has ``play`` as its one stream method (Play), on
    a TCP port (printed) and on the Unix socket ``socket_path``."""
    handler = grpc.method_handlers_generic_handler(
        service, {"Play": grpc.stream_stream_rpc_method_handler(play)}
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.add_insecure_port(f"unix:{socket_path}")
    await server.start()
    print(port, flush=True)
    return server


async def timed(
    exchange: Callable[[], Awaitable[object]], seconds: float, started: Callable[[], None]
) -> tuple[int, float]:
    """Run ``exchange`` over and over: 200 times to warm up, then for about ``seconds`` (calling
    ``started`` as the clock starts). How many were timed, and in how many seconds."""
    for _ in range(200):
        await exchange()
    started()
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        await exchange()
        count += 1
        if time.perf_counter() >= deadline:
            return count, time.perf_counter() - start


def echo_server_argv(answer_size: int, socket_path: str) -> list[str]:
    """The command line of the echo server of (b) (see :func:`echo_server`)."""
    return [*ME, "echo-server", "--answer-size", str(answer_size), "--socket", socket_path]


def start_echo_server(answer_size: int, socket_path: str) -> tuple[subprocess.Popen[str], int]:
    """The echo server of (b) as a process of its own, and its TCP port."""
    server = subprocess.Popen(
        echo_server_argv(answer_size, socket_path), stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    return server, int(server.stdout.readline())


class FloorRun(NamedTuple):
    trips: int
    seconds: float
    client_cpu: float  # CPU seconds of this process (the client) over the round trips
    server_cpu: float  # ... and of the echo server's process


async def floor_round(echo: int, address: str, seconds: float, message_size: int) -> FloorRun:
    """A bare ping-pong with the echo server (process ``echo``, at ``address``) for ``seconds``, with
    a grpc.aio client as the bots use (write one message of ``message_size`` bytes, read the
    answer)."""
    payload = b"q" * message_size
    async with grpc.aio.insecure_channel(address) as channel:
        await asyncio.wait_for(channel.channel_ready(), 60)
        call: Any = channel.stream_stream(ECHO_METHOD)()  # raw bytes both ways

        async def exchange() -> object:
            await call.write(payload)
            return await call.read()

        cpu = [0.0, 0.0]

        def started() -> None:
            cpu[:] = time.process_time(), procs.cpu_seconds(echo)

        rounds, elapsed = await timed(exchange, seconds, started)
        client_cpu, server_cpu = time.process_time() - cpu[0], procs.cpu_seconds(echo) - cpu[1]
        call.cancel()
    return FloorRun(rounds, elapsed, client_cpu, server_cpu)


async def ping_pong(address: str, trips: int, message_size: int) -> None:
    """``trips`` round trips with the echo server, as :func:`floor_round` makes them."""
    payload = b"q" * message_size
    async with grpc.aio.insecure_channel(address) as channel:
        await asyncio.wait_for(channel.channel_ready(), 300)  # valgrind starts Python slowly
        call: Any = channel.stream_stream(ECHO_METHOD)()
        for _ in range(trips):
            await call.write(payload)
            await call.read()
        call.cancel()


# ---------------------------------------------------------------------------------------- (c)

SEATS_METHOD = "/bench.Seats/Play"


class Step(NamedTuple):
    """A decision of a scripted game: who acts, what they see, what they may do."""

    seat: int
    member: int
    observation: Observation
    legal: tuple[Action, ...]


def game_script(seed: int = 1) -> tuple[list[Step], GameState]:
    """Every decision of a two-handed game between first-legal players (each seat's view with the
    public events new to it, as the referee sends them), and the game's end."""
    state = GameState.new(variant("two-handed"), seed=seed)
    seen = [0, 0]
    steps = []
    while not state.is_terminal():
        seat = state.to_act
        legal = tuple(state.legal_actions())
        member = state.deciding_member()
        steps.append(Step(seat, member, observe(state, seat, log_from=seen[seat]), legal))
        seen[seat] = len(state.log)
        state.apply(legal[0])
    return steps, state


def step_request(request_id: int, step: Step) -> bytes:
    """A scripted decision's DecisionRequest, serialised as the referee's port sends it."""
    decision = Decision(
        request_id, "m1-0123abcd", 0, step.seat, step.member, step.observation, step.legal,
        1000, 10_000,
    )  # fmt: skip
    return request_bytes(decision)


async def seats_server(
    answer_size: int,
    seed: int,
    seconds: float,
    socket_path: str,
    protocol: bool = False,
    split: bool = False,
) -> None:
    """A grpc.aio server that waits for two clients (each names its seat in its first message), then
    for ``seconds`` writes ``answer_size`` bytes (with ``protocol``, the game's next serialised
    request) to the seat whose turn it is in the game of ``seed`` (:func:`game_script`, cycled) and
    reads its answer, from one task, straight from the streams. It prints its TCP port, then
    ``exchanges N seconds T cpu C loop L trip P`` (C: its own CPU seconds, every thread; L: its
    event loop's thread's alone; P, with ``split``: the median microseconds from starting a write to
    having the answer, else 0), and ends."""
    steps = game_script(seed)[0]
    if protocol:
        answers = itertools.cycle([step_request(i, step) for i, step in enumerate(steps, 1)])
    else:
        answers = itertools.cycle([b"r" * answer_size])
    seats: dict[int, Any] = {}
    both = asyncio.Event()
    finished = asyncio.Event()

    async def play(requests: AsyncIterator[bytes], context: Any) -> None:
        hello = await context.read()
        seat = bot_pb2.BotMessage.FromString(hello).hello.name if protocol else hello
        seats[int(seat)] = context
        if len(seats) == 2:
            both.set()
        await finished.wait()

    server = await bench_server("bench.Seats", play, socket_path)
    await asyncio.wait_for(both.wait(), 120)
    turns = itertools.cycle([seats[step.seat] for step in steps])

    async def exchange() -> object:
        context = next(turns)
        await context.write(next(answers))
        return await context.read()

    trips: list[float] = []

    async def timed_exchange() -> object:
        start = time.perf_counter()
        answer = await exchange()
        trips.append(time.perf_counter() - start)
        return answer

    cpu = [0.0, 0.0]

    def started() -> None:
        cpu[:] = time.process_time(), time.thread_time()
        trips.clear()  # the warm-up's are not counted

    exchanges, elapsed = await timed(timed_exchange if split else exchange, seconds, started)
    used, loop = time.process_time() - cpu[0], time.thread_time() - cpu[1]
    trip = statistics.median(trips) * 1e6 if trips else 0.0
    print(f"exchanges {exchanges} seconds {elapsed} cpu {used} loop {loop} trip {trip}", flush=True)
    finished.set()
    await server.stop(None)


async def seats_client(address: str, seat: int, message_size: int, protocol: bool = False) -> None:
    """One seat of (c): name the seat, then answer every message with ``message_size`` bytes; with
    ``protocol``, parse every message as a RefereeMessage and answer its request with a BotMessage
    whose Reply names the first legal action, as the benchmark's trivial bot does."""
    payload = b"q" * message_size
    async with grpc.aio.insecure_channel(address) as channel:
        if not protocol:
            call: Any = channel.stream_stream(SEATS_METHOD)()
            await call.write(str(seat).encode())
            while await call.read() is not grpc.aio.EOF:
                await call.write(payload)
            return
        call = channel.stream_stream(
            SEATS_METHOD,
            request_serializer=bot_pb2.BotMessage.SerializeToString,
            response_deserializer=bot_pb2.RefereeMessage.FromString,
        )()
        await call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(name=str(seat))))
        while (message := await call.read()) is not grpc.aio.EOF:
            if (out := trivial_bot.answer(message)) is not None:
                await call.write(out)


class SeatsRun(NamedTuple):
    exchanges: int
    seconds: float
    server_cpu: float  # CPU seconds of the server's process over the exchanges
    server_loop_cpu: float  # ... of its event loop's thread alone
    trip_us: float  # the median microseconds from starting a write to having the answer (split)


async def seats_round(
    folder: str,
    unix: bool,
    seconds: float,
    request_size: int,
    reply_size: int,
    seed: int,
    protocol: bool = False,
    split: bool = False,
) -> SeatsRun:
    """(c) for about ``seconds``: a server and two clients, fresh processes (their start is not
    timed); ``protocol`` and ``split`` as the server and the clients take them."""
    flags = [*(["--protocol"] if protocol else []), *(["--split"] if split else [])]
    sock = os.path.join(folder, "seats.sock")
    with contextlib.suppress(FileNotFoundError):
        os.remove(sock)
    server = await asyncio.create_subprocess_exec(
        *ME, "seats-server", "--answer-size", str(request_size), "--seed", str(seed),
        "--seconds", str(seconds), "--socket", sock, *flags, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    clients: list[asyncio.subprocess.Process] = []
    try:
        assert server.stdout is not None
        port = (await asyncio.wait_for(server.stdout.readline(), 60)).decode().strip()
        if not port.isdigit():
            raise SystemExit("the two-client floor's server did not start")
        address = f"unix:{sock}" if unix else f"127.0.0.1:{port}"
        for seat in (0, 1):
            client = [
                *ME,
                "seats-client",
                address,
                "--seat",
                str(seat),
                *(["--protocol"] if protocol else []),
            ]
            clients.append(
                await asyncio.create_subprocess_exec(*client, "--message-size", str(reply_size))
            )
        line = (await asyncio.wait_for(server.stdout.readline(), seconds + 120)).decode()
        found = re.match(r"exchanges (\d+) seconds (\S+) cpu (\S+) loop (\S+) trip (\S+)", line)
        if found is None:
            raise SystemExit(f"the two-client floor failed: {line!r}")
        return SeatsRun(int(found.group(1)), *(float(found.group(k)) for k in range(2, 6)))
    finally:
        for process in (server, *clients):
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()


# ---------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    part = parser.add_subparsers(dest="part", required=True)
    echo = part.add_parser("echo-server", help="the server of (b)")
    echo.add_argument("--answer-size", type=int, required=True)
    echo.add_argument("--socket", required=True)
    seats = part.add_parser("seats-server", help="the server of (c)")
    seats.add_argument("--answer-size", type=int, required=True)
    seats.add_argument("--seed", type=int, default=1, help="the game whose seats take turns")
    seats.add_argument("--seconds", type=float, required=True)
    seats.add_argument("--socket", required=True)
    seats.add_argument("--protocol", action="store_true", help="write a real game's requests")
    seats.add_argument("--split", action="store_true", help="time each exchange's round trip")
    client = part.add_parser("seats-client", help="one seat of (c)")
    client.add_argument("address")
    client.add_argument("--seat", type=int, required=True)
    client.add_argument("--message-size", type=int, required=True)
    client.add_argument("--protocol", action="store_true", help="parse requests, answer Replies")
    args = parser.parse_args()
    if args.part == "echo-server":
        asyncio.run(echo_server(args.answer_size, args.socket))
    elif args.part == "seats-server":
        asyncio.run(
            seats_server(
                args.answer_size, args.seed, args.seconds, args.socket, args.protocol, args.split
            )
        )
    else:
        with contextlib.suppress(grpc.aio.AioRpcError):
            asyncio.run(seats_client(args.address, args.seat, args.message_size, args.protocol))


if __name__ == "__main__":
    main()
