"""The match manager: tokens, ports, local bot processes and running matches, for the servicers.

A match is created with one player spec per player (a seat shared in consultation has several). Each
player gets a random token; a player with a command is launched as a local process and handed the
server's address and its token, the others dial in from anywhere with theirs. The match starts once
every player has connected or the connect timeout has passed (a player still missing then fails with a
crash, "never connected", at its first decision). Tokens expire with their match.

A local bot process may play several matches over its stream when the match allows it
(``matches_per_process``): see ``arena.service.sessions``; the sessions waiting between matches are
kept in the manager's :class:`~arena.service.process_pool.ProcessPool`, and the remote entrants
waiting for games in its :class:`~arena.service.lobby.Lobby`. How the manager treats the bots it
launches is set once, when it is made (:class:`ManagerOptions`).
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.bots.launcher import BotProcess, LaunchError
from arena.bots.limits import Limits
from arena.bots.logs import LogFolder
from arena.common.secret_tokens import new_token
from arena.referee import GameEnd, Match, MatchConfig, MatchRecord, Outcome
from arena.referee.match import PublicEvent, check_seats
from arena.service.lobby import Lobby
from arena.service.process_pool import DRAIN_SECONDS, IDLE_PER_KIND, ProcessPool
from arena.service.sessions import BotSession, SessionKey
from arena.service.sockets import BotSockets
from arena.service.stream_port import MATCH_OVER, StreamPort


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    name: str
    command: str = ""  # empty: a remote bot that dials in with its token
    # Why this player will not play (a tournament's entrant excluded by its pre-run check): nothing
    # is started for it, nobody may take its seat, and it fails its first decision with this reason.
    absent: str = ""


@dataclass(slots=True)
class MatchEntry:
    match_id: str
    config: MatchConfig
    players: list[list[StreamPort]]
    specs: list[list[PlayerSpec]]
    connect_timeout: float
    limits: Limits = field(default_factory=Limits)
    status: str = "waiting"  # waiting, running, finished
    events: list[PublicEvent] = field(default_factory=list)
    ends: list[GameEnd] = field(default_factory=list)
    watchers: list[asyncio.Queue[PublicEvent | None]] = field(default_factory=list)
    processes: list[BotProcess] = field(default_factory=list)  # launched for this match
    matches_per_process: int = 1  # how many matches a local bot process may play
    sessions: list[BotSession] = field(default_factory=list)  # its local players' sessions
    record: MatchRecord | None = None
    error: str = ""
    task: asyncio.Task[None] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def seat_names(self) -> list[str]:
        return [" + ".join(p.name for p in seat) for seat in self.specs]


SETTLE_OUTPUT_SECONDS = 1.0  # for a dead bot's last output to be read
# Finished matches kept for the admin service (ListMatches, GetMatch, WatchMatch from the start) after
# they end; older ones are let go. Each holds its record, its events and its players, some 0.5 MB for
# a game between the example bots: a standing competition kept every match it played, 2.4 GB a day
# at 5,000 games. (A match's record is in the ledger, or in the records folder, for good.)
KEEP_FINISHED = 128


async def _connected_or_gone(port: StreamPort, timeout: float) -> None:
    """Until the player has connected, or is known gone (its process exited), or the time is up."""
    waits = [asyncio.create_task(port.attached.wait()), asyncio.create_task(port.gone.wait())]
    _, pending = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()


@dataclass(frozen=True, slots=True)
class ManagerOptions:
    """How a match manager treats the bots it launches, given once when it is made."""

    # The logs' folder held to a size, by a server that runs for good (see arena.bots.logs).
    log_folder: LogFolder | None = None
    # Paths a sandboxed bot never sees, even inside a folder it may (a ledger, a tournament file).
    hidden: tuple[Path, ...] = ()
    # Where a bot command's relative paths are looked up (launcher.split_command): the folder the
    # arena runs in, for commands its user typed; None for commands that are not to be trusted
    # with it (submitted bundles', resolved within their own folders).
    resolve_from: str | None = "."
    port_class: type[StreamPort] = StreamPort  # a seat's player (the conformance check's gives up)
    idle_per_kind: int = IDLE_PER_KIND  # local processes of one kind kept waiting between matches
    # Remote entrants that dial in with an entrant's token (a competition's): see arena.service.lobby.
    entrant_of: Callable[[str], str | None] | None = None
    on_lobby: Callable[[str], None] | None = None


class MatchManager:
    def __init__(
        self,
        records_dir: Path | None = None,
        logs_dir: Path | None = None,
        limits: Limits | None = None,
        deal_key: bytes = b"",
        *,
        address: str = "",
        local_address: str = "",
        sockets: BotSockets | None = None,
        options: ManagerOptions | None = None,
    ) -> None:
        options = options or ManagerOptions()
        self.address = address  # the bot gateway's TCP address, where local bots dial in
        # Where the bots this manager launches in the light mode dial in, when not ``address``: a
        # guarded listener's gRPC socket (same user, private folder), past the guard's caps for
        # anonymous clients, which a crowd of local bots starting at once must not meet.
        self.local_address = local_address
        # Each sandboxed bot's Unix socket (None, and sandboxed bots cannot connect, for a manager
        # that serves no bots).
        self.sockets = sockets
        self.records_dir = records_dir
        self.logs_dir = logs_dir
        self.log_folder = options.log_folder
        # The server's policy: the limits and sandbox of a match that names none (every match
        # started through the admin service), and the secret its deals are drawn with.
        self.limits = limits or Limits()
        self.deal_key = deal_key
        # Paths a sandboxed bot never sees, even inside a folder it may (the ledger, records, logs).
        self.hidden: list[Path] = [p.resolve() for p in (records_dir, logs_dir) if p is not None]
        self.hide(*options.hidden)
        self.resolve_from = options.resolve_from
        self.matches: dict[str, MatchEntry] = {}
        self.port_class = options.port_class
        self._tokens: dict[str, StreamPort] = {}
        self._count = 0
        self._launched: dict[str, BotSession] = {}  # by the token its process was given
        self.pool = ProcessPool(options.idle_per_kind)
        self.lobby = Lobby(options.entrant_of, options.on_lobby)
        self._supervisors: set[asyncio.Task[None]] = set()
        # The processes whose logs may still be written (see logs_in_writing), wherever they are:
        # in a match, in the pool between matches, or being stopped.
        self._logging: set[BotProcess] = set()

    def create(
        self,
        config: MatchConfig,
        specs: list[list[PlayerSpec]],
        connect_timeout: float = 10.0,
        limits: Limits | None = None,
        matches_per_process: int = 1,
    ) -> MatchEntry:
        # Before any bot is started: VariantError for a bad variant or option, ValueError for
        # seats that do not fit it.
        check_seats(config.build_variant(), [len(players) for players in specs])
        if config.games < 1:
            raise ValueError(f"a match needs at least one game, got {config.games}")
        if matches_per_process < 1:
            raise ValueError(f"matches_per_process must be at least 1, got {matches_per_process}")
        self._count += 1
        match_id = f"m{self._count}-{secrets.token_hex(4)}"
        ports = []
        for seat, players in enumerate(specs):
            row = []
            for member, spec in enumerate(players):
                token = new_token()
                port = self.port_class(spec.name, match_id, seat, member, token)
                self._tokens[token] = port
                row.append(port)
            ports.append(row)
        entry = MatchEntry(
            match_id,
            config,
            ports,
            specs,
            connect_timeout,
            limits or self.limits,
            matches_per_process=matches_per_process,
        )
        self.matches[match_id] = entry
        return entry

    def hide(self, *paths: Path) -> None:
        """Never show these paths to a sandboxed bot (a ledger, a tournament file, ...)."""
        self.hidden.extend(Path(p).resolve() for p in paths)

    def refused(self, token: str, reason: str) -> None:
        """A Hello with ``token`` was refused for ``reason``: a seat still waiting for its bot keeps
        it, so that its failure to connect says why rather than only that it did not."""
        port = self._tokens.get(token)
        if port is not None and not port.claimed:
            port.refused = reason

    def claim(self, token: str) -> tuple[StreamPort | None, str]:
        """The port a token opens, or why it is refused: unknown or expired, or already connected."""
        port = self._tokens.get(token)
        if port is None:
            return None, "unknown or expired token"
        if port.claimed:
            return None, "this seat is already connected"
        port.claimed = True  # attached (ready for requests) once the Welcome is written
        return port, ""

    async def start(self, entry: MatchEntry) -> None:
        """Give the local players to waiting sessions or launch them; run the match in the
        background."""
        seeds = set(entry.config.seeds())
        try:
            for seat_ports, seat_specs in zip(entry.players, entry.specs, strict=True):
                for port, spec in zip(seat_ports, seat_specs, strict=True):
                    if spec.absent:
                        self._tokens.pop(port.token, None)
                        port.claimed = True
                        port.on_closed(Outcome.CRASH, spec.absent)
                        continue
                    if not spec.command:
                        waiting = self.lobby.free(spec.name)
                        if waiting is not None:
                            self._tokens.pop(port.token, None)  # its entrant token plays it
                            port.claimed = True
                            entry.sessions.append(waiting)
                            waiting.give(port)
                        continue
                    key = SessionKey(spec.name, spec.command, entry.limits)
                    session = self.pool.take(key, seeds) if entry.matches_per_process > 1 else None
                    if session is not None:
                        self._tokens.pop(port.token, None)  # nobody else may claim the seat
                        port.claimed = True
                        entry.sessions.append(session)
                        session.give(port)  # its stream is welcomed to this match
                    else:
                        await self._launch(entry, port, spec, key)
        except LaunchError as exc:
            entry.error = str(exc)
        entry.task = asyncio.create_task(self._run(entry))

    async def preflight(
        self,
        spec: PlayerSpec,
        config: MatchConfig,
        limits: Limits,
        timeout: float,
        matches_per_process: int = 1,
    ) -> str:
        """Start a bot once and wait for its Hello: "" when it dialled in and said Hello (it is then
        sent a MatchOver with no games), else why not: the launch's error, or its exit code and last
        output, or that it never connected within ``timeout`` seconds.

        A checked bot is then stopped, unless its matches may share a process (``matches_per_process``
        > 1): its session then waits in the pool, as after a match, with that many matches still to
        play, and the first match that needs such a player is given to it instead of a new process."""
        self._count += 1
        match_id = f"check{self._count}-{secrets.token_hex(4)}"
        port = StreamPort(spec.name, match_id, 0, 0, new_token())
        self._tokens[port.token] = port
        # The check counts as a match of the session's (begin() counts it): one more to its quota.
        quota = matches_per_process + 1 if matches_per_process > 1 else 1
        entry = MatchEntry(
            match_id, config, [[port]], [[spec]], timeout, limits, matches_per_process=quota
        )
        self.matches[match_id] = entry
        try:
            try:
                await self._launch(entry, port, spec, SessionKey(spec.name, spec.command, limits))
            except LaunchError as exc:
                return str(exc)
            await _connected_or_gone(port, timeout)
            if port.attached.is_set():
                await port.match_over(match_id, [])
                if quota > 1:  # the gateway parks its session (or lets it end) once it is told
                    await _all_within([port.drained.wait()], DRAIN_SECONDS)
                return ""
            proc = entry.processes[0] if entry.processes else None
            if proc is not None:
                await proc.output_done(SETTLE_OUTPUT_SECONDS)
            why = port.close_detail if port.closed else f"it did not dial in within {timeout:g} s"
            lines = proc.output_shown() if proc is not None else []
            return why + ("; its output:\n" + "\n".join(lines) if lines else "")
        finally:
            self._tokens.pop(port.token, None)
            port.on_closed(Outcome.DISCONNECT, MATCH_OVER)
            kept = [s for s in entry.sessions if s.idle and not s.ended]  # parked: in the pool
            for session in entry.sessions:
                if session not in kept:
                    session.end()
            leaving = [p for p in entry.processes if all(s.process is not p for s in kept)]
            await _all_within([p.wait() for p in leaving], DRAIN_SECONDS)
            await asyncio.gather(*(p.stop() for p in leaving), return_exceptions=True)
            del self.matches[match_id]

    def session_for(self, port: StreamPort) -> BotSession:
        """The session of a stream that has just claimed ``port``: its launched process's, or a
        remote bot's (one match)."""
        return self._launched.pop(port.token, None) or BotSession(None, None, 1, port.match_id)

    def park(self, session: BotSession, port: StreamPort) -> bool:
        """After ``port``'s match: keep the session for another match (True) or let it end. A
        remote entrant goes back to the lobby, whatever the match was; a local bot's process waits
        in the pool when it may play on."""
        if session.entrant:
            return self.lobby.park(session)
        return self.pool.park(session, port)

    def logs_in_writing(self) -> set[Path]:
        """The logs that the bot processes this manager started may still write to: a log is
        complete, and may be taken away (a cluster's node sends it to the coordinator), only once it
        is not among them. A process waiting in the pool between matches belongs to no match, and a
        process that has exited may still have output to be read: neither is looked for, only
        whether each log is closed (:attr:`BotProcess.log_written`). Those whose logs are closed
        are let go (at each launch too): a server that runs for good keeps none here for ever."""
        self._logging = {p for p in self._logging if not p.log_written}
        return {p.log_path for p in self._logging if p.log_path is not None}

    async def prune_logs(self) -> None:
        """Hold the logs' folder to its size, where it has one (every few seconds at most)."""
        if self.log_folder is not None and self.log_folder.due():
            await asyncio.to_thread(self.log_folder.prune)

    async def _launch(
        self, entry: MatchEntry, port: StreamPort, spec: PlayerSpec, key: SessionKey
    ) -> None:
        log = None
        if self.logs_dir is not None:
            self.logs_dir.mkdir(parents=True, exist_ok=True)
            # A process that plays several matches logs them all here, under its first match; the
            # player's name ends it, so that a bot's author finds their own logs.
            log = (
                self.logs_dir
                / f"{entry.match_id}-seat{port.seat}-{port.member}-{_file_word(spec.name)}.log"
            )
            await self.prune_logs()
        sock = await self.sockets.open() if self.sockets is not None else None
        try:
            proc = await BotProcess.start(
                spec.name,
                spec.command,
                self.local_address or self.address,
                port.token,
                log,
                entry.limits,
                socket=str(sock.path) if sock is not None else "",
                hide=self.hidden,
                resolve_from=self.resolve_from,
            )
        except BaseException:
            # LaunchError: the arena could not start it, and the match is not played (start() says
            # why).
            if sock is not None:
                await sock.close()
            raise
        entry.processes.append(proc)
        port.process = proc
        if log is not None:
            self.logs_in_writing()  # lets go of those whose logs are closed
            self._logging.add(proc)
        session = BotSession(key, proc, entry.matches_per_process, entry.match_id)
        session.on_idle_end = lambda: self.pool.stop_later(proc)
        self._launched[port.token] = session
        entry.sessions.append(session)

        async def supervise() -> None:
            await proc.wait()
            await proc.output_done(SETTLE_OUTPUT_SECONDS)  # its last words, for whoever reports
            if session.port is not None:
                session.port.on_closed(Outcome.CRASH, proc.exit_text())
            elif not port.attached.is_set():
                # It never connected: the match need not wait out the connect timeout.
                when = f"after {port.not_connected()}" if port.refused else "before connecting"
                port.on_closed(Outcome.CRASH, f"{proc.exit_text()} {when}")
            session.end()  # between matches, this also has its process cleaned up
            self._launched.pop(port.token, None)
            if sock is not None:  # nothing of the bot is left to connect through it
                await sock.close()

        task = asyncio.get_running_loop().create_task(supervise())
        self._supervisors.add(task)
        task.add_done_callback(self._supervisors.discard)

    async def _run(self, entry: MatchEntry) -> None:
        ports = [p for seat in entry.players for p in seat]
        try:
            # Inside the try: a match stopped while its players connect still closes them.
            if not entry.error:
                await asyncio.gather(*(_connected_or_gone(p, entry.connect_timeout) for p in ports))
            for port in ports:
                if port.process is not None and not port.attached.is_set():
                    # Fairness option: a bot that never said Hello ran on through the whole match,
                    # every game of it. It is out of the match (each of its decisions fails), and
                    # frozen to its end like one that has been welcomed.
                    port.process.freeze()
            entry.status = "running"
            if entry.error:
                # A bot could not be started (the arena's failure, not the bot's): no game is
                # played, so none is charged to anyone.
                raise _NotPlayed(entry.error)
            match = Match(
                entry.match_id,
                entry.config,
                entry.players,
                on_event=lambda e: self._publish(entry, e),
                on_game_end=entry.ends.append,
            )
            entry.record = await match.run()
            self._save(entry)
        except _NotPlayed:
            pass
        except Exception as exc:  # the server outlives any match
            entry.error = f"{type(exc).__name__}: {exc}"
        finally:
            entry.status = "finished"
            for port in ports:
                self._tokens.pop(port.token, None)  # tokens expire with the match
                port.on_closed(Outcome.DISCONNECT, MATCH_OVER)
            # Let local bots read their last GameOver and MatchOver, and then either wait for another
            # match (their session is parked) or leave on their own.
            await _all_within([p.drained.wait() for p in ports if p.claimed], DRAIN_SECONDS)
            leaving = [
                s.process
                for s in entry.sessions
                if s.process is not None and s.match_id == entry.match_id
            ]
            await _all_within([proc.wait() for proc in leaving], DRAIN_SECONDS)
            await asyncio.gather(*(proc.stop() for proc in leaving), return_exceptions=True)
            for queue in entry.watchers:
                queue.put_nowait(None)
            entry.done.set()
            self._let_go()

    def _let_go(self) -> None:
        """Forget the oldest finished matches beyond KEEP_FINISHED, once no process they launched
        runs (one kept in the pool for more matches keeps its first match's entry, by which a
        closing manager finds it too)."""
        finished = [
            match_id
            for match_id, e in self.matches.items()
            if e.done.is_set() and all(p.returncode is not None for p in e.processes)
        ]
        for match_id in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self.matches[match_id]

    def _publish(self, entry: MatchEntry, event: PublicEvent) -> None:
        entry.events.append(event)
        for queue in entry.watchers:
            queue.put_nowait(event)

    def _save(self, entry: MatchEntry) -> None:
        if self.records_dir is None or entry.record is None:
            return
        self.records_dir.mkdir(parents=True, exist_ok=True)
        path = self.records_dir / f"{entry.match_id}.json"
        # Compact: the C encoder (an indented dump takes the pure-Python one, several times slower,
        # on the event loop that referees every other match).
        path.write_text(json.dumps(entry.record.to_dict(), separators=(",", ":")))

    def watch(self, match_id: str, from_start: bool) -> asyncio.Queue[PublicEvent | None]:
        entry = self.matches[match_id]
        queue: asyncio.Queue[PublicEvent | None] = asyncio.Queue()
        if from_start:
            for event in entry.events:
                queue.put_nowait(event)
        if entry.status == "finished":
            queue.put_nowait(None)
        else:
            entry.watchers.append(queue)
        return queue

    async def close(self) -> None:
        """Stop every match still running, every bot process (waiting ones too); remove the socket
        folder. Bounded, whatever the bots do."""
        # Every session ends first, so that none is parked to wait for another match. Waiting
        # sessions that belong to no match (a checked bot's that no match took) too: their
        # processes are stopped with the retiring.
        for entry in self.matches.values():
            for session in entry.sessions:
                session.end()
        self.pool.end_waiting(())
        # The matches still running are cut short together, and their bots stopped meanwhile:
        # cancelled first, so that no game ends on a bot the arena stopped. (Left running, a cut-
        # short match's bot waits for a decision that never comes, and its match's clean-up waits
        # out the seconds that tell a crash from a disconnect.)
        running = {
            e.task: e for e in self.matches.values() if e.task is not None and not e.task.done()
        }
        for task in running:
            task.cancel()
        players = {
            s.process for e in running.values() for s in e.sessions if s.process is not None
        } | {proc for e in running.values() for proc in e.processes}
        await asyncio.gather(*running, *(proc.stop() for proc in players), return_exceptions=True)
        await self.pool.close()
        await asyncio.gather(
            *(proc.stop() for entry in self.matches.values() for proc in entry.processes),
            return_exceptions=True,
        )
        for task in list(self._supervisors):
            task.cancel()
        if self._supervisors:
            await asyncio.wait(self._supervisors, timeout=1.0)
        if self.sockets is not None:
            await self.sockets.close()


def _file_word(name: str) -> str:
    """A player's name as a part of a file name: letters, digits, ``.``, ``_`` and ``-`` kept, any
    other character ``_``, at most 40 (a name never makes a path of its own)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:40].lstrip(".") or "bot"


class _NotPlayed(Exception):
    """A match that cannot be played at all (entry.error says why)."""


async def _all_within(waits: list[Coroutine[Any, Any, Any]], timeout: float) -> None:
    """Wait up to ``timeout`` for all of ``waits``; the rest are cancelled and collected. (A gather
    inside wait_for, cancelled with the match, leaves a future whose CancelledError nobody reads.)"""
    if not waits:
        return
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, timeout=timeout)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
