"""A bot's processes held together to its memory, its process count and its CPUs, by control groups.

The resource limits a bot starts with bind each of its processes alone: ``memory_mb`` is every
process's address space, and ``processes`` counts the processes of a uid (the arena's own, in light
mode). A bot that forks N processes may use N times its memory. Where this machine lets the arena make
control groups (the ``memory`` and ``pids`` controllers of cgroup v1, writable by the arena: a root
arena on most machines that mount them), each bot process gets a group of its own in each
controller, made before it starts: its processes together, its sandbox's home with them (a tmpfs is
charged to whoever writes it), may hold ``memory_mb`` of memory (swap included, where the kernel
counts it), and ``processes`` tasks (threads included). Past the memory, the kernel's OOM killer
takes a process of that group, never another's; past the count, a fork fails. Where the ``cpu``
controller can be used too, the bot's processes together run on at most ``cpus`` CPUs' worth of time
(a CFS quota): a bot that forked busy processes took the machine's every core, and its opponent,
timed by the clock, lost its thinking time to it. Where the ``freezer`` controller can be used, a bot
under the ``freeze`` option is stopped between its turns by freezing its group: every process in it at
once, those it forks meanwhile included, and none can wake another (a stopped process can be continued
by a sibling that a signal has not stopped yet, and two bots' processes continuing each other ran on
through the opponent's turns).

The bot joins its groups before its first instruction: the first program its command line runs is a
shell that writes its own pid into each group's ``cgroup.procs`` and then executes the rest, so that
every process it forks is born inside (the arena cannot run Python between fork and exec; see
:mod:`arena.sandbox.core`). An isolated bot cannot leave them: it runs under a uid that cannot write
the groups' files, in a mount namespace that does not show them. A light bot runs as the arena's
user and is trusted anyway.

The groups of one arena process live under a folder named after its pid, beside the arena's own
group; a later arena removes the folders of arenas that are gone. Where no controller can be used
(cgroup v2 alone, or no rights), :func:`available` says why and the per-process limits are all there
is.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox import procs

CONTROLLERS = ("memory", "pids")  # needed: without both, no groups at all
# Every controller used, the freezer and cpu where they can be, in the order groups are made, swept
# and removed. The freezer comes first: a frozen process
# cannot die, so a group is thawed before its processes are killed, and a dead arena's freezer groups
# are swept before its other folders, whose kills would otherwise wait on them.
ORDER = ("freezer", *CONTROLLERS, "cpu")
PREFIX = "bezique-arena-"
# The shell that puts itself in the groups named by its arguments, then executes the command after
# "--": every descendant of the bot is born in them.
_JOIN = (
    'for g; do shift; [ "$g" = -- ] && break; echo $$ > "$g" || '
    '{ echo "arena: the bot could not join its control group ($g)" >&2; exit 125; }; done; '
    'exec "$@"'
)
SHELL = "/bin/sh"


@dataclass(frozen=True, slots=True)
class Found:
    """The arena's own group in each usable controller (a folder it may make groups in), or why
    there is none."""

    folders: dict[str, Path]
    reason: str

    def describe(self) -> str:
        if not self.folders:
            return f"cgroups: none ({self.reason}): memory_mb and processes bind each process alone"
        bound = "memory_mb, processes and cpus" if self.cpu else "memory_mb and processes"
        line = f"cgroups: each bot's processes together held to {bound}"
        if self.freezer:
            line += "; with freeze = true, frozen together between turns"
        return line if self.cpu and self.freezer else f"{line} ({self.reason})"

    @property
    def cpu(self) -> bool:
        """Whether a bot's CPUs can be held too (the cpu controller)."""
        return "cpu" in self.folders

    @property
    def freezer(self) -> bool:
        """Whether a bot's processes can be frozen together (the freezer controller)."""
        return "freezer" in self.folders


_found: tuple[int, Found] | None = None  # the pid that probed, and what it found
_lock = threading.Lock()
_serial = itertools.count(1)


def available() -> Found:
    """Which controllers this arena can make a bot's groups in (probed once per process: a group is
    made and removed in each; a forked child probes again, for a folder of its own that its parent's
    exit does not take away)."""
    global _found
    with _lock:
        if _found is None or _found[0] != os.getpid():
            _found = (os.getpid(), _probe())
        return _found[1]


def _probe() -> Found:
    if not os.path.exists("/proc/self/cgroup"):
        return Found({}, "this system has no control groups")
    try:
        own = _own_groups()
        mounts = _v1_mounts()
    except OSError as exc:
        return Found({}, f"cannot read the arena's control groups: {exc}")
    folders: dict[str, Path] = {}
    problems = []
    for controller in ORDER:
        if controller not in mounts or controller not in own:
            problems.append(f"no cgroup v1 {controller} controller mounted")
            continue
        base = mounts[controller] / own[controller].lstrip("/") / f"{PREFIX}{os.getpid()}"
        try:
            base.mkdir(exist_ok=True)
            trial = base / "probe"
            trial.mkdir(exist_ok=True)
            trial.rmdir()
        except OSError as exc:
            problems.append(f"cannot make a {controller} group: {exc.strerror or exc}")
            continue
        _sweep(base.parent)
        folders[controller] = base
    if any(c not in folders for c in CONTROLLERS):
        for base in folders.values():
            with contextlib.suppress(OSError):
                base.rmdir()
        return Found({}, "; ".join(problems))
    atexit.register(_leave, list(folders.values()))
    return Found(folders, "; ".join(problems))


def _leave(bases: list[Path]) -> None:
    """At the arena's exit: remove its folder of groups (each empty by then, or swept later)."""
    for base in bases:
        _remove_all(base)


def _remove_all(base: Path) -> None:
    """Remove an arena's folder of groups, killing whatever still runs in them."""
    with contextlib.suppress(OSError):
        for group in base.iterdir():
            if group.is_dir():
                _remove(group)
        base.rmdir()


def _own_groups() -> dict[str, str]:
    """The arena's group path in each cgroup v1 controller (/proc/self/cgroup)."""
    out = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _id, names, path = line.split(":", 2)
        for name in names.split(","):
            if name:
                out[name] = path
    return out


def _v1_mounts() -> dict[str, Path]:
    """Where each cgroup v1 controller is mounted (the mount's root is taken as the hierarchy's
    root: a container that mounts a subtree shows its own group as that root too)."""
    out: dict[str, Path] = {}
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] == "cgroup":
            for option in fields[3].split(","):
                if option in ORDER:
                    out.setdefault(option, Path(fields[1]))
    return out


def _sweep(parent: Path) -> None:
    """Remove the groups left by arenas that are gone (killed before they could)."""
    mine = f"{PREFIX}{os.getpid()}"
    with contextlib.suppress(OSError):
        for folder in parent.iterdir():
            match = re.fullmatch(re.escape(PREFIX) + r"(\d+)", folder.name)
            if folder.name != mine and match is not None and not procs.alive(int(match.group(1))):
                _remove_all(folder)


FROZEN, THAWED = "FROZEN", "THAWED"  # what a freezer group's freezer.state is told


class BotGroups:
    """One bot process's groups, from before its start to its end."""

    def __init__(self, memory_bytes: int, tasks: int, cpus: int = 0, freeze: bool = False) -> None:
        """Make the groups (raises OSError when the machine refuses). 0: no bound on that one; the
        cpu group is made only for a bound, and the freezer group only for ``freeze``, where the
        machine has the controller."""
        found = available()
        name = f"bot-{next(_serial)}"
        wanted = {"freezer": freeze and found.freezer, "cpu": cpus > 0 and found.cpu}
        used = [c for c in ORDER if wanted.get(c, True)]
        self.folders = {c: found.folders[c] / name for c in used}
        self._freezer: int | None = None  # freezer.state, open while the groups last
        made: list[Path] = []
        try:
            for folder in self.folders.values():
                folder.mkdir()
                made.append(folder)
            memory = self.folders["memory"]
            if memory_bytes > 0:
                (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
                swap = memory / "memory.memsw.limit_in_bytes"
                if swap.exists():  # the kernel counts swap: no more of it than of memory
                    with contextlib.suppress(OSError):
                        swap.write_text(str(memory_bytes))
            if tasks > 0:
                (self.folders["pids"] / "pids.max").write_text(str(tasks))
            if "cpu" in self.folders:
                cpu = self.folders["cpu"]
                period = int((cpu / "cpu.cfs_period_us").read_text())
                (cpu / "cpu.cfs_quota_us").write_text(str(cpus * period))
                burst = cpu / "cpu.cfs_burst_us"
                if burst.exists():
                    # A period's quota saved while idle (the opponent's turn) may be spent at once:
                    # a bot using its one CPU whose runtime's threads wake for a moment beside it
                    # is not stopped for the rest of a period, its clock running.
                    with contextlib.suppress(OSError):
                        burst.write_text(str(cpus * period))
            if "freezer" in self.folders:  # written on every turn: opened once
                self._freezer = os.open(self.folders["freezer"] / "freezer.state", os.O_WRONLY)
        except OSError:
            for folder in made:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise

    @property
    def freezes(self) -> bool:
        """Whether :meth:`freeze` can stop the bot (it has a freezer group)."""
        return self._freezer is not None

    def freeze(self) -> None:
        """Stop every process in the groups, and any it forks, until :meth:`thaw` (OSError if the
        kernel refuses). The kernel stops each as it next leaves a system call or is scheduled; none
        runs the bot's code meanwhile."""
        if self._freezer is not None:
            os.pwrite(self._freezer, FROZEN.encode(), 0)

    def thaw(self) -> None:
        if self._freezer is not None:
            os.pwrite(self._freezer, THAWED.encode(), 0)

    def join_argv(self) -> list[str]:
        """The start of the bot's command line: it joins the groups, then executes the rest."""
        procs = [str(folder / "cgroup.procs") for folder in self.folders.values()]
        return [SHELL, "-c", _JOIN, "arena-cgroup", *procs, "--"]

    def members(self) -> set[int]:
        """Every process in the groups now."""
        return {pid for folder in self.folders.values() for pid in _in(folder)}

    def out_of_memory(self) -> bool:
        """Whether the kernel has killed a process of the bot for passing its memory."""
        try:
            text = (self.folders["memory"] / "memory.oom_control").read_text()
        except OSError:
            return False
        found = re.search(r"^oom_kill (\d+)$", text, re.MULTILINE)
        return found is not None and int(found.group(1)) > 0

    def remove(self) -> None:
        """Kill whatever still runs in the groups and remove them (bounded: a group that will not
        empty is left for a later arena's sweep); the freezer group, thawed, goes first."""
        if self._freezer is not None:
            os.close(self._freezer)
            self._freezer = None
        for folder in self.folders.values():
            _remove(folder)


def _in(folder: Path) -> list[int]:
    """The processes in one group now (none once it is gone)."""
    try:
        return [int(p) for p in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _remove(folder: Path) -> None:
    deadline = time.monotonic() + 2.0
    with contextlib.suppress(OSError):  # a frozen process would not die
        (folder / "freezer.state").write_text(THAWED)
    while True:
        procs.kill_all(_in(folder))
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
