"""Bots under bubblewrap (issue 6): no network but the referee's Unix socket, a read-only system, a
writable working directory of their own; a match still plays normally."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from arena.bots.launcher import BotProcess
from arena.bots.limits import Limits
from arena.referee import MatchConfig
from arena.service.manager import PlayerSpec
from arena.service.server import create_server

pytestmark = pytest.mark.slow

if shutil.which("bwrap") is None:
    if os.environ.get("CI"):
        pytest.fail("bubblewrap (bwrap) is missing: .ci/run installs it", pytrace=False)
    pytest.skip("bubblewrap is not installed (Debian package: bubblewrap)", allow_module_level=True)


def test_a_sandboxed_bot_has_no_network_and_a_read_only_system(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    probe = tmp_path / "probe.py"
    probe.write_text(
        textwrap.dedent(
            f"""
            import json, os, socket
            out = {{}}
            try:
                socket.create_connection(("127.0.0.1", 22), timeout=2)
                out["tcp"] = "connected"
            except OSError as exc:
                out["tcp"] = type(exc).__name__
            try:
                open({str(outside)!r}, "w").write("x")
                out["outside"] = "written"
            except OSError as exc:
                out["outside"] = type(exc).__name__
            open("mine.txt", "w").write("x")
            out["workdir"] = os.path.exists("mine.txt")
            print(json.dumps(out))
            """
        )
    )

    async def go() -> str:
        sock_dir = tmp_path / "sock"
        sock_dir.mkdir()
        address = f"unix:{sock_dir / 'referee.sock'}"
        log = tmp_path / "probe.log"
        cmd = f"{shlex.quote(sys.executable)} {shlex.quote(str(probe))}"
        bot = await BotProcess.start(
            "probe", cmd, address, "tok", log, Limits(sandbox="bubblewrap")
        )
        await asyncio.wait_for(bot.wait(), 60)
        await bot.stop()
        return log.read_text()

    out = json.loads(asyncio.run(go()).strip().splitlines()[-1])
    assert out["tcp"] != "connected"
    assert out["outside"] != "written" and not outside.exists()
    assert out["workdir"] is True


def test_a_match_between_sandboxed_bots_plays_normally() -> None:
    async def go() -> list[str]:
        server, _, manager = await create_server()
        try:
            py = shlex.quote(sys.executable)
            entry = manager.create(
                MatchConfig(seed=3),
                [
                    [PlayerSpec("random", f"{py} -m arena_bot.random_bot")],
                    [PlayerSpec("greedy", f"{py} -m arena_bot.greedy_bot")],
                ],
                30.0,
                Limits(sandbox="bubblewrap"),
            )
            await manager.start(entry)
            await asyncio.wait_for(entry.done.wait(), 120)
            assert entry.record is not None, entry.error
            return [g.outcome for g in entry.record.games]
        finally:
            await manager.close()
            await server.stop(None)

    assert asyncio.run(go()) == ["normal"]
