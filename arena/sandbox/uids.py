"""A pool of unprivileged uids, one per sandboxed bot process while the arena runs as root.

Each bot runs under a uid of its own, so that no bot can signal, trace or read another's processes
even if it could see them, and its process limit (RLIMIT_NPROC counts per uid) is its own. A uid is
leased by taking an exclusive lock on a file named after it in a root-only folder: the lock is shared by
every arena process on the machine and is released by the kernel when its holder dies, so two arenas
never hand out the same uid at once and a killed arena's uids come back by themselves. A uid is handed
out only after any process still running under it (left by an arena that was killed) is killed.

The range is ``ARENA_SANDBOX_UIDS=FIRST:COUNT`` (default 1900000000:4096), far from the uids of
people, system services and the usual subordinate-id ranges; nothing on the machine should own files
under it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
import threading
from pathlib import Path

from arena.sandbox import procs

ENV = "ARENA_SANDBOX_UIDS"
DEFAULT_FIRST = 1_900_000_000
DEFAULT_COUNT = 4096
LOCK_DIR_NAME = "bezique-arena-uids"


class UidPoolError(Exception):
    """No uid can be leased (the message says why)."""


class UidLease:
    """One uid, held until :meth:`release`."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd: int | None = fd

    def release(self) -> None:
        """Give the uid back. (Nothing runs under it once its bot's PID namespace has ended; whatever
        would is killed when the uid is next leased.)"""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._fd = None

    def __del__(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)


def uid_range() -> range:
    raw = os.environ.get(ENV, "")
    if not raw:
        return range(DEFAULT_FIRST, DEFAULT_FIRST + DEFAULT_COUNT)
    first, sep, count = raw.partition(":")
    try:
        lo, n = int(first), int(count) if sep else DEFAULT_COUNT
    except ValueError as exc:
        raise UidPoolError(f"{ENV} must be FIRST:COUNT (two integers), got {raw!r}") from exc
    if lo < 1000 or n < 1 or lo + n > 2**32 - 2:
        raise UidPoolError(f"{ENV}={raw!r}: the uids must lie between 1000 and 4294967293")
    return range(lo, lo + n)


_guard = threading.Lock()
_next = 0


def lease() -> UidLease:
    """A free uid of the pool (the arena must be root)."""
    global _next
    uids = uid_range()
    folder = _lock_dir()
    with _guard:
        start = _next
        for i in range(len(uids)):
            uid = uids[(start + i) % len(uids)]
            try:
                fd = os.open(folder / str(uid), os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
            except OSError as exc:
                raise UidPoolError(f"cannot open the uid lock {folder / str(uid)}: {exc}") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue  # another bot of this or another arena has it
            _next = (start + i + 1) % len(uids)
            procs.kill_all(procs.of_uid(uid))  # left over by an arena that was killed
            return UidLease(uid, fd)
    raise UidPoolError(
        f"all {len(uids)} sandbox uids ({uids.start}..{uids.stop - 1}) are in use; "
        f"widen the range with {ENV}=FIRST:COUNT"
    )


def _lock_dir() -> Path:
    """The root-only folder of lock files (made on first use)."""
    for base in (Path("/run"), Path(tempfile.gettempdir())):
        folder = base / LOCK_DIR_NAME
        with contextlib.suppress(FileExistsError, OSError):
            folder.mkdir(mode=0o700)
        try:
            info = folder.lstat()
        except OSError:
            continue
        if (
            stat.S_ISDIR(info.st_mode)
            and info.st_uid == os.geteuid()
            and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        ):
            return folder
    raise UidPoolError(
        f"no safe folder for the uid locks: {LOCK_DIR_NAME} under /run or the temporary folder "
        "exists but is not a directory owned by this user and writable by it alone"
    )
