"""The node's side: a referee in each Ray worker process, playing the games sent to it.

:func:`play` is the Ray task (made remote by the coordinator, :mod:`.player`). The worker process that
runs it keeps one referee server (:func:`arena.service.server.create_server`) on an event loop of its
own thread, so that a bot process may play several games over its connection
(``matches_per_process``) exactly as locally; it is replaced after :data:`RECYCLE_GAMES` games, and
closed (its waiting bot processes stopped) after :data:`IDLE_SECONDS` without a game. The game itself is
played by :class:`arena.play.game.GamePlayer`, the same code as a local run: the same
configuration, deal secret, limits, sandbox and stall replays.

With the bots' logs asked for, each game's result brings back the logs that are complete: those of
the bot processes whose output has been read to its end. A process kept for more matches
(``matches_per_process``) writes on between games, and its log is complete only once it has been
stopped, perhaps at the very end of the run: :func:`finish`, run on each node before the coordinator
lets the cluster go, closes every referee of the run there and brings back the logs they still hold.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import os
import shutil
import socket
import stat
import struct
import tempfile
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bots.limits import Limits
from arena.cluster.bot_files import resolve, unpack
from arena.cluster.connect import fingerprint
from arena.common import scratch_dirs as scratch
from arena.common.scratch_dirs import scratch_dir
from arena.ledger.rows import ScheduledGame
from arena.play.game import CONNECT_TIMEOUT, GamePlayer, GameRules, Played
from arena.play.stall_watch import StallWatch
from arena.referee import MatchConfig
from arena.sandbox import ISOLATING, SandboxUnavailable, probe, require
from arena.service.match_manager import ManagerOptions, MatchManager, PlayerSpec
from arena.service.server import ArenaServer, create_server

RECYCLE_GAMES = 200  # games a referee plays before it is replaced (its finished matches are let go)
IDLE_SECONDS = 30.0  # without a game, the referee closes (and stops its waiting bot processes)
KEEP_PARCELS = 8  # unpacked parcels kept beyond a game's own once no bot process may use them
CLOSE_SECONDS = 30.0  # at the end of a run, for a node's referees to close and send their logs
# A referee's Unix socket, in its process's scratch folder (arena.common.scratch_dirs), named after its Ray job
FINISH_SOCKET = "referee-{job}.sock"
# Before each log a referee sends to finish(): the lengths of its name and of its bytes
_FRAME = struct.Struct("!IQ")


class NodeError(Exception):
    """This node cannot play the game (another arena version, a parcel that cannot be unpacked)."""


@dataclass(frozen=True, slots=True)
class Result:
    """What goes back to the coordinator."""

    played: Played
    node: dict[str, str]  # id, address, host
    logs: dict[str, bytes]  # the bots' logs completed since the last game (when asked for), by name


@dataclass(frozen=True, slots=True)
class Finished:
    """What :func:`finish` sends back to the coordinator."""

    node: dict[str, str]  # id, address, host
    logs: dict[str, bytes]  # the logs the node's referees still held, by name
    unanswered: list[str]  # a referee that did not answer in time: one line each


@dataclass(frozen=True, slots=True)
class Checked:
    """The entrants' check on a node (:func:`preflight`)."""

    node: dict[str, str]
    isolation: str  # the sandbox the bots get there (one line), or why the required one is missing
    unavailable: bool  # the tournament requires isolation that the node cannot give
    failures: list[str]  # an entrant that did not start, dial in and say Hello: one line each
    isolated: bool = False  # the bots are isolated there (what every game's node must then give)


def play(
    rules: GameRules,
    game: ScheduledGame,
    commands: Mapping[str, tuple[str, ...]],
    parcels: Mapping[str, Any],
    arena: str,
    logs: bool = False,
    hidden: tuple[str, ...] = (),
    isolated: bool = False,
) -> Result:
    """Play ``game`` here. ``commands``: each player's command as portable words; ``parcels``: the
    object refs of the shipped folders by digest; ``arena``: the coordinator's code fingerprint;
    ``logs``: keep the bots' output and send it back; ``hidden``: paths never shown to a bot (the
    coordinator's ledger, should this node share its filesystem); ``isolated``: the bots were
    isolated where the entrants were checked, and must be here too."""
    import ray

    node = _node(arena)
    check_isolation(rules.limits.sandbox, isolated, node)
    referee = _referee()
    referee.hide(hidden)
    folders = referee.unpacked(parcels, ray.get)
    resolved = {name: resolve(words, folders) if words else "" for name, words in commands.items()}
    if logs:
        # The logs it holds at the end of the run are asked for then (finish).
        referee.listen(ray.get_runtime_context().get_job_id())
    played = referee.play(rules, game, resolved, logs)
    return Result(played, node, referee.finished_logs() if logs else {})


def finish(arena: str, seconds: float = CLOSE_SECONDS) -> Finished:
    """The end of a run on this node (a Ray task placed on it): every referee that the run's Ray job
    keeps here for the bots' logs is closed, which stops its bot processes, those waiting between
    games for another match too, so that their logs are complete; and the logs it still held come
    back. A referee lives in the worker process that played its games, and Ray runs this task in
    whichever worker process it likes: each referee is reached through its Unix socket (see
    :meth:`NodeReferee.listen`), all at once. Bounded by ``seconds``."""
    import ray

    node = _node(arena)
    sockets = _finish_sockets(ray.get_runtime_context().get_job_id())
    deadline = time.monotonic() + seconds
    logs: dict[str, bytes] = {}
    unanswered = []
    if sockets:
        with ThreadPoolExecutor(max_workers=min(len(sockets), 32)) as pool:
            for path, (found, why) in zip(
                sockets, pool.map(lambda p: _ask(p, deadline), sockets), strict=True
            ):
                logs.update(found)
                if why:
                    unanswered.append(f"the referee of {path.parent.name}: {why}")
    return Finished(node, logs, unanswered)


def _finish_sockets(job: str) -> list[Path]:
    """The Unix sockets of ``job``'s referees, in the scratch folders of the arena processes of this
    machine: those of every Ray node it runs (a machine may run several, as the tests do, and the
    first finishing task to ask a referee gets its logs; each log is taken once). Only a socket of
    this user's is asked: another user's (made in a folder of theirs under the same name) could send
    anything back as the bots' logs."""
    found = []
    pattern = f"{scratch.PREFIX}*/{FINISH_SOCKET.format(job=job)}"
    for path in Path(tempfile.gettempdir()).glob(pattern):
        with contextlib.suppress(OSError):
            st = path.lstat()
            if stat.S_ISSOCK(st.st_mode) and st.st_uid == os.geteuid():
                found.append(path)
    return sorted(found)


def _ask(path: Path, deadline: float) -> tuple[dict[str, bytes], str]:
    """Ask the referee listening at ``path`` to close, and read the logs it sends back until it ends
    the connection (or the deadline passes: those received whole): the logs, and why it did not
    answer ("" when it did). The socket of a worker process that has died is left behind, and
    refuses: such a referee has nothing to send, and is no failure."""
    received = bytearray()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(max(deadline - time.monotonic(), 0.01))
            sock.connect(str(path))
            while True:
                sock.settimeout(max(deadline - time.monotonic(), 0.01))
                chunk = sock.recv(1 << 20)
                if not chunk:
                    return _unframed(received), ""
                received += chunk
    except (ConnectionRefusedError, FileNotFoundError):
        return {}, ""
    except OSError as exc:  # TimeoutError among them
        why = "no answer in time" if isinstance(exc, TimeoutError) else str(exc)
        return _unframed(received), why


def _framed(logs: Mapping[str, bytes]) -> bytes:
    """Logs as a referee sends them to :func:`finish`: each its lengths (:data:`_FRAME`), its name
    and its bytes."""
    parts = []
    for name, data in logs.items():
        word = name.encode()
        parts += [_FRAME.pack(len(word), len(data)), word, data]
    return b"".join(parts)


def _unframed(data: bytes | bytearray) -> dict[str, bytes]:
    """The logs in ``data`` (:func:`_framed`); a last one cut short is left out."""
    logs = {}
    at = 0
    while at + _FRAME.size <= len(data):
        size, length = _FRAME.unpack_from(data, at)
        start = at + _FRAME.size
        end = start + size + length
        if end > len(data):
            break
        logs[bytes(data[start : start + size]).decode(errors="replace")] = bytes(
            data[start + size : end]
        )
        at = end
    return logs


def preflight(
    variant: str,
    options: tuple[tuple[str, str], ...],
    limits: Limits,
    commands: Mapping[str, tuple[str, ...]],
    parcels: Mapping[str, Any],
    arena: str,
    hidden: tuple[str, ...] = (),
    at_once: int = 1,
) -> Checked:
    """Check the sandbox ``limits`` ask for, then start each entrant once here (``at_once`` at a
    time), as a local run does before its first game."""
    import ray

    node = _node(arena)
    try:
        isolation = require(limits.sandbox).describe()
    except SandboxUnavailable as exc:
        return Checked(node, f"on node {node['host']} ({node['address']}): {exc}", True, [])
    referee = _referee()
    referee.hide(hidden)
    folders = referee.unpacked(parcels, ray.get)
    resolved = {name: resolve(words, folders) for name, words in commands.items()}
    config = MatchConfig(variant=variant, options=options)
    failures = referee.preflight(resolved, config, limits, at_once)
    return Checked(node, isolation, False, failures, probe(limits.sandbox).isolated)


def check_isolation(requested: str, isolated: bool, node: Mapping[str, str]) -> None:
    """Refuse a game whose bots this node would not isolate, when they must be: the sandbox
    requires it, or (``auto``) the node that checked the entrants isolated them. Without bubblewrap a
    node's ``auto`` is the light mode, in which a bot sees the node's files and network (the cluster
    itself), though the organiser was told the bots were isolated."""
    found = probe(requested)
    if (isolated or requested in ISOLATING) and not found.isolated:
        raise NodeError(
            f"node {node['host']} ({node['address']}) cannot isolate the bots as the games need "
            f"({found.reason}): install bubblewrap on every node of the cluster"
        )


def _node(arena: str) -> dict[str, str]:
    """This node (id, address, host), after checking that it runs the coordinator's arena."""
    import ray

    node = {
        "id": ray.get_runtime_context().get_node_id(),
        "address": ray.util.get_node_ip_address(),  # type: ignore[no-untyped-call]
        "host": socket.gethostname(),
    }
    mine = fingerprint()
    if arena != mine:
        raise NodeError(
            f"node {node['host']} ({node['address']}) runs another version of the arena "
            f"(code {mine}, the coordinator's {arena}): install the same version on every node"
        )
    return node


def parcel_root() -> Path:
    """A folder for this process's unpacked parcels, removed when the process exits (and swept, like
    the arena's scratch folders, by the next arena process once this one is gone, even killed). Not
    inside the process's scratch folder: a sandboxed bot never sees that one, and a bot must see its
    own files."""
    path = Path(tempfile.mkdtemp(prefix=f"{scratch.PREFIX}parcels-"))
    # Locked under another name and then renamed, as arena.common.scratch_dirs does: a sweeper never sees it
    # unlocked while this process lives.
    fd = os.open(path / f"{scratch.LOCK}.new", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(path / f"{scratch.LOCK}.new", path / scratch.LOCK)
    pid = os.getpid()

    def remove() -> None:
        if os.getpid() == pid:
            shutil.rmtree(path, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.close(fd)

    atexit.register(remove)
    return path


_lock = threading.Lock()
_instance: NodeReferee | None = None


def _referee() -> NodeReferee:
    global _instance
    with _lock:
        if _instance is None:
            _instance = NodeReferee()
        return _instance


def _asyncio_loop() -> asyncio.AbstractEventLoop:
    """A new event loop of asyncio's own, whatever loop policy this process has been given.

    A Ray worker makes uvloop its default when uvloop is installed (as it is beside uvicorn's standard
    extras, say). uvloop starts no process with ``process_group`` (a light bot's own process group,
    see :meth:`arena.sandbox.Confinement.spawn_options`), and asyncio's own loop, under uvloop's
    policy, has no child watcher to start any. The referee here runs as it does everywhere else: on
    asyncio's loop, with asyncio's policy (which the worker's other loops, made already, never see).
    """
    if not isinstance(asyncio.get_event_loop_policy(), asyncio.DefaultEventLoopPolicy):
        asyncio.set_event_loop_policy(asyncio.DefaultEventLoopPolicy())
    return asyncio.DefaultEventLoopPolicy().new_event_loop()


class NodeReferee:
    """One worker process's referee, on an event loop in a thread of its own (the task's thread only
    waits for it)."""

    def __init__(self) -> None:
        self.loop = _asyncio_loop()
        self.thread = threading.Thread(target=self._serve, name="arena-referee", daemon=True)
        self.thread.start()
        self.server: ArenaServer | None = None
        self.manager: MatchManager | None = None
        self.watches: dict[float, StallWatch] = {}
        self.games = 0
        self.busy = 0
        self.last = time.monotonic()
        self.parcels: dict[str, Path] = {}
        self.parcel_dir: Path | None = None
        self.logs_dir: Path | None = None
        # Managers closed, or being closed, while a log of theirs may still be written: their
        # logs are not taken before they are complete.
        self.retired: list[MatchManager] = []
        self.listener: asyncio.AbstractServer | None = None  # for finish(), once logs are kept
        self.hidden: set[Path] = set()
        asyncio.run_coroutine_threadsafe(self._closer(), self.loop)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def unpacked(self, refs: Mapping[str, Any], get: Any) -> dict[str, Path]:
        """Where each parcel is unpacked in this process (fetched and unpacked on first use). Once
        the referee has closed (no bot process left to use them), the parcels least recently used
        beyond :data:`KEEP_PARCELS` are removed: a worker process lives as long as the run, and a
        competition's games bring it one build after another."""
        if self.manager is None:
            spare = [d for d in self.parcels if d not in refs]
            for digest in spare[: max(0, len(spare) - KEEP_PARCELS)]:
                shutil.rmtree(self.parcels.pop(digest), ignore_errors=True)
        for digest, ref in refs.items():
            if digest in self.parcels:
                self.parcels[digest] = self.parcels.pop(digest)  # the most recently used last
                continue
            if self.parcel_dir is None:
                self.parcel_dir = parcel_root()
            into = self.parcel_dir / digest
            try:
                unpack(get(ref), into)
            except Exception as exc:
                raise NodeError(f"cannot unpack the bots' files here: {exc}") from exc
            self.parcels[digest] = into
        return {d: self.parcels[d] for d in refs}

    def hide(self, paths: tuple[str, ...]) -> None:
        """Never show these paths to a bot started here (from now on)."""
        self.hidden.update(Path(p) for p in paths)
        if self.manager is not None:
            self.manager.hide(*(p for p in self.hidden if p.resolve() not in self.manager.hidden))

    def preflight(
        self, commands: Mapping[str, str], config: MatchConfig, limits: Limits, at_once: int
    ) -> list[str]:
        work = self._preflight(commands, config, limits, at_once)
        return asyncio.run_coroutine_threadsafe(work, self.loop).result()

    async def _preflight(
        self, commands: Mapping[str, str], config: MatchConfig, limits: Limits, at_once: int
    ) -> list[str]:
        manager = await self._manager()
        gate = asyncio.Semaphore(max(1, at_once))

        async def check(name: str, command: str) -> str:
            async with gate:
                why = await manager.preflight(
                    PlayerSpec(name, command), config, limits, CONNECT_TIMEOUT
                )
            return f"entrant {name!r} ({command}): {why}" if why else ""

        self.busy += 1
        try:
            found = await asyncio.gather(*(check(n, c) for n, c in commands.items()))
        finally:
            self.busy -= 1
            self.last = time.monotonic()
        return [f for f in found if f]

    async def _manager(self) -> MatchManager:
        if self.manager is None:
            self.server, _, self.manager = await create_server(
                options=ManagerOptions(
                    # This process plays one game at a time: a waiting process of each kind is
                    # enough.
                    idle_per_kind=2,
                    hidden=tuple(self.hidden),
                    # Commands come resolved for this node (arena.cluster.bot_files.resolve): no
                    # word of theirs names a file of the folder the worker runs in.
                    resolve_from=None,
                )
            )
        return self.manager

    def play(
        self, rules: GameRules, game: ScheduledGame, commands: dict[str, str], logs: bool
    ) -> Played:
        work = self._play(rules, game, commands, logs)
        return asyncio.run_coroutine_threadsafe(work, self.loop).result()

    def finished_logs(self) -> dict[str, bytes]:
        """The complete logs (their processes' output read to its end), taken off this node."""
        return asyncio.run_coroutine_threadsafe(self._finished_logs(), self.loop).result()

    async def _finished_logs(self) -> dict[str, bytes]:
        """Every log but those still being written, by processes in a match, waiting in the pool
        for another, or being stopped: a log taken while its process writes on would come back cut
        short, and the rest be lost with the file. Each log is taken once, whole, under the name it
        was given: it never comes back in parts that would overwrite each other on the coordinator."""
        found: dict[str, bytes] = {}
        if self.logs_dir is None:
            return found
        self.retired = [m for m in self.retired if m.logs_in_writing()]
        managers = [*self.retired, *([self.manager] if self.manager is not None else [])]
        writing = {path.name for m in managers for path in m.logs_in_writing()}
        for path in sorted(self.logs_dir.glob("*.log")):
            if path.name not in writing:
                with contextlib.suppress(OSError):
                    found[path.name] = path.read_bytes()
                    path.unlink()
        return found

    def listen(self, job: str) -> None:
        """Listen for :func:`finish`, once: on a Unix socket in this process's scratch folder, named
        after ``job`` (the Ray job of this worker process, which is the coordinator's), where the
        node's finishing task finds it; the socket goes with the folder when the process exits."""
        asyncio.run_coroutine_threadsafe(self._listen(job), self.loop).result()

    async def _listen(self, job: str) -> None:
        if self.listener is None:
            path = scratch.run_dir() / FINISH_SOCKET.format(job=job)
            self.listener = await asyncio.start_unix_server(self._on_finish, path=str(path))

    async def _on_finish(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """The run is over (:func:`finish` asks): close, unless a game is under way here (it is left
        to end, and its logs to come back with its result), and send every log left, even those
        of a referee that failed to close."""
        try:
            if not self.busy:
                with contextlib.suppress(Exception):
                    await self._close()
            writer.write(_framed(await self._finished_logs()))
            with contextlib.suppress(ConnectionError):
                await writer.drain()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _play(
        self, rules: GameRules, game: ScheduledGame, commands: dict[str, str], logs: bool
    ) -> Played:
        self.busy += 1
        try:
            manager = await self._manager()
            if logs and self.logs_dir is None:
                self.logs_dir = scratch_dir("logs-")
            manager.logs_dir = self.logs_dir if logs else None
            threshold = max(rules.time_control.grace_ms / 1000, 0.05)
            watch = self.watches.get(threshold)
            if watch is None:
                watch = self.watches[threshold] = StallWatch(threshold=threshold)
                watch.start()
            return await GamePlayer(manager, rules, watch).play(game, commands)
        finally:
            self.busy -= 1
            self.games += 1
            self.last = time.monotonic()
            if self.games >= RECYCLE_GAMES and not self.busy:
                await self._close()

    async def _close(self) -> None:
        manager, server = self.manager, self.server
        self.manager = self.server = None
        self.games = 0
        if manager is not None:
            # Still asked by finished_logs while its processes are stopped (the logs of a closing
            # referee, taken meanwhile, came back empty: a log is written out when it is closed), and
            # after: a process stopped twice at once is waited for once.
            self.retired.append(manager)
            await manager.close()
        if server is not None:
            await server.stop(0)

    async def _closer(self) -> None:
        while True:
            await asyncio.sleep(IDLE_SECONDS / 3)
            idle = time.monotonic() - self.last > IDLE_SECONDS
            if self.manager is not None and not self.busy and idle:
                with contextlib.suppress(Exception):
                    await self._close()
