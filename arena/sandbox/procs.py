"""Finding a bot's processes in ``/proc`` (Linux): by PID namespace, by real uid, by process group, by
an environment marker, or by who holds a pipe. Each lookup reads only what it needs and skips processes
that vanish while it looks."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable, Iterator

PROC = "/proc"
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def pids() -> Iterator[int]:
    """Every process id visible in /proc."""
    try:
        entries = os.listdir(PROC)
    except OSError:
        return
    for name in entries:
        if name.isdigit():
            yield int(name)


def _read(path: str) -> bytes | None:
    """A small /proc file's bytes, or None once its process is gone. (Plain os calls: the lookups
    read a file of every process, and pathlib's layers made each read cost three times as much.)"""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state, ppid, pgrp, ...), or None."""
    data = _read(f"{PROC}/{pid}/stat")
    if data is None or b")" not in data:  # gone, or going while it was read
        return None
    return data.rsplit(b")", 1)[1].decode("ascii", "replace").split()


def alive(pid: int) -> bool:
    """Whether the process exists and is no zombie."""
    fields = stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of one process (0 when it is gone)."""
    fields = stat(pid)
    if fields is None:
        return 0.0
    try:
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (IndexError, ValueError):
        return 0.0


def children(pid: int) -> list[int]:
    """The direct children of a process."""
    found = []
    for p in pids():
        fields = stat(p)
        if fields is not None and len(fields) > 1 and fields[1] == str(pid):
            found.append(p)
    return found


def in_group(pgid: int) -> list[int]:
    """The processes of a process group."""
    found = []
    for p in pids():
        fields = stat(p)
        if fields is not None and len(fields) > 2 and fields[2] == str(pgid):
            found.append(p)
    return found


def pid_namespace(pid: int) -> str | None:
    """The PID namespace of a process (``pid:[4026532...]``), or None when it cannot be read."""
    try:
        return os.readlink(f"{PROC}/{pid}/ns/pid")
    except OSError:
        return None


def in_namespace(namespace: str) -> list[int]:
    """The processes of a PID namespace (as seen from this one)."""
    return [p for p in pids() if pid_namespace(p) == namespace]


def real_uid(pid: int) -> int | None:
    data = _read(f"{PROC}/{pid}/status")
    if data is None:
        return None
    try:
        for line in data.decode("utf-8", "replace").splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (IndexError, ValueError):
        return None
    return None


def of_uid(uid: int) -> list[int]:
    """The processes running under this uid: those whose /proc folder it owns (one stat each),
    confirmed by their real uid."""
    found = []
    for p in pids():
        try:
            owner = os.stat(f"{PROC}/{p}").st_uid
        except OSError:
            continue
        if owner == uid and real_uid(p) == uid:
            found.append(p)
    return found


def with_marker(name: str, value: str) -> list[int]:
    """The processes whose environment holds ``name=value``."""
    needle = f"{name}={value}".encode()
    found = []
    for p in pids():
        environ = _read(f"{PROC}/{p}/environ")
        if environ is not None and needle in environ.split(b"\0"):
            found.append(p)
    return found


def holding_pipe(inode: int) -> list[int]:
    """The processes with a descriptor open on this pipe: whoever still holds a bot's output."""
    target = f"pipe:[{inode}]"
    me = os.getpid()
    found = []
    for p in pids():
        if p == me:
            continue
        fd_dir = f"{PROC}/{p}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") == target:
                    found.append(p)
                    break
            except OSError:
                continue
    return found


def kill_all(processes: Iterable[int], sig: int = signal.SIGKILL) -> None:
    for p in processes:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, sig)
