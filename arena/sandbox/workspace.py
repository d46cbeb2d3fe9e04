"""A submission's build, bounded on disk: it works in a size-limited tmpfs, never on the machine's disk.

A build may write, so its folder cannot be a plain bind of the machine's disk: the size limit of each
file (RLIMIT_FSIZE) bounds no total, and a build wrote twelve files of 16 MiB into its folder with a
``disk_mb`` of 64. Isolated, the build's folder is therefore a tmpfs of ``disk_mb`` at the folder's
path, and the folder itself is bound elsewhere (:data:`RESULT`), where the build cannot see it. This
program, run as the build's uid between the two bubblewraps (:func:`arena.sandbox.core.confine`),
copies the folder into the tmpfs, empties it, runs the build in a PID namespace whose first process is
the build's own (all of the build's processes die with it; it has no ``/proc``, through which it
could reach the real folder by a process of its uid outside), and only then, when nothing of the
build runs, copies what it left back within the bound: regular files (no longer than they were
found), folders and symbolic links (recreated, never followed); anything else (a FIFO, a socket) is
left behind. Every entry counts at least :data:`BLOCK` bytes and a
file its length rounded up to it, so that neither sparse files nor many empty ones take more of the
disk than the bound says.

It is run as a script (``python -S -I``), so it imports nothing but the standard library. Its last line
of output, when it fails, says why (the build's log ends with it); it exits 0 only when the result is
copied back whole.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

RESULT = "/run/arena/result"  # where the build's folder is bound, hidden from the build
BLOCK = 4096  # the least an entry is counted, and the unit a file's length is rounded up to
MIB = 1024 * 1024
CHUNK = 1024 * 1024


class Refused(Exception):
    """The build cannot be taken (the message is its reason, for the author)."""


def argv(workdir: Path, budget: int) -> list[str]:
    """The command that runs this program for a build in ``workdir`` of at most ``budget`` bytes (0:
    no limit); the build's own command (its bubblewrap) follows it."""
    return [sys.executable, "-S", "-I", __file__, str(workdir), str(budget), "--"]


def cost(info: os.stat_result) -> int:
    """What an entry is counted: its length rounded up to :data:`BLOCK`, at least one block."""
    size = info.st_size if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode) else 0
    return max(BLOCK, -(-size // BLOCK) * BLOCK)


def entries(root: Path) -> list[tuple[Path, os.stat_result]]:
    """Every entry under ``root`` (relative paths, parents first), by ``lstat``: links are entries,
    never followed."""
    out: list[tuple[Path, os.stat_result]] = []
    pending = [Path()]
    while pending:
        folder = pending.pop()
        with os.scandir(root / folder) as found:
            for entry in found:
                info = entry.stat(follow_symlinks=False)
                out.append((folder / entry.name, info))
                if stat.S_ISDIR(info.st_mode):
                    pending.append(folder / entry.name)
    return out


def total(listing: list[tuple[Path, os.stat_result]]) -> int:
    return sum(cost(info) for _, info in listing)


def limit(budget: int) -> str:
    """The bound, as a reason names it."""
    return f"{budget // MIB} MiB (disk_mb)" if budget else "the machine's memory"


def over(listing: list[tuple[Path, os.stat_result]], budget: int) -> str | None:
    """Why the entries of ``listing`` do not fit in ``budget`` bytes (0: no limit); None if they do."""
    used = total(listing)
    if budget and used > budget:
        return (
            f"the build left {used / MIB:.1f} MiB in its folder, over its limit of {limit(budget)}"
        )
    return None


def copy(source: Path, dest: Path, listing: list[tuple[Path, os.stat_result]]) -> None:
    """Copy the entries of ``listing`` (as found under ``source``) into ``dest``: a file no longer
    than it was found, a link as a link; what is neither a file, a folder nor a link is skipped.
    Nothing is written through a link (``O_NOFOLLOW``, new entries only)."""
    folders = []
    for name, info in listing:
        mode, there = info.st_mode, dest / name
        if stat.S_ISDIR(mode):
            there.mkdir(mode=0o700)
            folders.append((there, stat.S_IMODE(mode) & 0o777 | 0o700))
        elif stat.S_ISLNK(mode):
            os.symlink(os.readlink(source / name), there)
        elif stat.S_ISREG(mode):
            _copy_file(source / name, there, info.st_size, stat.S_IMODE(mode) & 0o777)
    for there, mode in reversed(folders):
        there.chmod(mode)


def _copy_file(source: Path, dest: Path, size: int, mode: int) -> None:
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    src = os.open(source, os.O_RDONLY | flags)
    try:
        dst = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | flags, 0o600)
        try:
            left = size
            while left > 0:
                chunk = os.read(src, min(CHUNK, left))
                if not chunk:
                    break
                os.write(dst, chunk)
                left -= len(chunk)
            os.fchmod(dst, mode | 0o600)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def empty(folder: Path) -> None:
    with os.scandir(folder) as found:
        for entry in list(found):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


def full(folder: Path) -> bool:
    """Whether the tmpfs is full (a build that failed then failed for want of space)."""
    return os.statvfs(folder).f_bavail == 0


def _undumpable() -> None:
    """Keep the build (the same uid) from reaching this program through ``/proc`` or ptrace, should
    it ever see it: a process that is not dumpable is root's to inspect."""
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE


def run(workdir: Path, budget: int, command: list[str]) -> None:
    """Copy in, build, copy back (see the module's docstring); raises :class:`Refused`."""
    bound = limit(budget)
    result = Path(RESULT)
    try:
        copy(result, workdir, entries(result))
    except OSError as exc:
        raise Refused(f"the bundle does not fit in the build's disk space, {bound}: {exc}") from exc
    empty(result)
    # The seccomp filter's fd, which the inner bubblewrap reads (arena.sandbox.seccomp), is passed on.
    fds = tuple(int(command[i + 1]) for i, w in enumerate(command[:-1]) if w == "--seccomp")
    code = subprocess.run(command, check=False, stdin=subprocess.DEVNULL, pass_fds=fds).returncode
    if code != 0:
        if full(workdir):
            raise Refused(f"the build ran out of disk space: its folder may hold {bound}")
        raise Refused(f"the build command exited with code {code}")
    listing = entries(workdir)
    why = over(listing, budget)
    if why is not None:
        raise Refused(
            f"{why}; every file counts its length rounded up to {BLOCK} bytes, every entry {BLOCK} "
            "at least"
        )
    copy(workdir, result, listing)


def main(args: list[str]) -> int:
    _undumpable()
    workdir, budget, sep, *command = args
    if sep != "--" or not command:
        print("usage: workspace.py WORKDIR BUDGET -- COMMAND...", file=sys.stderr)
        return 2
    try:
        run(Path(workdir), int(budget), command)
    except Refused as exc:
        print(exc, flush=True)
        return 1
    except OSError as exc:
        print(f"the build's result could not be copied back: {exc}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
