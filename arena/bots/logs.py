"""The folder of bot logs (``--logs``) of a server that runs for good: held to a size.

Each bot process writes at most its ``log_bytes`` there, but a standing competition or a referee
service starts processes without end, and their logs filled the disk. :class:`LogFolder` removes the
oldest logs (by their last write) once the folder's logs pass their bound, at most every
:data:`EVERY_SECONDS`; a log still being written may go too (its process writes on into a file no
longer named, whose space returns when it ends). Only files named ``*.log`` are counted or removed.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

EVERY_SECONDS = 10.0
DEFAULT_MB = 1024  # the standing services' default bound (arena serve, arena compete serve)


class LogFolder:
    """A folder of logs held to ``max_bytes`` (0: no bound)."""

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self._last = float("-inf")

    def due(self) -> bool:
        """Whether a prune is due (bounded, and not done in the last EVERY_SECONDS)."""
        return self.max_bytes > 0 and time.monotonic() - self._last >= EVERY_SECONDS

    def prune(self) -> int:
        """Remove the oldest logs until the rest fit; how many were removed. (Off the event loop:
        it reads the folder.)"""
        self._last = time.monotonic()
        found = []
        with contextlib.suppress(OSError), os.scandir(self.folder) as entries:
            for entry in entries:
                if not entry.name.endswith(".log"):
                    continue
                with contextlib.suppress(OSError):
                    if entry.is_file(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        found.append((st.st_mtime, entry.name, st.st_size))
        total = sum(size for _, _, size in found)
        removed = 0
        for _, name, size in sorted(found):
            if total <= self.max_bytes:
                break
            with contextlib.suppress(FileNotFoundError):
                (self.folder / name).unlink()
                removed += 1
            total -= size
        return removed
