"""A sandboxed bot's processes, with real bubblewrap: frozen between its turns, their CPU counted,
every one of them gone with its match and with the arena (even one that left the process group or
took a new session), none left under its uid, and no stranger's process killed in their place.

On CI these tests must not skip (.ci/run installs bubblewrap)."""

from __future__ import annotations

import asyncio
import os
import secrets
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest
from sandbox_helpers import bot_script, require_the_sandbox

from arena.bots.launcher import BotProcess
from arena.bots.limits import Limits
from arena.common import scratch_dirs as scratch
from arena.sandbox import cgroups, procs, uids

pytestmark = pytest.mark.slow
require_the_sandbox()


def test_cpu_time_and_freezing_work_in_the_sandbox(tmp_path: Path, referee_socket: str) -> None:
    command = bot_script(tmp_path / "spin", "while True:\n    pass\n")
    cycle = asyncio.run(_freeze_cycle(command, referee_socket, 0.5))
    assert cycle.before >= 0.5
    _assert_frozen_then_thawed(cycle)


def test_a_process_that_leaves_the_process_group_is_frozen_too(
    tmp_path: Path, referee_socket: str
) -> None:
    """A child in a session of its own (``setsid``) is out of reach of the group's SIGSTOP: it ran
    on, spinning, through every turn of the opponent's."""
    command = bot_script(
        tmp_path / "apart",
        """
        import os, time
        if os.fork() == 0:
            os.setpgid(0, 0)  # a session of its own is refused (seccomp); a group is not
            while True:
                pass
        while True:
            time.sleep(1)
        """,
    )
    _assert_frozen_then_thawed(asyncio.run(_freeze_cycle(command, referee_socket, 0.3)))


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_processes_that_continue_each_other_are_frozen_too(
    tmp_path: Path, referee_socket: str, mode: str
) -> None:
    """Two processes of a bot sending SIGCONT to their group without end: each continued the other
    while the freeze's signals went round, and both ran on through the opponent's turns (0.27
    CPU-seconds in half a second frozen, isolated). A frozen group cannot be continued."""
    command = bot_script(
        tmp_path / "mutual",
        """
        import os, signal
        os.fork()
        group = os.getpgid(0)
        while True:
            os.killpg(group, signal.SIGCONT)
        """,
    )
    _assert_frozen_then_thawed(asyncio.run(_freeze_cycle(command, referee_socket, 0.3, mode)))


class _Cycle(NamedTuple):
    before: float  # the CPU it spent before the freeze
    frozen: set[str]  # its processes' states, frozen
    spent: float  # the CPU it spent in half a second frozen
    thawed: set[str]  # its processes' states, thawed
    freezer: str  # its freezer group's state, frozen ("" without one)


def _assert_frozen_then_thawed(cycle: _Cycle) -> None:
    """Frozen by its freezer group where the machine has the controller (its processes then wait in
    the kernel, state D), else stopped by signals (state T); either way it ran nothing frozen."""
    if cgroups.available().freezer:
        assert cycle.freezer == cgroups.FROZEN
        assert cycle.frozen == {"D"}
    else:
        assert cycle.frozen == {"T"}
    assert cycle.spent < 0.05
    assert cycle.thawed.isdisjoint({"D", "T"})


async def _freeze_cycle(command: str, sock: str, warm: float, mode: str = "auto") -> _Cycle:
    """Start a bot with ``freeze`` on, let it spend ``warm`` seconds of CPU, freeze it, then thaw
    it (see :class:`_Cycle`)."""
    bot = await BotProcess.start(
        "spin",
        command,
        "127.0.0.1:1",
        "tok",
        None,
        Limits(freeze=True, sandbox=mode),
        socket=sock if mode != "none" else "",
    )
    try:
        deadline = time.monotonic() + 60
        while bot.cpu_seconds() < warm and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        before = bot.cpu_seconds()
        bot.freeze()
        await asyncio.sleep(0.3)
        frozen = {_state(p) for p in bot.processes()}
        groups = bot.confinement.groups
        freezer = ""
        if groups is not None and "freezer" in groups.folders:
            freezer = (groups.folders["freezer"] / "freezer.state").read_text().strip()
        still = bot.cpu_seconds()
        await asyncio.sleep(0.5)
        spent = bot.cpu_seconds() - still
        bot.thaw()
        await asyncio.sleep(0.3)
        return _Cycle(before, frozen, spent, {_state(p) for p in bot.processes()}, freezer)
    finally:
        await bot.stop()


def _state(pid: int) -> str:
    fields = procs.stat(pid)
    return fields[0] if fields else "gone"


def _readable(tmp_path: Path, name: str, text: str) -> Path:
    """A script in a folder of its own that a bot under a uid of its own can read (pytest's own
    folder is not: a sandboxed bot started from there exits at once)."""
    folder = tmp_path / "bot"
    folder.mkdir()
    folder.chmod(0o755)
    script = folder / name
    script.write_text(text)
    return script


def _tagged(tag: str, program: str = "") -> list[int]:
    """Live processes whose arguments name ``tag``; with ``program``, only those running it."""
    found = []
    for pid in procs.pids():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if tag.encode() not in argv or (program and argv.split(b"\0")[0] != program.encode()):
            continue
        if procs.alive(pid):
            found.append(pid)
    return found


LAUNCHING_ARENA = """
import asyncio, sys
from arena.bots.launcher import BotProcess
from arena.bots.limits import Limits

async def main():
    sock, mode, command = sys.argv[1], sys.argv[2], sys.argv[3]
    await BotProcess.start("b", command, "127.0.0.1:1", "tok", None, Limits(sandbox=mode),
                           socket=sock)
    print("started", flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_bots_die_with_the_arena(tmp_path: Path, referee_socket: str, mode: str) -> None:
    """An arena killed with SIGKILL runs no clean-up: its bots go anyway (issue 14.7). Isolated, with
    every descendant (its PID namespace ends); light, the bot itself (a parent-death signal)."""
    tag = f"orphan-{secrets.token_hex(6)}"
    grandchild = (
        "import os, subprocess, sys, time\n"
        "if sys.argv[2] == 'auto':\n"
        "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', sys.argv[1]],"
        " process_group=0, env={})\n"  # a session of its own is refused (seccomp)
        "time.sleep(600)\n"
    )
    script = _readable(tmp_path, "never_talks.py", grandchild)
    command = shlex.join([sys.executable, str(script), tag, mode])
    arena = subprocess.Popen(
        [sys.executable, "-c", LAUNCHING_ARENA, referee_socket, mode, command],
        stdout=subprocess.PIPE,
        text=True,
    )

    def running() -> list[int]:
        """The bot's Python processes, not the arena's (its arguments name the tag too) nor the
        sandbox's wrappers, which live while the bot starts even if it cannot run."""
        return [pid for pid in _tagged(tag, sys.executable) if pid != arena.pid]

    try:
        assert arena.stdout is not None
        assert arena.stdout.readline().strip() == "started"
        expected = 2 if mode == "auto" else 1  # the bot and its grandchild
        deadline = time.monotonic() + 60
        while len(running()) < expected and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(running()) == expected
        arena.send_signal(signal.SIGKILL)
        arena.wait(30)
        deadline = time.monotonic() + 30
        while _tagged(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _tagged(tag) == []
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()
        procs.kill_all(_tagged(tag))


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_a_start_called_off_half_way_leaves_nothing_behind(
    tmp_path: Path, referee_socket: str, mode: str
) -> None:
    """A game called off while its bots start (another game filled the disk, Ctrl-C) cancels their
    starts: whenever a start is called off, whatever it had begun goes with it, before the arena
    goes on. (asyncio's own clean-up killed only bubblewrap's first process; its init in the new
    PID namespace, not yet bound to die with its parent, lived on, and the bot with it.)"""
    tag = f"halfway-{secrets.token_hex(6)}"
    script = _readable(tmp_path, "sleeper.py", "import time\ntime.sleep(600)\n")
    command = shlex.join([sys.executable, str(script), tag])
    limits = Limits(sandbox=mode)

    def start() -> asyncio.Task[BotProcess]:
        return asyncio.ensure_future(
            BotProcess.start(
                "b", command, "127.0.0.1:1", "tok", None, limits, socket=referee_socket
            )
        )

    async def main() -> int:
        loop = asyncio.get_running_loop()
        whole = 1.0
        for _ in range(3):
            began = loop.time()
            bot = await start()
            whole = min(whole, loop.time() - began)
            # The bot itself runs (not only the sandbox's wrappers): what is called off is a start
            # that would have run it.
            deadline = loop.time() + 30
            while not _tagged(tag, sys.executable) and loop.time() < deadline:
                await asyncio.sleep(0.05)
            assert _tagged(tag, sys.executable), "the sleeper never ran"
            await bot.stop()
        # Called off all along a start, and a little after. A start's length moves with the
        # machine's load: a start that finished before it was called off bounds the length, and
        # more are tried (at most 80 in all) until enough were called off half-way.
        called_off = tried = 0
        while tried < 20 or (called_off < 8 and tried < 80):
            task = start()
            began = loop.time()
            await asyncio.sleep(whole * (tried % 20) / 16)
            task.cancel()
            tried += 1
            try:
                bot = await task
            except asyncio.CancelledError:
                called_off += 1
                continue
            whole = min(whole, loop.time() - began)
            await bot.stop()
        return called_off

    folders = set(os.listdir(scratch.run_dir()))
    try:
        assert asyncio.run(main()) >= 8  # called off while starting, not only after
        deadline = time.monotonic() + 10  # the kernel ends a PID namespace in its own time
        while _tagged(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _tagged(tag) == []
        assert set(os.listdir(scratch.run_dir())) == folders  # no working folder left (light)
    finally:
        procs.kill_all(_tagged(tag))


NS_LAST_PID = Path("/proc/sys/kernel/ns_last_pid")


def can_choose_the_next_pid() -> bool:
    """Whether this process may set the kernel's next pid. The file's mode lets every user write;
    the write itself needs CAP_SYS_ADMIN (os.access says yes to a user without it)."""
    try:
        NS_LAST_PID.write_text(NS_LAST_PID.read_text())
    except OSError:
        return False
    return True


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_stopping_a_bot_that_has_exited_kills_no_process_that_took_its_pid(
    tmp_path: Path, referee_socket: str, mode: str
) -> None:
    """Pids are reused (32768 of them, on many machines). A bot stopped after its process had
    exited and been reaped was still sent SIGKILL by its first process's pid and process group:
    another bot's first process, started meanwhile in a session of its own under that pid, was
    killed. The kernel's next pid is set here to make the reuse happen at once."""
    if not can_choose_the_next_pid():
        pytest.skip("the next pid cannot be chosen here (root is needed)")

    async def go() -> int | None:
        for _ in range(20):
            bot = await BotProcess.start(
                "gone", "true", "127.0.0.1:1", "tok", None, Limits(sandbox=mode),
                socket=referee_socket,
            )  # fmt: skip
            await asyncio.wait_for(bot.wait(), 60)
            deadline = time.monotonic() + 10  # its session's id is free once all of it is gone
            while procs.in_group(bot.proc.pid) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            for _ in range(100):
                NS_LAST_PID.write_text(str(bot.proc.pid - 1))
                other = subprocess.Popen(["sleep", "60"], start_new_session=True)
                if other.pid == bot.proc.pid:
                    break
                other.kill()
                other.wait()
            else:
                await bot.stop()
                continue
            try:
                await bot.stop()
                await asyncio.sleep(0.2)
                return other.poll()
            finally:
                other.kill()
                other.wait()
        pytest.skip("no process could be given the pid of the bot that exited")

    assert asyncio.run(go()) is None  # the other process is alive


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid pool serves an arena running as root")
def test_every_bot_gets_a_uid_of_its_own_and_nothing_survives_under_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = uids.lease(), uids.lease()
    try:
        assert first.uid != second.uid
    finally:
        first.release()
        second.release()
    # A process left under a uid (as by an arena killed before its clean-up) dies when the uid is
    # leased again.
    monkeypatch.setenv(uids.ENV, f"{first.uid}:1")
    sleeper = subprocess.Popen(["sleep", "600"], user=first.uid, group=first.uid, extra_groups=[])
    try:
        again = uids.lease()
        assert again.uid == first.uid
        assert sleeper.wait(30) == -signal.SIGKILL
        again.release()
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()
