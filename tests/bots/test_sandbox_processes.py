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

from arena import scratch
from arena.bots.launcher import BotProcess
from arena.bots.limits import Limits
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


# A bot whose forked child spins from its start, adding up the time it runs (the gaps in its own
# stream of clock readings are times it was stopped). The bot notes the child's running time at each
# of its replies and at each request; what ran in between ran off its turn. Its MatchOver has it print
# the most that ran in one such stretch since its first Welcome, and before which of the match's
# decisions.
WATCHED = """
import mmap, os, time

SHARED = memoryview(mmap.mmap(-1, 8)).cast("d")  # one 8-byte store or load an item (struct's tear)
if os.fork() == 0:  # before any thread starts
    parent, ran, last = os.getppid(), 0.0, time.monotonic()
    while os.getppid() == parent:
        for _ in range(10_000):
            now = time.monotonic()
            if now - last < 0.005:
                ran += now - last
            last = now
            SHARED[0] = ran
    os._exit(0)

from arena_bot.random_bot import RandomBot
from arena_bot.sdk import main_for


def running() -> float:
    return SHARED[0]


class Watched(RandomBot):
    name = "watched"
    mark = None
    most = (0.0, 0)
    decisions = 0

    def on_welcome(self, welcome):
        super().on_welcome(welcome)
        if self.mark is None:
            self.mark = running()

    def decide(self, view, legal, clock):
        off = running() - self.mark
        self.decisions += 1
        if off > self.most[0]:
            self.most = (off, self.decisions)
        choice = super().decide(view, legal, clock)
        self.mark = running()
        return choice

    def on_match_over(self, over):
        super().on_match_over(over)
        print(f"OFF-TURN {over.match_id} {self.most[0]:.3f} s before decision {self.most[1]}",
              flush=True)
        self.most, self.decisions = (0.0, 0), 0


main_for(Watched())
"""

# An opponent that thinks a second over the first decision of each game: the watched bot's
# wait for its first request of the game.
SLOW_STARTER = """
import time
from arena_bot.random_bot import RandomBot
from arena_bot.sdk import main_for


class SlowStarter(RandomBot):
    name = "slow"
    first = True

    def on_game_start(self, start):
        super().on_game_start(start)
        self.first = True

    def decide(self, view, legal, clock):
        if self.first:
            self.first = False
            time.sleep(1.0)
        return super().decide(view, legal, clock)


main_for(SlowStarter())
"""


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_a_frozen_bot_runs_on_none_of_its_opponents_turns(tmp_path: Path, mode: str) -> None:
    """With ``freeze``, a bot runs from its Welcome on only on its own turns: not while its opponent
    starts or plays the first turn of a game (the opponent leads every game here), nor while it
    waits in the pool for its next match. Each of those stretches let it run as long as it lasted
    (0.5 s before its first decision and before its first of the next game, 1.5 s before its first
    of the next match, with an opponent that thought half a second and a second in the pool); now
    at most what runs as its reply travels and its request does (8 ms here, 0.26 s on a machine
    loaded six times over: the bound is half the opponent's second)."""
    from arena.referee import MatchConfig, TimeControl
    from arena.service.manager import PlayerSpec
    from arena.service.server import create_server

    watched = bot_script(tmp_path / "watched", WATCHED)
    slow = bot_script(tmp_path / "slow", SLOW_STARTER)
    clock = TimeControl(budget_ms=5_000, bank_ms=20_000, grace_ms=1_000)
    limits = Limits(freeze=True, sandbox=mode)
    specs = [[PlayerSpec("watched", watched)], [PlayerSpec("slow", slow)]]

    async def go() -> list[str]:
        server, _, manager = await create_server("127.0.0.1:0", limits=limits)
        try:
            entries = []
            for seed in (1, 2):
                # Seat 0 deals every game: seat 1, the slow starter, leads each.
                config = MatchConfig(
                    seed=seed,
                    games=2,
                    time_control=clock,
                    game_seeds=(seed, seed + 10),
                    dealers=(0, 0),
                )
                entry = manager.create(config, specs, connect_timeout=120.0, matches_per_process=2)
                await manager.start(entry)
                await asyncio.wait_for(entry.done.wait(), 120)
                assert entry.record is not None, entry.error
                assert [g.outcome for g in entry.record.games] == ["normal"] * 2
                entries.append(entry)
                if seed == 1:
                    await asyncio.sleep(2.0)  # both wait in the pool
            assert entries[1].processes == []  # the second match was played by the pooled pair
            bot = next(p for p in entries[0].processes if p.name == "watched")
            await asyncio.wait_for(bot.wait(), 30)  # its quota played, it leaves
            await bot.output_done(5.0)
            return [line for line in bot.last_output(20) if line.startswith("OFF-TURN")]
        finally:
            await manager.close()
            await server.stop(None)

    lines = asyncio.run(go())
    assert len(lines) == 2, lines
    for line in lines:
        assert float(line.split()[2]) < 0.5, lines


# A bot that leaves its match without exiting: a forked child spins from its start, printing the
# monotonic clock's reading every 50 ms that it runs; the bot answers its first request and closes
# its stream at once ("close"), or never dials in at all ("absent"), and lives on.
LEAVER = """
import os, sys, time

if os.fork() == 0:  # before any thread starts
    parent, last = os.getppid(), 0.0
    while os.getppid() == parent:
        now = time.monotonic()
        if now - last >= 0.05:
            print(f"RAN {now:.3f}", flush=True)
            last = now
    os._exit(0)

if sys.argv[1] == "absent":
    time.sleep(600)

import queue

import grpc

from arena.wire.v1 import bot_pb2, bot_pb2_grpc

hello = bot_pb2.Hello(token=os.environ["ARENA_TOKEN"], name="leaver", protocol_version=1)
outgoing = queue.Queue()
outgoing.put(bot_pb2.BotMessage(hello=hello))


def send():
    while (message := outgoing.get()) is not None:
        yield message


with grpc.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
    call = bot_pb2_grpc.BotGatewayStub(channel).Play(send())  # held: a call let go is cancelled
    for message in call:
        if message.WhichOneof("body") == "request":
            req = message.request
            action = req.legal_actions[0].text
            reply = bot_pb2.Reply(request_id=req.request_id, match_id=req.match_id, action=action)
            outgoing.put(bot_pb2.BotMessage(reply=reply))
            outgoing.put(None)  # and the stream ends, right behind the reply
            break
    time.sleep(600)
"""

# An opponent that notes when each of its turns begins and ends, and takes a second and a half
# over each.
TIMED = """
import time
from arena_bot.random_bot import RandomBot
from arena_bot.sdk import main_for


class Timed(RandomBot):
    name = "timed"

    def decide(self, view, legal, clock):
        start = time.monotonic()
        time.sleep(1.5)
        print(f"TURN {start:.3f} {time.monotonic():.3f}", flush=True)
        return super().decide(view, legal, clock)


main_for(Timed())
"""


@pytest.mark.parametrize("how", ["close", "absent"])
def test_a_frozen_bot_that_leaves_its_match_runs_on_none_of_its_opponents_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """With ``freeze``, a bot that closes its stream right behind a reply (arriving once the bot is
    frozen), or that never dials in, is out of the match but alive: it was thawed (or never frozen)
    and ran on through its opponent's turns, to the end of the match. Now it stays frozen but on
    its own time (its next decision, which waits to learn whether it crashed)."""
    from arena.referee import MatchConfig, TimeControl
    from arena.service import ports
    from arena.service.manager import PlayerSpec
    from arena.service.server import create_server

    monkeypatch.setattr(ports, "SETTLE_SECONDS", 2.0)
    leaver = bot_script(tmp_path / "leaver", LEAVER) + f" {how}"
    timed = bot_script(tmp_path / "timed", TIMED)
    clock = TimeControl(budget_ms=5_000, bank_ms=20_000, grace_ms=1_000)
    logs = tmp_path / "logs"

    async def go() -> None:
        server, _, manager = await create_server(
            "127.0.0.1:0", logs_dir=logs, limits=Limits(freeze=True)
        )
        try:
            # The timed bot plays first: it leads when the leaver is absent (seat 1 deals then,
            # seat 0 leads), and answers the lead of a leaver that closes its stream.
            dealer = 0 if how == "absent" else 1
            config = MatchConfig(seed=1, games=1, time_control=clock, dealers=(dealer,))
            specs = [[PlayerSpec("leaver", leaver)], [PlayerSpec("timed", timed)]]
            entry = manager.create(config, specs, connect_timeout=3.0 if how == "absent" else 60)
            await manager.start(entry)
            await asyncio.wait_for(entry.done.wait(), 120)
            assert entry.record is not None, entry.error
            assert entry.record.games[0].culprit == 0, entry.record.games[0].detail
        finally:
            await manager.close()
            await server.stop(None)

    asyncio.run(go())
    (leaver_log,) = logs.glob("*-leaver.log")
    (timed_log,) = logs.glob("*-timed.log")
    ran = [float(line.split()[1]) for line in leaver_log.read_text().splitlines() if "RAN" in line]
    turns = [
        (float(line.split()[1]), float(line.split()[2]))
        for line in timed_log.read_text().splitlines()
        if line.startswith("TURN")
    ]
    assert ran and turns
    # Inside a turn's second and a half, with a margin for the freezing and thawing at its ends.
    during = [t for t in ran for start, end in turns if start + 0.25 < t < end - 0.25]
    assert len(during) <= 2, (during, turns)
