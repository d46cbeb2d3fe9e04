"""Confining one bot process: the probe of what this machine can do, and the command that runs a bot
under it.

Isolated (bubblewrap) — each bot process in its own user, PID, IPC, mount, UTS and network namespaces,
in a session of its own (no terminal to write to), seeing only what :mod:`arena.sandbox.mounts` shows,
unable to make further user namespaces. When the arena runs as root the mounts are made by a privileged
bubblewrap (so that a runtime under a private folder such as ``/root`` can be shown), which then drops
to a uid of the pool (:mod:`arena.sandbox.uids`) with no capabilities and ``no_new_privs``, and an
unprivileged bubblewrap makes the bot's user namespace and its home. Otherwise one unprivileged
bubblewrap does it all under the arena's own uid.

Light (``none``, or ``auto`` where isolation is unavailable) — the bot runs as the arena's user in its
own process group, in a working folder of its own, with the environment scrubbed; it can see the
machine as that user can.

In both, the resource limits are set by an exec wrapper (util-linux ``prlimit``) before the bot's first
instruction, so that a child it forks at once is bound too (the arena cannot run Python between fork
and exec: it has gRPC threads), and the bot dies with the arena: bubblewrap's ``--die-with-parent``
(its PID namespace takes every descendant with it), or in light mode a parent-death signal set by
``setpriv --pdeathsig`` (a small Python wrapper does both jobs where util-linux is missing). Those
command lines are built in :mod:`arena.sandbox.commands`; the control groups that hold a bot's
processes together, in :mod:`arena.sandbox.cgroups`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from arena.common.scratch_dirs import run_dir, scratch_dir
from arena.sandbox import cgroups, commands, mounts, procs, runtime, seccomp, uids, workspace
from arena.sandbox.rlimits import Rlimits

T = TypeVar("T")
P = TypeVar("P", bound=asyncio.BaseProtocol)

MODES = ("auto", "required", "none", "bubblewrap")  # bubblewrap: the old name of required
ISOLATING = ("required", "bubblewrap")


class SandboxError(Exception):
    """A bot cannot be confined as asked; the message says why."""


class SandboxUnavailable(SandboxError):
    """Isolation was required, and this machine cannot provide it (the message names what is
    missing)."""


@dataclass(frozen=True, slots=True)
class Probe:
    """Which mode will really run for a requested one, and why."""

    requested: str
    isolated: bool
    reason: str
    own_uids: bool = False  # each bot under a uid of its own (the arena runs as root)

    @property
    def mode(self) -> str:
        return "bubblewrap" if self.isolated else "light"

    def describe(self) -> str:
        """One line for the user, before the first game (with what control groups add)."""
        return f"{self._mode_line()}; {cgroups.available().describe()}"

    def _mode_line(self) -> str:
        if self.isolated:
            who = "under a uid of its own" if self.own_uids else "under this user's uid"
            return (
                "sandbox: bubblewrap: each bot in its own user, PID, IPC, mount and network "
                f"namespaces, {who}, seeing only its runtime and its own folder"
            )
        if self.requested == "none":
            return (
                "sandbox: light (--sandbox none): bots run as this user and can read what it can; "
                "use it only for bots you trust"
            )
        return (
            f"warning: sandbox: light, because {self.reason}: bots run as this user and can read "
            "what it can; use it only for bots you trust"
        )


# ------------------------------------------------------------------------------------- the probe

_probed: dict[int, tuple[bool, str]] = {}
_probe_lock = threading.Lock()


def probe(requested: str = "auto") -> Probe:
    """What ``requested`` (one of :data:`MODES`) will run as on this machine, and why. The first call
    tries a sandbox once (about 50 ms); later calls reuse the answer."""
    if requested not in MODES:
        raise ValueError(f"sandbox must be one of {', '.join(MODES)}, got {requested!r}")
    if requested == "none":
        return Probe(requested, False, "chosen explicitly")
    with _probe_lock:
        key = os.geteuid()
        if key not in _probed:
            _probed[key] = _try_isolation()
        works, reason = _probed[key]
    return Probe(requested, works, reason, own_uids=works and os.geteuid() == 0)


def require(requested: str) -> Probe:
    """The probe, raising :class:`SandboxUnavailable` when isolation is required and missing."""
    found = probe(requested)
    if requested in ISOLATING and not found.isolated:
        raise SandboxUnavailable(
            f"sandbox = {requested!r} needs bubblewrap isolation, which is unavailable: {found.reason}"
        )
    return found


def _try_isolation() -> tuple[bool, str]:
    if not sys.platform.startswith("linux"):
        return False, f"bubblewrap isolation needs Linux (this is {sys.platform})"
    missing = [t for t in _tools_needed() if shutil.which(t) is None]
    if missing:
        package = {"bwrap": "bubblewrap", "prlimit": "util-linux", "setpriv": "util-linux"}
        names = ", ".join(f"{t} (Debian package: {package[t]})" for t in missing)
        return False, f"not installed: {names}"
    true = shutil.which("true") or "/bin/true"
    lease = None
    fds: tuple[int, ...] = ()
    try:
        if os.geteuid() == 0:
            lease = uids.lease()
        layout = mounts.Mounts()
        layout.layout(Rlimits().home_bytes, None if lease else Rlimits().home_bytes)
        fd = seccomp.filter_fd()  # as a bot's: a kernel that cannot load it is no isolation
        fds = (fd,) if fd is not None else ()
        argv = commands.isolated_argv(
            [true], Rlimits(), lease.uid if lease else None, layout, seccomp_fd=fd
        )
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=60, cwd="/", pass_fds=fds
        )
    except (OSError, subprocess.SubprocessError, uids.UidPoolError) as exc:
        return False, f"bubblewrap could not start: {exc}"
    finally:
        if lease is not None:
            lease.release()
        for each in fds:
            os.close(each)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return False, f"bubblewrap cannot make its namespaces here ({why})"
    return True, "bubblewrap works"


def _tools_needed() -> tuple[str, ...]:
    return ("bwrap", "prlimit", "setpriv") if os.geteuid() == 0 else ("bwrap", "prlimit")


# ------------------------------------------------------------------------------------- confinement


@dataclass(frozen=True, slots=True)
class RefereeAddress:
    """Where a bot finds the referee: TCP (light mode) and a Unix socket (any mode)."""

    tcp: str = ""  # HOST:PORT
    socket: str = ""  # a Unix socket's path


class Confinement:
    """One bot process's sandbox, from its launch to its end: the command to execute (wrappers
    included), its environment and working folder, how to find its processes, and what to release."""

    def __init__(
        self,
        probe: Probe,
        argv: list[str],
        env: dict[str, str],
        cwd: str,
        address: str,
        workdir: Path | None,
        lease: uids.UidLease | None,
        seccomp: int | None = None,
        groups: cgroups.BotGroups | None = None,
    ) -> None:
        self.probe = probe
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.address = address  # what the bot is told (ARENA_ADDRESS)
        self.workdir = workdir  # light mode: its folder on this machine (removed on release)
        self._lease = lease
        self.uid = lease.uid if lease is not None else None  # its uid (kept after release)
        self._namespace: str | None = None
        self._spawned: asyncio.SubprocessTransport | None = None
        self.seccomp = seccomp  # the seccomp filter's fd that argv names, until the bot has started
        self.groups = groups  # its control groups, where the machine has them (until release)
        self._out_of_memory = False

    @property
    def isolated(self) -> bool:
        return self.probe.isolated

    def spawn_options(self) -> dict[str, Any]:
        """Keyword arguments for ``subprocess``/``asyncio`` to start :attr:`argv` with. Isolated: a
        session of its own (no controlling terminal). Light: a process group of its own (a new session
        would put it in a scheduler autogroup of its own, which makes every round trip dearer)."""
        if self.isolated:
            fds = () if self.seccomp is None else (self.seccomp,)
            return {"env": self.env, "cwd": self.cwd, "start_new_session": True, "pass_fds": fds}
        return {"env": self.env, "cwd": self.cwd, "process_group": 0}

    async def spawn(
        self,
        protocol_factory: Callable[[], P],
        marker: tuple[str, str] | None = None,
        *,
        stdin: int,
        stdout: int,
        stderr: int,
    ) -> tuple[asyncio.SubprocessTransport, P]:
        """Start :attr:`argv` (asyncio's ``subprocess_exec`` with :meth:`spawn_options`).
        Cancelled while it starts, it still ends with nothing of the bot running: asyncio's own
        clean-up kills the first process only, and an isolated bot's bubblewrap may already have
        started its init in the new PID namespace, not yet bound to die with its parent, which then
        outlives the arena (and its bot with it)."""
        loop = asyncio.get_running_loop()
        started = loop.subprocess_exec(
            protocol_factory,
            *self.argv,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            **self.spawn_options(),
        )

        async def undo(spawned: tuple[asyncio.SubprocessTransport, P]) -> None:
            transport = spawned[0]
            self.kill(transport.get_pid(), marker)
            # Closed once asyncio has seen the exit: closing a transport whose process it has not
            # reaped yet has it reap the process behind its child watcher's back.
            for _ in range(500):
                if transport.get_returncode() is not None:
                    break
                await asyncio.sleep(0.01)
            transport.close()

        try:
            spawned = await completed_or_undone(started, undo)
        finally:
            self.close_filter()  # the bot's bubblewrap has its own copy (or never will)
        self._spawned = spawned[0]
        return spawned

    def close_filter(self) -> None:
        """Close the seccomp filter's fd (once the bot has started, or when it never will)."""
        if self.seccomp is not None:
            with contextlib.suppress(OSError):
                os.close(self.seccomp)
            self.seccomp = None

    def reaped(self, leader: int) -> bool:
        """Whether the leader, started by :meth:`spawn`, has exited and been waited for. Its pid is
        then free for the next process to take, and so is its process group's id once the group is
        empty: a signal sent by either may reach another bot."""
        spawned = self._spawned
        return (
            spawned is not None
            and spawned.get_pid() == leader
            and spawned.get_returncode() is not None
        )

    def kill(self, leader: int, marker: tuple[str, str] | None = None) -> None:
        """SIGKILL every process of the bot now: its members (see :meth:`members`) and its leader's
        process group, where bubblewrap's init is before a namespace can be found from it."""
        found = self.members(leader, marker)
        if self.groups is not None:
            found |= self.groups.members()
        if not self.reaped(leader):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(leader, signal.SIGKILL)
        procs.kill_all(found)

    def members(self, leader: int, marker: tuple[str, str] | None = None) -> set[int]:
        """The bot's processes now, the leader (the process the arena started) included. Isolated:
        every process of its PID namespace; light: its process group and the processes carrying its
        environment marker. Once the leader is reaped, nothing is found by its pid: isolated, its
        namespace ends with it (and the namespace's number goes to the next one made); light, its
        group is its own unless a process has taken the leader's pid (a group that still has a
        member keeps its id from being reused; an empty one may be another process's)."""
        reaped = self.reaped(leader)
        found = {leader} if not reaped and procs.alive(leader) else set()
        if self.isolated:
            namespace = None if reaped else self._pid_namespace(leader)
            if namespace is not None:
                found.update(procs.in_namespace(namespace))
            return found
        if not reaped or procs.stat(leader) is None:
            found.update(procs.in_group(leader))
        if marker is not None:
            found.update(procs.with_marker(*marker))
        return found

    @property
    def namespace(self) -> str | None:
        """Its PID namespace, once :meth:`members` has found it (isolated)."""
        return self._namespace

    def _pid_namespace(self, leader: int) -> str | None:
        """The namespace of the bot's processes: that of the leader's child (bubblewrap's init)."""
        if self._namespace is None:
            own = procs.pid_namespace(os.getpid())
            for child in procs.children(leader):
                ns = procs.pid_namespace(child)
                if ns is not None and ns != own:
                    self._namespace = ns
                    break
        return self._namespace

    @property
    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the bot because its processes together passed its
        memory (known only where it has control groups; kept after release)."""
        if self.groups is not None and self.groups.out_of_memory():
            self._out_of_memory = True
        return self._out_of_memory

    def release(self) -> None:
        """Give back the uid (killing whatever still runs under it), remove the control groups
        (killing whatever still runs in them) and the working folder."""
        self.close_filter()
        if self.groups is not None:
            _ = self.out_of_memory  # read before the groups go
            self.groups.remove()
            self.groups = None
        if self._lease is not None:
            self._lease.release()
            self._lease = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)


async def completed_or_undone(step: Awaitable[T], undo: Callable[[T], Awaitable[None] | None]) -> T:
    """The result of ``step``, a bounded step that starts something (a process, a uid's lease).
    Cancelled before ``step`` is done, the step still runs to its end and ``undo`` (bounded too) is
    called with what it started, before the cancellation goes on: a cancellation must not leave a
    half-started bot behind that nothing will stop."""
    task = asyncio.ensure_future(step)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if task.cancelled():
            raise
        await _to_the_end(task)
        if not task.cancelled() and task.exception() is None:
            undone = undo(task.result())
            if undone is not None:
                await _to_the_end(asyncio.ensure_future(undone))
        raise


async def _to_the_end(task: asyncio.Future[Any]) -> None:
    """Wait until ``task`` is done, however often the waiting is cancelled (it is bounded)."""
    while not task.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({task})


def confine(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    mode: str = "auto",
    rlimits: Rlimits | None = None,
    referee: RefereeAddress | None = None,
    hide: Sequence[Path] = (),
    workdir: Path | None = None,
) -> Confinement:
    """The confinement of a bot started by ``argv`` (``{address}`` in it is replaced by the address
    the bot is to dial) with the environment ``env`` (already scrubbed by the caller; HOME, TMPDIR and
    ARENA_ADDRESS are set here). ``hide``: paths never shown to an isolated bot even inside a folder it
    may see. ``workdir``: a folder the process works in and may write (a submission's build, which
    talks to no referee); the caller makes it writable by :attr:`Confinement.uid`. Isolated, the
    process works in a tmpfs of ``home_bytes`` in its place, and what it leaves is copied back within
    that bound once none of its processes runs (:mod:`arena.sandbox.workspace`). Raises
    :class:`SandboxUnavailable` when ``mode`` requires isolation and there is none,
    :class:`SandboxError` when the bot cannot be confined."""
    found = require(mode)
    limits = rlimits or Rlimits()
    referee = referee or RefereeAddress()
    env = dict(env)
    groups = _groups(limits)
    try:
        confinement = _confined(found, argv, env, limits, referee, hide, workdir)
    except BaseException:
        if groups is not None:
            groups.remove()
        raise
    if groups is not None:
        confinement.argv[:0] = groups.join_argv()
        confinement.groups = groups
    return confinement


def _groups(limits: Rlimits) -> cgroups.BotGroups | None:
    """The bot's control groups (see :mod:`arena.sandbox.cgroups`), where the machine has them."""
    if not cgroups.available().folders or not (
        limits.address_space or limits.processes or limits.cpus or limits.freeze
    ):
        return None
    try:
        return cgroups.BotGroups(
            limits.address_space, limits.processes, limits.cpus, freeze=limits.freeze
        )
    except OSError as exc:
        raise SandboxError(f"cannot make the bot's control groups: {exc}") from exc


def _confined(
    found: Probe,
    argv: Sequence[str],
    env: dict[str, str],
    limits: Rlimits,
    referee: RefereeAddress,
    hide: Sequence[Path],
    workdir: Path | None,
) -> Confinement:
    if not found.isolated:
        return _light(found, argv, env, limits, referee, workdir)
    if not referee.socket and workdir is None:
        raise SandboxError("an isolated bot reaches the referee only through its Unix socket")
    argv = [a.replace("{address}", mounts.SOCKET_ADDRESS) for a in argv]
    env.update(HOME=mounts.HOME, TMPDIR=mounts.HOME, ARENA_ADDRESS=mounts.SOCKET_ADDRESS)
    try:
        lease = uids.lease() if os.geteuid() == 0 else None
    except uids.UidPoolError as exc:
        raise SandboxError(str(exc)) from exc
    try:
        shown = mounts.Mounts([*hide, run_dir()])
        # Under its own uid its home is made by the unprivileged bubblewrap (owned by that uid).
        shown.layout(limits.home_bytes, None if lease else limits.home_bytes)
        shown.show(runtime.runtime_folders(env) + _named(argv, env, workdir))
        if referee.socket:
            shown.bind(referee.socket, mounts.SOCKET)
        if workdir is not None:
            workdir = workdir.resolve()
            shown.show([Path(workspace.__file__).parent])
            shown.dir(str(workdir.parent))
            shown.tmpfs(str(workdir), limits.home_bytes, "0777")  # root's, when the arena is root
            shown.bind(str(workdir), workspace.RESULT)
        chdir = str(workdir) if workdir is not None else mounts.HOME
        fd = seccomp.filter_fd()
        try:
            full = [
                *commands.oom_first(),
                *commands.isolated_argv(
                    argv, limits, lease.uid if lease else None, shown, chdir, workdir, fd
                ),
            ]
        except BaseException:
            if fd is not None:
                os.close(fd)
            raise
    except BaseException:
        if lease is not None:
            lease.release()
        raise
    return Confinement(found, full, env, "/", mounts.SOCKET_ADDRESS, None, lease, fd)


def _named(argv: Sequence[str], env: Mapping[str, str], workdir: Path | None) -> list[Path]:
    """The folders of the command line to show. A build's (given a ``workdir``) is a submission's,
    written by its author: the folders it named were shown, the competition's data folder with them
    (every bot's build, the ledger), and its output goes back to that author. A build sees only the
    runtime, its own folder and the folder of a program found in the arena's ``PATH``."""
    if workdir is None:
        return runtime.command_folders(argv, env)
    program = argv[:1] if argv and os.sep not in argv[0] else []
    return runtime.command_folders(program, env)


def _light(
    found: Probe,
    argv: Sequence[str],
    env: dict[str, str],
    limits: Rlimits,
    referee: RefereeAddress,
    given: Path | None = None,
) -> Confinement:
    address = referee.tcp or (f"unix:{referee.socket}" if referee.socket else "")
    argv = [a.replace("{address}", address) for a in argv]
    workdir = given or scratch_dir("bot-")
    env.update(HOME=str(workdir), TMPDIR=str(workdir), ARENA_ADDRESS=address)
    wrapped = commands.light_wrapper(limits)
    # A given folder is the caller's to remove; a scratch folder goes with the confinement.
    owned = None if given is not None else workdir
    return Confinement(found, [*wrapped, *argv], env, str(workdir), address, owned, None)
