"""From a submitted bundle to an entrant in play: store it, build it, check it.

The bundle is stored by content and unpacked (hostile input: see :mod:`.bundles`). Its build command, if
it has one, runs once in a writable copy of the bundle, confined like a bot (no network, the
competition's limits) and with a time limit; the result is made read-only and is what the bot runs
from. Isolated, the build writes only to a tmpfs of ``disk_mb`` (in memory), and its result comes back
to the disk within that bound (:mod:`arena.sandbox.workspace`); in light mode the result is measured
after the fact and refused if over it. Then the conformance check (``arena check-bot``) plays its
scripted session against the bot, confined the same way. Only a bot that passes enters play; a failing one gets its build or check log.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.bots.launcher import (
    LaunchError,
    bot_environment,
    printable,
    resolve_paths,
    split_command,
)
from arena.bots.limits import Limits
from arena.competition import runtimes
from arena.competition.bundles import BundleError, Manifest, outside
from arena.ledger.competitions import Submission
from arena.play.conformance import check_bot
from arena.referee import TimeControl
from arena.sandbox import SandboxError, confine, workspace

LOG_LIMIT = 64 * 1024  # bytes of a build's output kept
TAIL = 4096  # bytes of its end kept beyond that, for the last line (which says why it failed)
MAX_REASON = 300  # characters of a failed build's last line kept as its reason
# The conformance check's clock at the least (arena check-bot's own defaults): a competition's may be
# more generous, never less.
CHECK_BUDGET_MS = 2000
CHECK_GRACE_MS = 100


@dataclass(frozen=True, slots=True)
class IntakeResult:
    ok: bool
    reason: str  # one line, for the author and the leaderboard
    log: str  # the build's and the check's output


def manifest_columns(manifest: Manifest) -> dict[str, str]:
    """A bundle's manifest as the ledger stores it, in a submission's columns (see
    :func:`manifest_of`, which rebuilds it)."""
    return {
        "bot": manifest.name,
        "version": manifest.version,
        "language": manifest.language,
        "run": manifest.run,
        "build": manifest.build,
    }


def manifest_of(sub: Submission) -> Manifest:
    """A bundle submission's manifest, rebuilt from the ledger's columns (see
    :func:`manifest_columns`)."""
    return Manifest(sub.bot, sub.version, sub.language, sub.run, sub.build)


def runtime_command(manifest: Manifest, folder: Path) -> str:
    """The command that starts the bot: its ``run`` line with the runtime's placeholders filled and
    its relative paths made absolute within ``folder``. A path that leads outside the folder (a
    link its build left) is refused: the sandbox would show the bot what it leads to."""
    command = resolve_paths(manifest.run, folder)
    beyond = outside(command, folder)
    if beyond is not None:
        raise BundleError(
            f"run: {beyond!r} leads outside the bot's folder (a link its build made?); a command "
            "may name only the bot's own files"
        )
    return command


def for_author(text: str, folder: Path) -> str:
    """``text`` (a reason, a log) with the server's path of a bot's build in the bundle's own words:
    a file of it by its path within the bundle, the folder itself as '.'. A bot's traceback names
    its files by their full paths, and the check named its command so: where the server keeps its
    data is not the author's business."""
    root = re.escape(str(folder))
    text = re.sub(root + re.escape(os.sep), "", text)
    return re.sub(root + r"(?![\w.-])", ".", text)


# An absolute path of the server's (two parts or more, not in a URL): shown to an author as its last part.
_SERVER_PATH = re.compile(r"(?<![\w:/.~-])/(?:[\w.+@~-]+/)+([\w.+@~-]*)")


def for_authors(text: str, builds: Path) -> str:
    """``text`` from a game (a failure's detail, a bot's output) as any author may see it: every
    build's folder under ``builds`` in the bundle's own words (as :func:`for_author`), and every
    other absolute path of the server's cut to its last part behind ``.../`` (a traceback names the
    runtime's files by where the server keeps them)."""
    root = re.escape(str(builds))
    text = re.sub(root + re.escape(os.sep) + r"\d+" + re.escape(os.sep), "", text)
    text = re.sub(root + re.escape(os.sep) + r"\d+(?![\w.-])", ".", text)
    text = re.sub(root + r"(?![\w.-])", "...", text)
    return _SERVER_PATH.sub(r".../\1", text)


async def build(
    manifest: Manifest, source: Path, into: Path, limits: Limits, seconds: int
) -> IntakeResult:
    """Copy the bundle to ``into`` and run its build command there (if any); make it read-only.
    What an earlier build left in ``into`` (a failed version submitted again, an intake cut short by
    a stop) is removed first."""
    _remove(into)
    shutil.copytree(source, into)
    for path in [into, *into.rglob("*")]:
        with contextlib.suppress(OSError):
            path.chmod(path.stat().st_mode | 0o200)
    log = ""
    if manifest.build:
        try:
            command = runtimes.fill(resolve_paths(manifest.build, into), manifest.language)
        except ValueError as exc:
            _read_only(into)
            return IntakeResult(False, f"build: {exc}", f"build: {exc}")
        env = runtimes.build_environment(manifest.language, into)
        ok, log = await _run(command, into, limits, seconds, env)
        for leftover in runtimes.leftovers(manifest.language, into):
            _remove(leftover)
        if not ok:
            _read_only(into)
            return IntakeResult(False, _reason(log), log)
    _read_only(into)
    if manifest.language == "binary":
        problem = _executable_problem(manifest, into)
        if problem is not None:
            log = f"{log}\n{problem}" if log else problem
            return IntakeResult(False, problem, log)
    return IntakeResult(True, "", log)


def _executable_problem(manifest: Manifest, folder: Path) -> str | None:
    """Why a binary bundle's program (the first word of its run line) cannot run here, or None."""
    try:
        words = shlex.split(manifest.run)
    except ValueError as exc:
        return f"run: not a command line: {exc}"
    if not words:
        return "run: missing; the command that starts the bot"
    return runtimes.executable_problem(folder / words[0], words[0])


def _reason(log: str) -> str:
    """Why a build failed, in one line: its output's last, made printable (a build's output is the
    author's: escape sequences in it must not act on whoever reads the reason) and cut short."""
    lines = [line for line in log.splitlines() if line.strip()]
    shown = printable(lines[-1]) if lines else "the build failed"
    return shown if len(shown) <= MAX_REASON else shown[:MAX_REASON] + "..."


async def check(
    command: str,
    variant: str,
    limits: Limits,
    seconds: int,
    hide: Sequence[Path] = (),
    shown: str | None = None,
    time_control: TimeControl | None = None,
) -> IntakeResult:
    """The conformance check of the built bot, confined with the competition's limits, never shown
    ``hide`` (the ledger, the other bundles) nor a path its command does not resolve within its own
    folder; passes when it makes no mistake. ``shown``: the command as its log names it (the
    manifest's run line: the resolved one holds the server's own paths). ``time_control``: the
    competition's; the check's clock is never stricter than it, nor than check-bot's own (a budget of
    CHECK_BUDGET_MS), so that a bot that will have a bank in play has it in its check too (a JVM's
    first decisions on a busy server, say)."""
    lines: list[str] = []
    tc = time_control or TimeControl(budget_ms=CHECK_BUDGET_MS, bank_ms=0, grace_ms=CHECK_GRACE_MS)
    try:
        async with asyncio.timeout(seconds):
            report = await check_bot(
                command,
                variant,
                budget_ms=max(CHECK_BUDGET_MS, tc.budget_ms),
                grace_ms=max(CHECK_GRACE_MS, tc.grace_ms),
                bank_ms=tc.bank_ms,
                on_progress=lines.append,
                limits=limits,
                hide=hide,
                resolve_from=None,
            )
    except TimeoutError:
        return IntakeResult(
            False, f"the conformance check took longer than {seconds} s", "\n".join(lines)
        )
    if shown is not None:
        report.command = shown
    lines.extend(report.lines(per_kind=10))
    if report.ok:
        return IntakeResult(True, "", "\n".join(lines))
    first = report.mistakes[0]
    hint = _interpreter_hint(shown or command)
    if hint:
        lines.append(hint)
    return IntakeResult(False, f"the conformance check found {len(report.mistakes)} mistake(s): "
                   f"{first.kind}{'; ' + hint if hint else ''}", "\n".join(lines))  # fmt: skip


# A run line whose program is a bare Python interpreter: in the sandbox that is whatever PATH finds,
# often a version manager's shim that cannot run there, or a Python without the SDK.
_BARE_PYTHON = re.compile(r"python(\d+(\.\d+)*)?")


def _interpreter_hint(command: str) -> str:
    """What to change in a run line that names a bare ``python`` ("" for any other)."""
    words = command.split()
    if not words or not _BARE_PYTHON.fullmatch(words[0]):
        return ""
    return (
        f"its run line starts with {words[0]!r}: a Python bot runs as '{{python}} FILE', the "
        "arena's own interpreter with the SDK"
    )


async def _run(
    command: str, cwd: Path, limits: Limits, seconds: int, env: Mapping[str, str] | None = None
) -> tuple[bool, str]:
    """Run a build command in ``cwd``, confined like a bot (no network, the limits from its first
    instruction, a uid of its own where the machine allows), with a time limit; every process it
    started is killed at the end. Isolated, it runs under :mod:`arena.sandbox.workspace`, whose last
    line says why it failed. (ok, output)."""
    try:
        argv = split_command(command, "the build", None)  # resolved within the bundle already
        conf = confine(
            argv,
            {**bot_environment(), **(env or {})},
            mode=limits.sandbox,
            rlimits=limits.rlimits(),
            workdir=cwd,
        )
    except (LaunchError, SandboxError) as exc:
        return False, str(exc)
    if conf.uid is not None:
        _own(cwd, conf.uid)
    out, tail, seen = bytearray(), bytearray(), 0
    try:
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await conf.spawn(
                lambda: asyncio.subprocess.SubprocessStreamProtocol(limit=2**16, loop=loop),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            proc = asyncio.subprocess.Process(transport, protocol, loop)
        except OSError as exc:
            return False, f"the build command cannot start: {exc.strerror or exc}"

        async def drain() -> None:
            assert proc.stdout is not None
            nonlocal seen
            while chunk := await proc.stdout.read(65536):
                seen += len(chunk)
                if len(out) < LOG_LIMIT:
                    out.extend(chunk[: LOG_LIMIT - len(out)])
                tail.extend(chunk)
                del tail[:-TAIL]

        try:
            async with asyncio.timeout(seconds):
                await asyncio.gather(drain(), proc.wait())
        except TimeoutError:
            text = out.decode("utf-8", "replace")
            return False, text + f"\nthe build took longer than {seconds} s"
        finally:
            conf.kill(proc.pid)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    finally:
        conf.release()
        if conf.uid is not None:
            _own(cwd, os.getuid())
    text = out.decode("utf-8", "replace")
    if seen > len(out):  # cut: its last line still ends the log
        last = tail.decode("utf-8", "replace").rstrip("\n").rpartition("\n")[2]
        text += f"\n[... {seen - len(out)} bytes of output left out ...]\n{last}"
    if conf.isolated:  # the workspace bounded the result and said why it failed
        return proc.returncode == 0, text
    if proc.returncode != 0:
        return False, text + f"\nthe build command exited with code {proc.returncode}"
    return _measured(cwd, limits, text)


def _measured(folder: Path, limits: Limits, log: str) -> tuple[bool, str]:
    """Whether a light build's result is within ``disk_mb``, counted as :mod:`arena.sandbox.workspace`
    counts it (isolated, the workspace bounds it as it is written; light, it was not)."""
    try:
        why = workspace.over(workspace.entries(folder), limits.rlimits().home_bytes)
    except OSError as exc:
        return False, log + f"\nthe build's result cannot be measured: {exc}"
    return (False, log + f"\n{why}") if why is not None else (True, log)


def _own(folder: Path, uid: int) -> None:
    for path in [folder, *folder.rglob("*")]:
        with contextlib.suppress(OSError):
            os.lchown(path, uid, uid)


def _remove(folder: Path) -> None:
    """Remove an earlier build, which was made read-only: its folders are made writable first, as
    nobody but root may remove the entries of a folder it cannot write. Links are never followed."""
    if not os.path.lexists(folder):
        return
    _writable(folder)
    for root, names, _ in os.walk(folder):
        for name in names:  # before os.walk goes into them
            _writable(Path(root) / name)
    shutil.rmtree(folder)


def _writable(path: Path) -> None:
    with contextlib.suppress(OSError):
        mode = path.lstat().st_mode
        if stat.S_ISDIR(mode):
            path.chmod(mode | stat.S_IRWXU)


def _read_only(folder: Path) -> None:
    """Take the write bits off the build's files and folders. A link the build made is left as it
    is: followed, a link to ``..`` or to any path made the server take the write bits off what it
    points to (the builds' folder, the ledger), outside the build."""
    for path in [folder, *folder.rglob("*")]:
        with contextlib.suppress(OSError):
            mode = path.lstat().st_mode
            if not stat.S_ISLNK(mode):
                path.chmod(stat.S_IMODE(mode) & ~0o222)
