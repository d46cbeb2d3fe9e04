"""Bots under the sandbox (issue 12), with real bubblewrap: what a bot sees and may use. Its
processes (freezing, CPU, their end with the match and the arena, the uid pool) are
test_sandbox_processes.py's.

On CI these tests must not skip (.ci/run installs bubblewrap)."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import struct
from pathlib import Path

import pytest
from sandbox_helpers import PY, bot_script, require_the_sandbox

from arena.bots.launcher import BotProcess
from arena.bots.limits import Limits
from arena.common import scratch_dirs as scratch
from arena.competition import intake
from arena.competition.bundles import Manifest
from arena.referee import MatchConfig
from arena.sandbox import HOME, SOCKET, probe, require, seccomp, uids
from arena.service.match_manager import PlayerSpec
from arena.service.server import create_server

pytestmark = pytest.mark.slow
require_the_sandbox()

ROOT = Path(__file__).resolve().parents[2]


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
    command = bot_script(
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
    command = bot_script(
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
    command = bot_script(
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
    command = bot_script(
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


def test_a_sandboxed_bot_may_not_start_a_session_nor_use_io_uring(
    tmp_path: Path, referee_socket: str
) -> None:
    """A red-team finding: 32 busy processes, each in a session of its own, took 32 scheduler
    autogroups' share of the CPU against the opponent's one, which timed out. A sandboxed bot's
    processes stay in its session (setsid is refused, even to a child that leads no group), and
    io_uring, kernel surface no bot needs, is refused too; other calls, fork included, work. (On an
    architecture the filter does not know there is none.)"""
    if seccomp.program() is None:
        pytest.skip("no seccomp filter for this machine's architecture")
    command = bot_script(
        tmp_path / "bot",
        """
        import ctypes, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # a child leads no process group: only the filter refuses its setsid
            try:
                os.setsid()
                os.write(write, b"allowed")
            except OSError as exc:
                os.write(write, exc.strerror.encode())
            os._exit(0)
        os.waitpid(child, 0)
        out = {"setsid": os.read(read, 100).decode()}
        out["io_uring"] = (libc.syscall(425, 8, ctypes.c_void_p(0)), ctypes.get_errno())
        out["getpid"] = os.getpid() > 0
        print(json.dumps(out))
        """,
    )
    log = tmp_path / "probe.log"
    bot = asyncio.run(_run_once(command, referee_socket, log))
    assert bot.returncode == 0, log.read_text()
    out = json.loads(log.read_text().strip().splitlines()[-1])
    assert out == {"setsid": "Operation not permitted", "io_uring": [-1, 1], "getpid": True}


def test_the_seccomp_filter_refuses_what_it_lists_and_nothing_else() -> None:
    # The classic-BPF program, run here on a few calls, as the kernel would.
    for machine in ("x86_64", "aarch64"):
        code = seccomp.program(machine)
        assert code is not None and len(code) % 8 == 0
        audit, setsid, x32 = seccomp._ARCHES[machine]
        verdicts = {
            nr: _run_bpf(code, nr, audit)
            for nr in (0, 1, 39, 57, setsid, 425, 426, 427, 428, 0x40000000 + 39)
        }
        refused = {nr for nr, v in verdicts.items() if v != 0x7FFF0000}
        assert refused == {setsid, 425, 426, 427} | ({0x40000000 + 39} if x32 else set())
        assert _run_bpf(code, 39, 0x40000003) == 0x00050001  # another architecture: refused
    assert seccomp.program("sparc64") is None


def test_the_probe_loads_the_filter_as_a_bot_would(monkeypatch: pytest.MonkeyPatch) -> None:
    # A kernel that refuses the filter must not pass the probe and then fail every bot's start.
    from arena.sandbox import core

    assert core._try_isolation() == (True, "bubblewrap works")
    monkeypatch.setattr(seccomp, "program", lambda machine=None: bytes(8))  # no return: invalid
    isolated, why = core._try_isolation()
    assert not isolated and "seccomp" in why.lower(), why


def _run_bpf(code: bytes, nr: int, arch: int) -> int:
    """What a classic-BPF seccomp program returns for a call (the few instructions it uses)."""
    data = {0: nr, 4: arch}
    ops = [struct.unpack_from("=HBBI", code, i) for i in range(0, len(code), 8)]
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = ops[pc]
        if op == 0x20:
            acc = data[k]
        elif op == 0x06:
            return k
        elif op in (0x15, 0x35):
            hit = acc == k if op == 0x15 else acc >= k
            pc += jt if hit else jf
        else:
            raise AssertionError(f"an instruction the filter does not use: {op:#x}")
        pc += 1


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
