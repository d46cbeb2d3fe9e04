"""A bot's conformance check: a scripted session over a real referee that puts the bot in the tricky
moments of the game and reports every protocol mistake it makes.

The bot plays seat 0 (every player of seat 0 in consultation) against first-legal opponents
(``python -m arena_bot.first_bot``) with the arranged deals of :mod:`arena.bots.scripted`: a first trick the bot wins, followed by a declaring turn with
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
import re
import shlex
import shutil
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from arena.bots.launcher import TAIL_LINES, BotProcess, output_line
from arena.bots.limits import Limits
from arena.bots.scripted import (
    CARTE_BLANCHE,
    DECLINE,
    INQUIRY,
    LAST_TRICKS,
    MOMENTS,
    SEVEN,
    SEVERAL,
    ScriptedMatch,
    possible_moments,
    session,
)
from arena.game import Action, Combo, GameState, Verb, observe
from arena.game.fields import ASKED
from arena.referee import Decision, MatchRecord, Outcome, SeatFailure
from arena.referee.record import GameRecord, replay
from arena.scratch import scratch_dir
from arena.service.manager import MatchEntry, MatchManager, PlayerSpec
from arena.service.ports import StreamPort
from arena.service.server import ArenaServer, create_server
from arena.service.servicers import PROTOCOL_VERSION, BotGateway
from arena.wire.v1 import bot_pb2

BOT_NAME = "checked"  # the checked bot's player name in the session's matches
FIRST_BOT = f"{shlex.quote(sys.executable)} -m arena_bot.first_bot"
CONNECT_TIMEOUT = 60.0  # seconds for the bot to dial in: generous, a loaded machine starts slowly
GIVE_UP_AFTER = 5  # timeouts in a row after which a match asks the bot no more (see _GivesUp)
NOT_ASKED = f"not asked: it timed out {GIVE_UP_AFTER} times in a row in this match"
# A crashed bot's output is shown whole when short, else its first and last lines: Node prints an
# uncaught error's message (Cannot find module ...) above its stack trace, Python below.
LOG_HEAD_LINES = 6
LOG_TAIL_LINES = 8
# The first lines come from the bot's log, of which this much is read: the launcher keeps only the
# last TAIL_LINES in memory.
LOG_READ_BYTES = 1 << 20

# Mistake kinds.
ILLEGAL = "illegal action"
TIMEOUT = "timeout"
PROTOCOL = "protocol error"
CRASH = "crash"
DISCONNECT = "disconnect"
HELLO = "hello"
REFEREE = "referee error"
_KIND_OF_FAILURE = {
    "illegal-action": ILLEGAL,
    "timeout": TIMEOUT,
    "protocol-error": PROTOCOL,
    "crash": CRASH,
    "disconnect": DISCONNECT,
}


# ---------------------------------------------------------------------------------------- the report


@dataclass(frozen=True, slots=True)
class Mistake:
    kind: str
    where: str
    detail: str

    def __str__(self) -> str:
        return (
            f"{self.kind} at {self.where}: {self.detail}"
            if self.where
            else f"{self.kind}: {self.detail}"
        )


@dataclass(frozen=True, slots=True)
class HelloInfo:
    name: str
    version: str
    protocol_version: int


@dataclass(frozen=True, slots=True)
class GameSummary:
    label: str
    note: str
    decisions: int
    outcome: str
    detail: str


@dataclass(slots=True)
class Report:
    command: str
    decisions: int = 0
    mistakes: list[Mistake] = field(default_factory=list)
    moments: Counter[str] = field(default_factory=Counter)
    possible: set[str] = field(default_factory=lambda: set(MOMENTS))  # in the session's variants
    declined: int = 0  # times the bot answered done while it could declare
    hellos: list[HelloInfo] = field(default_factory=list)
    games: list[GameSummary] = field(default_factory=list)
    gone: int = 0  # decisions after the bot crashed or disconnected (consequences, not counted)
    # decisions not asked of it after GIVE_UP_AFTER timeouts in a row in their match (nor counted)
    not_asked: int = 0
    late_replies: int = 0  # replies to requests that had failed (the failure is the mistake)

    @property
    def ok(self) -> bool:
        return not self.mistakes

    def summary(self) -> str:
        return f"{self.decisions} decisions, {len(self.mistakes)} mistakes"

    def lines(self, per_kind: int = 10) -> list[str]:
        """The report as text lines, at most ``per_kind`` mistakes of each kind spelt out; the last line
        is the summary."""
        out = [f"bot command: {self.command}"]
        for h, n in Counter(self.hellos).items():
            times = f" ({n} connections)" if n > 1 else ""
            out.append(
                f"hello: name {h.name!r}, version {h.version!r}, "
                f"protocol {h.protocol_version}{times}"
            )
        for g in self.games:
            end = g.outcome if not g.detail else f"{g.outcome} ({g.detail})"
            out.append(f"{g.label}: {g.decisions} decisions, {end} - {g.note}")
        out.append("moments:")
        for m in MOMENTS:
            seen = self.moments[m]
            if m not in self.possible:
                out.append(f"  [n/a] {m}")
                continue
            mark = "ok" if seen else "--"
            extra = f", declined {self.declined}" if m == DECLINE and seen else ""
            out.append(f"  [{mark}] {m}: {seen}{extra}")
        if any(not self.moments[m] for m in self.possible) and self.decisions:
            out.append("  (-- : not reached in this session; the bot's own choices steer the play)")
        if self.mistakes:
            out.append("mistakes:")
            shown: Counter[str] = Counter()
            for mistake in self.mistakes:
                shown[mistake.kind] += 1
                if shown[mistake.kind] <= per_kind:
                    out.append(f"  {mistake}")
            for kind, n in shown.items():
                if n > per_kind:
                    out.append(f"  ... and {n - per_kind} more of kind {kind}")
        if self.late_replies:
            out.append(f"({self.late_replies} late replies to failed requests were not counted)")
        if self.gone:
            out.append(f"({self.gone} decisions after the bot was gone were played at random)")
        if self.not_asked:
            out.append(
                f"({self.not_asked} decisions after {GIVE_UP_AFTER} timeouts in a row were played "
                "at random without asking the bot)"
            )
        out.append(self.summary())
        return out


# ---------------------------------------------------------------------------------------- the server


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
    server, _, manager = await create_server(logs_dir=logs, limits=limits, gateway=_HelloTap)
    manager.port_class = _GivesUp
    assert isinstance(server.gateway, _HelloTap)
    manager.hide(*hide)
    manager.resolve_from = resolve_from
    return server, server.gateway, manager, logs


# ---------------------------------------------------------------------------------------- the check


async def check_bot(
    command: str,
    variant_name: str = "two-handed",
    budget_ms: int = 2000,
    grace_ms: int = 100,
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
    referee's (:class:`arena.service.manager.MatchManager`), for a submitted bot."""
    script = list(matches) if matches is not None else session(variant_name)
    report = Report(command, possible=possible_moments(script))
    server, gateway, manager, logs = await _start_server(limits, hide, resolve_from)
    tokens: set[str] = set()
    try:
        for scripted in script:
            config = scripted.config(budget_ms, grace_ms)
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
            _note_hellos(report, entry, gateway)
            if not all(p.attached.is_set() for p in entry.players[0]):
                exited = [why for why in map(_closed_detail, entry.players[0]) if why]
                port = entry.players[0][0]
                tail = _tail(port)
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
            _collect(report, scripted, entry)
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


def _note_hellos(report: Report, entry: MatchEntry, gateway: _HelloTap) -> None:
    """The Hello of each of the bot's connections in a match, and its problems (each once)."""
    for port in entry.players[0]:
        hello = gateway.hellos.get(port.token)
        if hello is None:
            continue
        report.hellos.append(hello)
        problems = []
        if port.token in gateway.refusals:
            problems.append(f"the referee refused the Hello: {gateway.refusals[port.token]}")
        if not hello.name.strip():
            problems.append("the bot's name is empty")
        if not hello.version.strip():
            problems.append("the bot's version is empty")
        if hello.protocol_version != PROTOCOL_VERSION:
            problems.append(
                f"protocol_version is {hello.protocol_version}, expected {PROTOCOL_VERSION}"
            )
        for what in problems:
            mistake = Mistake(HELLO, "", what)
            if mistake not in report.mistakes:  # once, not once per connection
                report.mistakes.append(mistake)


def _collect(report: Report, scripted: ScriptedMatch, entry: MatchEntry) -> None:
    """Add one finished match, which the bot joined, to the report."""
    bot_ports = entry.players[0]
    if entry.error:
        report.mistakes.append(Mistake(REFEREE, scripted.variant, entry.error))
    record = entry.record
    if record is None:
        return
    # Requests of the bot's that failed (timed out, or failed by a protocol error while pending): a
    # reply to one of them later is late, not a mistake of its own.
    failed = {
        d.request_id
        for game in record.games
        for d in game.decisions
        if d.seat == 0 and d.failure in ("timeout", "protocol-error")
    }
    gone: set[int] = set()  # members whose crash or disconnect is already reported
    for game, scripted_game in zip(record.games, scripted.games, strict=False):
        label = f"{scripted.variant} game {game.index + 1}"
        n = _collect_game(report, record, game, label, gone, failed, entry)
        report.games.append(GameSummary(label, scripted_game.note, n, game.outcome, game.detail))
    for port in bot_ports:
        # A violation after the bot's last decision (a second reply to it, say) is never raised at a
        # decision: the port still holds it.
        for what in list(getattr(port, "_violations", ())):
            if not _late_reply(what, failed):
                report.mistakes.append(
                    Mistake(PROTOCOL, f"{scripted.variant}, after the last decision", what)
                )


_NEVER_ASKED = re.compile(r"a reply to request (\d+), which was never asked")


def _late_reply(detail: str, failed: set[int]) -> bool:
    """Whether a protocol error is only a late reply to a request that had already failed (timed out,
    or failed by an earlier protocol error). The earlier failure is the mistake. The referee's port
    should not count the late reply (it does: when the wait is cancelled by the timeout, or the future
    failed by a violation, the request is not remembered as expired), so it is not counted twice."""
    m = _NEVER_ASKED.fullmatch(detail)
    return m is not None and int(m.group(1)) in failed


def _collect_game(
    report: Report,
    record: MatchRecord,
    game: GameRecord,
    label: str,
    gone: set[int],
    failed: set[int],
    entry: MatchEntry,
) -> int:
    """Replay one game, noting the bot's decisions, the moments it met and its mistakes; the number of
    the bot's decisions."""
    state: GameState = replay(record, game)
    decisions = 0
    for d in game.decisions:
        mine = d.seat == 0
        if mine:
            decisions += 1
            where = _where(state, label, d.request_id)
            _note_moments(report, state, d.reply)
            if d.failure is not None:
                kind = _KIND_OF_FAILURE.get(d.failure, d.failure)
                if d.detail == NOT_ASKED:
                    report.not_asked += 1
                elif kind in (CRASH, DISCONNECT):
                    if d.member in gone:
                        report.gone += 1
                    else:
                        gone.add(d.member)
                        tail = _tail(entry.players[0][d.member])
                        detail = d.detail + (f"; the bot's output:\n{tail}" if tail else "")
                        report.mistakes.append(Mistake(kind, where, detail))
                elif kind == PROTOCOL and _late_reply(d.detail, failed):
                    report.late_replies += 1
                else:
                    detail = d.detail
                    if kind == ILLEGAL and "legal:" not in detail:
                        detail += f" (legal: {', '.join(d.legal)})"
                    report.mistakes.append(Mistake(kind, where, detail))
        if not d.action:  # a forfeit: the game stopped here
            break
        state.apply(Action.parse(d.action))
    report.decisions += decisions
    return decisions


def _where(state: GameState, label: str, request_id: int) -> str:
    obs = observe(state, state.to_act)
    trick = sum(s.tricks_won for s in obs.seats) + 1
    last = ", last tricks" if obs.stock_size == 0 and obs.phase == "play" else ""
    return f"{label}, deal {obs.deal + 1}, trick {trick} ({obs.phase}{last}), request {request_id}"


def _note_moments(report: Report, state: GameState, reply: str | None) -> None:
    legal = state.legal_actions()
    declarations = [a for a in legal if a.verb is Verb.DECLARE and a.combo != Combo.CARTE_BLANCHE]
    if len(declarations) >= 2:
        report.moments[SEVERAL] += 1
    if any(a.verb is Verb.EXCHANGE for a in legal):
        report.moments[SEVEN] += 1
    if declarations and any(a.verb is Verb.DONE for a in legal):
        report.moments[DECLINE] += 1
        if reply is not None and reply.strip() == "done":
            report.declined += 1
    if any(a.verb is Verb.DECLARE and a.combo == Combo.CARTE_BLANCHE for a in legal):
        report.moments[CARTE_BLANCHE] += 1
    # 003: it may inquire of its partner, or its partner has inquired of it.
    if any(a.verb is Verb.INQUIRE for a in legal) or (
        state.inquiry == ASKED and state.to_act != state.turn_winner
    ):
        report.moments[INQUIRY] += 1
    obs = observe(state, state.to_act)
    if obs.phase == "play" and obs.stock_size == 0 and obs.trick:
        kinds = {r & 31 for r in obs.hand}
        if len(legal) < len(kinds):
            report.moments[LAST_TRICKS] += 1


def _tail(port: StreamPort) -> str:
    """What the player's bot process wrote, for a crash: all of it when short, else its first and
    last lines with the cut marked."""
    if port.process is None:
        return ""
    return "\n".join(_output(port.process))


def _output(process: BotProcess) -> list[str]:
    kept = process.last_output(TAIL_LINES)
    if len(kept) < TAIL_LINES:  # the launcher dropped none: this is all of it
        return _cut(kept)
    data = b""
    if process.log_path is not None:
        with contextlib.suppress(OSError), process.log_path.open("rb") as log:
            data = log.read(LOG_READ_BYTES + 1)
    lines = _log_lines(data)
    if not lines:  # no log: the first lines are kept nowhere; every line that is
        return ["    ... (its first lines are not kept)", *_bar(kept)]
    # The log is whole when read to its end, not truncated, and ends as the lines kept do (the
    # launcher may not have written out what it read last, for a bot still running).
    whole = len(data) <= LOG_READ_BYTES and len(data) < process.limits.log_bytes
    if whole and lines[-len(kept) :] == kept:
        return _cut(lines)
    return [
        *_bar(lines[:LOG_HEAD_LINES]),
        "    ... (lines left out)",
        *_bar(kept[-LOG_TAIL_LINES:]),
    ]


def _cut(lines: list[str]) -> list[str]:
    """All the lines, or the first LOG_HEAD_LINES and the last LOG_TAIL_LINES when there are more."""
    left_out = len(lines) - LOG_HEAD_LINES - LOG_TAIL_LINES
    if left_out <= 1:  # a marker would take the room of the line it hides
        return _bar(lines)
    head, tail = lines[:LOG_HEAD_LINES], lines[-LOG_TAIL_LINES:]
    return [*_bar(head), f"    ... ({left_out} lines left out)", *_bar(tail)]


def _bar(lines: list[str]) -> list[str]:
    return [f"    | {line}" for line in lines]


def _log_lines(data: bytes) -> list[str]:
    """A log's lines as the launcher keeps them: cut to length, made printable, blank ones left out."""
    return [text for line in data.split(b"\n") if (text := output_line(line))]
