"""What the SDK tests and the bot contract's tests share: the paths of the clients, a real referee on a
free loopback port with a match of two remote seats, and Node.js for the JavaScript SDK."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from arena.referee import MatchConfig, TimeControl
from arena.service.manager import MatchEntry, MatchManager, PlayerSpec
from arena.service.server import create_server

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
