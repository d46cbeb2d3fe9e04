"""Bundles unpacked and inspected outside the server's process: in a child with CPU, memory and time
limits, in the sandbox where the machine has one.

An archive is the author's, and the code that reads it is the standard library's: Python 3.11's
``tarfile`` (before 3.11.10, CVE-2024-6232) parses a pax header with a regular expression whose time
grows with the square of its size while it holds the GIL, and reads a GNU long name whole into memory.
In the server's process a 1 KB bundle held every thread (the bots' listener's health check stalled
12 s, no game was recorded) and an 1 KB bzip2 bundle took 1.7 GB. Here the server only writes the
archive into a work folder and waits, with a deadline, for a child that reads it:

- the child is ``python -I -m arena.competition.bundles MAX_FILES MAX_BYTES`` (the standard library
  only: :func:`arena.competition.bundles.child`), confined like a build
  (:func:`arena.sandbox.confine` with the work folder as its ``workdir``): isolated, it sees only the
  runtime and a tmpfs bounded to the archive plus what it may unpack, has no network and a uid of its
  own; light, it runs under prlimit;
- its limits: :data:`CPU_SECONDS` of CPU, :data:`MEMORY_BYTES` of memory, :data:`WALL_SECONDS` in all
  (killed past it), each growing with what the bundle may unpack (a second more for every
  :data:`BYTES_PER_SECOND`; its memory by its tmpfs's bound), each file no larger than that;
- it answers in one line of JSON on its output, read from a file and bounded: the manifest's fields,
  or the reason the bundle was refused. The server checks the fields again
  (:func:`arena.competition.bundles.manifest_from`): a child that read a hostile archive is trusted no
  further than the archive.

Whatever the Python version, then, an archive costs the server a process start and a wait, never its
own CPU or memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from arena.bots.launcher import bot_environment
from arena.competition import bundles
from arena.competition.bundles import BundleError, Manifest
from arena.sandbox import Rlimits, SandboxError, confine

ARCHIVE, OUT = bundles.CHILD_ARCHIVE, bundles.CHILD_OUT  # in the child's folder
# The child's limits for a bundle that may unpack to nothing; each grows with what it may unpack, at
# BYTES_PER_SECOND (a slow disk's pace: 100 MB, the default cap, unpacks in well under a second).
CPU_SECONDS = 20
MEMORY_BYTES = 512 * 1024 * 1024
WALL_SECONDS = 60.0
BYTES_PER_SECOND = 20 * 1024 * 1024
MAX_ANSWER = 64 * 1024  # bytes of the child's output read (its answer is its last line)
PROCESSES = 16  # the child is one process; isolated, the sandbox's own helpers run beside it


def unpack_outside(
    data: bytes,
    work: Path,
    max_files: int,
    max_bytes: int,
    *,
    sandbox: str = "auto",
    wall_seconds: float | None = None,
) -> tuple[Manifest, Path]:
    """Unpack the bundle ``data`` in a confined child, in the new folder ``work/OUT`` (``work`` is an
    empty folder of the caller's); its manifest and that folder. Raises :class:`BundleError` with the
    reason for its author, whatever went wrong (the child's refusal, its limits, the sandbox)."""
    bundles.check_format(data)  # refused at once, before any process is started
    if wall_seconds is None:
        wall_seconds = WALL_SECONDS + max_bytes / BYTES_PER_SECOND
    (work / ARCHIVE).write_bytes(data)
    answer_path = work.parent / f"{work.name}.answer"
    budget = len(data) + max_bytes + (max_files + 64) * 2 * 4096  # see arena.sandbox.workspace
    limits = Rlimits(
        # Isolated, its tmpfs is memory too, charged to its control group with the rest.
        address_space=MEMORY_BYTES + budget,
        cpu_seconds=CPU_SECONDS + max_bytes // BYTES_PER_SECOND,
        processes=PROCESSES,
        file_size=max(max_bytes, len(data)) + 4096,
        open_files=64,
        home_bytes=budget,
    )
    argv = [sys.executable, "-I", "-m", bundles.__name__, str(max_files), str(max_bytes)]
    try:
        conf = confine(argv, bot_environment(), mode=sandbox, rlimits=limits, workdir=work)
    except SandboxError as exc:
        raise BundleError(f"the bundle cannot be unpacked here: {exc}") from exc
    try:
        if conf.uid is not None:
            _own(work, conf.uid)
        with answer_path.open("w+b") as answer:
            try:
                proc = subprocess.Popen(
                    conf.argv,
                    stdin=subprocess.DEVNULL,
                    stdout=answer,
                    stderr=subprocess.STDOUT,
                    **conf.spawn_options(),
                )
            except OSError as exc:
                raise BundleError(f"the bundle cannot be unpacked here: {exc}") from exc
            finally:
                conf.close_filter()
            try:
                code = proc.wait(wall_seconds)
            except subprocess.TimeoutExpired:
                conf.kill(proc.pid)
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait()
                raise BundleError(
                    f"unpacking the bundle took longer than {wall_seconds:g} s: not a bundle "
                    "packed by tar or arena compete submit"
                ) from None
            answer.seek(max(0, answer.seek(0, os.SEEK_END) - MAX_ANSWER))
            said = answer.read(MAX_ANSWER).decode("utf-8", "replace")
    finally:
        conf.release()
        if conf.uid is not None:
            _own(work, os.getuid())
        answer_path.unlink(missing_ok=True)
    (work / ARCHIVE).unlink(missing_ok=True)
    manifest = _read_answer(said, code)
    _read_only(work / OUT)
    return manifest, work / OUT


def _read_answer(said: str, code: int) -> Manifest:
    """The manifest the child reported, checked again; BundleError with its reason otherwise. Its
    answer is the last line of JSON (isolated, the sandbox's workspace may add a line after it)."""
    lines = [line for line in said.splitlines() if line.strip()]
    found: object = None
    for line in reversed(lines):
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                found = json.loads(line)
                break
    if isinstance(found, dict) and isinstance(found.get("refused"), str):
        raise BundleError(found["refused"][:1000])
    if code == 0 and isinstance(found, dict) and isinstance(found.get("manifest"), dict):
        return bundles.manifest_from(found["manifest"])
    if code < 0 or code in (128 + 9, 128 + 24):  # killed: SIGKILL (memory, the cgroup), SIGXCPU
        raise BundleError(
            "unpacking the bundle passed its limits of CPU time or memory: not a bundle packed by "
            "tar or arena compete submit"
        )
    last = lines[-1][:300] if lines else f"it exited with code {code}"
    raise BundleError(f"the bundle could not be unpacked: {last}")


def _read_only(folder: Path) -> None:
    """Files read-only, folders 0755, as :func:`arena.competition.bundles.unpack` left them (the
    sandbox's workspace gives its owner write access to what it copies back); links are never
    followed (the child makes none)."""
    for path in [folder, *folder.rglob("*")]:
        info = path.lstat()
        if stat.S_ISDIR(info.st_mode):
            path.chmod(0o755)
        elif stat.S_ISREG(info.st_mode):
            path.chmod(stat.S_IMODE(info.st_mode) & ~0o222)


def _own(folder: Path, uid: int) -> None:
    for path in [folder, *folder.rglob("*")]:
        with contextlib.suppress(OSError):
            os.lchown(path, uid, uid)
