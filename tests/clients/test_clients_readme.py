"""``clients/README.md``, the bot authors' contract, against the code: the referee's limits, connect
timeouts and refusal reasons it quotes, the exit statuses of both SDKs, everything a launched bot finds
in its environment, and the recipe that makes stubs for another language from ``proto/`` alone."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from sdk_helpers import (
    JS_SDK,
    PROTO,
    README,
    TC,
    WAIT,
    node_executable,
    remote_match,
    seat_tokens,
    serving,
)

from arena.cli import match as cli_match
from arena.play import conformance
from arena.referee import MatchConfig
from arena.service import servicers
from arena.service.match_manager import MatchManager, PlayerSpec
from arena.service.server import MAX_BOT_RECEIVE_BYTES, create_server
from arena.tournament import runner
from arena.wire.v1 import bot_pb2, bot_pb2_grpc
from arena_bot import sdk


def _readme() -> str:
    return " ".join(README.read_text().split())  # whitespace folded: sentences may wrap


def test_the_readme_quotes_the_referees_limits() -> None:
    text = _readme()
    kib = {int(n) for n in re.findall(r"a message over (\d+) KiB", text)}
    assert kib == {servicers.MAX_BOT_MESSAGE_BYTES // 1024} == {16}
    cap = {int(n) for n in re.findall(r"gRPC itself refuses anything over (\d+) KiB", text)}
    assert cap == {MAX_BOT_RECEIVE_BYTES // 1024}
    hello = re.search(r"`Hello`\. It must be the first message and arrive within (\d+) s", text)
    assert hello is not None and float(hello.group(1)) == servicers.HELLO_TIMEOUT


def test_the_readme_quotes_the_connect_timeouts() -> None:
    text = _readme()
    quoted = re.search(
        r"connect timeout: (\d+) s for `arena match` and for tournaments .*?"
        r"`arena check-bot` (\d+) s.*?connect_timeout_ms` says \(0: (\d+) s\)",
        text,
    )
    assert quoted is not None, "the README's connect timeouts sentence changed"
    match_default = inspect.signature(cli_match.match).parameters["connect_timeout"].default
    assert float(quoted.group(1)) == runner.CONNECT_TIMEOUT == match_default
    assert float(quoted.group(2)) == conformance.CONNECT_TIMEOUT
    assert (
        float(quoted.group(3))
        == inspect.signature(MatchManager.create).parameters["connect_timeout"].default
    )
    start_match = inspect.getsource(servicers.Admin.StartMatch).replace("_", "")
    assert f"connecttimeoutms or {int(quoted.group(3)) * 1000})" in start_match


def test_the_readme_quotes_every_refusal_reason() -> None:
    """The reasons a real referee gives, each quoted by the README (the version number as ``N``)."""

    async def first_reply(address: str, message: bot_pb2.BotMessage) -> tuple[str, Any]:
        channel = grpc.aio.insecure_channel(address)
        call = bot_pb2_grpc.BotGatewayStub(channel).Play()
        await call.write(message)
        reply = await call.read()
        return reply.WhichOneof("body"), (call, channel)

    def hello(token: str, version: int = 1) -> bot_pb2.BotMessage:
        return bot_pb2.BotMessage(hello=bot_pb2.Hello(token=token, protocol_version=version))

    async def go() -> list[str]:
        async with serving() as (address, manager, _):
            entry = await remote_match(manager, connect=WAIT)
            t0, t1 = seat_tokens(entry)
            held = []
            kind, stream = await first_reply(address, hello(t0))
            assert kind == "welcome"
            held.append(stream)
            reasons = []
            for message in (
                hello("not-a-token"),
                hello(t0),
                bot_pb2.BotMessage(reply=bot_pb2.Reply(request_id=1, action="done")),
                hello(t1, version=9),
                hello(t1, version=0),
            ):
                channel = grpc.aio.insecure_channel(address)
                call = bot_pb2_grpc.BotGatewayStub(channel).Play()
                await call.write(message)
                reply = await call.read()
                assert reply.WhichOneof("body") == "refused", reply
                reasons.append(reply.refused.reason)
                await channel.close()
            for call, channel in held:
                call.cancel()
                await channel.close()
            return reasons

    reasons = asyncio.run(go())
    assert reasons[:2] == ["unknown or expired token", "this seat is already connected"]
    text = _readme()
    for reason in reasons:
        quoted = re.sub(r"protocol version \d+ ", "protocol version N ", reason)
        assert f"`{quoted}`" in text, f"the README does not quote {quoted!r}"


def test_the_readme_and_both_sdks_agree_on_exit_statuses() -> None:
    node = node_executable()
    script = (
        f"const s = require({json.dumps(str(JS_SDK))});"
        "process.stdout.write(JSON.stringify([s.EXIT_OK, s.EXIT_BOT_ERROR, s.EXIT_USAGE, "
        "s.EXIT_CONNECTION, s.EXIT_REFUSED, s.PROTOCOL_VERSION, s.SEED_VERSION]));"
    )
    done = subprocess.run(
        [node, "-e", script], capture_output=True, text=True, timeout=WAIT, check=True
    )
    python = [
        sdk.EXIT_OK,
        sdk.EXIT_BOT_ERROR,
        sdk.EXIT_USAGE,
        sdk.EXIT_CONNECTION,
        sdk.EXIT_REFUSED,
        sdk.PROTOCOL_VERSION,
        sdk.SEED_VERSION,
    ]
    assert json.loads(done.stdout) == python
    assert sdk.PROTOCOL_VERSION == servicers.PROTOCOL_VERSION
    text = _readme().split("### Exit status and messages", 1)[1].split("###", 1)[0]
    for code, meaning in (
        (0, "the referee ended the stream"),
        (1, "the bot's own code"),
        (2, "no address or token"),
        (3, "could not be reached"),
        (4, "refused"),
    ):
        row = re.search(rf"\| `{code}` \|([^|]*)\|", text)
        assert row is not None and meaning in row.group(1), (code, meaning)
    assert sdk.SEED_VERSION in _readme()


@pytest.mark.slow
def test_the_readme_names_everything_in_a_launched_bots_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A launched bot prints its environment's names; the README's section on a launched bot names
    each (``LC_*`` and ``BOT_*`` as families), and a variable of the arena's own is not passed on."""
    probe = tmp_path / "probe.py"
    probe.write_text("import os\nprint('ENV', ' '.join(sorted(os.environ)))\n")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(probe))}"
    for name, value in (("NODE_PATH", "n"), ("BOT_X", "1"), ("LC_X", "C"), ("SECRET_X", "no")):
        monkeypatch.setenv(name, value)

    async def go() -> str:
        server, _, manager = await create_server(logs_dir=tmp_path / "logs")
        try:
            entry = manager.create(
                MatchConfig(seed=1, time_control=TC),
                [[PlayerSpec("probe0", command)], [PlayerSpec("probe1", command)]],
                5.0,  # the probes print and exit without connecting
            )
            await manager.start(entry)
            await asyncio.wait_for(entry.done.wait(), WAIT)
            (log, *_) = sorted((tmp_path / "logs").glob(f"{entry.match_id}-seat0-*.log"))
            return log.read_text()
        finally:
            await manager.close()
            await server.stop(None)

    output = asyncio.run(go())
    names = next(line for line in output.splitlines() if line.startswith("ENV ")).split()[1:]
    assert "SECRET_X" not in names
    assert {"BOT_X", "LC_X", "NODE_PATH", "ARENA_TOKEN", "ARENA_ADDRESS"} <= set(names)
    section = README.read_text().split("### What a launched bot gets", 1)[1].split("\n## ", 1)[0]
    missing = [n for n in names if not n.startswith(("LC_", "BOT_")) and f"`{n}`" not in section]
    assert missing == [], f"the README does not mention {missing}"


def test_stubs_for_another_language_come_from_proto_alone(tmp_path: Path) -> None:
    """The README's recipe, with the protoc of the dev tools (Python output: its other generators are
    plugins): ``protoc -I proto`` on a copy of ``proto/`` (nothing else of the project) compiles the
    files of package ``arena.v1`` (C++: namespace ``arena::v1``), and the Python modules it
    writes import each other as ``arena.wire.v1``: the names of this project's own package."""
    from grpc_tools import protoc  # the protoc of the dev tools (CI has it)

    copy = tmp_path / "proto"
    shutil.copytree(PROTO, copy)
    files = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*.proto"))
    assert files == [
        "arena/wire/v1/admin.proto",
        "arena/wire/v1/bot.proto",
        "arena/wire/v1/competition.proto",
        "arena/wire/v1/game.proto",
    ]
    out = tmp_path / "gen"
    out.mkdir()
    argv = ["protoc", "-I", str(copy), f"--python_out={out}", f"--grpc_python_out={out}"]
    assert protoc.main(argv + [str(copy / f) for f in files]) == 0
    generated = (out / "arena/wire/v1/bot_pb2.py").read_text()
    assert "from arena.wire.v1 import game_pb2" in generated
    for name in ("game", "bot", "admin", "competition"):
        assert (out / f"arena/wire/v1/{name}_pb2.py").is_file()
        assert f"arena/wire/v1/{name}.proto" in files
    assert bot_pb2.DESCRIPTOR.package == "arena.v1"  # C++: namespace arena::v1, Go: your choice
    text = _readme()
    for recipe in (
        "protoc -I proto",
        "proto/arena/wire/v1/*.proto",
        "namespace `arena::v1`",
        "package `arena.v1`",
        "from arena.wire.v1 import game_pb2",
    ):
        assert recipe in text, recipe
