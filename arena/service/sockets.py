"""A Unix socket of its own for each sandboxed bot.

A sandboxed bot has no network: it reaches the referee through a Unix socket bound into its sandbox.
Were that one socket shared by every bot, a bot could open connections on it until the referee's
process ran out of file descriptors (each connection holds one, and a bot's processes hold a thousand
each): then no other bot could connect, and the referee could open no file, its records included. So
each bot is given a listener of its own, a small gRPC server of the same gateway (started in a couple
of milliseconds, sharing the process's gRPC threads and event loop), which accepts at most
MAX_CONNECTIONS_PER_BOT connections at a time: gRPC closes the ones past it at once. A bot that floods
its socket is left only its own connections, and no other bot's socket is touched.

The sockets live in one private folder of the referee (mode 0700: no one else may reach them); each
socket itself is open to all, so that a bot under a uid of its own may connect to the one bound into
its sandbox.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import grpc

from arena.common.scratch_dirs import scratch_dir

# A bot dials once (every example SDK keeps one connection for all its matches); a few more leave
# room for a reconnect while the old connection closes, or a health check beside the stream.
MAX_CONNECTIONS_PER_BOT = 8
# How long a closing socket's server lets its streams end on their own (its bot has exited, or is
# being stopped): their handlers are cancelled after it.
CLOSE_GRACE_SECONDS = 1.0


class BotSocket:
    """One bot's listener: ``path`` is the socket to bind into its sandbox."""

    def __init__(self, path: Path, server: grpc.aio.Server, owner: BotSockets) -> None:
        self.path = path
        self._server = server
        self._owner = owner
        self.closed = False

    async def close(self) -> None:
        """Stop listening, end the streams still open on it, remove the socket. Idempotent."""
        if self.closed:
            return
        self.closed = True
        self._owner.forget(self)
        try:
            await self._server.stop(CLOSE_GRACE_SECONDS)
        finally:
            with contextlib.suppress(OSError):
                self.path.unlink()


class BotSockets:
    """Makes a :class:`BotSocket` per bot, each a server that ``register`` fills with the bot
    gateway's services, with ``options`` and the connection cap."""

    def __init__(
        self, register: Callable[[grpc.aio.Server], None], options: Sequence[tuple[str, Any]]
    ) -> None:
        self._register = register
        self._options = [
            *options,
            ("grpc.max_allowed_incoming_connections", MAX_CONNECTIONS_PER_BOT),
        ]
        self.folder = scratch_dir("referee-")
        self.folder.chmod(0o700)
        self._count = 0
        self._open: set[BotSocket] = set()

    async def open(self) -> BotSocket:
        """A new bot's socket, listening. OSError if it cannot be bound."""
        self._count += 1
        path = self.folder / f"{self._count}.sock"  # short: a socket's path has at most 107 bytes
        server = grpc.aio.server(options=self._options)
        self._register(server)
        try:
            server.add_insecure_port(f"unix:{path}")
        except RuntimeError as exc:
            raise OSError(f"cannot listen for a sandboxed bot on {path}: {exc}") from exc
        await server.start()
        path.chmod(0o666)
        sock = BotSocket(path, server, self)
        self._open.add(sock)
        return sock

    def forget(self, sock: BotSocket) -> None:
        """``sock`` is closed: no longer one to close at the end."""
        self._open.discard(sock)

    @property
    def open_count(self) -> int:
        """How many sockets are listening now."""
        return len(self._open)

    async def close(self) -> None:
        """Close every socket still open and remove the folder."""
        for sock in list(self._open):
            with contextlib.suppress(Exception):
                await sock.close()
        shutil.rmtree(self.folder, ignore_errors=True)
