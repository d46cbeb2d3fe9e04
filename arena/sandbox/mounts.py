"""The file system a sandboxed bot sees, as bubblewrap arguments.

Read-only: the system (``/usr``, ``/etc``, ``/bin``, ``/sbin``, ``/lib*``), the runtime and the folders
its command line refers to. Writable: its home, ``/tmp`` and ``/dev/shm``, size-limited tmpfs of its
own (in memory, gone with it).
The referee's Unix socket at a fixed path. Nothing else: not the ledger, records, logs, tournament
files, other bots' folders. A folder to show that holds a hidden path (the ledger beside a bot's script,
say) is shown entry by entry, without the hidden one and its SQLite companions (``-wal``, ``-shm``,
``-journal``), and symbolic links in it are recreated rather than followed. Whether a folder holds a
hidden path is decided on the real path of both (bubblewrap binds what a link leads to), and what is
bound is that real path.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
HOME = "/home/bot"
SOCKET = "/run/arena/referee.sock"
SOCKET_ADDRESS = f"unix:{SOCKET}"
SHM_BYTES = 64 * 1024 * 1024


def hides(hidden: Path, path: Path) -> bool:
    """Whether ``hidden`` hides ``path``: the same, an ancestor, or a SQLite companion of it."""
    if path == hidden or path.is_relative_to(hidden):
        return True
    return path.parent == hidden.parent and path.name.startswith(hidden.name + "-")


class Mounts:
    """Bubblewrap arguments that build the sandbox's file system, in order."""

    def __init__(self, hidden: Iterable[Path] = ()) -> None:
        self.args: list[str] = []
        # As named and as the links in the name lead: either way, what is bound must not hold it.
        named = [Path(os.path.abspath(h)) for h in hidden]
        self.hidden = list(dict.fromkeys([*named, *(Path(os.path.realpath(h)) for h in named)]))
        self._dirs: set[str] = {"/"}
        self._bound: list[Path] = []

    def system(self) -> None:
        for name in SYSTEM:
            path = Path(name)
            if path.is_symlink():
                self.args += ["--symlink", os.readlink(path), name]
                self._dirs.add(name)
            elif path.is_dir():
                self._ro(path)

    def layout(self, tmp_bytes: int, home_bytes: int | None) -> None:
        """The system, /proc, /dev, a /tmp and a /dev/shm writable by all (sticky, size-limited) and
        the home: a tmpfs of ``home_bytes`` (None: only its mount point, for a later tmpfs)."""
        self.system()
        self.args += ["--proc", "/proc", "--dev", "/dev"]
        self._dirs.update(("/proc", "/dev"))
        self.tmpfs("/tmp", tmp_bytes, "1777")
        self.tmpfs("/dev/shm", min(tmp_bytes, SHM_BYTES) or SHM_BYTES, "1777")
        if home_bytes is None:
            self.dir(HOME)
        else:
            self.dir(str(Path(HOME).parent))
            self.tmpfs(HOME, home_bytes, "0755")

    def tmpfs(self, path: str, size: int, perms: str) -> None:
        self.args += ["--perms", perms, *(["--size", str(size)] if size else []), "--tmpfs", path]
        self._dirs.add(path)

    def covered(self, path: Path) -> bool:
        return any(path == b or path.is_relative_to(b) for b in self._bound)

    def show(self, folders: Sequence[Path]) -> None:
        """Show each folder read-only (parents first; one already shown is skipped)."""
        for folder in sorted(
            {Path(os.path.abspath(f)) for f in folders}, key=lambda p: len(p.parts)
        ):
            if folder == Path("/") or self.covered(folder) or not folder.exists():
                continue
            # A folder named through a link is bound as what the link leads to (bubblewrap follows
            # it): the ledger's folder, named through a link to it, was shown whole.
            real = Path(os.path.realpath(folder))
            if any(hides(h, p) for h in self.hidden for p in (folder, real)):
                continue
            self._show(real, folder)

    def _show(self, source: Path, dest: Path) -> None:
        """The real folder ``source`` at ``dest`` (the same, or a path with a link in it)."""
        inside = [h for h in self.hidden if h.is_relative_to(source) or h.is_relative_to(dest)]
        if not inside or not source.is_dir():
            self._ro(source, dest)
            return
        self.dir(str(dest))  # shown entry by entry, without what is hidden
        try:
            entries = sorted(os.scandir(source), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            path, there = Path(entry.path), dest / entry.name
            if any(hides(h, p) for h in self.hidden for p in (path, there)):
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISLNK(mode):
                self.args += ["--symlink", os.readlink(path), str(there)]
            elif stat.S_ISDIR(mode) and any(
                h.is_relative_to(path) or h.is_relative_to(there) for h in inside
            ):
                self._show(path, there)
            elif stat.S_ISDIR(mode) or stat.S_ISREG(mode):
                self._ro(path, there)

    def dir(self, path: str) -> None:
        """A folder (and its parents) in the sandbox's own root, readable by everyone."""
        parts = Path(path).parts
        for i in range(2, len(parts) + 1):
            here = str(Path(*parts[:i]))
            if here not in self._dirs:
                self.args += ["--perms", "0755", "--dir", here]
                self._dirs.add(here)

    def _ro(self, source: Path, dest: Path | None = None) -> None:
        dest = dest or source
        self.dir(str(dest.parent))
        self.args += ["--ro-bind", str(source), str(dest)]
        self._bound.append(dest)
        self._dirs.add(str(dest))

    def bind(self, source: str, dest: str) -> None:
        """A writable bind (the referee's socket)."""
        self.dir(str(Path(dest).parent))
        self.args += ["--bind", source, dest]
