"""What the SDK tests and the bot contract's tests share: the paths of the clients, a real referee on a
free loopback port with a match of two remote seats, Node.js for the JavaScript SDK, and bot processes
started with a clean environment, their exit status and output collected."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena.referee import MatchConfig, TimeControl
from arena.service.match_manager import MatchEntry, MatchManager, PlayerSpec
from arena.service.server import create_server
from arena_bot.first_bot import FirstBot
from arena_bot.sdk import play

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "clients" / "README.md"
JS_DIR = ROOT / "clients" / "javascript"
JS_SDK = JS_DIR / "sdk.js"
PROTO = ROOT / "proto"
TC = TimeControl(budget_ms=5_000, bank_ms=30_000, grace_ms=1_000)
WAIT = 300.0  # seconds for a bot process or a match on a loaded 2-core machine (normally ~2 s)


def node_executable() -> str:
    """The node executable with the SDK's dependencies installed; fail in CI, else skip."""
    node = shutil.which("node")
    if node is None or not (JS_DIR / "node_modules").is_dir():
        message = "node or clients/javascript/node_modules is missing: run `npm ci --prefix clients/javascript`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return node


@contextlib.asynccontextmanager
async def serving() -> AsyncIterator[tuple[str, MatchManager, Any]]:
    server, port, manager = await create_server("127.0.0.1:0")
    try:
        yield f"127.0.0.1:{port}", manager, server
    finally:
        await manager.close()
        await server.stop(None)


async def remote_match(
    manager: MatchManager, seed: int = 5, connect: float = 120.0, clock: TimeControl = TC
) -> MatchEntry:
    """A one-game two-handed match of two remote seats (the tests dial in with the tokens)."""
    entry = manager.create(
        MatchConfig(seed=seed, time_control=clock),
        [[PlayerSpec("s0")], [PlayerSpec("s1")]],
        connect,
    )
    await manager.start(entry)
    return entry


def seat_tokens(entry: MatchEntry) -> list[str]:
    return [p.token for seat in entry.players for p in seat]


@dataclass(frozen=True, slots=True)
class Exited:
    code: int
    stdout: str
    stderr: str


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without any ARENA_* or BOT_* variable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "BOT_"))}
    env.update(extra)
    return env


async def spawn(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> asyncio.Task[Exited]:
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


def javascript_against_first(tmp_path: Path, name: str, source: str, seed: int) -> Exited:
    """Run the JavaScript bot ``source`` (``SDK_PATH`` in it: the SDK) as seat 0 of a
    match against the Python SDK's first bot, until both have ended."""
    node = node_executable()
    path = tmp_path / name
    path.write_text(source.replace("SDK_PATH", json.dumps(str(JS_SDK))))

    async def go() -> Exited:
        async with serving() as (address, manager, _):
            entry = await remote_match(manager, seed=seed)
            t0, t1 = seat_tokens(entry)
            env = clean_env(ARENA_ADDRESS=address, ARENA_TOKEN=t0)
            proc = await spawn([node, str(path)], env, tmp_path)
            other = asyncio.create_task(asyncio.to_thread(play, FirstBot(), address, t1))
            exited = await proc
            await asyncio.wait_for(other, WAIT)
            return exited

    return asyncio.run(go())
