"""From a submitted bundle to an entrant in play: store it, build it, check it.

The bundle is stored by content and unpacked (hostile input: see :mod:`.bundles`). Its build command, if
it has one, runs once in a writable copy of the bundle, confined like a bot (no network, the
competition's limits) and with a time limit; the result is made read-only and is what the bot runs
from. Then the conformance check (``arena check-bot``) plays its scripted session against the bot,
confined the same way. Only a bot that passes enters play; a failing one gets its build or check log.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

from arena.bots.conformance import check_bot
from arena.bots.launcher import resolve_paths
from arena.bots.limits import Limits
from arena.competition.bundles import Manifest

LOG_LIMIT = 64 * 1024  # bytes of a build's output kept


@dataclass(frozen=True, slots=True)
class Outcome:
    ok: bool
    reason: str  # one line, for the author and the leaderboard
    log: str  # the build's and the check's output


def runtime_command(manifest: Manifest, folder: Path) -> str:
    """The command that starts the bot: its ``run`` line with the runtime's placeholders filled and
    its relative paths made absolute within ``folder``."""
    return resolve_paths(manifest.run, folder)


async def build(
    manifest: Manifest, source: Path, into: Path, limits: Limits, seconds: int
) -> Outcome:
    """Copy the bundle to ``into`` and run its build command there (if any); make it read-only."""
    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(source, into)
    for path in [into, *into.rglob("*")]:
        with contextlib.suppress(OSError):
            path.chmod(path.stat().st_mode | 0o200)
    log = ""
    if manifest.build:
        ok, log = await _run(resolve_paths(manifest.build, into), into, limits, seconds)
        if not ok:
            _read_only(into)
            return Outcome(False, log.splitlines()[-1] if log else "the build failed", log)
    _read_only(into)
    return Outcome(True, "", log)


async def check(command: str, variant: str, seconds: int) -> Outcome:
    """The conformance check of the built bot; passes when it makes no mistake."""
    lines: list[str] = []
    try:
        report = await asyncio.wait_for(
            check_bot(command, variant, on_progress=lines.append), timeout=seconds
        )
    except TimeoutError:
        return Outcome(
            False, f"the conformance check took longer than {seconds} s", "\n".join(lines)
        )
    lines.extend(report.lines(per_kind=10))
    if report.ok:
        return Outcome(True, "", "\n".join(lines))
    first = report.mistakes[0]
    return Outcome(False, f"the conformance check found {len(report.mistakes)} mistake(s): "
                   f"{first.kind}", "\n".join(lines))  # fmt: skip


async def _run(command: str, cwd: Path, limits: Limits, seconds: int) -> tuple[bool, str]:
    """Run a build command under the bot's limits (set before its first instruction) with a time
    limit; its whole process group is killed at the end. (ok, output)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        return False, f"the build command cannot be split: {exc}"
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "PYTHONPATH", "NODE_PATH")}
    env.update(HOME=str(cwd), TMPDIR=str(cwd))
    prlimit = shutil.which("prlimit")
    if prlimit is not None:
        mib = 1024 * 1024
        argv = [
            prlimit,
            f"--as={limits.memory_mb * mib if limits.memory_mb else 'unlimited'}",
            f"--fsize={limits.file_size_mb * mib if limits.file_size_mb else 'unlimited'}",
            f"--nofile={limits.open_files or 'unlimited'}",
            "--",
            *argv,
        ]
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=cwd,
            env=env,
            process_group=0,
        )
    except OSError as exc:
        return False, f"the build command cannot start: {exc.strerror or exc}"
    assert proc.stdout is not None
    out = bytearray()

    async def drain() -> None:
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            if len(out) < LOG_LIMIT:
                out.extend(chunk[: LOG_LIMIT - len(out)])

    try:
        await asyncio.wait_for(asyncio.gather(drain(), proc.wait()), timeout=seconds)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        return False, out.decode("utf-8", "replace") + f"\nthe build took longer than {seconds} s"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    text = out.decode("utf-8", "replace")
    if proc.returncode != 0:
        return False, text + f"\nthe build command exited with code {proc.returncode}"
    return True, text


def _read_only(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        with contextlib.suppress(OSError):
            path.chmod(path.stat().st_mode & ~0o222)
