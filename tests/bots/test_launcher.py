"""The bot launcher: own process group and working directory, scrubbed environment, resource limits,
logs truncated, every descendant killed at the end (issue 6)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from arena import scratch
from arena.bots.launcher import BotProcess, LaunchError, marked_processes
from arena.bots.limits import Limits

PY = shlex.quote(sys.executable)


def _script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return f"{PY} {shlex.quote(str(path))}"


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.split(")")[-1].split()[0] != "Z"  # a zombie is dead


async def _run(
    command: str, tmp_path: Path, limits: Limits | None = None, wait: float = 20
) -> tuple[BotProcess, str]:
    log = tmp_path / "bot.log"
    bot = await BotProcess.start("t", command, "127.0.0.1:1", "tok", log, limits)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(bot.wait(), timeout=wait)
    await bot.stop()
    return bot, log.read_text(errors="replace")


def test_environment_is_scrubbed_and_directory_is_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_API_KEY", "hunter2")
    monkeypatch.setenv("BOT_SEED", "5")
    cmd = _script(
        tmp_path,
        "env.py",
        """
        import os
        print("cwd", os.getcwd())
        print("secret", os.environ.get("SECRET_API_KEY"))
        print("seed", os.environ.get("BOT_SEED"))
        print("token", os.environ.get("ARENA_TOKEN"), os.environ.get("ARENA_ADDRESS"))
        """,
    )
    bot, out = asyncio.run(_run(cmd, tmp_path))
    assert bot.returncode == 0, out
    assert "secret None" in out
    assert "seed 5" in out
    assert "token tok 127.0.0.1:1" in out
    cwd = next(line.split()[1] for line in out.splitlines() if line.startswith("cwd"))
    assert cwd != os.getcwd() and Path(cwd).parent == scratch.run_dir()
    assert not Path(cwd).exists()  # removed when the bot stopped


def test_memory_limit_stops_unbounded_allocation(tmp_path: Path) -> None:
    cmd = _script(
        tmp_path,
        "hog.py",
        """
        blocks = []
        try:
            while True:
                blocks.append(bytearray(16 * 1024 * 1024))
        except MemoryError:
            print("memory error after", len(blocks) * 16, "MiB")
            raise SystemExit(3)
        """,
    )
    bot, out = asyncio.run(_run(cmd, tmp_path, Limits(memory_mb=256)))
    assert bot.returncode != 0
    assert "memory error" in out
    mib = int(out.split("after")[1].split()[0])
    assert mib < 256


def test_output_is_truncated_at_the_limit(tmp_path: Path) -> None:
    cmd = _script(
        tmp_path,
        "chatty.py",
        """
        import sys
        for _ in range(2000):
            sys.stderr.write("x" * 1000 + "\\n")
        """,
    )
    _, out = asyncio.run(_run(cmd, tmp_path, Limits(log_bytes=10_000)))
    assert len(out) < 10_200
    assert out.endswith("[log truncated]\n")


def test_children_that_leave_the_process_group_are_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    cmd = _script(
        tmp_path,
        "forker.py",
        f"""
        import os, time
        for _ in range(2):
            pid = os.fork()
            if pid == 0:
                os.setsid()  # leaves the bot's process group
                if os.fork() == 0:
                    with open({str(pidfile)!r}, "a") as f:
                        f.write(f"{{os.getpid()}}\\n")
                    time.sleep(600)
                os._exit(0)
        time.sleep(600)
        """,
    )

    async def scenario() -> tuple[list[int], list[int]]:
        bot = await BotProcess.start("t", cmd, "127.0.0.1:1", "tok", None, Limits())
        for _ in range(100):
            if pidfile.exists() and len(pidfile.read_text().split()) == 2:
                break
            await asyncio.sleep(0.05)
        pids = [int(p) for p in pidfile.read_text().split()]
        await bot.stop()
        await asyncio.sleep(0.2)
        return pids, marked_processes(bot.marker)

    pids, left = asyncio.run(scenario())
    assert len(pids) == 2
    assert not left
    assert not any(_alive(p) for p in pids)


def test_cpu_limit(tmp_path: Path) -> None:
    cmd = _script(tmp_path, "spin.py", "while True:\n    pass\n")
    bot, _ = asyncio.run(_run(cmd, tmp_path, Limits(cpu_seconds=1), wait=30))
    assert bot.returncode is not None and bot.returncode < 0  # killed by SIGXCPU/SIGKILL


def test_a_command_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="no-such-program"):
        asyncio.run(
            BotProcess.start("t", "no-such-program --x", "127.0.0.1:1", "tok", None, Limits())
        )
    with pytest.raises(LaunchError, match="cannot split"):
        asyncio.run(BotProcess.start("t", "python 'unclosed", "127.0.0.1:1", "tok", None, Limits()))


def test_bubblewrap_missing_or_without_a_socket_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="bubblewrap"):
        asyncio.run(
            BotProcess.start("t", "true", "127.0.0.1:1", "tok", None, Limits(sandbox="bubblewrap"))
        )


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="memory_mb"):
        Limits(memory_mb=-1)
    with pytest.raises(ValueError, match="sandbox"):
        Limits(sandbox="docker")


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_freeze_stops_the_bot_between_its_turns(tmp_path: Path) -> None:
    """Fairness option: SIGSTOP while it is not the bot's turn, SIGCONT when it is."""
    cmd = _script(tmp_path, "idle.py", "import time\ntime.sleep(60)\n")

    async def scenario() -> tuple[str, str, str]:
        bot = await BotProcess.start("t", cmd, "127.0.0.1:1", "tok", None, Limits(freeze=True))
        await asyncio.sleep(0.3)
        running = _state(bot.proc.pid)
        bot.freeze()
        await asyncio.sleep(0.2)
        frozen = _state(bot.proc.pid)
        bot.thaw()
        await asyncio.sleep(0.2)
        thawed = _state(bot.proc.pid)
        await bot.stop()
        return running, frozen, thawed

    running, frozen, thawed = asyncio.run(scenario())
    assert running in "SR" and thawed in "SR"
    assert frozen == "T"


def test_a_match_with_frozen_bots_plays_normally() -> None:
    from arena.referee import MatchConfig
    from arena.service.manager import PlayerSpec
    from arena.service.server import create_server

    async def go() -> list[str]:
        server, _, manager = await create_server()
        try:
            entry = manager.create(
                MatchConfig(seed=2),
                [
                    [PlayerSpec("a", f"{PY} -m arena_bot.random_bot")],
                    [PlayerSpec("b", f"{PY} -m arena_bot.first_bot")],
                ],
                30.0,
                Limits(freeze=True),
            )
            await manager.start(entry)
            await asyncio.wait_for(entry.done.wait(), 120)
            assert entry.record is not None, entry.error
            return [g.outcome for g in entry.record.games]
        finally:
            await manager.close()
            await server.stop(None)

    assert asyncio.run(go()) == ["normal"]
