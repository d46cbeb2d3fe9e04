"""Launch and supervise a local bot process.

The bot is told where the referee is and which token to present through its environment
(``ARENA_ADDRESS``, ``ARENA_TOKEN``); ``{address}`` in its command line is replaced by the address too,
and ``{python}`` stands for the arena's interpreter. A token never appears on a command line (any
process of the machine can read command lines): ``{token}`` is refused. The bot runs:

- confined as its limits say (:mod:`arena.sandbox`): isolated by bubblewrap in namespaces of its own,
  under a uid of its own when the arena is root, or in the light mode; either way with its resource
  limits set before its first instruction and killed if the arena dies;
- in a working folder of its own (also its ``HOME`` and ``TMPDIR``), removed afterwards (relative paths
  on its command line are resolved against the folder the arena runs in before it moves there);
- with a scrubbed environment (the locale and search paths, ``BOT_*`` settings and its own ``ARENA_*``);
- optionally frozen while it is not its turn (its freezer group, else SIGSTOP);
- with its stdout and stderr drained into a log file, truncated at a limit, and the last lines kept in
  memory (to say why a bot that died did).

When it is stopped, every process it started goes too: its PID namespace (isolated), or its process
group, the processes carrying its environment marker and whoever still holds its output (light). In
the light mode (for trusted bots) a process that leaves the group, clears its environment and closes
its output is out of reach: it can outlive the match.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import shutil
import signal
import sys
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from arena.bots.limits import Limits
from arena.sandbox import (
    Confinement,
    RefereeAddress,
    SandboxError,
    completed_or_undone,
    confine,
    procs,
    runtime,
)

# Passed through to bots; everything else in the arena's environment stays behind. GRPC_EXPERIMENTS is
# the gRPC transport the arena runs on (arena/__init__.py), so that a bot on grpc's C core uses it too.
_KEEP = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "PYTHONPATH",
    "NODE_PATH",
    "VIRTUAL_ENV",
    "SYSTEMROOT",
    "GRPC_EXPERIMENTS",
)
MARKER = "ARENA_BOT_MARKER"
TAIL_LINES = 20  # the last lines of a bot's output kept in memory
# The most of a bot's raw output kept in memory since it was last taken (take_output): a competition
# keeps each game's tail, up to its output_kib, of what each bot wrote during the game.
OUTPUT_KEPT_BYTES = 1024 * 1024
HEAD_LINES = 3  # ... and its first (Node.js puts a crash's error first, its stack after)
TAIL_LINE_CHARS = 300  # each cut at this length
FREEZE_PASSES = 100  # at most this many passes over a frozen bot's processes (see freeze())


class LaunchError(Exception):
    """A bot's command line could not be started; the message names the command and the reason."""


def bot_environment() -> dict[str, str]:
    """What of the arena's environment a bot process gets: the locale and search paths, gRPC's
    transport and BOT_* settings; nothing else (no secret of the arena's). NODE_PATH leads with the
    JavaScript SDK."""
    env = {k: v for k, v in os.environ.items() if k in _KEEP or k.startswith(("LC_", "BOT_"))}
    node = [*runtime.node_path(), *filter(None, env.get("NODE_PATH", "").split(os.pathsep))]
    if node:
        env["NODE_PATH"] = os.pathsep.join(node)
    return env


def check_command(command: str, name: str = "bot") -> None:
    """Refuse what a bot's command line may not hold (raises LaunchError naming the problem)."""
    if not command.strip():
        raise LaunchError(
            f"{name!r}: the command is empty: give the command line that starts the bot, quoted as "
            "one argument (e.g. '{python} -m arena_bot.greedy_bot')"
        )
    if "{token}" in command:
        raise LaunchError(
            f"{name!r}: the command holds {{token}}, but a token never goes on a command line "
            "(every process of the machine can read command lines): the bot reads its token from "
            "the environment variable ARENA_TOKEN"
        )


def split_command(command: str, name: str = "bot", base: str | Path | None = ".") -> list[str]:
    """The argument list of a bot's command line, ``{python}`` replaced by the arena's interpreter,
    and its relative paths that exist in ``base`` made absolute (where the arena runs, by default, for
    a command typed here). ``base=None`` leaves every word as it is: a command already resolved
    within its own folder (a submitted bundle's), whose other words must never name the files of
    the folder the arena runs in (the sandbox shows a bot every path its command names)."""
    check_command(command, name)
    try:
        argv = shlex.split(command.replace("{python}", shlex.quote(sys.executable)))
    except ValueError as exc:
        raise LaunchError(f"bot {name!r}: cannot split command {command!r}: {exc}") from exc
    if not argv:
        raise LaunchError(f"bot {name!r}: empty command")
    return argv if base is None else [_absolute(a, base) for a in argv]


class _Watched(asyncio.subprocess.SubprocessStreamProtocol):
    """The stream protocol of asyncio's subprocesses, also telling when the process has exited: in
    Python 3.11 ``Process.wait()`` returns only once its pipes are closed too, which a child that
    outlived the bot and holds its output would delay for ever."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        self.exited.set()
        super().process_exited()


class BotProcess:
    def __init__(
        self,
        name: str,
        command: str,
        proc: asyncio.subprocess.Process,
        exited: asyncio.Event,
        log_path: Path | None,
        limits: Limits,
        confinement: Confinement,
        marker: str,
    ):
        self.name = name
        self.command = command
        self.proc = proc
        self.log_path = log_path
        self.limits = limits
        self.confinement = confinement
        self.marker = marker
        self.frozen = False
        self._frozen_by_group = False  # frozen through its freezer group, not by signals
        self._stopped_apart: set[int] = set()  # stopped one by one by freeze(), for thaw()
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self.head: list[str] = []
        self.lines = 0  # lines of output written so far (those kept counted exactly)
        self._since = bytearray()  # the tail of its output since take_output last took it
        self._since_bytes = 0  # how much it wrote since then
        self._exited = exited
        self._pump: asyncio.Task[None] | None = None
        self._pipe_inode = 0
        self._stopped = False

    @classmethod
    async def start(
        cls,
        name: str,
        command: str,
        address: str,
        token: str,
        log_path: Path | None = None,
        limits: Limits | None = None,
        *,
        socket: str = "",
        hide: Sequence[Path] = (),
        resolve_from: str | Path | None = ".",
    ) -> BotProcess:
        """Start a bot. ``address`` is the referee's TCP address (``HOST:PORT``) or its Unix socket
        (``unix:PATH``); ``socket`` its Unix socket's path, which an isolated bot needs (it has no
        network). ``hide``: paths an isolated bot must never see, even inside a folder it may.
        ``resolve_from``: see :func:`split_command`'s ``base``."""
        limits = limits or Limits()
        argv = split_command(command, name, resolve_from)
        if address.startswith("unix:") and not socket:
            socket, address = address.removeprefix("unix:").removeprefix("//"), ""
        marker = secrets.token_hex(8)
        env = bot_environment()
        env.update(ARENA_TOKEN=token, ARENA_BOT_NAME=name, **{MARKER: marker})
        check_startable(name, argv, env.get("PATH"))
        # A start called off half-way (its game was) leaves nothing behind: neither a lease nor a
        # process (see completed_or_undone).
        try:
            # Off the event loop: it reads /proc and the file system, and the loop times bots.
            confinement = await completed_or_undone(
                asyncio.to_thread(
                    confine,
                    argv,
                    env,
                    mode=limits.sandbox,
                    rlimits=limits.rlimits(),
                    referee=RefereeAddress(tcp=address, socket=socket),
                    hide=hide,
                ),
                Confinement.release,
            )
        except SandboxError as exc:
            raise LaunchError(f"bot {name!r}: {exc}") from exc
        loop = asyncio.get_running_loop()
        protocol = _Watched(limit=2**16, loop=loop)
        try:
            transport, _ = await confinement.spawn(
                lambda: protocol,
                (MARKER, marker),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
        except OSError as exc:
            confinement.release()
            raise LaunchError(
                f"bot {name!r}: cannot start {argv[0]!r}: {exc.strerror or exc}"
            ) from exc
        except asyncio.CancelledError:
            confinement.release()
            raise
        proc = asyncio.subprocess.Process(transport, protocol, loop)
        bot = cls(name, command, proc, protocol.exited, log_path, limits, confinement, marker)
        pipe = transport.get_pipe_transport(1)
        if pipe is not None:
            # A bot that has already exited may have had its pipe closed (ValueError): it holds none.
            with contextlib.suppress(AttributeError, OSError, ValueError):
                bot._pipe_inode = os.fstat(pipe.get_extra_info("pipe").fileno()).st_ino
        bot._pump = asyncio.create_task(bot._copy_output())
        return bot

    @property
    def isolated(self) -> bool:
        return self.confinement.isolated

    @property
    def workdir(self) -> Path | None:
        """Its working folder on this machine (light mode); an isolated bot's is a tmpfs of its own."""
        return self.confinement.workdir

    async def _copy_output(self) -> None:
        """Drain the bot's output (a full pipe would block it) into its log, up to the limit, and keep
        its last lines."""
        stream = self.proc.stdout
        assert stream is not None
        written = 0
        log = self.log_path.open("wb") if self.log_path is not None else None
        limit = self.limits.log_bytes
        partial = b""
        try:
            while chunk := await stream.read(65536):
                self._since += chunk[-OUTPUT_KEPT_BYTES:]
                if len(self._since) > OUTPUT_KEPT_BYTES:
                    del self._since[: len(self._since) - OUTPUT_KEPT_BYTES]
                self._since_bytes += len(chunk)
                if log is not None and written < limit:
                    part = chunk[: limit - written]
                    log.write(part)
                    written += len(part)
                    if written >= limit:
                        log.write(b"\n[log truncated]\n")
                lines = (partial + chunk).split(b"\n")
                partial = lines.pop()[-4 * TAIL_LINE_CHARS :]
                for line in lines[: HEAD_LINES - len(self.head)]:
                    if text := output_line(line):
                        self.head.append(text)
                self.lines += len(lines)
                for line in lines[-TAIL_LINES:]:
                    self._keep(line)
        finally:
            if partial:
                if len(self.head) < HEAD_LINES and (text := output_line(partial)):
                    self.head.append(text)
                self.lines += 1
                self._keep(partial)
            if log is not None:
                log.close()

    def _keep(self, line: bytes) -> None:
        text = output_line(line)
        if text:
            self.tail.append(text)

    def take_output(self, limit: int) -> tuple[bytes, int]:
        """The last ``limit`` bytes (at most OUTPUT_KEPT_BYTES) of what the bot wrote since this was
        last called, and how many it wrote in all since then; the next call starts afresh (a process
        that plays several games: each game's own)."""
        kept = bytes(self._since[-limit:]) if limit > 0 else b""
        written = self._since_bytes
        self._since.clear()
        self._since_bytes = 0
        return kept, written

    def last_output(self, lines: int = 8) -> list[str]:
        """The last lines the bot wrote (stdout and stderr), made printable and cut to length."""
        return list(self.tail)[-lines:]

    def output_shown(self, lines: int = 8) -> list[str]:
        """What to show of the bot's output when it failed: all of it when it is short, else its
        first lines (where Node.js writes a crash's error) and its last (where Python does), the
        cut marked."""
        if self.lines <= lines:
            return self.last_output(lines)
        last = self.last_output(lines - len(self.head) - 1)  # ``lines`` in all, the mark too
        return [*self.head, "... (lines left out)", *last]

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    async def wait(self) -> int:
        """Until the bot's process has exited (whoever else holds its output); its exit code."""
        await self._exited.wait()
        code = self.proc.returncode
        assert code is not None
        return code

    async def output_done(self, timeout: float) -> None:
        """Until its output has been read to the end (at most ``timeout`` seconds)."""
        if self._pump is not None and not self._pump.done():
            await asyncio.wait({self._pump}, timeout=timeout)

    @property
    def log_written(self) -> bool:
        """Whether its log is complete: its output read to its end and the file closed, which writes
        out the last of it (True for a bot without a log). That is later than its process's exit
        (the rest of its output is still in the pipe then, and in the light mode a process it
        started may outlive it holding the pipe), and never while it waits between matches for
        another. A log taken before is cut short, and what is written afterwards goes to a file
        that nobody reads."""
        return self.log_path is None or (self._pump is not None and self._pump.done())

    def exit_text(self) -> str:
        """How its process ended, in words."""
        code = self.proc.returncode
        if code is None:
            return "bot process is running"
        if self.confinement.out_of_memory:
            mib = self.limits.memory_mb
            return (
                f"bot process was killed: its processes together passed their memory ({mib} MiB, "
                f"[limits] memory_mb) (exit status {code})"
            )
        if code < 0:
            return f"bot process was killed by {_signal_name(-code)}"
        if code > 128 and self.isolated and _signal_name(code - 128) != str(code - 128):
            return f"bot process exited with code {code} (killed by {_signal_name(code - 128)})"
        return f"bot process exited with code {code}"

    def freeze(self) -> None:
        """Stop the bot's processes while it is not its turn (fairness option). Where it has a
        freezer group (:mod:`arena.sandbox.cgroups`), the group is frozen: every process at once,
        whatever session or group it is in, and none can continue another. Elsewhere by signals:
        isolated, every process of its PID namespace is stopped too, pass after pass until a pass
        finds none it has not stopped (a process that left the process group, ``setsid``, is out of
        reach of the group's SIGSTOP; a process stopped while it forks has its fork restarted once
        it runs again); a light bot, trusted, is stopped by its group alone (finding its processes
        reads every process's environment, on every turn)."""
        if not self.limits.freeze or self.frozen or self.proc.returncode is not None:
            return
        groups = self.confinement.groups
        if groups is not None and groups.freezes:
            with contextlib.suppress(OSError):
                groups.freeze()
                self.frozen = self._frozen_by_group = True
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGSTOP)
            self.frozen = True
        if self.frozen and self.isolated:
            for _ in range(FREEZE_PASSES):
                found = self.processes() - self._stopped_apart
                if not found:
                    break
                procs.kill_all(found, signal.SIGSTOP)
                self._stopped_apart |= found

    def thaw(self) -> None:
        if not self.frozen:
            return
        if self._frozen_by_group:
            groups = self.confinement.groups
            if groups is not None:  # else released: its groups were thawed as they went
                with contextlib.suppress(OSError):
                    groups.thaw()
        elif not self.confinement.reaped(self.proc.pid):  # else its pids may be others' (_signal)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGCONT)
            procs.kill_all(self._stopped_apart, signal.SIGCONT)
        self._stopped_apart = set()
        self.frozen = self._frozen_by_group = False

    def processes(self) -> set[int]:
        """The bot's processes now (see :meth:`arena.sandbox.Confinement.members`)."""
        return self.confinement.members(self.proc.pid, (MARKER, self.marker))

    def cpu_seconds(self) -> float:
        """The most CPU time any one of the bot's processes has used so far (RLIMIT_CPU counts per
        process): a bot process that plays several matches spends one limit over all of them."""
        return max((procs.cpu_seconds(p) for p in self.processes()), default=0.0)

    async def stop(self, grace: float = 1.0) -> None:
        """Terminate the bot and every process it started, release what its sandbox held. Bounded:
        it never waits more than a few times ``grace``, whatever the bot's children do, and never
        raises for anything the bot did."""
        if self._stopped:
            return
        self._stopped = True
        try:
            self.thaw()
            # The signals go off the event loop: finding a light bot's processes reads /proc.
            if self.proc.returncode is None:
                await asyncio.to_thread(self._signal, signal.SIGTERM)
                await self._wait_exit(grace)
            # What lingers, and descendants that left the group.
            await asyncio.to_thread(self._signal, signal.SIGKILL)
            await self._wait_exit(grace)
            await self.output_done(grace)
            if self._pump is not None and not self._pump.done() and self._pipe_inode:
                # Someone still holds its output: a descendant that escaped (light mode).
                holders = await asyncio.to_thread(procs.holding_pipe, self._pipe_inode)
                procs.kill_all(holders)
                await self.output_done(grace)
            if self._pump is not None and not self._pump.done():
                self._pump.cancel()
                await asyncio.wait({self._pump}, timeout=grace)
        finally:
            transport = getattr(self.proc, "_transport", None)
            if transport is not None:
                with contextlib.suppress(Exception):
                    transport.close()
            self.confinement.release()  # light: removes its folder; isolated: gives its uid back

    def _signal(self, sig: int) -> None:
        # Once its first process is reaped, its pid (and its group's id) may be another's: another
        # bot's, started meanwhile, was killed by a stop that came after the exit.
        reaped = self.confinement.reaped(self.proc.pid)
        if not reaped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
        if self.isolated:
            # Its first process is bubblewrap's: when it dies, the bot's PID namespace ends and the
            # kernel kills everything in it, whatever session or group a process moved to.
            if not reaped:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self.proc.pid, sig)
            return
        procs.kill_all(self.processes() - {os.getpid()}, sig)

    async def _wait_exit(self, timeout: float) -> None:
        if not self._exited.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._exited.wait()


def marked_processes(marker: str) -> list[int]:
    """Processes whose environment carries this bot's marker (Linux /proc)."""
    return procs.with_marker(MARKER, marker)


def output_line(line: bytes) -> str:
    """A line of a bot's output as it is shown: decoded, cut to TAIL_LINE_CHARS, made printable; ""
    for a blank one. Only what is kept is decoded and cleaned (a character takes at most four
    bytes): a bot's long lines cost the arena no more than short ones."""
    text = line[: 4 * TAIL_LINE_CHARS].decode(errors="replace").rstrip("\r")[:TAIL_LINE_CHARS]
    return printable(text) if text.strip() else ""


def printable(text: str) -> str:
    """Text made safe to show on a terminal: control characters (escape sequences) replaced."""
    if text.isprintable():  # most lines: one pass in C
        return text
    return "".join(c if c.isprintable() or c == "\t" else "\ufffd" for c in text)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def check_startable(name: str, argv: Sequence[str], path: str | None) -> None:
    """What :meth:`BotProcess.start` checks before it starts a bot (a LaunchError saying why it
    cannot): its program is found and can run, and the script an interpreter is to run exists."""
    _check_program(name, argv[0], path)
    _check_script(name, argv)


def _check_program(name: str, program: str, path: str | None) -> None:
    found = shutil.which(program, path=path) if os.sep not in program else program
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        if os.sep not in program:
            where = "it is not found in PATH"
        elif not os.path.lexists(program):
            where = "there is no such file"
        else:
            where = "it is not an executable file"
        hint = ""
        if program.endswith(".py"):
            hint = f" (a Python script runs as '{{python}} {program}')"
        elif program.endswith((".js", ".mjs", ".cjs")):
            hint = f" (a JavaScript script runs as 'node {program}')"
        elif program.startswith("{"):
            hint = " (the arena replaces only {python} and {address} in a command)"
        raise LaunchError(f"bot {name!r}: cannot start {program!r}: {where}{hint}")


INTERPRETERS = ("python", "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "java", "lua")
INLINE = ("-m", "-c", "-e", "-p", "--eval", "--print")  # a module or code on the command line
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs")  # what python or node runs from a file


def interpreter(program: str) -> str:
    """The interpreter a program is ("python" for python3.11 and for ``{python}``), or ""."""
    found = os.path.basename(program)
    found = "python" if found == "{python}" else found.rstrip("0123456789.")
    return found if found in INTERPRETERS else ""


def script_of(argv: Sequence[str]) -> str:
    """The script file an interpreter runs, its first argument that is no option; "" for a program
    that is no interpreter, or a module or code given on the command line."""
    if not interpreter(argv[0]) or any(a in INLINE for a in argv[1:]):
        return ""
    return next((a for a in argv[1:] if not a.startswith("-")), "")


def _check_script(name: str, argv: Sequence[str]) -> None:
    """The script Python or Node is to run, named by a relative path that exists neither where the
    command was read from nor where the arena runs (both are tried: see :func:`resolve_paths`), is
    refused: the bot would start in a folder of its own and fail there, naming a path its author
    never wrote. So is an absolute path to no file: the bot could only die before it dials in (in
    an A/B test, as forfeits recorded before the test stops)."""
    script = script_of(argv)
    if not script.endswith(SCRIPT_SUFFIXES):
        return
    if not os.path.isabs(script):
        raise LaunchError(
            f"bot {name!r}: cannot start it: its script {script!r} does not exist (a relative "
            "path is read from the folder of the file that names the bot, else from where the "
            "arena runs)"
        )
    if not os.path.exists(script):  # a typo in an absolute path fails the same way once started
        raise LaunchError(f"bot {name!r}: cannot start it: its script {script!r} does not exist")


def _absolute(arg: str, base: str | Path = ".") -> str:
    """A relative path that exists in ``base`` (where the arena runs, by default), made absolute: the
    bot starts in a folder of its own."""
    if arg.startswith("-") or "{" in arg or os.path.isabs(arg):
        return arg
    candidate = os.path.join(base, arg)
    return os.path.abspath(candidate) if os.path.exists(candidate) else arg


def resolve_paths(command: str, base: Path) -> str:
    """A command line whose relative paths that exist in ``base`` (a tournament file's folder, a
    submission's) are made absolute, so that it runs the same whatever folder the arena runs in;
    ``{python}`` and the rest are left for :func:`split_command`."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command  # split_command reports the bad quoting when the bot is started
    return shlex.join(_absolute(word, base) for word in words)


def bubblewrap_available() -> bool:
    """Whether bubblewrap is installed (:func:`arena.sandbox.probe` says whether it works)."""
    return shutil.which("bwrap") is not None
