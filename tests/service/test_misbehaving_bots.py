"""Misbehaving bots through the real referee server, as real subprocesses (tests/service/bots/).

Each bad bot sits at seat 0 of a match (seat 0 leads: the first dealer is seat 1) against the greedy
bot, while a second match between two well-behaved bots runs beside it on the same server. The bad
match must end in the right typed outcome, recorded in the game record (and in the saved JSON record);
the match beside it must finish normally; and afterwards no bot process, nor any child it started, is
left running.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.bots.limits import Limits
from arena.referee import FailurePolicy, MatchConfig, Policies, TimeControl
from arena.service.match_manager import MatchEntry, MatchManager, PlayerSpec
from arena.service.server import create_server
from arena.wire.v1 import bot_pb2, bot_pb2_grpc
from arena_bot import run
from arena_bot.random_bot import RandomBot

pytestmark = pytest.mark.slow

BOT = Path(__file__).resolve().parent / "bots" / "misbehaving.py"
PY = shlex.quote(sys.executable)
GREEDY = f"{PY} -m arena_bot.greedy_bot"
FIRST = f"{PY} -m arena_bot.first_bot"
RANDOM = f"{PY} -m arena_bot.random_bot"
GENEROUS = TimeControl(budget_ms=5_000, bank_ms=20_000, grace_ms=1_000)
SHORT = TimeControl(budget_ms=300, bank_ms=300, grace_ms=100)
# For faults the referee should catch at once, yet would only notice as a timeout if it did not.
MODERATE = TimeControl(budget_ms=1_500, bank_ms=1_500, grace_ms=100)
MATCH_TIMEOUT = 90.0
LIGHT = Limits(sandbox="none")  # for bots that report by writing a file where the test reads it


def bad(mode: str, *args: str) -> str:
    return shlex.join([sys.executable, str(BOT), mode, *args])


@asynccontextmanager
async def serving(records: Path) -> AsyncIterator[tuple[str, MatchManager]]:
    server, port, manager = await create_server("127.0.0.1:0", records_dir=records)
    try:
        yield f"127.0.0.1:{port}", manager
    finally:
        await manager.close()
        await server.stop(None)


@dataclass
class Finished:
    bad: MatchEntry
    beside: MatchEntry
    pids: list[int]
    saved: dict[str, Any]

    @property
    def game(self) -> Any:
        assert self.bad.record is not None, self.bad.error
        return self.bad.record.games[0]


async def play_beside(
    manager: MatchManager,
    records: Path,
    command: str,
    tc: TimeControl = GENEROUS,
    policies: Policies | None = None,
    connect_timeout: float = 10.0,
    limits: Limits | None = None,
) -> Finished:
    """Run a match with ``command`` at seat 0 against the greedy bot, and a normal match beside it."""
    config = MatchConfig(seed=21, time_control=tc, policies=policies or Policies(), dealers=(1,))
    bad_entry = manager.create(
        config,
        [[PlayerSpec("bad", command)], [PlayerSpec("greedy", GREEDY)]],
        connect_timeout,
        limits,
    )
    beside = manager.create(
        MatchConfig(seed=22, time_control=GENEROUS),
        [[PlayerSpec("first", FIRST)], [PlayerSpec("random", RANDOM)]],
        10.0,
    )
    await manager.start(bad_entry)
    await manager.start(beside)
    await asyncio.wait_for(
        asyncio.gather(bad_entry.done.wait(), beside.done.wait()), timeout=MATCH_TIMEOUT
    )
    pids = [p.proc.pid for e in (bad_entry, beside) for p in e.processes]
    path = records / f"{bad_entry.match_id}.json"
    saved = json.loads(path.read_text()) if path.exists() else {}
    return Finished(bad_entry, beside, pids, saved)


def scenario(records: Path, command: str, **kwargs: Any) -> Finished:
    async def go() -> Finished:
        async with serving(records) as (_, manager):
            return await play_beside(manager, records, command, **kwargs)

    return asyncio.run(go())


def live_processes(pgids: list[int]) -> list[int]:
    """Processes (not zombies) whose id or process group is one of ``pgids``, read from /proc."""
    found = []
    wanted = set(pgids)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, pgrp = fields[0], int(fields[2])
        if state != "Z" and (int(entry) in wanted or pgrp in wanted):
            found.append(int(entry))
    return found


def assert_no_process_left(pids: list[int]) -> None:
    assert pids, "the bots' process ids are known"
    deadline = time.monotonic() + 10
    while (left := live_processes(pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == [], f"bot processes still running: {left}"


def check(done: Finished, outcome: str, *details: str) -> None:
    game = done.game
    assert (game.outcome, game.culprit) == (outcome, 0), game.detail
    assert game.detail.startswith("seat 0 (bad): ")
    assert any(d in game.detail for d in details), game.detail
    assert game.result["ranking"] == [1, 0]
    assert done.saved["games"][0]["outcome"] == outcome
    assert done.saved["games"][0]["detail"] == game.detail
    assert done.bad.status == "finished" and done.bad.error == ""
    assert done.beside.record is not None, done.beside.error
    assert done.beside.record.games[0].outcome == "normal"
    assert_no_process_left(done.pids)


# ---------------------------------------------------------------------- a bot that never plays


def test_a_bot_that_exits_at_once_is_a_crash(tmp_path: Path) -> None:
    done = scenario(tmp_path, bad("exit"), connect_timeout=3.0)
    check(done, "crash", "exited with code 3", "never connected")


def test_a_bot_that_never_connects_is_a_crash(tmp_path: Path) -> None:
    done = scenario(tmp_path, bad("sleep"), connect_timeout=2.0)
    check(done, "crash", "never connected")


def test_a_command_that_cannot_start_is_not_played(tmp_path: Path) -> None:
    """The arena could not start the process: an infrastructure failure, never a bot's loss. The match
    is not played (no record, nothing to rate) and its error names the command; the match beside it
    plays on."""
    missing = tmp_path / "no-such-bot"
    done = scenario(tmp_path, shlex.quote(str(missing)), connect_timeout=2.0)
    assert done.bad.record is None
    assert "cannot start" in done.bad.error and "no-such-bot" in done.bad.error
    assert done.beside.record is not None, done.beside.error
    assert done.beside.record.games[0].outcome == "normal"
    assert_no_process_left(done.pids)


def test_a_bot_that_crashes_on_the_welcome_is_a_crash(tmp_path: Path) -> None:
    """The bot's process exits with an exception right after connecting: outcome crash (the process
    exited), not disconnect."""
    done = scenario(tmp_path, bad("crash-start"))
    check(done, "crash", "exited with code 1")


def test_a_bot_that_exits_mid_game_is_a_crash(tmp_path: Path) -> None:
    """A local bot whose process exits in the middle of a game has crashed (OUTCOME_CRASH: "a bot
    process exited"), whether the referee notices the closed stream or the exit first."""
    done = scenario(tmp_path, bad("exit-mid", "--after", "6"))
    check(done, "crash", "exited with code 1")
    answered = [d for d in done.game.decisions if d.seat == 0 and d.failure is None]
    assert len(answered) == 6


# ---------------------------------------------------------------------- time


def test_a_bot_that_hangs_after_hello_times_out(tmp_path: Path) -> None:
    done = scenario(tmp_path, bad("hang"), tc=SHORT)
    check(done, "timeout", "no reply within 700 ms")


def test_a_hanging_bots_children_are_killed_with_it(tmp_path: Path) -> None:
    # Light mode: the bot writes its child's pid where the test reads it (a sandboxed bot can write
    # nothing outside; its escaped children are tried in test_attacks.py).
    out = tmp_path / "child.json"
    done = scenario(tmp_path, bad("fork-hang", "--out", str(out)), tc=SHORT, limits=LIGHT)
    check(done, "timeout", "no reply")
    child = json.loads(out.read_text())["child"]
    assert_no_process_left([child])


# ---------------------------------------------------------------------- protocol errors


def test_a_reply_to_a_request_never_asked_is_a_protocol_error(tmp_path: Path) -> None:
    """The bot answers its request with another request id: a protocol error, reported as such
    rather than waiting out the clock and calling it a timeout."""
    done = scenario(tmp_path, bad("wrong-id"), tc=MODERATE)
    check(done, "protocol-error", "never asked")


def test_a_second_hello_mid_match_is_a_protocol_error(tmp_path: Path) -> None:
    done = scenario(tmp_path, bad("hello-again"), tc=MODERATE)
    check(done, "protocol-error", "unexpected message hello")


def test_answering_twice_is_a_protocol_error(tmp_path: Path) -> None:
    done = scenario(tmp_path, bad("twice"))
    check(done, "protocol-error", "a second reply to request")


def test_random_action_policy_on_protocol_errors_ends_in_a_forfeit_after_max_strikes(
    tmp_path: Path,
) -> None:
    policies = Policies(on_protocol_error=FailurePolicy.RANDOM_ACTION, max_strikes=2)
    done = scenario(tmp_path, bad("twice"), policies=policies)
    check(done, "protocol-error", "(strike 2 of 2)")
    assert done.game.strikes == [2, 0]


# ---------------------------------------------------------------------- bad actions


def test_an_illegal_action_is_recorded_as_such(tmp_path: Path) -> None:
    done = scenario(tmp_path, bad("illegal"))
    check(done, "illegal-action", "is not legal here")
    last = done.game.decisions[-1]
    assert (
        last.reply is not None and last.reply.startswith("play ") and last.reply not in last.legal
    )


def test_garbage_action_text_is_an_illegal_action(tmp_path: Path) -> None:
    done = scenario(tmp_path, bad("garbage-text"))
    check(done, "illegal-action", "unreadable action")


def test_random_action_policy_on_illegal_actions_strikes_then_forfeits(tmp_path: Path) -> None:
    policies = Policies(on_illegal_action=FailurePolicy.RANDOM_ACTION, max_strikes=3)
    done = scenario(tmp_path, bad("illegal"), policies=policies)
    check(done, "illegal-action", "(strike 3 of 3)")
    struck = [d for d in done.game.decisions if d.failure == "illegal-action"]
    assert len(struck) == 3 and all(d.action in d.legal for d in struck[:2])


# ---------------------------------------------------------------------- garbage on the wire


def test_bytes_that_are_no_message_are_a_protocol_error(tmp_path: Path) -> None:
    done = scenario(tmp_path, bad("garbage-bytes"))
    check(done, "protocol-error", "stream failed")


def test_a_non_grpc_client_writing_nonsense_harms_nothing(tmp_path: Path) -> None:
    """Raw bytes written to the referee's port by something that is not a gRPC client: the server
    keeps serving, and the matches running on it are unaffected."""

    async def go() -> tuple[Finished, int]:
        async with serving(tmp_path) as (address, manager):
            host, port = address.rsplit(":", 1)

            def scribble() -> None:
                for payload in (
                    b"GET / HTTP/1.1\r\nHost: arena\r\n\r\n",
                    b"\x00\xff" * 5000,
                    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x04\x09\xff\xff\xff\xff" * 100,
                ):
                    with socket.create_connection((host, int(port)), timeout=5) as sock:
                        try:
                            sock.sendall(payload)
                            sock.recv(100)
                        except OSError:
                            pass

            writer = threading.Thread(target=scribble)
            writer.start()
            done = await play_beside(manager, tmp_path, bad("garbage-socket"), connect_timeout=2.0)
            writer.join(timeout=30)
            async with grpc.aio.insecure_channel(address) as channel:
                health = health_pb2_grpc.HealthStub(channel)
                status = (await health.Check(health_pb2.HealthCheckRequest(service=""))).status
            return done, status

    done, status = asyncio.run(go())
    assert status == health_pb2.HealthCheckResponse.SERVING
    # The bad seat's process never presented a token: it never connected.
    check(done, "crash", "never connected", "exited with code")


# ---------------------------------------------------------------------- tokens


def test_connecting_twice_for_one_seat_is_refused_the_second_time(tmp_path: Path) -> None:
    out = (
        tmp_path / "twice.json"
    )  # written by the bot: light mode (a sandboxed bot writes nothing here)
    done = scenario(tmp_path, bad("connect-twice", "--out", str(out)), limits=LIGHT)
    assert json.loads(out.read_text()) == {
        "answers": ["refused"],
        "reasons": ["this seat is already connected"],
    }
    assert done.game.outcome == "normal"
    assert done.beside.record is not None and done.beside.record.games[0].outcome == "normal"
    assert_no_process_left(done.pids)


def test_an_unknown_token_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "token.json"  # written by the bot: light mode
    done = scenario(
        tmp_path,
        bad("token", "--token", "nonsense", "--out", str(out)),
        connect_timeout=5.0,
        limits=LIGHT,
    )
    assert json.loads(out.read_text()) == {"refused": "unknown or expired token"}
    check(done, "crash", "never connected", "exited with code 0")


def test_a_refused_hello_is_the_crashs_reason(tmp_path: Path) -> None:
    """The bot connected, but its Hello was refused (another protocol version), and it exited: its
    crash says so, and why, rather than that it exited before connecting."""
    # The supervisor ends the seat as soon as the process exits, so the long connect timeout costs
    # nothing: it only keeps a slow start on a loaded machine from ending the seat first (as "the
    # referee refused its Hello", without the exit).
    done = scenario(tmp_path, bad("protocol-2"), connect_timeout=60.0)
    check(
        done,
        "crash",
        "bot process exited with code 4 after the referee refused its Hello: protocol version 2 "
        "is not supported; this referee speaks version 1",
    )


async def hello(address: str, token: str, first: bot_pb2.BotMessage | None = None) -> list[Any]:
    """Present a token on a fresh stream; the messages the referee sends before the stream ends or
    the first request arrives."""
    message = first or bot_pb2.BotMessage(
        hello=bot_pb2.Hello(token=token, name="probe", version="1", protocol_version=1)
    )
    async with grpc.aio.insecure_channel(address) as channel:
        call = bot_pb2_grpc.BotGatewayStub(channel).Play()
        await call.write(message)
        got = []
        async for reply in call:
            got.append(reply)
            if reply.WhichOneof("body") != "refused":
                break
        call.cancel()
        return got


def test_tokens_of_other_matches_and_unknown_tokens_are_refused(tmp_path: Path) -> None:
    """A token opens one seat of one match, once: a token already in use (another match's, with its
    bot connected), a finished match's token, an unknown token and a stream that starts with
    anything but a Hello are all refused, and the matches concerned are unaffected."""

    async def go() -> dict[str, Any]:
        async with serving(tmp_path) as (address, manager):
            config = MatchConfig(seed=23, time_control=GENEROUS)
            first = manager.create(config, [[PlayerSpec("r0")], [PlayerSpec("r1")]], 30.0)
            await manager.start(first)
            second = manager.create(config, [[PlayerSpec("x0")], [PlayerSpec("x1")]], 30.0)
            await manager.start(second)
            t0, t1 = (p.token for seat in first.players for p in seat)
            bot0 = asyncio.create_task(asyncio.to_thread(run, RandomBot(1), address, t0))
            while not first.players[0][0].attached.is_set():
                await asyncio.sleep(0.02)
            results: dict[str, Any] = {
                "in use": await hello(address, t0),
                "unknown": await hello(address, "not-a-token"),
                "not hello": await hello(
                    address,
                    "",
                    bot_pb2.BotMessage(reply=bot_pb2.Reply(request_id=1, action="done")),
                ),
                "version": await hello(
                    address,
                    "",
                    bot_pb2.BotMessage(
                        hello=bot_pb2.Hello(token=t1, name="v9", protocol_version=9)
                    ),
                ),
            }
            bot1 = asyncio.create_task(asyncio.to_thread(run, RandomBot(2), address, t1))
            await asyncio.wait_for(first.done.wait(), MATCH_TIMEOUT)
            await asyncio.wait_for(asyncio.gather(bot0, bot1), MATCH_TIMEOUT)
            results["finished"] = await hello(address, t0)
            results["outcome"] = first.record.games[0].outcome if first.record else first.error
            results["second attached"] = [p.attached.is_set() for s in second.players for p in s]
            return results

    results = asyncio.run(go())

    def refusals(messages: list[Any]) -> list[str]:
        return [m.refused.reason for m in messages if m.HasField("refused")]

    assert refusals(results["in use"]) == ["this seat is already connected"]
    assert refusals(results["unknown"]) == ["unknown or expired token"]
    assert refusals(results["finished"]) == ["unknown or expired token"]
    assert len(refusals(results["not hello"])) == 1
    assert "Hello" in refusals(results["not hello"])[0]
    assert len(refusals(results["version"])) == 1
    assert "protocol version 9" in refusals(results["version"])[0]
    assert results["outcome"] == "normal"
    assert results["second attached"] == [False, False]
