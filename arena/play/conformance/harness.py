"""A bot's conformance check: a scripted session over a real referee that puts the bot in the tricky
moments of the game and reports every protocol mistake it makes.

The bot plays seat 0 (every player of seat 0 in consultation) against first-legal opponents
(``python -m arena_bot.first_bot``) with the arranged deals of :mod:`arena.play.scripted_opponent`: a first trick the bot wins, followed by a declaring turn with
several declarations (bezique, double bezique, a royal marriage) and the exchange of the seven of
trumps, where it may also decline with ``done``; the last tricks of every deal, where it must follow suit
and win if able; for two-handed also a Polish game and a Rubicon game dealt for carte blanche; for
four-handed partners, inquiries (``inquire``) to make and to answer.

The session's policies keep it going: every failure plays a random legal action for the bot and counts a
strike, and strikes never forfeit, so that every mistake is collected instead of the first one ending the
game. Each decision must be answered within the budget (no bank). Mistakes reported: illegal or
unreadable actions (with the legal list), timeouts, protocol errors (a second reply, a reply to a request
never asked, anything but a reply mid-match), crashes and disconnects (once: the decisions after it are
its consequences), and Hello problems (empty name or version, a protocol version other than 1, a stream
that does not open with a Hello, an unknown token).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import grpc

from arena.bots.limits import Limits
from arena.common.scratch_dirs import scratch_dir
from arena.play.conformance.judge import collect, note_hellos
from arena.play.conformance.output_tail import bot_output_tail
from arena.play.conformance.report import (
    CRASH,
    GIVE_UP_AFTER,
    HELLO,
    NOT_ASKED,
    REFEREE,
    HelloInfo,
    Mistake,
    Report,
)
from arena.play.scripted_opponent import ScriptedMatch, possible_moments, session
from arena.referee import Decision, Outcome, SeatFailure
from arena.service.match_manager import ManagerOptions, MatchEntry, MatchManager, PlayerSpec
from arena.service.server import ArenaServer, create_server
from arena.service.servicers import BotGateway
from arena.service.stream_port import StreamPort
from arena.wire.v1 import bot_pb2

BOT_NAME = "checked"  # the checked bot's player name in the session's matches
FIRST_BOT = f"{shlex.quote(sys.executable)} -m arena_bot.first_bot"
CONNECT_TIMEOUT = 60.0  # seconds for the bot to dial in: generous, a loaded machine starts slowly


class _HelloTap(BotGateway):
    """The referee's bot gateway, noting each stream's Hello (the service keeps only name and version),
    streams that open with anything else, and Hellos it refuses."""

    def __init__(self, manager: MatchManager) -> None:
        super().__init__(manager)
        self.hellos: dict[str, HelloInfo] = {}
        self.refusals: dict[str, str] = {}  # token -> the referee's reason
        self.strays: list[str] = []

    async def Play(  # type: ignore[override]
        self,
        request_iterator: AsyncIterator[bot_pb2.BotMessage],
        context: grpc.aio.ServicerContext[bot_pb2.BotMessage, bot_pb2.RefereeMessage],
    ) -> None:
        async def tapped() -> AsyncIterator[bot_pb2.BotMessage]:
            first = True
            async for message in request_iterator:
                if first:
                    first = False
                    if message.HasField("hello"):
                        h = message.hello
                        self.hellos[h.token] = HelloInfo(h.name, h.version, h.protocol_version)
                    else:
                        kind = message.WhichOneof("body") or "empty"
                        self.strays.append(f"a stream opened with a {kind} message, not a Hello")
                yield message

        await super().Play(tapped(), context)

    async def refuse(
        self,
        context: grpc.aio.ServicerContext[bot_pb2.BotMessage, bot_pb2.RefereeMessage],
        token: str,
        reason: str,
    ) -> None:
        if token:
            self.refusals[token] = reason
        await super().refuse(context, token, reason)

    def lost(self, port: StreamPort) -> bool:
        """Whether a player that has not connected never will: refused, or its process is gone."""
        return not port.attached.is_set() and (port.closed or port.token in self.refusals)


class _GivesUp(StreamPort):
    """A seat's player that, after GIVE_UP_AFTER timeouts in a row in its match, is asked no more
    in it: each decision fails at once as a timeout that says so (NOT_ASKED), and is played at
    random. A bot too slow for the budget waited out budget and grace at each of some 700
    decisions: 25 minutes at the default budget, for the same mistake found again and again."""

    in_a_row = 0

    async def decide(self, decision: Decision) -> str:
        if self.in_a_row >= GIVE_UP_AFTER:
            raise SeatFailure(Outcome.TIMEOUT, NOT_ASKED)
        try:
            reply = await super().decide(decision)
        except asyncio.CancelledError:  # the decision's clock ran out (or the match was stopped)
            self.in_a_row += 1
            raise
        self.in_a_row = 0
        return reply


async def _start_server(
    limits: Limits | None, hide: Sequence[Path], resolve_from: str | None
) -> tuple[ArenaServer, _HelloTap, MatchManager, Path]:
    logs = scratch_dir("check-")
    server, _, manager = await create_server(
        logs_dir=logs,
        limits=limits,
        gateway=_HelloTap,
        options=ManagerOptions(port_class=_GivesUp, hidden=tuple(hide), resolve_from=resolve_from),
    )
    assert isinstance(server.gateway, _HelloTap)
    return server, server.gateway, manager, logs


async def check_bot(
    command: str,
    variant_name: str = "two-handed",
    budget_ms: int = 2000,
    grace_ms: int = 100,
    bank_ms: int = 0,
    opponent: str = FIRST_BOT,
    matches: Sequence[ScriptedMatch] | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
    on_progress: Callable[[str], None] | None = None,
    limits: Limits | None = None,
    hide: Sequence[Path] = (),
    resolve_from: str | None = ".",
) -> Report:
    """Run the scripted session (``matches``, default :func:`session` of ``variant_name``) for the bot
    started by ``command`` and report its mistakes. ``limits``: its sandbox and limits (default: the
    arena's defaults, isolated where the machine can); ``hide`` and ``resolve_from``: as the
    referee's (:class:`arena.service.match_manager.MatchManager`), for a submitted bot."""
    script = list(matches) if matches is not None else session(variant_name)
    report = Report(command, possible=possible_moments(script))
    server, gateway, manager, logs = await _start_server(limits, hide, resolve_from)
    tokens: set[str] = set()
    try:
        for scripted in script:
            config = scripted.config(budget_ms, grace_ms, bank_ms)
            v = config.build_variant()
            specs = [
                [
                    PlayerSpec(
                        BOT_NAME if seat == 0 else f"first-{seat}",
                        command if seat == 0 else opponent,
                    )
                    for _ in range(v.team_size(seat))
                ]
                for seat in range(v.seats)
            ]
            entry = manager.create(config, specs, connect_timeout)
            tokens.update(p.token for seat in entry.players for p in seat)
            if on_progress is not None:
                on_progress(f"playing {scripted.variant} ({len(scripted.games)} game(s)) ...")
            await manager.start(entry)
            while not entry.done.is_set():
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.1):
                        await entry.done.wait()
                if entry.status == "waiting" and _hopeless(entry, gateway):
                    await _abandon(entry)  # rather than wait out the connect timeout
                    break
            if entry.error and entry.record is None:
                # The arena could not start a process (the manager starts seats in order, so
                # the bot's own ports have no process when its command was the one that failed).
                # A bot whose match was called off is refused if it dials in late: not its fault.
                if all(p.process is not None for p in entry.players[0]):
                    report.mistakes.append(Mistake(REFEREE, "", entry.error))
                else:
                    report.mistakes.append(
                        Mistake(CRASH, "", f"{entry.error}; the rest of the session is skipped")
                    )
                break
            note_hellos(report, entry, gateway.hellos, gateway.refusals)
            if not all(p.attached.is_set() for p in entry.players[0]):
                exited = [why for why in map(_closed_detail, entry.players[0]) if why]
                port = entry.players[0][0]
                tail = bot_output_tail(port)
                # Why it has no stream (its Hello refused: why is the Hello's mistake, above), and
                # how its process ended, if it did (which may name the refusal already).
                head = "the referee refused its Hello" if port.refused else port.not_connected()
                said = "; ".join([head, *exited[:1]])
                if exited and "refused" in exited[0]:
                    said = exited[0]
                report.mistakes.append(
                    Mistake(
                        CRASH,
                        "",
                        said
                        + "; the rest of the session is skipped"
                        + (f"; the bot's output:\n{tail}" if tail else ""),
                    )
                )
                break
            missing = [p for seat in entry.players[1:] for p in seat if not p.attached.is_set()]
            if missing:
                why = _closed_detail(missing[0]) or "it never connected"
                report.mistakes.append(
                    Mistake(REFEREE, "", f"the opponent {opponent!r} could not play: {why}")
                )
                break
            collect(report, scripted, entry)
    finally:
        await manager.close()
        await server.stop(None)
        shutil.rmtree(logs, ignore_errors=True)
    for stray in gateway.strays:
        report.mistakes.append(Mistake(HELLO, "", stray))
    for token in gateway.hellos:
        if token not in tokens:
            report.mistakes.append(
                Mistake(HELLO, "", f"a Hello with an unknown token {token!r:.40}")
            )
    return report


def _closed_detail(port: StreamPort) -> str:
    """Why the port closed ("bot process exited with code 3", "cannot start ..."), if it did. The port
    keeps it private: read it defensively."""
    closed = getattr(port, "_closed", None)
    if isinstance(closed, tuple) and len(closed) == 2:
        return str(closed[1])
    return ""


def _hopeless(entry: MatchEntry, gateway: _HelloTap) -> bool:
    """Whether a match still waiting for its players can be given up: the bot is lost (refused, or
    its process is gone), or it is in and an opponent is lost."""
    bot = entry.players[0]
    if any(gateway.lost(p) for p in bot):
        return True
    opponents = [p for seat in entry.players[1:] for p in seat]
    return all(p.attached.is_set() for p in bot) and any(gateway.lost(p) for p in opponents)


async def _abandon(entry: MatchEntry) -> None:
    """Stop a match still waiting for its players (its bot processes are stopped by the manager)."""
    if entry.task is not None and not entry.task.done():
        entry.task.cancel()
        with contextlib.suppress(BaseException):
            await entry.task
