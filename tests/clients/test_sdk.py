"""The bot SDKs (Python ``arena_bot``, JavaScript ``clients/javascript/sdk.js``) as a bot author meets
them. (``clients/README.md`` against the code: ``test_clients_readme.py``.)

- Failures end the bot with a one-line message and an exit status of their own (issue 13 item 4): the
  referee unreachable (3), the token refused, with the referee's reason (4), the stream broken or ended
  in the middle of a match (3), no address or token (2); an exception in the bot's own ``decide`` is
  printed with its traceback and exits 1.
- The address and the token are taken from ``--address``/``--token`` and from ``ARENA_ADDRESS``/
  ``ARENA_TOKEN``, both ways, by the documented template (``run(MyBot())``) and by ``main(bot)`` /
  ``run(bot)`` in JavaScript.

The per-game seed the SDKs hand a bot: ``test_sdk_seed.py``.

Bots run as real processes against a real referee (``create_server`` on a free loopback port).
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import grpc
import pytest
from sdk_helpers import (
    JS_SDK,
    WAIT,
    Exited,
    clean_env,
    javascript_against_first,
    node_executable,
    remote_match,
    seat_tokens,
    serving,
    spawn,
)

from arena.referee import TimeControl
from arena.referee.record import MatchRecord
from arena.service.match_manager import MatchEntry
from arena.service.server import create_server
from arena.wire.v1 import bot_pb2, bot_pb2_grpc
from arena_bot import sdk
from arena_bot.first_bot import FirstBot
from arena_bot.sdk import play

# The documented template (clients/python/README.md), with a switch to make decide() fail.
PY_TEMPLATE = """\
import os

from arena_bot import Action, Bot, Clock, View, run


class MyBot(Bot):
    name = "template"
    version = "1"

    def decide(self, view: View, legal: list[Action], clock: Clock) -> Action | str:
        if os.environ.get("BOT_BOOM"):
            raise RuntimeError("boom in decide")
        return legal[0]


if __name__ == "__main__":
    run(MyBot())
"""

# A JavaScript bot on the SDK: main(bot) (the documented way), or run(bot) with no options.
JS_TEMPLATE = """\
'use strict';
const { Bot, main, run } = require(SDK_PATH);

class FirstBot extends Bot {
  constructor() {
    super('js-first', '1');
  }

  decide(turn) {
    if (process.env.BOT_BOOM) throw new Error('boom in decide');
    return turn.legal[0].text;
  }
}

if (process.env.BOT_MODE === 'run') {
  run(new FirstBot()).then(
    (matches) => process.stdout.write(`matches ${matches}\\n`),
    (error) => {
      process.stderr.write(`run failed: ${error.message}\\n`);
      process.exitCode = 9;
    },
  );
} else {
  main(new FirstBot());
}
"""


# ---------------------------------------------------------------------------------- helpers


def _closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> Exited:
    done = subprocess.run(
        list(argv),
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    return Exited(done.returncode, done.stdout, done.stderr)


async def _attached(entry: MatchEntry, seat: int) -> None:
    async with asyncio.timeout(WAIT):
        while not entry.players[seat][0].attached.is_set():
            await asyncio.sleep(0.05)


# A log line of gRPC's C core (e.g. "I1130 12:41:07.095157 6614 chttp2_transport.cc:1403] ... Got
# goaway"), which it may print on its own when the server goes away: not the SDK's.
GRPC_CORE_LOG = re.compile(r"^[IWE]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [\w.]+:\d+\] ")


def _one_line_error(exited: Exited, name: str) -> str:
    """The message of a failed session: one line on stderr, no traceback."""
    lines = [line for line in exited.stderr.strip().splitlines() if not GRPC_CORE_LOG.match(line)]
    assert len(lines) == 1, exited.stderr
    assert lines[0].startswith(f"{name}: "), exited.stderr
    return lines[0]


@pytest.fixture
def py_bot(tmp_path: Path) -> list[str]:
    path = tmp_path / "my_bot.py"
    path.write_text(PY_TEMPLATE)
    return [sys.executable, str(path)]


@pytest.fixture
def js_bot(tmp_path: Path) -> list[str]:
    node = node_executable()
    path = tmp_path / "my_bot.js"
    path.write_text(JS_TEMPLATE.replace("SDK_PATH", json.dumps(str(JS_SDK))))
    return [node, str(path)]


# ---------------------------------------------------------------------------------- failures


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_an_unreachable_referee_is_a_clear_failure(
    language: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    bot: list[str] = request.getfixturevalue("py_bot" if language == "python" else "js_bot")
    name = "template" if language == "python" else "js-first"
    address = f"127.0.0.1:{_closed_port()}"
    exited = _run([*bot, "--address", address, "--token", "t"], clean_env(), tmp_path)
    assert exited.code == sdk.EXIT_CONNECTION == 3, exited
    line = _one_line_error(exited, name)
    assert f"cannot reach the referee at {address}" in line


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_no_address_or_token_is_a_usage_error(
    language: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    bot: list[str] = request.getfixturevalue("py_bot" if language == "python" else "js_bot")
    name = "template" if language == "python" else "js-first"
    exited = _run(bot, clean_env(), tmp_path)
    assert exited.code == sdk.EXIT_USAGE == 2, exited
    assert "no referee address" in _one_line_error(exited, name)
    exited = _run(bot, clean_env(ARENA_ADDRESS="127.0.0.1:1"), tmp_path)
    assert exited.code == 2, exited
    assert "no token" in _one_line_error(exited, name)


@pytest.mark.slow
@pytest.mark.parametrize("language", ["python", "javascript"])
def test_a_refused_token_exits_with_the_referees_reason(
    language: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    bot: list[str] = request.getfixturevalue("py_bot" if language == "python" else "js_bot")
    name = "template" if language == "python" else "js-first"

    async def go() -> tuple[Exited, Exited]:
        async with serving() as (address, manager, server):
            entry = await remote_match(manager)
            unknown = await spawn(
                bot, clean_env(ARENA_ADDRESS=address, ARENA_TOKEN="not-a-token"), tmp_path
            )
            t0 = seat_tokens(entry)[0]
            first = await spawn(bot, clean_env(ARENA_ADDRESS=address, ARENA_TOKEN=t0), tmp_path)
            await _attached(entry, 0)
            again = await spawn(bot, clean_env(ARENA_ADDRESS=address, ARENA_TOKEN=t0), tmp_path)
            refused = await unknown, await again
            await server.stop(None)  # the first bot's stream breaks: it exits too
            await first
            return refused

    unknown, again = asyncio.run(go())
    for exited, reason in (
        (unknown, "unknown or expired token"),
        (again, "this seat is already connected"),
    ):
        assert exited.code == sdk.EXIT_REFUSED == 4, exited
        assert _one_line_error(exited, name).endswith(f"the referee refused the bot: {reason}")


@pytest.mark.slow
@pytest.mark.parametrize("language", ["python", "javascript"])
def test_an_exception_in_decide_is_reported_and_exits_1(
    language: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The bot's own error is not swallowed: its traceback on stderr, status 1, and the referee
    records the seat's failure; the other seat's SDK session ends normally."""
    bot: list[str] = request.getfixturevalue("py_bot" if language == "python" else "js_bot")

    async def go() -> tuple[Exited, int, MatchRecord | None]:
        async with serving() as (address, manager, _):
            entry = await remote_match(manager, seed=7)
            t0, t1 = seat_tokens(entry)
            env = clean_env(ARENA_ADDRESS=address, ARENA_TOKEN=t0, BOT_BOOM="1")
            boom = await spawn(bot, env, tmp_path)
            other = asyncio.create_task(asyncio.to_thread(play, FirstBot(), address, t1))
            exited = await boom
            matches = await asyncio.wait_for(other, WAIT)
            await asyncio.wait_for(entry.done.wait(), WAIT)
            return exited, matches, entry.record

    exited, matches, record = asyncio.run(go())
    assert exited.code == sdk.EXIT_BOT_ERROR == 1, exited
    assert "boom in decide" in exited.stderr
    if language == "python":
        assert "Traceback (most recent call last)" in exited.stderr
        assert "RuntimeError: boom in decide" in exited.stderr
    else:
        assert "Error: boom in decide\n    at " in exited.stderr  # the stack
    assert exited.stderr.strip().splitlines()[-1].endswith("the bot's own code failed; stopping")
    assert matches == 1
    assert record is not None
    game = record.games[0]
    assert (game.outcome, game.culprit) in (("disconnect", 0), ("crash", 0)), game


@pytest.mark.slow
@pytest.mark.parametrize("language", ["python", "javascript"])
def test_a_stream_broken_mid_match_is_a_failure(
    language: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The bot has its Welcome and waits for its match (the other seat has not connected) when the
    referee's server stops: status 3, 'broke during match'."""
    bot: list[str] = request.getfixturevalue("py_bot" if language == "python" else "js_bot")
    name = "template" if language == "python" else "js-first"

    async def go() -> tuple[Exited, str]:
        server, port, manager = await create_server("127.0.0.1:0")
        try:
            entry = await remote_match(manager, connect=WAIT)
            env = clean_env(ARENA_ADDRESS=f"127.0.0.1:{port}", ARENA_TOKEN=seat_tokens(entry)[0])
            proc = await spawn(bot, env, tmp_path)
            await _attached(entry, 0)
            await server.stop(None)
            return await proc, entry.match_id
        finally:
            await manager.close()
            await server.stop(None)

    exited, match_id = asyncio.run(go())
    assert exited.code == sdk.EXIT_CONNECTION, exited
    assert f"broke during match {match_id}" in _one_line_error(exited, name)


# A JavaScript bot whose decide() returns an object that is not an action (a newcomer's slip).
JS_BAD_RETURN = """\
'use strict';
const { Bot, main } = require(SDK_PATH);

class BadReturn extends Bot {
  constructor() {
    super('js-bad-return', '1');
  }

  decide(turn) {
    return { action: turn.legal[0].text };
  }
}

main(new BadReturn());
"""


@pytest.mark.slow
def test_a_javascript_decide_that_returns_no_action_says_what_it_returned(
    tmp_path: Path,
) -> None:
    """The error names the value decide() returned, as the bot wrote it (it used to say
    ``[object Object]``), and the bot exits 1."""
    exited = javascript_against_first(tmp_path, "bad_return.js", JS_BAD_RETURN, seed=7)
    assert exited.code == sdk.EXIT_BOT_ERROR, exited
    assert "decide() must return an action's text or one of turn.legal, got { action: 'play " in (
        exited.stderr
    ), exited.stderr
    assert "[object Object]" not in exited.stderr


@pytest.mark.slow
def test_a_stream_the_referee_ends_mid_match_is_a_failure(
    py_bot: list[str], tmp_path: Path
) -> None:
    """The referee closes the stream (status OK) without a MatchOver: here the server shuts its
    matches down while the other seat (a stream of the test's own) thinks. Status 3, 'in the middle
    of match'."""

    async def go() -> tuple[Exited, str]:
        server, port, manager = await create_server("127.0.0.1:0")
        address = f"127.0.0.1:{port}"
        try:
            slow = TimeControl(budget_ms=600_000, bank_ms=0, grace_ms=1_000)
            entry = await remote_match(manager, seed=5, connect=WAIT, clock=slow)
            t0, t1 = seat_tokens(entry)
            async with grpc.aio.insecure_channel(address) as channel:
                thinker = bot_pb2_grpc.BotGatewayStub(channel).Play()
                hello = bot_pb2.Hello(token=t1, name="thinker", protocol_version=1)
                await thinker.write(bot_pb2.BotMessage(hello=hello))
                proc = await spawn(
                    py_bot, clean_env(ARENA_ADDRESS=address, ARENA_TOKEN=t0), tmp_path
                )
                async with asyncio.timeout(WAIT):  # until the thinker is asked (and never answers)
                    while (await thinker.read()).WhichOneof("body") != "request":
                        pass
                await manager.close()
                exited = await proc
                thinker.cancel()
            return exited, entry.match_id
        finally:
            await manager.close()
            await server.stop(None)

    exited, match_id = asyncio.run(go())
    assert exited.code == sdk.EXIT_CONNECTION, exited
    assert f"in the middle of match {match_id}" in _one_line_error(exited, "template")


# A Python bot too slow for its first decision, which says what the referee then tells it.
PY_TOO_SLOW = """\
import time

from arena_bot import Bot, run


class TooSlow(Bot):
    name = "too-slow"

    def decide(self, view, legal, clock):
        time.sleep(2.0)
        return legal[0]

    def on_game_over(self, end):
        print("game over:", end.result.outcome, flush=True)

    def on_match_over(self, over):
        print("match over", flush=True)


run(TooSlow())
"""


@pytest.mark.slow
def test_a_reply_past_its_time_limit_leaves_the_match_results_readable(tmp_path: Path) -> None:
    """A Python bot times out on a one-game match (forfeit): the referee sends GameOver and
    MatchOver and ends the stream while the bot still thinks. The bot then hears both and exits 0,
    as a JavaScript bot does; it used to write its reply into the ended stream, which gRPC turns
    into 'INTERNAL: Internal error from Core' for the whole call: the results were lost and the
    bot exited 3 with a stream 'broken during the match'."""
    path = tmp_path / "too_slow.py"
    path.write_text(PY_TOO_SLOW)
    fast = TimeControl(budget_ms=50, bank_ms=0, grace_ms=50)

    async def go() -> tuple[Exited, MatchRecord | None]:
        async with serving() as (address, manager, _):
            entry = await remote_match(manager, seed=3, connect=WAIT, clock=fast)
            t0, t1 = seat_tokens(entry)
            other = asyncio.create_task(asyncio.to_thread(play, FirstBot(), address, t1))
            env = clean_env(ARENA_ADDRESS=address, ARENA_TOKEN=t0)
            exited = await (await spawn([sys.executable, str(path)], env, tmp_path))
            await asyncio.wait_for(other, WAIT)
            await asyncio.wait_for(entry.done.wait(), WAIT)
            return exited, entry.record

    exited, record = asyncio.run(go())
    assert record is not None
    assert [(g.outcome, g.culprit) for g in record.games] == [("timeout", 0)]
    assert exited.code == 0, exited
    assert exited.stdout.splitlines() == ["game over: 2", "match over"], exited
    assert "Internal error" not in exited.stderr, exited.stderr
    assert "past its limit of 101 ms (budget + bank + grace)" in exited.stderr, exited.stderr


# A Python bot that thinks for seconds, with a file to say that it has begun.
PY_THINKER = """\
import pathlib
import time

from arena_bot import Bot, run


class Thinker(Bot):
    name = "thinker"

    def decide(self, view, legal, clock):
        pathlib.Path("deciding").touch()
        time.sleep(3.0)
        return legal[0]


run(Thinker())
"""


@pytest.mark.slow
def test_a_stream_that_closes_while_the_bot_decides_is_named_so(tmp_path: Path) -> None:
    """The referee's matches are shut down while a Python bot decides: its reply cannot be sent.
    The one line says so, with the request and the match (it used to be only 'broke during
    match ...: INTERNAL: Internal error from Core', what gRPC makes of the failed write)."""
    path = tmp_path / "thinker.py"
    path.write_text(PY_THINKER)
    slow = TimeControl(budget_ms=600_000, bank_ms=0, grace_ms=1_000)

    async def go() -> tuple[Exited, str]:
        server, port, manager = await create_server("127.0.0.1:0")
        address = f"127.0.0.1:{port}"
        try:
            entry = await remote_match(manager, seed=5, connect=WAIT, clock=slow)
            t0, t1 = seat_tokens(entry)
            env = clean_env(ARENA_ADDRESS=address, ARENA_TOKEN=t0)
            proc = await spawn([sys.executable, str(path)], env, tmp_path)
            other = asyncio.create_task(asyncio.to_thread(play, FirstBot(), address, t1))
            async with asyncio.timeout(WAIT):
                while not (tmp_path / "deciding").exists():
                    await asyncio.sleep(0.02)
            await manager.close()
            exited = await proc
            with pytest.raises(sdk.StreamError):
                await asyncio.wait_for(other, WAIT)
            return exited, entry.match_id
        finally:
            await manager.close()
            await server.stop(None)

    exited, match_id = asyncio.run(go())
    assert exited.code == sdk.EXIT_CONNECTION, exited
    line = _one_line_error(exited, "thinker")
    assert re.search(rf"closed while the bot was deciding request \d+ of match {match_id}; ", line)
    assert "the reply could not be sent" in line


def test_a_javascript_sdk_away_from_the_repository_rejects_naming_the_proto_folder(
    tmp_path: Path,
) -> None:
    """A copy of sdk.js outside the repository finds no proto/ folder. ``run(bot)`` then rejects
    its promise (it used to throw at once, past a ``run(bot).catch()``), with an error naming the
    folder it looked in and what to do (protobufjs names only 'arena/wire/v1/bot.proto')."""
    node = node_executable()
    copy = tmp_path / "mine" / "bot"
    copy.mkdir(parents=True)
    (copy / "sdk.js").write_bytes(JS_SDK.read_bytes())
    script = (
        "const { Bot, run } = require('./sdk');"
        "class B extends Bot { decide(turn) { return turn.legal[0].text; } }"
        "try {"
        "  run(new B(), { address: '127.0.0.1:1', token: 't' }).then("
        "    () => process.stdout.write('resolved'),"
        "    (error) => process.stdout.write(`rejected: ${error.message}`));"
        "} catch (error) { process.stdout.write(`thrown: ${error.message}`); }"
    )
    (copy / "run.js").write_text(script)
    env = clean_env(NODE_PATH=str(JS_SDK.parent / "node_modules"))
    exited = _run([node, "run.js"], env, copy)
    proto = tmp_path / "proto" / "arena" / "wire" / "v1" / "bot.proto"
    assert exited.stdout.startswith(f"rejected: cannot load the bot protocol {proto}: "), exited
    assert "require it from clients/javascript, or as 'arena-bot-js'" in exited.stdout


# ---------------------------------------------------------------------------------- both ways


@pytest.mark.slow
@pytest.mark.parametrize("language", ["python", "javascript"])
def test_address_and_token_from_the_command_line_or_the_environment(
    language: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Seat 0's bot gets both on its command line only, seat 1's from its environment (JavaScript:
    ``run(bot)`` with no options, the address on the command line and the token in the environment);
    both play the match to its end and exit 0."""
    bot: list[str] = request.getfixturevalue("py_bot" if language == "python" else "js_bot")

    async def go() -> tuple[list[Exited], MatchEntry]:
        async with serving() as (address, manager, _):
            entry = await remote_match(manager, seed=9)
            t0, t1 = seat_tokens(entry)
            if language == "python":
                argv0 = [*bot, "--address", address, "--token", t0]
                argv1, env1 = bot, clean_env(ARENA_ADDRESS=address, ARENA_TOKEN=t1)
            else:
                argv0 = [*bot, "--address", address, f"--token={t0}"]
                argv1 = [*bot, "--address", address]
                env1 = clean_env(ARENA_TOKEN=t1, BOT_MODE="run")
            procs = [await spawn(argv0, clean_env(), tmp_path), await spawn(argv1, env1, tmp_path)]
            exits = [await p for p in procs]
            await asyncio.wait_for(entry.done.wait(), WAIT)
            return exits, entry

    exits, entry = asyncio.run(go())
    for exited in exits:
        assert exited.code == 0, exited
        assert "failed" not in exited.stderr, exited
    if language == "javascript":
        assert exits[1].stdout.strip() == "matches 1"
    name = "template" if language == "python" else "js-first"
    assert [p.bot_name for seat in entry.players for p in seat] == [name, name]
    assert entry.record is not None, entry.error
    assert [g.outcome for g in entry.record.games] == ["normal"]


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_an_empty_option_leaves_the_environment_in_force(
    language: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """``--token=`` and ``--address ""`` (a shell variable left unset) are not given: both SDKs
    take the environment's value and go on to dial (here a closed port: status 3). The JavaScript
    SDK used to take the empty text and stop with 'no token' (status 2)."""
    bot: list[str] = request.getfixturevalue("py_bot" if language == "python" else "js_bot")
    name = "template" if language == "python" else "js-first"
    address = f"127.0.0.1:{_closed_port()}"
    env = clean_env(ARENA_ADDRESS=address, ARENA_TOKEN="t")
    for argv in (["--token="], ["--address", ""], ["--address=", "--token", ""]):
        exited = _run([*bot, *argv], env, tmp_path)
        assert exited.code == sdk.EXIT_CONNECTION, (argv, exited)
        assert f"cannot reach the referee at {address}" in _one_line_error(exited, name)


def test_run_reads_the_command_line_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run(bot)``: arguments first, then ``--address``/``--token`` (both spellings, unknown options
    left to the bot), then the environment."""
    seen: list[tuple[str, str]] = []
    monkeypatch.setattr(sdk, "play", lambda bot, address, token: seen.append((address, token)) or 0)
    monkeypatch.setenv("ARENA_ADDRESS", "env:1")
    monkeypatch.setenv("ARENA_TOKEN", "env-token")
    bot = FirstBot()
    sdk.run(bot, argv=[])
    sdk.run(bot, argv=["--address", "cli:2", "--ms", "50"])
    sdk.run(bot, argv=["--address=cli:3", "--token=cli-token"])
    sdk.run(bot, "given:4", argv=["--address", "cli:5", "--token", "cli-token"])
    assert seen == [
        ("env:1", "env-token"),
        ("cli:2", "env-token"),
        ("cli:3", "cli-token"),
        ("given:4", "cli-token"),
    ]


def test_a_bot_started_with_no_options_builds_no_parser(tmp_path: Path) -> None:
    """The arena starts a bot with no options (the address and token are in its environment): it
    does not pay for argparse at every start. Options still go through the parser."""
    code = (
        "import sys\n"
        "from arena_bot.first_bot import FirstBot\n"
        "from arena_bot import sdk\n"
        "for argv in ([], ['--address', '']):\n"
        "    try:\n"
        "        sdk.main_for(FirstBot(), argv)\n"
        "    except SystemExit as exc:\n"
        "        print(exc.code, 'argparse' in sys.modules)\n"
    )
    exited = _run([sys.executable, "-c", code], clean_env(), tmp_path)
    assert exited.stdout.split("\n")[:2] == ["2 False", "2 True"], exited
