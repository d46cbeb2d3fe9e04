"""The attacks of issue 12, each tried by a hostile bot beside a normal match, with the arena's default
settings (the sandbox on): the attack fails, the normal match and the attacker's opponent finish
normally, and nothing the bots started is left running. (Markup injection and the arena's own exit are
tried through the ``arena match`` command, in tests/cli/test_cli.py.)

Real bubblewrap: on CI these tests must not skip (.ci/run installs it).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import secrets
import shlex
import shutil
import sys
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from arena.bots.launcher import BotProcess
from arena.bots.limits import Limits
from arena.ledger import Ledger
from arena.referee import MatchConfig, TimeControl
from arena.sandbox import probe, procs, uids
from arena.service.match_manager import MatchEntry, MatchManager, PlayerSpec
from arena.service.server import ArenaServer, create_server
from arena.service.sockets import MAX_CONNECTIONS_PER_BOT

pytestmark = pytest.mark.slow

if not probe("auto").isolated:
    why = probe("auto").reason
    if os.environ.get("CI"):
        pytest.fail(
            f"the sandbox is unavailable ({why}): .ci/run installs bubblewrap", pytrace=False
        )
    pytest.skip(f"the sandbox is unavailable: {why}", allow_module_level=True)

ATTACKER = Path(__file__).resolve().parent / "bots" / "attacker.py"
PY = shlex.quote(sys.executable)
FIRST = f"{PY} -m arena_bot.first_bot"
TC = TimeControl(budget_ms=10_000, bank_ms=20_000, grace_ms=1_000)
WAIT_S = 240.0


def attacker(mode: str, *args: str, script: Path = ATTACKER) -> str:
    return shlex.join([sys.executable, str(script), mode, *args])


@dataclass
class Run:
    attack: MatchEntry
    beside: MatchEntry
    matches: int  # how many matches the server held at the end
    log: str  # the attacker's log
    namespaces: set[str] = field(default_factory=set)
    uids: set[int] = field(default_factory=set)
    # A file descriptor on each of those namespaces, held for as long as the run is looked at: the
    # kernel gives a dead namespace's number to the next namespace made (by a test beside this one),
    # unless something still holds the dead one.
    held: list[int] = field(default_factory=list)

    def hold(self, namespace: str) -> None:
        """Keep ``namespace`` (live now: one of our bots runs in it) from being reused."""
        if namespace in self.namespaces:
            return
        for pid in procs.in_namespace(namespace):
            try:
                fd = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY)
            except OSError:
                continue  # gone meanwhile
            if os.readlink(f"/proc/self/fd/{fd}") == namespace:  # our own descriptor: readable
                self.held.append(fd)
                self.namespaces.add(namespace)
                return
            os.close(fd)

    def reports(self) -> dict[str, str]:
        return dict(re.findall(r"^ATTACK ([^:]+): (.*)$", self.log, re.M))

    @property
    def processes(self) -> list[BotProcess]:
        return [*self.attack.processes, *self.beside.processes]


def outcome(entry: MatchEntry) -> str:
    assert entry.record is not None, entry.error
    (game,) = entry.record.games
    return f"{game.outcome} {game.detail}".strip()


def beside(
    tmp_path: Path,
    command: Callable[[ArenaServer, MatchManager, MatchEntry], str],
    *,
    config: MatchConfig | None = None,
    limits: Limits | None = None,
    admin: bool = False,
    hide: tuple[Path, ...] = (),
) -> Run:
    """A normal match between two first-legal bots, and, once it is under way, the attacker's match
    (the attacker at seat 0 against a first-legal bot); both played to the end."""
    logs = tmp_path / "logs"

    async def go() -> Run:
        server, _, manager = await create_server(
            logs_dir=logs, admin_address="127.0.0.1:0" if admin else None
        )
        manager.hide(*hide)
        try:
            normal = manager.create(
                MatchConfig(seed=6, time_control=TC),
                [[PlayerSpec("a", FIRST)], [PlayerSpec("b", FIRST)]],
                WAIT_S,
            )
            await manager.start(normal)
            ports = [p for seat in normal.players for p in seat]
            await asyncio.wait_for(asyncio.gather(*(p.attached.wait() for p in ports)), WAIT_S)
            bad = manager.create(
                config or MatchConfig(seed=5, time_control=TC),
                [
                    [PlayerSpec("attacker", command(server, manager, normal))],
                    [PlayerSpec("x", FIRST)],
                ],
                WAIT_S,
                limits,
            )
            await manager.start(bad)
            run = Run(bad, normal, 0, "")
            while not (bad.done.is_set() and normal.done.is_set()):
                for proc in run.processes:  # who they are, to look for leftovers afterwards
                    if proc.returncode is None:
                        proc.processes()
                        if proc.confinement.namespace:
                            run.hold(proc.confinement.namespace)
                    if proc.confinement.uid is not None:
                        run.uids.add(proc.confinement.uid)
                await asyncio.sleep(0.2)
            run.matches = len(manager.matches)
            weakref.finalize(run, _close_all, run.held)
            return run
        finally:
            await manager.close()
            await server.stop(None)

    run = asyncio.run(asyncio.wait_for(go(), WAIT_S * 2))
    run.log = "\n".join(
        p.read_text(errors="replace") for p in logs.glob(f"{run.attack.match_id}-seat0-*")
    )
    return run


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def leased_elsewhere(uid: int) -> bool:
    """Whether another arena (another test running beside this one) holds this uid now: its bot's
    processes are then its own, and whatever of ours ran under the uid was killed when it was leased."""
    fd = os.open(uids._lock_dir() / str(uid), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return False


def nothing_left(run: Run, tag: str = "") -> None:
    """No process of either match's bots, nor anything they started, is still running: by PID
    namespace, by the uids they ran under, by their environment marker and by a tag in the command
    line of what an attacker tried to leave behind."""

    # The bots were seen running and their namespaces held (the normal match's surely), or no
    # namespace would be looked at.
    assert run.namespaces or not any(p.isolated for p in run.processes)

    def left() -> list[int]:
        found = set()
        for proc in run.processes:
            if not proc.isolated:
                found |= proc.processes()
            elif procs.alive(proc.proc.pid):
                found.add(proc.proc.pid)  # what ran in its namespace: below, where it is held
        for namespace in run.namespaces:  # held (Run.hold): still ours, never another's
            found.update(procs.in_namespace(namespace))
        for uid in run.uids:
            if not leased_elsewhere(uid):
                found.update(procs.of_uid(uid))
        if tag:
            for pid in procs.pids():
                try:
                    if tag.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                        found.add(pid)
                except OSError:
                    continue
        return [p for p in found if procs.alive(p)]

    deadline = time.monotonic() + 20
    while left() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left() == []


# ------------------------------------------------------------------------------- 1. admin from a bot


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_a_bot_reaches_no_admin_service(tmp_path: Path, sandbox: str) -> None:
    run = beside(
        tmp_path,
        lambda server, manager, normal: attacker("admin", server.admin_address),
        limits=Limits(sandbox=sandbox),
        admin=True,
    )
    seen = run.reports()
    # The address a bot is given serves the bot gateway alone.
    assert seen["list-on-gateway"] == "refused UNIMPLEMENTED", run.log
    assert seen["start-on-gateway"] == "refused UNIMPLEMENTED", run.log
    if sandbox == "auto":  # no network at all: the admin listener cannot be reached
        assert seen["admin-tcp"].startswith("failed"), run.log
        assert seen["list-on-admin"].startswith("refused UNAVAILABLE"), run.log
    else:  # light mode: reachable on loopback, but every call needs the token
        assert seen["list-on-admin"] == "refused UNAUTHENTICATED", run.log
        assert seen["start-on-admin"] == "refused UNAUTHENTICATED", run.log
    assert run.matches == 2  # no match was started by the bot
    assert outcome(run.attack) == "normal" and outcome(run.beside) == "normal"
    nothing_left(run)


# ------------------------------------------------------------------------- 2. bots against each other


def test_a_bot_can_neither_signal_nor_read_another_bot(tmp_path: Path) -> None:
    def command(server: ArenaServer, manager: MatchManager, normal: MatchEntry) -> str:
        pids = sorted(p for proc in normal.processes for p in proc.processes())
        assert pids
        return attacker("kill", *map(str, pids))

    run = beside(tmp_path, command)
    seen = run.reports()
    kills = {k: v for k, v in seen.items() if k.startswith("kill-")}
    assert kills and all(v.startswith("failed") for v in kills.values()), run.log
    environs = {k: v for k, v in seen.items() if k.startswith("environ-")}
    assert environs and all(v.startswith("failed") for v in environs.values()), run.log
    assert seen["other-tokens"] == "0", run.log
    assert int(seen["visible-processes"]) <= 6, run.log  # its own few, not the machine's
    assert outcome(run.beside) == "normal"
    assert outcome(run.attack) == "normal"  # its own opponent was not harmed either
    nothing_left(run)


# ------------------------------------------------------------------------------ 3. escaping cleanup


def test_a_bot_leaves_nothing_running_after_its_match(tmp_path: Path) -> None:
    tag = f"escapee-{secrets.token_hex(6)}"
    run = beside(tmp_path, lambda server, manager, normal: attacker("escape", tag))
    assert "left a grandchild" in run.reports().get("escape", ""), run.log
    assert outcome(run.attack) == "normal" and outcome(run.beside) == "normal"
    nothing_left(run, tag)


# --------------------------------------------------------------------------------- 4. limits too late


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_limits_bind_a_child_forked_at_once(tmp_path: Path, sandbox: str) -> None:
    limits = Limits(
        memory_mb=256,
        cpu_seconds=60,
        processes=512,
        file_size_mb=8,
        open_files=256,
        sandbox=sandbox,
    )
    run = beside(tmp_path, lambda server, manager, normal: attacker("limits"), limits=limits)
    seen = run.reports()
    mib = 1024 * 1024
    assert seen["child-limits"] == f"{256 * mib},60,512,{8 * mib},256", run.log
    assert seen["child-alloc"] == "MemoryError", run.log
    assert outcome(run.attack) == "normal" and outcome(run.beside) == "normal"
    nothing_left(run)


# ------------------------------------------------------------------------------ 5. predictable deals


@pytest.mark.parametrize("secret", [True, False])
def test_a_deal_cannot_be_computed_from_its_public_seed(tmp_path: Path, secret: bool) -> None:
    config = MatchConfig(seed=5, time_control=TC, deal_key=os.urandom(32) if secret else b"")
    seed = str(config.game_seed(0))  # what a published tournament file gives away
    run = beside(tmp_path, lambda server, manager, normal: attacker("predict", seed), config=config)
    # With a secret the deal is out of reach; without one (the control) the same attack succeeds.
    assert run.reports()["predict"] == ("not predicted" if secret else "predicted"), run.log
    assert outcome(run.attack) == "normal" and outcome(run.beside) == "normal"
    nothing_left(run)


# -------------------------------------------------------------------------------- 6. reading the ledger


def test_a_bot_cannot_read_the_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "data" / "arena.sqlite"
    elsewhere.parent.mkdir()
    Ledger(elsewhere)  # a real ledger, outside the bot's view
    folder = tmp_path / "bot"
    folder.mkdir()
    script = folder / "attacker.py"
    shutil.copy(ATTACKER, script)
    beside_it = folder / "arena.sqlite"  # a ledger in the very folder of the bot's program
    shutil.copy(elsewhere, beside_it)
    (folder / "arena.sqlite-journal").write_bytes(b"the deal of the other copy")
    targets = [elsewhere, beside_it, folder / "arena.sqlite-journal", script]
    # The bot knows where the ledgers are (BOT_* settings reach a bot), as a hostile entrant would.
    monkeypatch.setenv("BOT_TARGETS", ":".join(map(str, targets)))
    run = beside(
        tmp_path,
        lambda server, manager, normal: attacker("read", script=script),
        hide=(beside_it,),  # as a tournament hides its ledger
    )
    seen = run.reports()
    for path in targets[:3]:
        assert seen[f"read {path}"].startswith("failed"), run.log
    assert seen[f"read {script}"].startswith("read "), run.log  # its own program, for contrast
    assert outcome(run.attack) == "normal" and outcome(run.beside) == "normal"
    nothing_left(run)


# --------------------------------------------------------------------- the network and user namespaces


def test_a_bot_has_no_network_and_makes_no_namespaces(tmp_path: Path) -> None:
    run = beside(tmp_path, lambda server, manager, normal: attacker("network"))
    seen = run.reports()
    assert seen["tcp"].startswith("failed") and seen["dns"].startswith("failed"), run.log
    assert outcome(run.attack) == "normal" and outcome(run.beside) == "normal"
    nothing_left(run)
    run = beside(tmp_path / "again", lambda server, manager, normal: attacker("users"))
    assert run.reports()["userns"].startswith("failed"), run.log
    assert outcome(run.attack) == "normal"
    nothing_left(run)


# ------------------------------------------------------------------- the referee's file descriptors


def test_a_bot_cannot_flood_the_referee_with_connections(tmp_path: Path) -> None:
    """A bot opened connection after connection on its socket to the referee: each holds one of the
    referee's file descriptors, and its processes may hold a thousand each, enough to leave the
    referee none for other bots or its own records. Its socket is its own and keeps at most
    MAX_CONNECTIONS_PER_BOT open (its stream among them): it plays on, as the match beside does."""
    run = beside(tmp_path, lambda server, manager, normal: attacker("connections", "200"))
    kept = re.fullmatch(r"kept (\d+) of 200", run.reports()["connections"])
    assert kept is not None, run.log
    assert 0 < int(kept[1]) < MAX_CONNECTIONS_PER_BOT, run.log  # its stream holds one more
    assert outcome(run.attack) == "normal" and outcome(run.beside) == "normal"
    nothing_left(run)
