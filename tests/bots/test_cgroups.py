"""A bot's processes held together to its memory and its process count by control groups, for real
(see arena.sandbox.cgroups): a bot that forks cannot use its memory once per process, nor start more
processes than it may, nor keep more than its CPUs busy, in either sandbox mode; its groups go with
it, and an arena that was killed leaves none behind for long, not even a frozen bot. (Freezing a
bot's group between its turns is tested with the other freeze tests, in test_sandbox_processes.py.)

They run where the arena can make control groups (cgroup v1's memory, pids, cpu and freezer
controllers; a root arena on the machines CI runs on); on CI they must not skip."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sandbox_helpers import bot_script, require_the_sandbox

from arena.bots.launcher import BotProcess
from arena.bots.limits import Limits
from arena.sandbox import cgroups, probe, procs

FOUND = cgroups.available()
if not FOUND.folders:
    if os.environ.get("CI"):
        pytest.fail(f"control groups are unavailable here: {FOUND.reason}", pytrace=False)
    pytest.skip(f"control groups are unavailable: {FOUND.reason}", allow_module_level=True)

MODES = ["auto", "none"]

# Four processes that each hold 150 MiB (each well within its own address space of 512 MiB), then
# report it and wait.
HOARDER = """
import os, sys, time
for _ in range(4):
    if os.fork() == 0:
        block = bytearray(150 * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        print("holding", flush=True)
        time.sleep(600)
        os._exit(0)
time.sleep(600)
"""


async def _started(tmp_path: Path, sock: str, body: str, limits: Limits) -> BotProcess:
    command = bot_script(tmp_path / "bot", body)
    return await BotProcess.start("b", command, "127.0.0.1:1", "tok", None, limits, socket=sock)


def _resident(pids: set[int]) -> int:
    """The resident memory of these processes together, in bytes."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except (OSError, ValueError):
            continue
    return total


def test_the_line_before_the_first_game_says_what_the_groups_bind() -> None:
    assert "each bot's processes together held to memory_mb, processes and cpus" in (
        probe("none").describe()
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_bot_cannot_use_its_memory_once_per_process(
    tmp_path: Path, referee_socket: str, mode: str
) -> None:
    async def scenario() -> tuple[bool, int]:
        limits = Limits(memory_mb=512, sandbox=mode)
        bot = await _started(tmp_path, referee_socket, HOARDER, limits)
        try:
            deadline = time.monotonic() + 60
            while not bot.confinement.out_of_memory and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            await asyncio.sleep(1.0)  # what is left settles
            return bot.confinement.out_of_memory, _resident(bot.processes())
        finally:
            await bot.stop()

    killed, resident = asyncio.run(scenario())
    assert killed, "the kernel never had to stop the bot's processes"
    assert resident <= 512 * 2**20  # the four cannot hold their 150 MiB each at once


@pytest.mark.parametrize("mode", MODES)
def test_a_bot_cannot_start_more_processes_than_it_may(
    tmp_path: Path, referee_socket: str, mode: str
) -> None:
    """Threads count too. As root, RLIMIT_NPROC binds no light bot at all (root's processes are
    never counted against it): only the group does."""
    body = """
    import threading, time
    started = 0
    try:
        for _ in range(200):
            threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
            started += 1
    except RuntimeError:
        pass
    print("threads", started, flush=True)
    time.sleep(600)
    """

    async def scenario() -> list[str]:
        bot = await _started(tmp_path, referee_socket, body, Limits(processes=40, sandbox=mode))
        try:
            deadline = time.monotonic() + 60
            while not any(line.startswith("threads") for line in bot.tail):
                assert time.monotonic() < deadline, list(bot.tail)
                await asyncio.sleep(0.1)
            return list(bot.tail)
        finally:
            await bot.stop()

    lines = asyncio.run(scenario())
    started = int(next(line for line in lines if line.startswith("threads")).split()[1])
    assert 0 < started < 40


@pytest.mark.parametrize("mode", MODES)
def test_a_bots_groups_go_with_it(tmp_path: Path, referee_socket: str, mode: str) -> None:
    async def scenario() -> list[Path]:
        bot = await _started(
            tmp_path, referee_socket, "import time\ntime.sleep(600)\n", Limits(sandbox=mode)
        )
        groups = bot.confinement.groups
        assert groups is not None
        folders = list(groups.folders.values())
        deadline = time.monotonic() + 30
        while not groups.members():  # the bot has joined them
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        await bot.stop()
        return folders

    folders = asyncio.run(scenario())
    assert folders and not any(folder.exists() for folder in folders)


def test_the_groups_of_a_killed_arena_are_swept(tmp_path: Path) -> None:
    """An arena killed with its bots running leaves its folder of groups; the next one removes it."""
    arena = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from arena.sandbox import cgroups\n"
            "groups = cgroups.BotGroups(64 * 2**20, 8)\n"
            "print(groups.folders['pids'].parent, flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert arena.stdout is not None
    left = Path(arena.stdout.readline().strip())
    arena.kill()
    arena.wait()
    assert left.is_dir() and left.name == f"{cgroups.PREFIX}{arena.pid}"
    code = "from arena.sandbox import cgroups; print(bool(cgroups.available().folders))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
    assert not left.exists()


def test_a_killed_arenas_frozen_bot_is_thawed_and_killed_by_the_next(tmp_path: Path) -> None:
    """A frozen process cannot die: the sweep thaws a dead arena's freezer groups before it kills
    what is in them, and sweeps them before its other groups, whose kills would wait on them."""
    if not FOUND.freezer:
        pytest.fail(f"no freezer controller here: {FOUND.reason}", pytrace=False)
    arena = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            "from arena.sandbox import cgroups\n"
            "groups = cgroups.BotGroups(64 * 2**20, 8, freeze=True)\n"
            "bot = subprocess.Popen([*groups.join_argv(), 'sleep', '600'])\n"
            "while len(groups.members()) < 1: time.sleep(0.01)\n"
            "groups.freeze()\n"
            "print(bot.pid, groups.folders['freezer'], groups.folders['memory'], flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert arena.stdout is not None
    pid, freezer, memory = arena.stdout.readline().split()
    arena.kill()
    arena.wait()
    # The kernel freezes a group's tasks as each next comes to a stop: the group reads FREEZING
    # until the last one has (on a loaded machine, a while after the write asked for it).
    state = Path(freezer) / "freezer.state"
    deadline = time.monotonic() + 30
    while state.read_text().strip() == "FREEZING" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert state.read_text().strip() == cgroups.FROZEN
    assert procs.alive(int(pid))
    code = "from arena.sandbox import cgroups; print(bool(cgroups.available().folders))"
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert not procs.alive(int(pid))
    # Every group gone: one whose process was still frozen when it was swept would have stayed.
    assert not Path(freezer).exists() and not Path(memory).exists()


def test_a_bot_killed_for_its_memory_is_told_so(tmp_path: Path, referee_socket: str) -> None:
    """Files in an isolated bot's home are memory (a tmpfs) that no address space counts: past
    memory_mb with them, the kernel kills the bot, and its crash says why."""
    require_the_sandbox()
    body = """
    import os
    for n in range(5):  # each file within file_size_mb
        with open(os.path.join(os.environ["HOME"], f"ballast{n}"), "wb") as out:
            for _ in range(40):
                out.write(b"x" * 2**20)
    print("written", flush=True)
    """

    async def scenario() -> tuple[str, list[str]]:
        bot = await _started(tmp_path, referee_socket, body, Limits(memory_mb=128, disk_mb=256))
        try:
            async with asyncio.timeout(60):
                await bot.proc.wait()
            return bot.exit_text(), list(bot.tail)
        finally:
            await bot.stop()

    text, lines = asyncio.run(scenario())
    assert "written" not in lines, lines
    assert "its processes together passed their memory (128 MiB" in text


SPINNERS = """
import os
for _ in range(3):
    if os.fork() == 0:
        break
while True:
    pass
"""


@pytest.mark.parametrize("mode", MODES)
def test_a_bot_keeps_at_most_its_cpus_busy(tmp_path: Path, referee_socket: str, mode: str) -> None:
    """Four busy processes took every core of the machine, and the opponent's clock ran on: they
    now share one CPU's time."""
    if not FOUND.cpu:
        pytest.fail(f"no cpu controller here: {FOUND.reason}", pytrace=False)

    async def scenario() -> tuple[str, float, float]:
        bot = await _started(tmp_path, referee_socket, SPINNERS, Limits(cpus=1, sandbox=mode))
        try:
            groups = bot.confinement.groups
            assert groups is not None
            quota = (groups.folders["cpu"] / "cpu.cfs_quota_us").read_text().strip()
            deadline = time.monotonic() + 30
            while len(groups.members()) < 4:  # all four spinning
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            start, spent = time.monotonic(), _cpu(groups.members())
            await asyncio.sleep(2.0)
            return quota, _cpu(groups.members()) - spent, time.monotonic() - start
        finally:
            await bot.stop()

    quota, spent, wall = asyncio.run(scenario())
    period = int((FOUND.folders["cpu"].parent / "cpu.cfs_period_us").read_text())
    assert quota == str(period)
    assert spent <= 1.2 * wall + 0.1, (spent, wall)


def test_without_a_cpu_bound_no_cpu_group_is_made() -> None:
    groups = cgroups.BotGroups(64 * 2**20, 8, cpus=0)
    try:
        assert set(groups.folders) == {"memory", "pids"}
    finally:
        groups.remove()


def _cpu(pids: set[int]) -> float:
    from arena.sandbox import procs

    return sum(procs.cpu_seconds(p) for p in pids)


# The parent probes, then forks; the child makes groups and says where. In a process of its own: a
# fork of this one, which has used gRPC, may abort in gRPC's fork handlers before it reports.
FORKED = """
import os, sys
from arena.sandbox import cgroups
parent = cgroups.available().folders["pids"]
read, write = os.pipe()
child = os.fork()
if child == 0:
    try:
        groups = cgroups.BotGroups(64 * 2**20, 8)
        os.write(write, str(groups.folders["pids"].parent).encode())
        groups.remove()
    finally:
        os._exit(0)
os.close(write)
with os.fdopen(read) as pipe:
    folder = pipe.read()
os.waitpid(child, 0)
print(parent, child, folder)
"""


def test_a_forked_child_makes_groups_in_a_folder_of_its_own() -> None:
    """Its parent's exit removes the parent's folder, and whatever runs in its groups with it."""
    done = subprocess.run(
        [sys.executable, "-c", FORKED], capture_output=True, text=True, timeout=60, check=True
    )
    parent, child, folder = done.stdout.split()
    assert Path(parent).parent == FOUND.folders["pids"].parent
    assert folder == str(Path(parent).parent / f"{cgroups.PREFIX}{child}")


def test_a_bot_that_cannot_join_its_groups_never_runs_and_says_why(tmp_path: Path) -> None:
    groups = cgroups.BotGroups(64 * 2**20, 8)
    try:
        argv = groups.join_argv()
        joined = subprocess.run(
            [*argv, sys.executable, "-c", "print(open('/proc/self/cgroup').read())"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert f"/{groups.folders['pids'].name}\n" in joined.stdout
        gone = tmp_path / "gone" / "cgroup.procs"
        refused = subprocess.run(
            [*argv[:4], str(gone), "--", sys.executable, "-c", "print('ran')"],
            capture_output=True,
            text=True,
        )
        assert refused.returncode == 125
        assert "ran" not in refused.stdout
        assert f"the bot could not join its control group ({gone})" in refused.stderr
    finally:
        groups.remove()
