"""The bot launcher in the light mode (``sandbox = "none"``): own process group and working directory,
scrubbed environment, resource limits from the first instruction, logs truncated and the last lines
kept, every descendant killed at the end, killed with the arena. (The isolated mode: test_sandbox.py and test_sandbox_processes.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import sys
import textwrap
from pathlib import Path

import pytest

from arena.bots.launcher import BotProcess, LaunchError, check_command, marked_processes
from arena.bots.limits import Limits
from arena.common import scratch_dirs as scratch
from arena.sandbox import cgroups

PY = shlex.quote(sys.executable)
LIGHT = Limits(sandbox="none")


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
    bot = await BotProcess.start("t", command, "127.0.0.1:1", "tok", log, limits or LIGHT)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(bot.wait(), timeout=wait)
    await bot.stop()
    return bot, log.read_text(errors="replace")


def test_environment_is_scrubbed_and_directory_is_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_API_KEY", "hunter2")
    monkeypatch.setenv("BOT_SEED", "5")
    monkeypatch.setenv("GRPC_EXPERIMENTS", "-event_engine_dns")  # passed: the arena's transport
    cmd = _script(
        tmp_path,
        "env.py",
        """
        import os
        print("cwd", os.getcwd())
        print("secret", os.environ.get("SECRET_API_KEY"))
        print("seed", os.environ.get("BOT_SEED"))
        print("grpc", os.environ.get("GRPC_EXPERIMENTS"))
        print("token", os.environ.get("ARENA_TOKEN"), os.environ.get("ARENA_ADDRESS"))
        """,
    )
    bot, out = asyncio.run(_run(cmd, tmp_path))
    assert bot.returncode == 0, out
    assert "secret None" in out
    assert "seed 5" in out
    assert "grpc -event_engine_dns" in out
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
    bot, out = asyncio.run(_run(cmd, tmp_path, Limits(memory_mb=256, sandbox="none")))
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
    _, out = asyncio.run(_run(cmd, tmp_path, Limits(log_bytes=10_000, sandbox="none")))
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
        bot = await BotProcess.start("t", cmd, "127.0.0.1:1", "tok", None, LIGHT)
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


def test_a_child_left_in_the_group_without_the_marker_is_killed(tmp_path: Path) -> None:
    """A child that stays in the bot's process group with an environment of its own (no marker) is
    found by the group, also once the bot's first process has exited and been reaped (its output
    elsewhere: whoever holds the output is killed anyway)."""
    pidfile = tmp_path / "pid"
    cmd = _script(
        tmp_path,
        "leaver.py",
        f"""
        import subprocess
        child = subprocess.Popen(
            ["sleep", "600"], env={{}}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        with open({str(pidfile)!r}, "w") as f:
            f.write(str(child.pid))
        """,
    )

    async def scenario() -> int:
        bot = await BotProcess.start("t", cmd, "127.0.0.1:1", "tok", None, LIGHT)
        await asyncio.wait_for(bot.wait(), 20)
        pid = int(pidfile.read_text())
        await bot.stop()
        await asyncio.sleep(0.2)
        return pid

    pid = asyncio.run(scenario())
    try:
        assert not _alive(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_cpu_limit(tmp_path: Path) -> None:
    cmd = _script(tmp_path, "spin.py", "while True:\n    pass\n")
    bot, _ = asyncio.run(_run(cmd, tmp_path, Limits(cpu_seconds=1, sandbox="none"), wait=30))
    assert bot.returncode is not None and bot.returncode < 0  # killed by SIGXCPU/SIGKILL


def test_a_command_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    for limits in (LIGHT, Limits()):
        with pytest.raises(LaunchError, match="no-such-program"):
            asyncio.run(
                BotProcess.start("t", "no-such-program --x", "127.0.0.1:1", "tok", None, limits)
            )
    with pytest.raises(LaunchError, match="cannot split"):
        asyncio.run(BotProcess.start("t", "python 'unclosed", "127.0.0.1:1", "tok", None, LIGHT))
    # A mistyped script: said before the bot starts, not as the sandbox's "can't open file
    # '/home/bot/lowdeclarr.py'" once it has.
    for command in ("{python} -u mybots/lowdeclarr.py --new", "node mybots/tny.js"):
        with pytest.raises(LaunchError) as info:
            asyncio.run(BotProcess.start("low", command, "127.0.0.1:1", "tok", None, LIGHT))
        script = command.split()[-2 if command.endswith("--new") else -1]
        assert f"bot 'low': cannot start it: its script {script!r} does not exist" in str(
            info.value
        )
    # ... and one named by an absolute path: the same, not a bot that dies before it dials in.
    missing = tmp_path / "mybots" / "lowdeclarr.py"
    for command in (f"{{python}} {missing}", f"node {missing.with_suffix('.js')}"):
        with pytest.raises(LaunchError) as info:
            asyncio.run(BotProcess.start("low", command, "127.0.0.1:1", "tok", None, LIGHT))
        assert f"bot 'low': cannot start it: its script '{command.split()[-1]}' does not exist" in (
            str(info.value)
        )
    # A program named by a path to no file says so, not that the file is not executable.
    with pytest.raises(LaunchError) as info:
        asyncio.run(BotProcess.start("t", "./nosuch.py", "127.0.0.1:1", "tok", None, LIGHT))
    assert "cannot start './nosuch.py': there is no such file (a Python script runs as" in str(
        info.value
    )
    # A script given as the program, without its interpreter: the error says how to run it.
    for name, runs in (("bot.py", "{python} "), ("bot.js", "node ")):
        script = tmp_path / name
        script.write_text("")
        with pytest.raises(LaunchError) as info:
            asyncio.run(BotProcess.start("t", str(script), "127.0.0.1:1", "tok", None, LIGHT))
        assert "it is not an executable file (a" in str(info.value)
        assert f"runs as '{runs}{script}')" in str(info.value)
    # A mistyped placeholder: named, with the ones there are.
    with pytest.raises(LaunchError) as info:
        asyncio.run(BotProcess.start("t", "{pyhton} bot.py", "127.0.0.1:1", "tok", None, LIGHT))
    assert "cannot start '{pyhton}': it is not found in PATH (the arena replaces only {python}" in (
        str(info.value)
    )


def test_a_bot_that_exits_at_once_is_started_and_ends(tmp_path: Path) -> None:
    """A program that is gone before the launcher looks at its output pipe (``true``: its pipe may
    already be closed) is a bot that started and ended, not an error of the launcher's."""

    async def starts() -> list[int | None]:
        codes = []
        for _ in range(20):  # the pipe was closed in about one start in five before the fix
            bot = await BotProcess.start("t", "true", "127.0.0.1:1", "tok", None, LIGHT)
            await asyncio.wait_for(bot.wait(), timeout=20)
            await bot.stop()
            codes.append(bot.returncode)
        return codes

    assert asyncio.run(starts()) == [0] * 20


def test_a_token_never_goes_on_a_command_line() -> None:
    with pytest.raises(LaunchError, match="ARENA_TOKEN"):
        check_command("{python} -m arena_bot.random_bot --token {token}")
    with pytest.raises(LaunchError, match="ARENA_TOKEN"):
        asyncio.run(BotProcess.start("t", "bot {token}", "127.0.0.1:1", "tok", None, LIGHT))
    check_command("{python} -m arena_bot.random_bot --address {address}")  # an address may


def test_an_isolated_bot_needs_the_referees_socket() -> None:
    with pytest.raises(LaunchError, match="Unix socket"):
        asyncio.run(
            BotProcess.start("t", "true", "127.0.0.1:1", "tok", None, Limits(sandbox="required"))
        )


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="memory_mb"):
        Limits(memory_mb=-1)
    with pytest.raises(ValueError, match="sandbox"):
        Limits(sandbox="docker")
    assert Limits().sandbox == "auto"  # isolation on by default
    assert Limits.from_table({"memory_mb": 512, "sandbox": "required"}) == Limits(
        memory_mb=512, sandbox="required"
    )
    with pytest.raises(ValueError, match=r"limits\.memory: unknown field"):
        Limits.from_table({"memory": 512})
    with pytest.raises(ValueError, match=r"limits\.cpu_seconds: .*integer"):
        Limits.from_table({"cpu_seconds": "lots"})


def test_limits_hold_from_the_first_instruction(tmp_path: Path) -> None:
    """Set by an exec wrapper before the bot's program runs: a child forked at once is bound."""
    cmd = _script(
        tmp_path,
        "forker.py",
        """
        import os, resource
        if os.fork() == 0:
            print("child", resource.getrlimit(resource.RLIMIT_AS)[0],
                  resource.getrlimit(resource.RLIMIT_NOFILE)[0], flush=True)
            os._exit(0)
        os.wait()
        """,
    )
    _, out = asyncio.run(_run(cmd, tmp_path, Limits(memory_mb=300, open_files=200, sandbox="none")))
    assert f"child {300 * 1024 * 1024} 200" in out


def test_limits_hold_without_util_linux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where setpriv and prlimit are missing, a small Python wrapper sets the limits (and the
    parent-death signal) before the bot's program runs."""
    from arena.sandbox import commands

    real = shutil.which
    monkeypatch.setattr(
        commands.shutil,
        "which",
        lambda name, *a, **k: None if name in ("setpriv", "prlimit") else real(name, *a, **k),
    )
    cmd = _script(
        tmp_path,
        "limits.py",
        """
        import ctypes, resource
        libc = ctypes.CDLL(None)
        signal = ctypes.c_int()
        libc.prctl(2, ctypes.byref(signal))  # PR_GET_PDEATHSIG
        print("limits", resource.getrlimit(resource.RLIMIT_AS)[0], signal.value, flush=True)
        """,
    )
    _, out = asyncio.run(_run(cmd, tmp_path, Limits(memory_mb=300, sandbox="none")))
    assert f"limits {300 * 1024 * 1024} 9" in out  # SIGKILL when the arena dies


OOM_PROBE = """
    def adjustment():
        with open("/proc/self/oom_score_adj") as f:
            return int(f.read())
    print("oom", adjustment(), flush=True)
    """


@pytest.mark.parametrize("util_linux", [True, False])
def test_a_light_bot_is_the_first_the_oom_killer_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, util_linux: bool
) -> None:
    """A machine out of memory loses a bot before the arena: its OOM score adjustment is the highest,
    set by choom, or by the wrapper where util-linux is missing; the arena's own is untouched."""
    from arena.sandbox import commands

    if not util_linux:
        real = shutil.which
        monkeypatch.setattr(
            commands.shutil,
            "which",
            lambda name, *a, **k: (
                None if name in ("setpriv", "prlimit", "choom") else real(name, *a, **k)
            ),
        )
    own = Path("/proc/self/oom_score_adj").read_text()
    cmd = _script(tmp_path, "oom.py", OOM_PROBE)
    _, out = asyncio.run(_run(cmd, tmp_path, Limits(sandbox="none")))
    assert f"oom {commands.OOM_SCORE_ADJ}" in out
    assert commands.OOM_SCORE_ADJ == 1000  # the most the kernel takes
    assert Path("/proc/self/oom_score_adj").read_text() == own


def test_the_last_lines_of_output_are_kept_printable(tmp_path: Path) -> None:
    cmd = _script(
        tmp_path,
        "talker.py",
        """
        import sys
        for i in range(100):
            print("line", i, flush=True)
        sys.stderr.write("boom \\x1b[2J[bold]done[/]\\n" + "\\u00e9\\x07" * 2000 + "\\n")
        sys.stderr.write("x" * 5000)
        raise SystemExit(4)
        """,
    )
    bot, _ = asyncio.run(_run(cmd, tmp_path))
    lines = bot.last_output(4)
    assert lines[0] == "line 99"
    assert lines[1] == "boom \ufffd[2J[bold]done[/]"  # no escape sequence reaches a terminal
    assert lines[2] == "\u00e9\ufffd" * 150  # cut at 300 characters, not bytes
    assert lines[3] == "x" * 300  # cut
    assert bot.exit_text() == "bot process exited with code 4"


def test_a_long_output_is_shown_by_its_first_and_last_lines(tmp_path: Path) -> None:
    # Node.js writes a crash's error first and its stack after: the last lines alone missed it.
    cmd = _script(
        tmp_path,
        "node_like.py",
        """
        import sys
        print("Error: Cannot find module 'x'", file=sys.stderr)
        for i in range(30):
            print("    at frame", i, file=sys.stderr)
        raise SystemExit(1)
        """,
    )
    bot, _ = asyncio.run(_run(cmd, tmp_path))
    assert bot.output_shown(8) == [
        "Error: Cannot find module 'x'",
        "    at frame 0",
        "    at frame 1",
        "... (lines left out)",
        *(f"    at frame {i}" for i in range(26, 30)),
    ]
    short = _script(tmp_path, "short.py", "print('one')\nprint('two')\nraise SystemExit(2)\n")
    bot, _ = asyncio.run(_run(short, tmp_path))
    assert bot.output_shown(8) == ["one", "two"]  # all of it, nothing repeated


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_freeze_stops_the_bot_between_its_turns(tmp_path: Path) -> None:
    """Fairness option: the bot is frozen while it is not its turn, and runs again when it is."""
    cmd = _script(tmp_path, "idle.py", "import time\ntime.sleep(60)\n")

    async def scenario() -> tuple[str, str, str]:
        bot = await BotProcess.start(
            "t", cmd, "127.0.0.1:1", "tok", None, Limits(freeze=True, sandbox="none")
        )
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
    # Frozen by its freezer group where the machine has one (waiting in the kernel), else stopped.
    assert frozen == ("D" if cgroups.available().freezer else "T")


def test_a_match_with_frozen_bots_plays_normally() -> None:
    from arena.referee import MatchConfig
    from arena.service.match_manager import PlayerSpec
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
                Limits(freeze=True, sandbox="none"),
            )
            await manager.start(entry)
            await asyncio.wait_for(entry.done.wait(), 120)
            assert entry.record is not None, entry.error
            return [g.outcome for g in entry.record.games]
        finally:
            await manager.close()
            await server.stop(None)

    assert asyncio.run(go()) == ["normal"]


def test_the_output_since_it_was_last_taken_is_kept_as_a_tail(tmp_path: Path) -> None:
    """A competition keeps each game's bot output: the tail of what the bot wrote since the last
    game's was taken, and how much it wrote in all."""
    cmd = _script(
        tmp_path,
        "noisy.py",
        """
        import sys
        sys.stdout.write("a" * 5000 + "\\n")
        sys.stdout.write("the end\\n")
        """,
    )
    bot, _ = asyncio.run(_run(cmd, tmp_path))
    tail, written = bot.take_output(12)
    assert (tail, written) == (b"aaa\nthe end\n", 5009)
    assert bot.take_output(12) == (b"", 0), "taken: the next game's starts afresh"
