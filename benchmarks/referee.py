"""Referee throughput against the bare transport.

    python benchmarks/referee.py --seconds 5 [--rounds 3] [--profile]

(a) A two-handed match between two trivial bots (``benchmarks/trivial_bot.py``, each answering the
first legal action at once) over the real server, for about S seconds: as many games as fit, measured
over the decision loop only (from every bot connected to the last game's end; starting and stopping the
bots is left out). (b) The floor (``benchmarks/grpc_floor.py``): a bare gRPC bidirectional ping-pong
between two processes for about S seconds, a grpc.aio server process (as the referee) and a grpc.aio
client (as the bots), with messages the size of a typical DecisionRequest and Reply (measured by
serialising every decision of a real game), each going the way it goes in a match (the client writes a
Reply's worth, the server answers with a DecisionRequest's), over the transport the match's bots used
(a sandboxed bot's Unix socket, else TCP). (a) and (b) take turns in rounds, so that a change in the
machine's load touches both alike. The last line is ``decisions_per_second <N> floor_per_second <M>
ratio <R>``, with R = N / M.

(c) A second floor (also in ``benchmarks/grpc_floor.py``), in the same rounds: the same messages
between a server process and two client processes that take turns in the order the seats of a real
two-handed game do (the server writes to the seat to act and reads its answer, as the referee does),
for about S seconds. A match is that shape, and (b) is not: each bot waits, idle, while the other
plays, and waking an idle process's threads costs every exchange more than a ping-pong with one client
that never rests. The line ``two-client floor`` gives its rate and the referee's ratio to it, beside R.

(d) With ``--replay``, in the same rounds: the referee with its rules taken out. The same server, ports,
streams and bots play a match whose games send the requests of games scripted beforehand, checking
only that each reply is the first legal action (no rules applied, no clock, no record but the count).
The line ``rules replayed`` gives its rate, CPU and ratios: where the referee would stand if its match
loop and rules cost nothing, which bounds what faster rules can give.

Before it, a breakdown per decision: the time over the server, the transport floor, the referee and
rules alone (the same match loop with in-process seats answering at once; and through the referee's
own stream ports, with gRPC replaced by a write completing a loop turn later and the reply coming
through a reader task: the referee's whole Python path, without the transport) and building and
serialising the request; then the CPU time per decision of the referee's process (every thread, and
its event loop's thread alone: the rest is gRPC's threads) and of the bots' processes, beside the
floor's server and client per round trip, and their difference, the referee's own CPU per decision:
on a shared machine it moves far less with the load than the wall-clock figures (Linux: the bots'
and the echo server's CPU is read from /proc). The two-client floor's server reports its event
loop's thread too: both loops make the same gRPC calls per exchange, so the difference is what the
referee adds on its loop (its Python, the hand-off from the stream's reader to the match, the
garbage collector). ``--profile`` also runs the matches under cProfile in this process (the
referee's side: event loop, servicers, referee, engine, serialisation) and prints where the time
goes.

With ``--split``, the critical path of a decision is split in two, in the same rounds, as medians:
the referee's round trip (from starting to write a request to the reply being handed to its port:
the transport both ways and the bot) and its own section (from a reply handed over to starting to
write the next request: the reader's hand-off, the clock, the rules, encoding); and the two-client
floor's round trip, timed the same way by its server. It adds (c) speaking the protocol: the same
two-client floor whose server writes a real game's serialised requests and whose clients parse each
and answer a Reply, as the trivial bot does; that is the work any bot must do, which a ping-pong of
raw bytes leaves out, so the referee's ratio to it is its overhead alone. Timing each write and reply
adds about a microsecond a decision to (a) and (d).

    python benchmarks/referee.py --instructions     # needs valgrind

counts instructions instead of time, which no other load on the machine moves: the referee process
(every thread) over a match of 3 games less one of 1 game, per decision, and the echo server over
1300 round trips less 300, per round trip, each under valgrind's callgrind; their difference is the
referee's own work per decision. The last line is ``referee_instructions <X> floor_instructions <Y>
own_instructions <X - Y>``. It takes a few minutes (valgrind runs Python some fifty times slower).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import itertools
import os
import pstats
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import ClassVar, NamedTuple
from unittest import mock

from grpc_floor import (
    FloorRun,
    SeatsRun,
    Step,
    echo_server_argv,
    floor_round,
    game_script,
    ping_pong,
    seats_round,
    start_echo_server,
    step_request,
)
from in_process import CLOCK, in_process_cost, port_path_cost

from arena.bots.launcher import BotProcess
from arena.game import GameState
from arena.referee import Decision, Match, MatchConfig
from arena.referee.config import Outcome
from arena.referee.match import GameEnd
from arena.referee.record import DecisionRecord, GameRecord, result_to_dict
from arena.sandbox import procs
from arena.service import match_manager as manager_module
from arena.service.match_manager import PlayerSpec
from arena.service.server import create_server
from arena.service.stream_port import Outgoing, StreamPort
from arena.wire.v1 import bot_pb2

# The trivial bot answers from the raw message (no SDK view), so that the figure is the referee's.
BOT = (
    f"{sys.executable} {os.path.join(os.path.dirname(os.path.abspath(__file__)), 'trivial_bot.py')}"
)


# ---------------------------------------------------------------------------------------- (a)


class _TimedEnds(list[GameEnd]):
    """The match entry's list of game ends, noting when each game ended and, at the last one, the
    CPU time of this process (the referee), of its event loop's thread (the match's task appends)
    and of the bots' processes."""

    def __init__(self, games: int, bots: list[BotProcess]) -> None:
        super().__init__()
        self.games = games
        self.bots = bots
        self.times: list[float] = []
        self.cpu = (0.0, 0.0, 0.0)

    def append(self, end: GameEnd) -> None:
        self.times.append(time.perf_counter())
        if len(self.times) == self.games:
            self.cpu = (time.process_time(), time.thread_time(), bots_cpu(self.bots))
        super().append(end)


def bots_cpu(bots: list[BotProcess]) -> float:
    """CPU seconds used so far by every process of the bots (Linux; 0 elsewhere)."""
    return sum(procs.cpu_seconds(pid) for bot in bots for pid in bot.processes())


class MatchRun(NamedTuple):
    decisions: int
    seconds: float  # of the decision loop
    referee_cpu: float  # CPU seconds of this process (every thread) over the decision loop
    loop_cpu: float  # ... of its event loop's thread alone (the rest: gRPC's threads)
    bots_cpu: float  # ... and of the bots' processes
    unix: bool  # the bots reached the referee through its Unix socket (sandboxed), not over TCP
    split: Split | None = None  # the critical path's parts, with --split


class Split(NamedTuple):
    """A decision's critical path in two parts, medians in microseconds, from the referee's side."""

    trip: float  # a request's write started -> its reply handed to the port: transport and bot
    own: float  # a reply handed to the port -> the next request's write started: the referee's own


class _Stamps:
    """While in use, notes when each request's write starts and when each reply reaches its port
    (patching StreamPort: about a microsecond more a decision, so only with --split)."""

    def __init__(self) -> None:
        self.events: list[tuple[bool, float]] = []  # (a request written, else a reply; when)

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        send, on_reply = StreamPort._send, StreamPort.on_reply
        events = self.events
        clock = time.perf_counter

        async def timed_send(port: StreamPort, message: Outgoing) -> None:
            if type(message) is bytes:  # a request (results and hellos are messages)
                events.append((True, clock()))
            await send(port, message)

        def timed_reply(port: StreamPort, reply: bot_pb2.Reply) -> None:
            events.append((False, clock()))
            on_reply(port, reply)

        with (
            mock.patch.object(StreamPort, "_send", timed_send),
            mock.patch.object(StreamPort, "on_reply", timed_reply),
        ):
            yield

    def split(self) -> Split:
        trips, own = [], []
        for (sent, at), (then_sent, then) in itertools.pairwise(self.events):
            if sent and not then_sent:
                trips.append(then - at)
            elif then_sent and not sent:
                own.append(then - at)
        return Split(statistics.median(trips) * 1e6, statistics.median(own) * 1e6)


async def _match(
    games: int,
    seed: int,
    profile: cProfile.Profile | None,
    replay: bool = False,
    split: bool = False,
) -> MatchRun:
    """Play a match of ``games`` games, timed over its decision loop; with ``replay``, the match is
    a :class:`_Replay` of scripted games instead; with ``split``, its critical path is split too."""
    if replay:
        _Replay.scripts = [game_script(seed * 1000 + game) for game in range(games)]
        with mock.patch.object(manager_module, "Match", _Replay):
            return await _match(games, seed, profile, split=split)
    if split:
        stamps = _Stamps()
        with stamps.watching():
            run = await _match(games, seed, profile)
        return run._replace(split=stamps.split())
    server, _, manager = await create_server("127.0.0.1:0")
    try:
        config = MatchConfig(seed=seed, games=games, time_control=CLOCK)
        specs = [[PlayerSpec("first-0", BOT)], [PlayerSpec("first-1", BOT)]]
        entry = manager.create(config, specs, connect_timeout=60.0)
        await manager.start(entry)
        ends = _TimedEnds(games, list(entry.processes))
        entry.ends = ends  # read by the match once every bot has connected
        await asyncio.gather(*(p.attached.wait() for seat in entry.players for p in seat))
        start = time.perf_counter()
        cpu_start = (time.process_time(), time.thread_time(), bots_cpu(ends.bots))
        if profile is not None:
            profile.enable()
        await entry.done.wait()
        if profile is not None:
            profile.disable()
        if entry.record is None or len(ends.times) != games:
            raise SystemExit(f"the match failed: {entry.error or 'no record'}")
        outcomes = {g.outcome for g in entry.record.games}
        if outcomes != {"normal"}:
            raise SystemExit(f"a game ended abnormally: {outcomes}")
        decisions = sum(len(g.decisions) for g in entry.record.games)
        return MatchRun(
            decisions,
            ends.times[-1] - start,
            ends.cpu[0] - cpu_start[0],
            ends.cpu[1] - cpu_start[1],
            ends.cpu[2] - cpu_start[2],
            all(bot.isolated for bot in ends.bots),
        )
    finally:
        await manager.close()
        await server.stop(None)


# ---------------------------------------------------------------------------------------- (d)


class _Replay(Match):
    """(d) The referee with its rules taken out: each game sends the requests of a game scripted
    beforehand (:func:`grpc_floor.game_script`), through the same ports, streams and bots, and only
    checks that each reply is the first legal action; no rules are applied, no clock is run, nothing
    is recorded but the decisions' count. What the service costs a decision with rules that cost
    nothing: the most that faster rules could give."""

    scripts: ClassVar[list[tuple[list[Step], GameState]]] = []

    async def _play_game(self, game: int) -> GameRecord:
        steps, end_state = self.scripts[game]
        rec = GameRecord(index=game, seed=0, dealer=0, strikes=[0, 0])
        for seat, member, observation, legal in steps:
            self._request_id += 1
            decision = Decision(
                self._request_id, self.match_id, game, seat, member, observation, legal,
                CLOCK.budget_ms, CLOCK.bank_ms,
            )  # fmt: skip
            reply = await self.players[seat][member].decide(decision)
            if reply != legal[0].text:
                raise SystemExit(f"the replay's bot answered {reply!r}, not {legal[0].text!r}")
            rec.decisions.append(
                DecisionRecord(decision.request_id, seat, member, (), reply, reply)
            )
        result = end_state.result()
        rec.result = result_to_dict(result)
        await self._end_game(GameEnd(game, result, Outcome.NORMAL, "", -1))
        return rec


# ---------------------------------------------------------------------------------------- sizes


def message_sizes(seed: int = 1) -> tuple[int, int, float]:
    """The mean serialised size of a DecisionRequest (as the referee sends it) and of a Reply, over
    every decision of a two-handed game between first-legal players, and the microseconds per decision
    of building and serialising the request."""
    requests, replies = [], []
    building = 0.0
    steps, _ = game_script(seed)
    for rid, step in enumerate(steps, 1):
        start = time.perf_counter()
        data = step_request(rid, step)  # as the port sends it
        building += time.perf_counter() - start
        reply = bot_pb2.BotMessage(
            reply=bot_pb2.Reply(request_id=rid, match_id="m1-0123abcd", action=step.legal[0].text)
        )
        requests.append(len(data))
        replies.append(reply.ByteSize())
    return (
        round(statistics.mean(requests)),
        round(statistics.mean(replies)),
        building / len(requests) * 1e6,
    )


# ---------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="for each of (a), (b) and (c)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="(a), (b) and (c) take turns, S / rounds at a time"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="cProfile the referee's side of (a)")
    parser.add_argument(
        "--replay",
        action="store_true",
        help="(d) in every round too: the referee with its rules replayed (see above)",
    )
    parser.add_argument(
        "--split",
        action="store_true",
        help="split the critical path of (a), (c) and (d); add (c) speaking the protocol",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions with valgrind's callgrind instead of timing (see above)",
    )
    parser.add_argument("--match-only", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.match_only:
        played = asyncio.run(_match(args.match_only, args.seed, None))
        print(f"decisions {played.decisions} unix {int(played.unix)}")
        return
    if args.instructions:
        instructions(args.seed)
        return

    # One event loop for the whole run: gRPC's asyncio poller outlives a loop closed under it.
    asyncio.run(run(args))


async def run(args: argparse.Namespace) -> None:
    request_size, reply_size, serialise_us = message_sizes(args.seed)
    print(f"message sizes: DecisionRequest {request_size} bytes, Reply {reply_size} bytes (mean)")
    profile = cProfile.Profile() if args.profile else None
    rounds = max(1, args.rounds)
    per_round = args.seconds / rounds
    calibration = await _match(1, args.seed, None)  # one game, which also warms up
    games = max(1, round(per_round / max(calibration.seconds, 1e-3)))
    matches: list[MatchRun] = []
    floors: list[FloorRun] = []
    alternating: list[SeatsRun] = []
    replays: list[MatchRun] = []
    speaking: list[SeatsRun] = []  # (c) with clients speaking the protocol, with --split
    folder = tempfile.TemporaryDirectory(prefix="referee-bench-")
    echo, port = start_echo_server(request_size, os.path.join(folder.name, "echo.sock"))
    # The floor goes over the transport the bots use: a sandboxed bot reaches the referee through
    # its Unix socket, a bot without a sandbox over TCP.
    address = f"unix:{folder.name}/echo.sock" if calibration.unix else f"127.0.0.1:{port}"
    print(f"transport: {'Unix socket' if calibration.unix else 'TCP'} (as the bots use)")
    try:
        for r in range(rounds):
            m = await _match(games, args.seed + r, profile, split=args.split)
            f = await floor_round(echo.pid, address, per_round, reply_size)
            seats = (folder.name, calibration.unix, per_round, request_size, reply_size, args.seed)
            c = await seats_round(*seats, split=args.split)
            matches.append(m)
            floors.append(f)
            alternating.append(c)
            replay_note = ""
            if args.replay:
                replays.append(
                    await _match(games, args.seed + r, None, replay=True, split=args.split)
                )
                replay_note = (
                    f", rules replayed {replays[-1].decisions / replays[-1].seconds:.0f}/s"
                )
            if args.split:
                speaking.append(await seats_round(*seats, protocol=True, split=True))
                replay_note += (
                    f", speaking the protocol {speaking[-1].exchanges / speaking[-1].seconds:.0f}/s"
                )
            print(
                f"round {r + 1}: referee {m.decisions / m.seconds:.0f} decisions/s ({games} games), "
                f"floor {f.trips / f.seconds:.0f} round trips/s, two-client floor "
                f"{c.exchanges / c.seconds:.0f} exchanges/s{replay_note}; ratio "
                f"{m.decisions / m.seconds / (f.trips / f.seconds):.2f}"
            )
    finally:
        echo.terminate()
        echo.wait(timeout=30)
        folder.cleanup()
    decisions = sum(m.decisions for m in matches)
    elapsed = sum(m.seconds for m in matches)
    trips = sum(f.trips for f in floors)
    floor_elapsed = sum(f.seconds for f in floors)
    rate = decisions / elapsed
    floor = trips / floor_elapsed
    print(f"referee: {decisions} decisions in {elapsed:.2f} s ({os.cpu_count()} cpus)")
    print(f"floor: {trips} round trips in {floor_elapsed:.2f} s")
    print(
        f"per decision: {1e6 / rate:.0f} us over the server; transport floor {1e6 / floor:.0f} us; "
        f"referee and rules in-process {await in_process_cost(args.seed):.0f} us (through its "
        f"stream ports, the transport faked in-process: {await port_path_cost(args.seed):.0f} us); "
        f"building and serialising the request {serialise_us:.0f} us"
    )
    # CPU time is what a loaded machine shares out: per decision it hardly moves with the load.
    referee_cpu = sum(m.referee_cpu for m in matches) / decisions * 1e6
    server_cpu = sum(f.server_cpu for f in floors) / trips * 1e6
    print(
        f"cpu per decision: {_cpu_per_decision(matches)}; per round trip: floor server "
        f"{server_cpu:.0f} us, floor client {sum(f.client_cpu for f in floors) / trips * 1e6:.0f} "
        f"us; the referee's own {referee_cpu - server_cpu:.0f} us"
    )
    exchanges = sum(c.exchanges for c in alternating)
    two = exchanges / sum(c.seconds for c in alternating)
    print(
        f"two-client floor: {1e6 / two:.0f} us per exchange, server cpu "
        f"{sum(c.server_cpu for c in alternating) / exchanges * 1e6:.0f} us (its event loop's "
        f"thread {sum(c.server_loop_cpu for c in alternating) / exchanges * 1e6:.0f} us); the "
        f"referee at {rate / two:.2f} of it (ratio to (b): {rate / floor:.2f})"
    )
    if replays:
        replayed = sum(d.decisions for d in replays)
        replay_rate = replayed / sum(d.seconds for d in replays)
        print(
            f"rules replayed (d): {replay_rate:.0f} decisions/s, {1e6 / replay_rate:.0f} us per "
            f"decision; cpu per decision: {_cpu_per_decision(replays)}; ratio to (b) "
            f"{replay_rate / floor:.2f}, to the two-client floor {replay_rate / two:.2f}"
        )
    if args.split:
        print(_split_lines(matches, alternating, speaking, replays, rate))
    if profile is not None:
        for key in ("tottime", "cumulative"):
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats(key).print_stats(30)
            print(f"--- referee side, by {key} (for {decisions} decisions) ---")
            print(out.getvalue())
    print(f"decisions_per_second {rate:.0f} floor_per_second {floor:.0f} ratio {rate / floor:.2f}")


def _split_lines(
    matches: list[MatchRun],
    alternating: list[SeatsRun],
    speaking: list[SeatsRun],
    replays: list[MatchRun],
    rate: float,
) -> str:
    """What --split prints: the critical path of a decision, in the referee and the floors."""

    def median(values: Iterator[float]) -> float:
        return statistics.median(list(values))

    def parts(runs: list[MatchRun]) -> str:
        splits = [run.split for run in runs if run.split is not None]
        return (
            f"round trip {median(s.trip for s in splits):.0f} us (its request's write started to "
            f"the reply handed to its port), own section {median(s.own for s in splits):.0f} us "
            f"(a reply handed over to the next request's write started)"
        )

    exchanges = sum(c.exchanges for c in speaking)
    spoken = exchanges / sum(c.seconds for c in speaking)
    lines = [
        f"split, medians per decision: the referee's {parts(matches)}",
        f"split: the two-client floor's round trip {median(c.trip_us for c in alternating):.0f} us "
        f"(write started to answer read); speaking the protocol (clients parse each request and "
        f"answer a Reply, as the trivial bot does), {median(c.trip_us for c in speaking):.0f} us, "
        f"{1e6 / spoken:.0f} us per exchange: the referee at {rate / spoken:.2f} of it",
    ]
    if replays:
        lines.append(f"split: rules replayed (d), {parts(replays)}")
    return "\n".join(lines)


def _cpu_per_decision(runs: list[MatchRun]) -> str:
    """The CPU per decision of the referee's process, its event loop's thread and the bots'."""
    decisions = sum(run.decisions for run in runs)

    def per(cpu: float) -> str:
        return f"{cpu / decisions * 1e6:.0f} us"

    return (
        f"referee process {per(sum(run.referee_cpu for run in runs))} (its event loop's thread "
        f"{per(sum(run.loop_cpu for run in runs))}), bots {per(sum(run.bots_cpu for run in runs))}"
    )


# ---------------------------------------------------------------------------------- instructions


def _callgrind(valgrind: str, argv: list[str]) -> list[str]:
    """``argv`` (a Python command) run under callgrind, which writes its profile nowhere and its
    total to its log."""
    return [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv]


def _collected(log: str) -> int:
    """The instructions callgrind counted, from its log."""
    found = re.search(r"Collected : (\d+)", log)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{log[-2000:]}")
    return int(found.group(1))


def instructions(seed: int) -> None:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions counts with valgrind, which is not installed here")
    request_size, reply_size, _ = message_sizes(seed)
    me = [sys.executable, os.path.abspath(__file__)]
    counts: dict[int, tuple[int, int]] = {}
    unix = True
    for games in (1, 3):
        done = subprocess.run(
            _callgrind(valgrind, [*me, "--match-only", str(games), "--seed", str(seed)]),
            capture_output=True,
            text=True,
            check=False,
        )
        found = re.search(r"decisions (\d+) unix (\d)", done.stdout)
        if done.returncode != 0 or found is None:
            raise SystemExit(f"the match under valgrind failed:\n{done.stdout}{done.stderr}")
        counts[games] = (_collected(done.stderr), int(found.group(1)))
        unix = found.group(2) == "1"
    referee = (counts[3][0] - counts[1][0]) // (counts[3][1] - counts[1][1])
    print(
        f"referee process: {referee} instructions per decision "
        f"({counts[3][1] - counts[1][1]} decisions: a match of 3 games less one of 1)"
    )
    trips: dict[int, int] = {}
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as folder:
        for n in (300, 1300):
            sock = os.path.join(folder, f"echo{n}.sock")
            log_path = os.path.join(folder, f"valgrind{n}.log")
            with open(log_path, "w") as log:
                server = subprocess.Popen(
                    _callgrind(valgrind, echo_server_argv(request_size, sock)),
                    stdout=subprocess.PIPE,
                    stderr=log,
                    text=True,
                )
                assert server.stdout is not None
                port = int(server.stdout.readline())
                address = f"unix:{sock}" if unix else f"127.0.0.1:{port}"
                try:
                    asyncio.run(ping_pong(address, n, reply_size))
                finally:
                    server.send_signal(signal.SIGTERM)  # callgrind writes its total as it ends
                    server.wait(timeout=120)
            with open(log_path) as log:
                trips[n] = _collected(log.read())
    floor = (trips[1300] - trips[300]) // 1000
    print(f"echo server: {floor} instructions per round trip (1300 round trips less 300)")
    print(f"the referee's own: {referee - floor} instructions per decision")
    print(
        f"referee_instructions {referee} floor_instructions {floor} "
        f"own_instructions {referee - floor}"
    )


if __name__ == "__main__":
    main()
