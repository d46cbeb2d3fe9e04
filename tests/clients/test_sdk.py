"""The bot SDKs (Python ``arena_bot``, JavaScript ``clients/javascript/sdk.js``) as a bot author meets
them. (``clients/README.md`` against the code: ``test_clients_readme.py``.)

- Failures end the bot with a one-line message and an exit status of their own (issue 13 item 4): the
  referee unreachable (3), the token refused, with the referee's reason (4), the stream broken or ended
  in the middle of a match (3), no address or token (2); an exception in the bot's own ``decide`` is
  printed with its traceback and exits 1.
- The address and the token are taken from ``--address``/``--token`` and from ``ARENA_ADDRESS``/
  ``ARENA_TOKEN``, both ways, by the documented template (``run(MyBot())``) and by ``main(bot)`` /
  ``run(bot)`` in JavaScript.
- The per-game seed (issue 14 item 6) is a pure function of what a bot is told about the game: the
  same deal gives the same seed, in Python and JavaScript alike, and a random bot process that has
  played other games plays a deal exactly as a fresh process does.

Bots run as real processes against a real referee (``create_server`` on a free loopback port).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from sdk_helpers import (
    JS_SDK,
    TC,
    WAIT,
    node_executable,
    remote_match,
    seat_tokens,
    serving,
)

from arena.game import GameState, observe, variant
from arena.referee import MatchConfig, TimeControl
from arena.referee.record import MatchRecord
from arena.service.manager import MatchEntry, PlayerSpec
from arena.service.server import create_server
from arena.wire.serde import observation_to_pb
from arena.wire.v1 import bot_pb2, bot_pb2_grpc
from arena_bot import sdk
from arena_bot.first_bot import FirstBot
from arena_bot.random_bot import RandomBot
from arena_bot.sdk import GameStart, game_seed, game_seed_text, play, view_seed

# The documented template (clients/python/README.md), with a switch to make decide() fail.
PY_TEMPLATE = """\
import os

from arena_bot import Bot, Clock, run
from arena.game import Action, Observation


class MyBot(Bot):
    name = "template"
    version = "1"

    def decide(self, view: Observation, legal: list[Action], clock: Clock) -> Action | str:
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


@dataclass(frozen=True, slots=True)
class Exited:
    code: int
    stdout: str
    stderr: str


def _env(**extra: str) -> dict[str, str]:
    """This environment without any ARENA_* or BOT_* variable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "BOT_"))}
    env.update(extra)
    return env


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


async def _spawn(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> asyncio.Task[Exited]:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        env=dict(env),
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )

    async def finish() -> Exited:
        try:
            out, err = await asyncio.wait_for(proc.communicate(), WAIT)
        except TimeoutError:
            proc.kill()
            out, err = await proc.communicate()
        assert proc.returncode is not None
        return Exited(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"))

    return asyncio.create_task(finish())


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


def _javascript_against_first(tmp_path: Path, name: str, source: str, seed: int) -> Exited:
    """Run the JavaScript bot ``source`` (``SDK_PATH`` in it: the SDK) as seat 0 of a
    match against the Python SDK's first bot, until both have ended."""
    node = node_executable()
    path = tmp_path / name
    path.write_text(source.replace("SDK_PATH", json.dumps(str(JS_SDK))))

    async def go() -> Exited:
        async with serving() as (address, manager, _):
            entry = await remote_match(manager, seed=seed)
            t0, t1 = seat_tokens(entry)
            env = _env(ARENA_ADDRESS=address, ARENA_TOKEN=t0)
            proc = await _spawn([node, str(path)], env, tmp_path)
            other = asyncio.create_task(asyncio.to_thread(play, FirstBot(), address, t1))
            exited = await proc
            await asyncio.wait_for(other, WAIT)
            return exited

    return asyncio.run(go())


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
    exited = _run([*bot, "--address", address, "--token", "t"], _env(), tmp_path)
    assert exited.code == sdk.EXIT_CONNECTION == 3, exited
    line = _one_line_error(exited, name)
    assert f"cannot reach the referee at {address}" in line


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_no_address_or_token_is_a_usage_error(
    language: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    bot: list[str] = request.getfixturevalue("py_bot" if language == "python" else "js_bot")
    name = "template" if language == "python" else "js-first"
    exited = _run(bot, _env(), tmp_path)
    assert exited.code == sdk.EXIT_USAGE == 2, exited
    assert "no referee address" in _one_line_error(exited, name)
    exited = _run(bot, _env(ARENA_ADDRESS="127.0.0.1:1"), tmp_path)
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
            unknown = await _spawn(
                bot, _env(ARENA_ADDRESS=address, ARENA_TOKEN="not-a-token"), tmp_path
            )
            t0 = seat_tokens(entry)[0]
            first = await _spawn(bot, _env(ARENA_ADDRESS=address, ARENA_TOKEN=t0), tmp_path)
            await _attached(entry, 0)
            again = await _spawn(bot, _env(ARENA_ADDRESS=address, ARENA_TOKEN=t0), tmp_path)
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
            env = _env(ARENA_ADDRESS=address, ARENA_TOKEN=t0, BOT_BOOM="1")
            boom = await _spawn(bot, env, tmp_path)
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
            env = _env(ARENA_ADDRESS=f"127.0.0.1:{port}", ARENA_TOKEN=seat_tokens(entry)[0])
            proc = await _spawn(bot, env, tmp_path)
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
    exited = _javascript_against_first(tmp_path, "bad_return.js", JS_BAD_RETURN, seed=7)
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
                proc = await _spawn(py_bot, _env(ARENA_ADDRESS=address, ARENA_TOKEN=t0), tmp_path)
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
            env = _env(ARENA_ADDRESS=address, ARENA_TOKEN=t0)
            exited = await (await _spawn([sys.executable, str(path)], env, tmp_path))
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
            env = _env(ARENA_ADDRESS=address, ARENA_TOKEN=t0)
            proc = await _spawn([sys.executable, str(path)], env, tmp_path)
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
    env = _env(NODE_PATH=str(JS_SDK.parent / "node_modules"))
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
                argv1, env1 = bot, _env(ARENA_ADDRESS=address, ARENA_TOKEN=t1)
            else:
                argv0 = [*bot, "--address", address, f"--token={t0}"]
                argv1 = [*bot, "--address", address]
                env1 = _env(ARENA_TOKEN=t1, BOT_MODE="run")
            procs = [await _spawn(argv0, _env(), tmp_path), await _spawn(argv1, env1, tmp_path)]
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
    env = _env(ARENA_ADDRESS=address, ARENA_TOKEN="t")
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
    exited = _run([sys.executable, "-c", code], _env(), tmp_path)
    assert exited.stdout.split("\n")[:2] == ["2 False", "2 True"], exited


# ---------------------------------------------------------------------------------- the game seed


def _first_views(name: str, seed: int, **options: str) -> dict[int, Any]:
    """Each seat's first observation of a game dealt from ``seed``, the seats playing first-legal."""
    state = GameState.new(variant(name, **options), seed=seed)
    views: dict[int, Any] = {}
    while not state.is_terminal() and len(views) < state.variant.seats:
        views.setdefault(state.to_act, observe(state, state.to_act))
        state.apply(state.legal_actions()[0])
    return views


def test_the_game_seed_is_pinned() -> None:
    """The documented function: SHA-256 of the documented text, first 8 bytes big-endian. A change
    here changes every bot's play: bump the text's version instead."""
    args = ("two-handed", 0, 0, 1, "AD.1", ["QS", "7C", "TS.1", "QS"])
    assert game_seed_text(*args) == "arena-game-seed/1|two-handed|0|0|1|AD|7C QS QS TS"
    assert game_seed(*args) == 713393136448822412
    assert game_seed("rubicon", 1, 3, 0, "", ["AS"]) == game_seed("rubicon", 1, 3, 0, "", ["AS.2"])


@pytest.mark.parametrize("name", ["two-handed", "rubicon", "polish", "three-handed", "four-handed"])
def test_the_same_deal_gives_the_same_seed(name: str) -> None:
    """Same deal, seat and game number: the same seed, however the observation came; another deal,
    seat or game number: another seed."""
    a, b, other = _first_views(name, 11), _first_views(name, 11), _first_views(name, 12)
    seeds = {view_seed(a[s], 0) for s in a}
    assert len(seeds) == len(a), "two seats of one deal share a seed"
    for seat in a:
        assert view_seed(a[seat], 0) == view_seed(b[seat], 0)
        assert view_seed(a[seat], 0) != view_seed(other[seat], 0)
        assert view_seed(a[seat], 0) != view_seed(a[seat], 1)
        # What the SDK computes from the wire is the same number.
        pb = observation_to_pb(a[seat])
        wire = game_seed(pb.variant, seat, 0, pb.dealer, pb.turn_up, pb.hand)
        assert wire == view_seed(a[seat], 0)


def test_javascript_computes_the_same_seed_as_python() -> None:
    node = node_executable()
    cases = []
    for name in ("two-handed", "rubicon", "four-handed-consultation"):
        for seat, view in _first_views(name, 3).items():
            pb = observation_to_pb(view)
            cases.append(
                {
                    "variant": pb.variant,
                    "seat": seat,
                    "game": seat + 1,
                    "dealer": pb.dealer,
                    "turnUp": pb.turn_up,
                    "hand": list(pb.hand),
                }
            )
    script = (
        f"const sdk = require({json.dumps(str(JS_SDK))});"
        "const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(cases.map((c) => sdk.gameSeed(c).toString())));"
    )
    done = subprocess.run(
        [node, "-e", script],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=True,
    )
    js = [int(s) for s in json.loads(done.stdout)]
    py = [
        game_seed(c["variant"], c["seat"], c["game"], c["dealer"], c["turnUp"], c["hand"])
        for c in cases
    ]
    assert js == py and len(set(py)) == len(py)


# A JavaScript bot that seeds a generator of its own in onGameStart and does not call super (as the
# SDK's README allows): each turn prints the seed it was given at the start and the turn's gameSeed.
JS_OWN_SEED = """\
'use strict';
const { Bot, main } = require(SDK_PATH);

class OwnSeed extends Bot {
  constructor() {
    super('js-own-seed', '1');
  }

  onGameStart(start) {
    this.started = start.seed;
  }

  decide(turn) {
    process.stdout.write(`${this.started} ${turn.gameSeed}\\n`);
    return turn.legal[0].text;
  }
}

main(new OwnSeed());
"""


@pytest.mark.slow
def test_javascript_turns_carry_the_games_seed_whatever_on_game_start_does(
    tmp_path: Path,
) -> None:
    """``turn.gameSeed`` is the game's seed at every turn even when the bot overrides
    ``onGameStart`` without calling ``super`` (it used to be ``this.gameSeed``, then still 0)."""
    exited = _javascript_against_first(tmp_path, "own_seed.js", JS_OWN_SEED, seed=4)
    assert exited.code == 0, exited
    turns = [line.split() for line in exited.stdout.splitlines()]
    assert turns, exited
    for started, given in turns:
        assert given == started != "0", exited.stdout


def test_a_random_bot_plays_a_deal_the_same_whatever_it_played_before() -> None:
    """Reseeded by ``on_game_start``, a random bot that has played other games chooses exactly as a
    fresh one on the same deal; played without the hook (in-process harnesses) it keeps its seed."""

    def choices(bot: RandomBot, seed: int, game: int, seat: int = 0) -> list[str]:
        state = GameState.new(variant("two-handed"), seed=seed)
        picked: list[str] = []
        started = False
        while not state.is_terminal():
            legal = state.legal_actions()
            action = legal[0]
            if state.to_act == seat:
                view = observe(state, seat)
                if not started:
                    bot.on_game_start(GameStart("m", game, seat, view_seed(view, game), view))
                    started = True
                action = bot.decide(view, list(legal), sdk.Clock(1000, 1000))
                picked.append(action.text)
            state.apply(action)
        return picked

    used = RandomBot(seed=0)
    choices(used, 1, 0)
    choices(used, 2, 1)
    fresh = RandomBot(seed=0)
    assert choices(used, 3, 0) == choices(fresh, 3, 0)
    assert used.game_seed == fresh.game_seed != 0
    # BOT_SEED (the salt) still changes the play.
    assert choices(RandomBot(seed=5), 3, 0) != choices(RandomBot(seed=0), 3, 0)


def _decisions(record: MatchRecord) -> list[list[tuple[int, str]]]:
    return [[(d.seat, d.action) for d in g.decisions] for g in record.games]


@pytest.mark.slow
def test_a_random_bot_process_reseeds_per_game_across_matches(tmp_path: Path) -> None:
    """issue 14: two random bot processes play a match of two games and then, on the same streams,
    a second match (matches_per_process = 2); fresh processes then play that second match alone.
    Both plays of the second match are move for move the same, and so is a repeat of the first."""
    command = f"{shlex.quote(sys.executable)} -m arena_bot.random_bot"
    specs = [[PlayerSpec("r0", command)], [PlayerSpec("r1", command)]]

    async def play_matches(seeds: Sequence[int], per_process: int) -> list[MatchEntry]:
        server, _, manager = await create_server(logs_dir=tmp_path / "logs")
        try:
            entries = []
            for seed in seeds:
                # Rubicon: one deal a game, enough to tell one play of a game from another.
                config = MatchConfig(variant="rubicon", seed=seed, games=2, time_control=TC)
                entry = manager.create(config, specs, WAIT, matches_per_process=per_process)
                await manager.start(entry)
                await asyncio.wait_for(entry.done.wait(), WAIT)
                entries.append(entry)
            return entries
        finally:
            await manager.close()
            await server.stop(None)

    first, second = asyncio.run(play_matches([21, 22], per_process=2))
    (alone,) = asyncio.run(play_matches([22], per_process=1))
    (again,) = asyncio.run(play_matches([21], per_process=1))
    for entry in (first, second, alone, again):
        assert entry.record is not None, entry.error
        assert [g.outcome for g in entry.record.games] == ["normal", "normal"]
    assert second.processes == [], "the second match did not reuse the processes"
    assert first.record is not None and second.record is not None
    assert alone.record is not None and again.record is not None
    assert _decisions(second.record) == _decisions(alone.record)
    assert _decisions(first.record) == _decisions(again.record)
    assert _decisions(first.record) != _decisions(second.record)
