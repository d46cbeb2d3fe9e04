"""Bots under the sandbox (issue 12), with real bubblewrap: what a bot sees and may do, limits, freezing
and CPU accounting, and that every bot process dies with its match and with the arena.

On CI these tests must not skip (.ci/run installs bubblewrap)."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import scratch
from arena.bots.launcher import BotProcess
from arena.bots.limits import Limits
from arena.competition import intake
from arena.competition.bundles import Manifest
from arena.referee import MatchConfig
from arena.sandbox import HOME, SOCKET, probe, procs, require, uids
from arena.service.manager import PlayerSpec
from arena.service.server import create_server

pytestmark = pytest.mark.slow

if not probe("auto").isolated:
    why = probe("auto").reason
    if os.environ.get("CI"):
        pytest.fail(
            f"the sandbox is unavailable ({why}): .ci/run installs bubblewrap", pytrace=False
        )
    pytest.skip(f"the sandbox is unavailable: {why}", allow_module_level=True)

PY = shlex.quote(sys.executable)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def referee_socket(tmp_path: Path) -> Iterator[str]:
    """A Unix socket for the bot to be given (nobody answers on it)."""
    folder = tmp_path / "sock"
    folder.mkdir(mode=0o700)
    path = folder / "referee.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen()
    path.chmod(0o666)
    yield str(path)
    listener.close()


def _script(folder: Path, body: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "probe.py"
    path.write_text(textwrap.dedent(body))
    return f"{PY} {shlex.quote(str(path))}"


async def _run_once(
    command: str,
    sock: str,
    log: Path,
    limits: Limits | None = None,
    hide: tuple[Path, ...] = (),
) -> BotProcess:
    bot = await BotProcess.start(
        "probe", command, "127.0.0.1:1", "tok", log, limits, socket=sock, hide=hide
    )
    await asyncio.wait_for(bot.wait(), 120)
    await bot.stop()
    return bot


def test_the_probe_says_which_mode_runs_and_why() -> None:
    auto = probe("auto")
    assert auto.isolated and auto.mode == "bubblewrap"
    assert "bubblewrap" in auto.describe()
    assert require("required").isolated and require("bubblewrap").isolated
    light = probe("none")
    assert not light.isolated and "--sandbox none" in light.describe()
    assert auto.own_uids == (os.geteuid() == 0)
    with pytest.raises(ValueError, match="sandbox"):
        probe("docker")


def test_what_a_sandboxed_bot_sees(
    tmp_path: Path, referee_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_API_KEY", "hunter2")
    outside = tmp_path / "outside.txt"
    outside.write_text("not for bots")
    folder = tmp_path / "bot"
    (folder / "data.txt").parent.mkdir(parents=True)
    (folder / "data.txt").write_text("mine")
    command = _script(
        folder,
        f"""
        import json, os
        out = {{"uid": os.getuid(), "cwd": os.getcwd(), "env": sorted(os.environ),
               "home": os.environ["HOME"], "tmpdir": os.environ["TMPDIR"],
               "address": os.environ["ARENA_ADDRESS"], "socket": os.path.exists({SOCKET!r}),
               "processes": len([p for p in os.listdir("/proc") if p.isdigit()])}}
        def attempt(what, action):
            try:
                action()
                out[what] = "ok"
            except OSError as exc:
                out[what] = type(exc).__name__
        attempt("write home", lambda: open("mine.txt", "w").write("x"))
        attempt("write tmp", lambda: open("/tmp/x", "w").write("x"))
        attempt("write usr", lambda: open("/usr/x", "w").write("x"))
        attempt("write own folder", lambda: open({str(folder / "new.txt")!r}, "w").write("x"))
        attempt("read own folder", lambda: open({str(folder / "data.txt")!r}).read())
        attempt("read outside", lambda: open({str(outside)!r}).read())
        attempt("list scratch", lambda: os.listdir({str(scratch.run_dir())!r}))
        attempt("list project", lambda: os.listdir({str(ROOT)!r}))
        out["project"] = sorted(os.listdir({str(ROOT)!r})) if out["list project"] == "ok" else []
        out["home owner"] = os.stat(".").st_uid
        print(json.dumps(out))
        """,
    )
    log = tmp_path / "probe.log"
    bot = asyncio.run(_run_once(command, referee_socket, log))
    assert bot.returncode == 0, log.read_text()
    out = json.loads(log.read_text().strip().splitlines()[-1])
    if os.geteuid() == 0:
        assert out["uid"] in uids.uid_range()  # a uid of its own, not root
    assert out["cwd"] == out["home"] == out["tmpdir"] == HOME
    assert out["home owner"] == out["uid"]
    assert out["address"] == f"unix:{SOCKET}" and out["socket"]
    assert "SECRET_API_KEY" not in out["env"] and "ARENA_TOKEN" in out["env"]
    assert out["processes"] <= 4  # its own: nobody else's
    assert out["write home"] == out["write tmp"] == "ok"
    assert out["write usr"] != "ok" and out["write own folder"] != "ok"  # read-only
    assert out["read own folder"] == "ok"
    assert out["read outside"] == "FileNotFoundError"  # not in its view at all
    assert out["list scratch"] == "FileNotFoundError"  # other bots' folders, the referee's socket
    # The project folder (where the default ledger lives) shows only the runtime inside it.
    assert "pyproject.toml" not in out["project"] and "tests" not in out["project"]
    assert not (folder / "new.txt").exists() and not Path("/usr/x").exists()


def test_a_hidden_path_named_on_the_command_line_stays_hidden(
    tmp_path: Path, referee_socket: str
) -> None:
    folder = tmp_path / "bot"
    ledger = folder / "arena.sqlite"
    command = _script(
        folder,
        """
        import os, sys
        for path in sys.argv[1:]:
            print(path.rsplit("/", 1)[-1], os.path.exists(path))
        """,
    )
    ledger.write_text("secret")
    (folder / "arena.sqlite-wal").write_text("secret")
    (folder / "link").symlink_to(ledger)
    (folder / "notes.txt").write_text("public")
    args = " ".join(shlex.quote(str(folder / n)) for n in ("arena.sqlite", "arena.sqlite-wal"))
    args += f" {shlex.quote(str(folder / 'link'))} {shlex.quote(str(folder / 'notes.txt'))}"

    log = tmp_path / "probe.log"
    asyncio.run(_run_once(f"{command} {args}", referee_socket, log, Limits(), hide=(ledger,)))
    out = log.read_text()
    assert "arena.sqlite False" in out and "arena.sqlite-wal False" in out
    assert "link False" in out  # a link to it leads nowhere
    assert "notes.txt True" in out


def test_a_hidden_path_stays_hidden_when_its_folder_is_named_through_a_link(
    tmp_path: Path, referee_socket: str
) -> None:
    """Bubblewrap binds what a link leads to: a bot's folder named through a link to the folder of
    the ledger (a tournament folder reached through a link, say) was shown whole, ledger and all, as
    the hidden path was compared with the name and not with what it leads to."""
    real = tmp_path / "tournament"
    ledger = real / "arena.sqlite"
    command = _script(
        real,
        """
        import os, sys
        here = os.path.dirname(sys.argv[0])
        print("listed", sorted(os.listdir(here)))
        print("ledger", os.path.exists(os.path.join(here, "arena.sqlite")))
        """,
    )
    ledger.write_text("secret")
    (tmp_path / "link").symlink_to(real)
    command = command.replace(str(real), str(tmp_path / "link"))

    log = tmp_path / "probe.log"
    asyncio.run(_run_once(command, referee_socket, log, Limits(), hide=(ledger,)))
    out = log.read_text()
    assert "listed ['probe.py']" in out  # its own script, run through the link
    assert "ledger False" in out


def test_a_bots_folder_cannot_name_another_folder_to_be_shown(
    tmp_path: Path, referee_socket: str
) -> None:
    """A bot's folder holding a ``bin`` folder and a ``pyvenv.cfg`` is taken for a virtual
    environment, whose base installation (its ``home``) is shown too: a ``home`` in the folder of
    every bot showed the bot every other bot's files, its command line being only its program."""
    bots = tmp_path / "bots"
    (bots / "other").mkdir(parents=True)
    (bots / "other" / "bot.py").write_text("their strategy")
    mine = bots / "mine"
    (mine / "bin").mkdir(parents=True)
    (mine / "pyvenv.cfg").write_text(f"home = {bots / 'bin'}\n")
    run = mine / "bin" / "run"
    run.write_text(
        f"#!/usr/bin/env python3\nimport os\nprint('seen', os.path.exists({str(bots / 'other')!r}))\n"
    )
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o755)

    log = tmp_path / "probe.log"
    asyncio.run(_run_once(str(run), referee_socket, log, Limits()))
    out = log.read_text()
    assert "seen False" in out, out


def test_a_sandboxed_bot_is_the_first_the_oom_killer_takes(
    tmp_path: Path, referee_socket: str
) -> None:
    """A machine out of memory loses bots before the arena: a bot and the processes it starts have
    the highest OOM score adjustment. The kernel lets a process lower its own, to the arena's at
    most (no lower)."""
    command = _script(
        tmp_path / "bot",
        """
        import json, subprocess, sys
        def adjustment():
            with open("/proc/self/oom_score_adj") as f:
                return int(f.read())
        read = "print(open('/proc/self/oom_score_adj').read())"
        child = subprocess.run([sys.executable, "-c", read], capture_output=True, text=True)
        out = {"bot": adjustment(), "child": int(child.stdout)}
        try:
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("-1000")
        except OSError as exc:
            out["below"] = type(exc).__name__
        print(json.dumps(out))
        """,
    )
    log = tmp_path / "probe.log"
    bot = asyncio.run(_run_once(command, referee_socket, log))
    assert bot.returncode == 0, log.read_text()
    out = json.loads(log.read_text().strip().splitlines()[-1])
    assert out["bot"] == out["child"] == 1000
    assert out["below"] == "PermissionError"  # not under everyone else's, the referee's


def test_cpu_time_and_freezing_work_in_the_sandbox(tmp_path: Path, referee_socket: str) -> None:
    command = _script(tmp_path / "spin", "while True:\n    pass\n")
    spent, frozen, _, thawed = asyncio.run(_freeze_cycle(command, referee_socket, 0.5))
    assert spent >= 0.5
    assert frozen == {"T"}
    assert "T" not in thawed


def test_a_process_that_leaves_the_process_group_is_frozen_too(
    tmp_path: Path, referee_socket: str
) -> None:
    """A child in a session of its own (``setsid``) is out of reach of the group's SIGSTOP: it ran
    on, spinning, through every turn of the opponent's."""
    command = _script(
        tmp_path / "apart",
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            while True:
                pass
        while True:
            time.sleep(1)
        """,
    )
    _, frozen, spent, thawed = asyncio.run(_freeze_cycle(command, referee_socket, 0.3))
    assert frozen == {"T"}
    assert spent < 0.05
    assert "T" not in thawed


async def _freeze_cycle(
    command: str, sock: str, warm: float
) -> tuple[float, set[str], float, set[str]]:
    """Start a bot with ``freeze`` on, let it spend ``warm`` seconds of CPU, freeze it, then thaw
    it: (the CPU it spent before the freeze, its processes' states frozen, the CPU it spent in half a
    second frozen, their states thawed)."""
    bot = await BotProcess.start(
        "spin", command, "127.0.0.1:1", "tok", None, Limits(freeze=True), socket=sock
    )
    try:
        deadline = time.monotonic() + 60
        while bot.cpu_seconds() < warm and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        before = bot.cpu_seconds()
        bot.freeze()
        await asyncio.sleep(0.3)
        frozen = {_state(p) for p in bot.processes()}
        still = bot.cpu_seconds()
        await asyncio.sleep(0.5)
        spent = bot.cpu_seconds() - still
        bot.thaw()
        await asyncio.sleep(0.3)
        return before, frozen, spent, {_state(p) for p in bot.processes()}
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
        " start_new_session=True, env={})\n"
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


def test_a_build_sees_nothing_its_command_line_names_outside_its_folder(tmp_path: Path) -> None:
    """A submission's build command is its author's, and its output goes back to the author: naming
    the competition's data folder (``../..`` from the build, or its full path) showed every other
    bot's build and the ledger to the build."""
    data = tmp_path / "data"
    (data / "builds" / "1").mkdir(parents=True)
    (data / "builds" / "1" / "bot.py").write_text("their strategy")
    (data / "arena.sqlite").write_text("the ledger")
    source = data / "bundles" / "mine"
    source.mkdir(parents=True)
    (source / "bot.py").write_text("pass\n")
    for path in [data, *data.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    look = "import os, sys; [print(p, sorted(os.listdir(p))) for p in sys.argv[1:]]"
    manifest = Manifest(
        "b", "1", "python", "{python} bot.py", f'{{python}} -c "{look}" ../.. {data / "builds"}'
    )
    built = data / "builds" / "2"
    outcome = asyncio.run(intake.build(manifest, source, built, Limits(sandbox="required"), 60))
    assert outcome.ok, outcome.log
    assert "their strategy" not in outcome.log and "arena.sqlite" not in outcome.log
    assert f"{data} ['builds']" in outcome.log  # only the way to its own folder
    assert f"{data / 'builds'} ['2']" in outcome.log
    intake._remove(built)


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


def test_the_example_bots_play_a_sandboxed_match() -> None:
    """The Python SDK's bots (which import the arena package) and the Node bot (with its
    node_modules) find their runtime in the sandbox."""
    node = shutil.which("node")
    js = ROOT / "clients" / "javascript"
    if node is None or not (js / "node_modules").is_dir():
        if os.environ.get("CI"):
            pytest.fail("node and clients/javascript/node_modules are needed (.ci/run)")
        pytest.skip("node or clients/javascript/node_modules is missing")

    async def go() -> list[str]:
        server, _, manager = await create_server()
        try:
            entry = manager.create(
                MatchConfig(seed=3, games=2),
                [
                    [PlayerSpec("greedy", f"{PY} -m arena_bot.greedy_bot")],
                    [PlayerSpec("js", f"node {shlex.quote(str(js / 'bot.js'))}")],
                ],
                120.0,
                Limits(sandbox="required"),
            )
            await manager.start(entry)
            await asyncio.wait_for(entry.done.wait(), 300)
            assert entry.record is not None, entry.error
            assert all(p.isolated for p in entry.processes)
            return [f"{g.outcome} {g.detail}".strip() for g in entry.record.games]
        finally:
            await manager.close()
            await server.stop(None)

    assert asyncio.run(go()) == ["normal", "normal"]


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
