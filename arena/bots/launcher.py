"""Launch and supervise a local bot process.

The bot is told where the referee is and which token to present through the environment
(``ARENA_ADDRESS``, ``ARENA_TOKEN``) and, if its command line holds them, through the placeholders
``{address}`` and ``{token}``. It runs in its own process group, so that it is killed with every child it
started when its match ends; its stdout and stderr go to a log file, truncated at a limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from pathlib import Path

LOG_LIMIT_BYTES = 1_000_000


class LaunchError(Exception):
    """A bot's command line could not be started; the message names the command and the reason."""


class BotProcess:
    def __init__(
        self, name: str, command: str, proc: asyncio.subprocess.Process, log_path: Path | None
    ):
        self.name = name
        self.command = command
        self.proc = proc
        self.log_path = log_path
        self._pump: asyncio.Task[None] | None = None

    @classmethod
    async def start(
        cls,
        name: str,
        command: str,
        address: str,
        token: str,
        log_path: Path | None = None,
        cwd: Path | None = None,
    ) -> BotProcess:
        try:
            argv = shlex.split(command.replace("{address}", address).replace("{token}", token))
        except ValueError as exc:
            raise LaunchError(f"bot {name!r}: cannot split command {command!r}: {exc}") from exc
        if not argv:
            raise LaunchError(f"bot {name!r}: empty command")
        env = {**os.environ, "ARENA_ADDRESS": address, "ARENA_TOKEN": token, "ARENA_BOT_NAME": name}
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                cwd=cwd,
                start_new_session=True,  # its own process group: killed with its children
            )
        except OSError as exc:
            raise LaunchError(
                f"bot {name!r}: cannot start {argv[0]!r}: {exc.strerror or exc}"
            ) from exc
        bot = cls(name, command, proc, log_path)
        bot._pump = asyncio.create_task(bot._copy_output())
        return bot

    async def _copy_output(self) -> None:
        """Drain the bot's output (a full pipe would block it) into its log, up to the limit."""
        stream = self.proc.stdout
        assert stream is not None
        written = 0
        log = self.log_path.open("wb") if self.log_path is not None else None
        try:
            while chunk := await stream.read(65536):
                if log is not None and written < LOG_LIMIT_BYTES:
                    part = chunk[: LOG_LIMIT_BYTES - written]
                    log.write(part)
                    written += len(part)
                    if written >= LOG_LIMIT_BYTES:
                        log.write(b"\n[log truncated]\n")
        finally:
            if log is not None:
                log.close()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    async def wait(self) -> int:
        return await self.proc.wait()

    async def stop(self, grace: float = 1.0) -> None:
        """Terminate the bot's whole process group; kill it if it lingers."""
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
        if self._pump is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._pump, timeout=grace)
