"""Scratch directories (a bot's working directory, the referee's socket folder, a check's logs), kept
under one folder per arena process so that nothing is left behind, even by an arena that was killed.

Each arena process makes ``<tmp>/arena-run-XXXXXXXX/`` on first use and holds an exclusive lock on its
``lock`` file for as long as it lives. Scratch directories are made inside it and removed by their
owners when done; the folder itself goes at exit. SIGKILL skips every clean-up: the folder stays, but
its lock is released with the process, and the next arena process to make a scratch directory removes
it. A lock, unlike a process id, means the same to every process sharing the temporary directory (other
PID namespaces included) and is never reused.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import tempfile
import threading
from pathlib import Path

PREFIX = "arena-run-"
LOCK = "lock"

_guard = threading.Lock()
_run: tuple[Path, int, int] | None = None  # (folder, locked fd, pid that made it)


def scratch_dir(prefix: str) -> Path:
    """A new private directory for the caller to use and remove."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=run_dir()))


def run_dir() -> Path:
    """This process's folder, made (and the folders of dead arena processes swept) on first use."""
    global _run
    with _guard:
        if _run is None or _run[2] != os.getpid():  # a forked child makes its own
            sweep()
            path = Path(tempfile.mkdtemp(prefix=PREFIX))
            # Locked under another name and then renamed: a sweeper never sees it unlocked.
            fd = os.open(path / f"{LOCK}.new", os.O_CREAT | os.O_RDWR, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.rename(path / f"{LOCK}.new", path / LOCK)
            _run = (path, fd, os.getpid())
            atexit.register(_remove, path, fd, os.getpid())
        return _run[0]


def sweep(tmp: Path | None = None) -> list[Path]:
    """Remove the folders whose arena process is gone (their lock is free); the folders removed."""
    removed = []
    for path in sorted(Path(tmp or tempfile.gettempdir()).glob(f"{PREFIX}*")):
        try:
            fd = os.open(path / LOCK, os.O_RDWR)
        except OSError:
            continue  # being made (no lock yet), or not ours to open
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its process is alive
        finally:
            os.close(fd)  # releases the lock if taken: the folder is removed next, lock and all
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _remove(path: Path, fd: int, pid: int) -> None:
    if os.getpid() != pid:  # atexit in a forked child: the folder is the parent's
        return
    shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.close(fd)
