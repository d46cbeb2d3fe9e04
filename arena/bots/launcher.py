"""Launch and supervise a local bot process.

The bot is told where the referee is and which token to present through the environment
(``ARENA_ADDRESS``, ``ARENA_TOKEN``) and, if its command line holds them, through the placeholders
``{address}`` and ``{token}`` (``{python}`` stands for the arena's interpreter). It runs:

- in its own process group and with a marker in its environment, so that it is killed with every child
  it started when its match ends (children that left the group are found by the marker);
- in a fresh working directory of its own in the arena's scratch folder (:mod:`arena.scratch`), removed
  afterwards (relative paths on its command line are resolved against the directory the arena runs in
  before it moves there);
- with a scrubbed environment (the locale and search paths, ``BOT_*`` settings and its own ``ARENA_*``);
- under resource limits (:class:`arena.bots.limits.Limits`), optionally inside bubblewrap (no network, a
  read-only view of the system), optionally frozen with SIGSTOP while it is not its turn;
- with its stdout and stderr drained into a log file, truncated at a limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import secrets
import shlex
import shutil
import signal
import sys
from pathlib import Path

from arena.bots.limits import Limits
from arena.scratch import scratch_dir

# Passed through to bots; everything else in the arena's environment stays behind.
_KEEP = ("PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "NODE_PATH", "VIRTUAL_ENV", "SYSTEMROOT")
MARKER = "ARENA_BOT_MARKER"


class LaunchError(Exception):
    """A bot's command line could not be started; the message names the command and the reason."""


class BotProcess:
    def __init__(
        self,
        name: str,
        command: str,
        proc: asyncio.subprocess.Process,
        log_path: Path | None,
        limits: Limits,
        workdir: Path,
        marker: str,
    ):
        self.name = name
        self.command = command
        self.proc = proc
        self.log_path = log_path
        self.limits = limits
        self.workdir = workdir
        self.marker = marker
        self.frozen = False
        self._pump: asyncio.Task[None] | None = None

    @classmethod
    async def start(
        cls,
        name: str,
        command: str,
        address: str,
        token: str,
        log_path: Path | None = None,
        limits: Limits | None = None,
    ) -> BotProcess:
        limits = limits or Limits()
        try:
            argv = shlex.split(
                command.replace("{address}", address)
                .replace("{token}", token)
                .replace("{python}", shlex.quote(sys.executable))  # the arena's own interpreter
            )
        except ValueError as exc:
            raise LaunchError(f"bot {name!r}: cannot split command {command!r}: {exc}") from exc
        if not argv:
            raise LaunchError(f"bot {name!r}: empty command")
        argv = [_absolute(a) for a in argv]
        workdir = scratch_dir("bot-")
        marker = secrets.token_hex(8)
        env = {k: v for k, v in os.environ.items() if k in _KEEP or k.startswith(("LC_", "BOT_"))}
        env.update(
            HOME=str(workdir),
            TMPDIR=str(workdir),
            ARENA_ADDRESS=address,
            ARENA_TOKEN=token,
            ARENA_BOT_NAME=name,
            **{MARKER: marker},
        )
        if limits.sandbox == "bubblewrap":
            argv = _bubblewrap(argv, workdir, address)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                cwd=workdir,
                # Its own process group, so that it is killed with its children. (A new session would
                # also give it its own scheduler autogroup, which makes every round trip dearer.)
                process_group=0,
            )
        except OSError as exc:
            shutil.rmtree(workdir, ignore_errors=True)
            raise LaunchError(
                f"bot {name!r}: cannot start {argv[0]!r}: {exc.strerror or exc}"
            ) from exc
        # Limits are set on the started child (prlimit), not in a preexec hook: the arena's process has
        # gRPC threads, and running Python between fork and exec in a threaded process can crash.
        _apply_limits(proc.pid, limits)
        bot = cls(name, command, proc, log_path, limits, workdir, marker)
        bot._pump = asyncio.create_task(bot._copy_output())
        return bot

    async def _copy_output(self) -> None:
        """Drain the bot's output (a full pipe would block it) into its log, up to the limit."""
        stream = self.proc.stdout
        assert stream is not None
        written = 0
        log = self.log_path.open("wb") if self.log_path is not None else None
        limit = self.limits.log_bytes
        try:
            while chunk := await stream.read(65536):
                if log is not None and written < limit:
                    part = chunk[: limit - written]
                    log.write(part)
                    written += len(part)
                    if written >= limit:
                        log.write(b"\n[log truncated]\n")
        finally:
            if log is not None:
                log.close()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    async def wait(self) -> int:
        return await self.proc.wait()

    def freeze(self) -> None:
        """Stop the bot's processes while it is not its turn (fairness option)."""
        if self.limits.freeze and not self.frozen and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGSTOP)
                self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGCONT)
            self.frozen = False

    def cpu_seconds(self) -> float:
        """The most CPU time any one of the bot's processes has used so far (RLIMIT_CPU counts per
        process): a bot process that plays several matches spends one limit over all of them."""
        tick = os.sysconf("SC_CLK_TCK")
        most = 0.0
        for pid in {self.proc.pid, *marked_processes(self.marker)}:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                most = max(most, (int(stat[11]) + int(stat[12])) / tick)  # utime + stime
            except (OSError, IndexError, ValueError):
                continue
        return most

    async def stop(self, grace: float = 1.0) -> None:
        """Terminate the bot's whole process group and any descendant that left it; kill what lingers;
        remove its working directory."""
        self.thaw()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
            try:
                await asyncio.wait_for(self.proc.wait(), timeout=grace)
                break
            except TimeoutError:
                continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # children that outlived the leader
        for pid in marked_processes(self.marker):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)  # descendants that started a session of their own
        if self._pump is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._pump, timeout=grace)
        shutil.rmtree(self.workdir, ignore_errors=True)


def marked_processes(marker: str) -> list[int]:
    """Processes whose environment carries this bot's marker (Linux /proc)."""
    needle = f"{MARKER}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _absolute(arg: str) -> str:
    """A relative path that exists where the arena runs, made absolute (the bot starts elsewhere)."""
    if arg.startswith("-") or os.path.isabs(arg) or not os.path.exists(arg):
        return arg
    return os.path.abspath(arg)


def _apply_limits(pid: int, limits: Limits) -> None:
    """Resource limits on the bot's process (inherited by its children); each only lowered."""
    mib = 1024 * 1024
    for which, value in (
        (resource.RLIMIT_AS, limits.memory_mb * mib),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * mib),
        (resource.RLIMIT_NOFILE, limits.open_files),
    ):
        if value <= 0:
            continue
        with contextlib.suppress(ValueError, OSError):  # it may already have exited
            _soft, hard = resource.prlimit(pid, which)
            new_hard = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.prlimit(pid, which, (new_hard, new_hard))


def bubblewrap_available() -> bool:
    return shutil.which("bwrap") is not None


def _bubblewrap(argv: list[str], workdir: Path, address: str) -> list[str]:
    """Run under bubblewrap: a read-only view of the system (its temporary folder is its own working
    directory), no network but the referee's Unix socket, killed with the arena."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise LaunchError(
            "sandbox = bubblewrap was asked for, but bwrap is not installed "
            "(Debian package: bubblewrap)"
        )
    if not address.startswith("unix:"):
        raise LaunchError(
            "sandbox = bubblewrap needs the referee on a Unix socket (the bot has no network)"
        )
    socket_dir = os.path.dirname(address.removeprefix("unix:").removeprefix("//"))
    return [
        bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--bind", str(workdir), str(workdir), "--bind", socket_dir, socket_dir,
        "--unshare-all", "--die-with-parent", "--chdir", str(workdir), "--", *argv,
    ]  # fmt: skip
