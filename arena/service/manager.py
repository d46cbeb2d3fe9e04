"""The match manager: tokens, ports, local bot processes and running matches, for the servicers.

A match is created with one player spec per player (a seat shared in consultation has several). Each
player gets a random token; a player with a command is launched as a local process and handed the
server's address and its token, the others dial in from anywhere with theirs. The match starts once
every player has connected or the connect timeout has passed (a player still missing then fails with a
crash, "never connected", at its first decision). Tokens expire with their match.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from arena.bots.launcher import BotProcess, LaunchError
from arena.bots.limits import Limits
from arena.referee import GameEnd, Match, MatchConfig, MatchRecord, Outcome
from arena.referee.match import PublicEvent
from arena.service.ports import StreamPort


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    name: str
    command: str = ""  # empty: a remote bot that dials in with its token


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
    processes: list[BotProcess] = field(default_factory=list)
    record: MatchRecord | None = None
    error: str = ""
    task: asyncio.Task[None] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def seat_names(self) -> list[str]:
        return [" + ".join(p.name for p in seat) for seat in self.specs]


DRAIN_SECONDS = 2.0  # for local bots to read the match's last messages and exit on their own


async def _connected_or_gone(port: StreamPort, timeout: float) -> None:
    """Until the player has connected, or is known gone (its process exited), or the time is up."""
    waits = [asyncio.create_task(port.attached.wait()), asyncio.create_task(port.gone.wait())]
    _, pending = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()


class MatchManager:
    def __init__(self, records_dir: Path | None = None, logs_dir: Path | None = None) -> None:
        self.address = ""  # set by the server once bound
        self.unix_address = ""  # the same server on a Unix socket (for sandboxed bots)
        self.socket_dir: Path | None = None
        self.records_dir = records_dir
        self.logs_dir = logs_dir
        self.matches: dict[str, MatchEntry] = {}
        self._tokens: dict[str, StreamPort] = {}
        self._count = 0

    def create(
        self,
        config: MatchConfig,
        specs: list[list[PlayerSpec]],
        connect_timeout: float = 10.0,
        limits: Limits | None = None,
    ) -> MatchEntry:
        v = config.build_variant()  # raises VariantError for a bad variant or option
        if len(specs) != v.seats:
            raise ValueError(f"{v.name} has {v.seats} seats, got {len(specs)}")
        for seat, players in enumerate(specs):
            if len(players) != v.team_size(seat):
                raise ValueError(
                    f"seat {seat} of {v.name} takes {v.team_size(seat)} player(s), got {len(players)}"
                )
        if config.games < 1:
            raise ValueError(f"a match needs at least one game, got {config.games}")
        self._count += 1
        match_id = f"m{self._count}-{secrets.token_hex(4)}"
        ports = []
        for seat, players in enumerate(specs):
            row = []
            for member, spec in enumerate(players):
                token = secrets.token_urlsafe(24)
                port = StreamPort(spec.name, match_id, seat, member, token)
                self._tokens[token] = port
                row.append(port)
            ports.append(row)
        entry = MatchEntry(match_id, config, ports, specs, connect_timeout, limits or Limits())
        self.matches[match_id] = entry
        return entry

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
        """Launch the local players and run the match in the background."""
        try:
            for seat_ports, seat_specs in zip(entry.players, entry.specs, strict=True):
                for port, spec in zip(seat_ports, seat_specs, strict=True):
                    if spec.command:
                        await self._launch(entry, port, spec)
        except LaunchError as exc:
            entry.error = str(exc)
        entry.task = asyncio.create_task(self._run(entry))

    async def _launch(self, entry: MatchEntry, port: StreamPort, spec: PlayerSpec) -> None:
        log = None
        if self.logs_dir is not None:
            self.logs_dir.mkdir(parents=True, exist_ok=True)
            log = self.logs_dir / f"{entry.match_id}-seat{port.seat}-{port.member}.log"
        try:
            proc = await BotProcess.start(
                spec.name,
                spec.command,
                self.unix_address if entry.limits.sandbox == "bubblewrap" else self.address,
                port.token,
                log,
                entry.limits,
            )
        except LaunchError as exc:
            port.on_closed(Outcome.CRASH, str(exc))
            return
        entry.processes.append(proc)
        port.process = proc

        async def supervise() -> None:
            code = await proc.wait()
            port.on_closed(Outcome.CRASH, f"bot process exited with code {code}")

        asyncio.get_running_loop().create_task(supervise())

    async def _run(self, entry: MatchEntry) -> None:
        ports = [p for seat in entry.players for p in seat]
        await asyncio.gather(*(_connected_or_gone(p, entry.connect_timeout) for p in ports))
        entry.status = "running"
        try:
            match = Match(
                entry.match_id,
                entry.config,
                entry.players,
                on_event=lambda e: self._publish(entry, e),
                on_game_end=entry.ends.append,
            )
            entry.record = await match.run()
            self._save(entry)
        except Exception as exc:  # the server outlives any match
            entry.error = f"{type(exc).__name__}: {exc}"
        finally:
            entry.status = "finished"
            for port in ports:
                self._tokens.pop(port.token, None)  # tokens expire with the match
                port.on_closed(Outcome.DISCONNECT, "the match is over")
            # Let local bots read their last GameOver and MatchOver and leave on their own.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(
                        *(p.drained.wait() for p in ports if p.claimed),
                        *(proc.wait() for proc in entry.processes),
                    ),
                    timeout=DRAIN_SECONDS,
                )
            for proc in entry.processes:
                await proc.stop()
            for queue in entry.watchers:
                queue.put_nowait(None)
            entry.done.set()

    def _publish(self, entry: MatchEntry, event: PublicEvent) -> None:
        entry.events.append(event)
        for queue in entry.watchers:
            queue.put_nowait(event)

    def _save(self, entry: MatchEntry) -> None:
        if self.records_dir is None or entry.record is None:
            return
        self.records_dir.mkdir(parents=True, exist_ok=True)
        path = self.records_dir / f"{entry.match_id}.json"
        path.write_text(json.dumps(entry.record.to_dict(), indent=1))

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
        """Stop every match still running and its bot processes; remove the socket folder."""
        for entry in self.matches.values():
            if entry.task is not None and not entry.task.done():
                entry.task.cancel()
                with contextlib.suppress(BaseException):
                    await entry.task
            for proc in entry.processes:
                await proc.stop()
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
