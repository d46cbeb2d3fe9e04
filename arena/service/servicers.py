"""Thin gRPC servicers: decode, call the manager or the port, encode; only here do errors become status
codes."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import NamedTuple, cast

import grpc

from arena.bots.launcher import LaunchError, check_command
from arena.game import RULES_VERSION, VariantError
from arena.referee import FailurePolicy, MatchConfig, Outcome, Policies, TimeControl
from arena.service.match_manager import MatchEntry, MatchManager, PlayerSpec
from arena.service.sessions import BotSession
from arena.service.stream_port import Outgoing, StreamPort
from arena.wire import serde
from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2, bot_pb2_grpc

HELLO_TIMEOUT = 10.0
MAX_NAME_CHARS = 64  # a bot's name and version as it says them in its Hello
# A bot's messages are small (a Hello, a reply naming one action): anything larger is a protocol error.
# (gRPC itself drops a stream whose message exceeds the server's receive limit, seen as a disconnect.)
MAX_BOT_MESSAGE_BYTES = 16 * 1024
PROTOCOL_VERSION = 1
GATEWAY_SERVICE = bot_pb2.DESCRIPTOR.services_by_name["BotGateway"].full_name
# How fast one listener answers the streams it refuses (see RefusalPace): this many at once, then
# one more for each second since, the rest each after the pause.
FREE_REFUSALS = 8
REFUSAL_PAUSE = 1.0

_POLICY_FROM_PB = {
    bot_pb2.FAILURE_POLICY_UNSPECIFIED: None,
    bot_pb2.FAILURE_POLICY_FORFEIT: FailurePolicy.FORFEIT,
    bot_pb2.FAILURE_POLICY_RANDOM_ACTION: FailurePolicy.RANDOM_ACTION,
}
# Also how `arena remote start` asks for a policy.
POLICY_TO_PB = {
    FailurePolicy.FORFEIT: bot_pb2.FAILURE_POLICY_FORFEIT,
    FailurePolicy.RANDOM_ACTION: bot_pb2.FAILURE_POLICY_RANDOM_ACTION,
}


class Oversized(NamedTuple):
    """A message from a bot over MAX_BOT_MESSAGE_BYTES: its size, the message left unparsed."""

    size: int


Incoming = bot_pb2.BotMessage | Oversized


def _deserialize(data: bytes) -> Incoming:
    """The gateway's request deserializer: a message over the limit is not parsed at all (and a
    message's size is its length on the wire, rather than ByteSize() of every message parsed)."""
    if len(data) > MAX_BOT_MESSAGE_BYTES:
        return Oversized(len(data))
    return bot_pb2.BotMessage.FromString(data)


def _serialize(message: Outgoing) -> bytes:
    """The gateway's response serializer: a request the port wrote to bytes itself passes through."""
    if type(message) is bytes:
        return message
    assert isinstance(message, bot_pb2.RefereeMessage)
    return message.SerializeToString()


class RefusalPace:
    """How fast one listener (the referee's TCP listener, or a sandboxed bot's own socket) answers
    the streams it refuses. A bot that opened stream after stream with a Hello the referee refuses
    cost the referee's event loop, which times every match, some 3.8 s of CPU in one game, and
    nothing to itself. Past FREE_REFUSALS in a burst (refilled at one a second), each refusal is
    answered only after REFUSAL_PAUSE seconds, its stream held meanwhile: a bot's own socket then
    takes at most its connections' streams per pause. A bot whose Hello is accepted never waits."""

    def __init__(self) -> None:
        self._tokens = float(FREE_REFUSALS)
        self._at = time.monotonic()

    async def wait(self) -> None:
        now = time.monotonic()
        self._tokens = min(float(FREE_REFUSALS), self._tokens + (now - self._at))
        self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return
        await asyncio.sleep(REFUSAL_PAUSE)


# The pace of the listener whose stream the running handler serves (set per stream by add_gateway).
_pace: contextvars.ContextVar[RefusalPace | None] = contextvars.ContextVar("pace", default=None)


def add_gateway(servicer: BotGateway, server: grpc.aio.Server) -> None:
    """Serve ``servicer`` as arena.v1.BotGateway on ``server``: the generated registration, with a
    serializer that also takes a RefereeMessage already serialised, and a :class:`RefusalPace` of
    the server's own."""
    pace = RefusalPace()

    async def play(
        request_iterator: AsyncIterator[Incoming],
        context: grpc.aio.ServicerContext[bot_pb2.BotMessage, bot_pb2.RefereeMessage],
    ) -> None:
        _pace.set(pace)  # this stream's task's own context
        await servicer.Play(request_iterator, context)

    handlers = {
        "Play": grpc.stream_stream_rpc_method_handler(
            play,
            request_deserializer=_deserialize,
            response_serializer=_serialize,
        )
    }
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(GATEWAY_SERVICE, handlers),)
    )
    server.add_registered_method_handlers(GATEWAY_SERVICE, handlers)


class BotGateway(bot_pb2_grpc.BotGatewayServicer):
    def __init__(self, manager: MatchManager) -> None:
        self.manager = manager
        # Told the peer of each stream whose Hello is accepted (a guarded listener's guard: its
        # connection is no longer anonymous).
        self.on_authenticated: Callable[[str], None] = lambda peer: None

    async def Play(  # type: ignore[override]  # writes with context.write, from the referee's task
        self,
        request_iterator: AsyncIterator[Incoming],
        context: grpc.aio.ServicerContext[bot_pb2.BotMessage, bot_pb2.RefereeMessage],
    ) -> None:
        messages = aiter(request_iterator)
        try:
            async with asyncio.timeout(HELLO_TIMEOUT):
                first = await anext(messages)
        except TimeoutError:
            await self._refuse_quietly(
                context, f"no Hello within {HELLO_TIMEOUT:g} s of opening the stream"
            )
            return
        except StopAsyncIteration:
            await self._refuse_quietly(context, "the stream ended before a Hello")
            return
        except Exception:  # garbage before the Hello, or a broken stream
            await self._refuse_quietly(context, "the first message is not a readable BotMessage")
            return
        if isinstance(first, Oversized):
            await self.refuse(
                context,
                "",
                f"the first message has {first.size} bytes, over the limit of "
                f"{MAX_BOT_MESSAGE_BYTES}",
            )
            return
        if not first.HasField("hello"):
            await self.refuse(
                context, "", "the first message must be a Hello with the seat's token"
            )
            return
        hello = first.hello
        if hello.protocol_version != PROTOCOL_VERSION:
            await self.refuse(
                context,
                hello.token,
                f"protocol version {hello.protocol_version} is not supported; "
                f"this referee speaks version {PROTOCOL_VERSION}",
            )
            return
        port, why = self.manager.claim(hello.token)
        lobby = self.manager.lobby.join(hello.token) if port is None else None
        if port is None and lobby is None:
            await self.refuse(context, hello.token, why)
            return
        self.on_authenticated(context.peer())
        if lobby is not None:
            session = lobby
        else:
            assert port is not None
            session = self.manager.session_for(port)
        reader = asyncio.create_task(_read_messages(messages, session))
        current: StreamPort | None = port
        try:
            if lobby is not None:  # a remote entrant waits in the lobby for the games it is given
                current = await session.next_match()
            while current is not None:
                current.bot_name = bot_text(hello.name, MAX_NAME_CHARS)
                current.bot_version = bot_text(hello.version, MAX_NAME_CHARS)
                entry = self.manager.matches[current.match_id]
                session.begin(current, entry.config.seeds())
                try:
                    await context.write(bot_pb2.RefereeMessage(welcome=_welcome(entry, current)))
                    # The gateway's serializer (add_gateway) also takes a request as bytes.
                    current.attach(cast(Callable[[Outgoing], Awaitable[None]], context.write))
                    await current.finished.wait()
                except Exception as exc:  # the stream broke while writing the Welcome
                    current.on_closed(
                        Outcome.DISCONNECT, f"the stream failed: {type(exc).__name__}"
                    )
                    session.end()
                parked = self.manager.park(session, current)
                current.drained.set()
                current = await session.next_match() if parked else None
                if current is not None and session.ended:  # the bot left meanwhile
                    current.process = session.process  # a crash if its process has exited
                    current.on_closed(Outcome.DISCONNECT, "the bot's stream ended between matches")
                    current.drained.set()
                    current = None
        finally:
            reader.cancel()
            session.lost(Outcome.DISCONNECT, "the stream ended")
            self.manager.lobby.leave(session)
            for done in (port, current):
                if done is not None:
                    done.drained.set()

    async def refuse(
        self,
        context: grpc.aio.ServicerContext[bot_pb2.BotMessage, bot_pb2.RefereeMessage],
        token: str,
        reason: str,
    ) -> None:
        """Tell a bot why it is refused (a hook for subclasses that watch refusals); its seat, if the
        token is one still waiting for its bot, keeps the reason. At its listener's pace (see
        :class:`RefusalPace`)."""
        if token:
            self.manager.refused(token, reason)
        pace = _pace.get()
        if pace is not None:
            await pace.wait()
        await context.write(_refused(reason))

    async def _refuse_quietly(
        self,
        context: grpc.aio.ServicerContext[bot_pb2.BotMessage, bot_pb2.RefereeMessage],
        reason: str,
    ) -> None:
        """Refuse a stream that may already be broken (nothing to report if the write fails)."""
        with contextlib.suppress(Exception):
            await self.refuse(context, "", reason)


async def _read_messages(messages: AsyncIterator[Incoming], session: BotSession) -> None:
    """Hand each of the bot's messages to the player it is for, for as long as the stream lasts (a
    flood of protocol errors ends the reading: see :meth:`BotSession.violation`)."""
    try:
        async for message in messages:
            if type(message) is Oversized:
                size = message.size
                session.violation(
                    f"a message of {size} bytes, over the limit of {MAX_BOT_MESSAGE_BYTES}"
                )
                session.lost(Outcome.PROTOCOL_ERROR, f"an oversized message ({size} bytes)")
                return
            assert isinstance(message, bot_pb2.BotMessage)
            if message.HasField("reply"):
                reply = message.reply
                match_id = reply.match_id
                port = session.port_for(match_id) if match_id else None
                if not match_id:
                    going = session.violation(
                        "a reply without match_id (it must copy the request's)"
                    )
                elif port is not None and (port is session.port or port.expired(reply.request_id)):
                    going = session.reply(port, reply)  # or a late one to a match already over
                elif session.port is not None:
                    going = session.violation(
                        f"reply for match {match_id!r:.40} on a stream of {session.port.match_id}"
                    )
                else:
                    going = session.violation("a reply between matches")
            else:
                going = session.violation(
                    f"unexpected message {message.WhichOneof('body') or 'empty'} mid-match"
                )
            if not going:
                return
        session.lost(Outcome.DISCONNECT, "the bot closed its stream")
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # garbage bytes, oversized messages, a dropped connection
        what = f"{type(exc).__name__}: {exc}"
        # Bytes that do not decode as a message, or a message over the size limit, are the bot's
        # protocol error, not a lost connection.
        lowered = what.lower()
        garbage = any(
            k in lowered
            for k in ("decodeerror", "deserializ", "resource_exhausted", "larger than max")
        )
        outcome = Outcome.PROTOCOL_ERROR if garbage else Outcome.DISCONNECT
        session.lost(outcome, f"the bot's stream failed: {what}"[:300])


def bot_text(text: str, limit: int) -> str:
    """Text a bot chose, as data: printable characters only (no escape sequences), cut to ``limit``."""
    clean = "".join(c if c.isprintable() else "\ufffd" for c in text[: limit * 2])
    return clean[:limit]


def _refused(reason: str) -> bot_pb2.RefereeMessage:
    return bot_pb2.RefereeMessage(refused=bot_pb2.Refused(reason=reason))


def _welcome(entry: MatchEntry, port: StreamPort) -> bot_pb2.Welcome:
    cfg = entry.config
    return bot_pb2.Welcome(
        match_id=entry.match_id,
        seat=port.seat,
        variant=cfg.variant,
        options=dict(cfg.build_variant().options),
        rules_version=RULES_VERSION,
        games=cfg.games,
        time_control=time_control_to_pb(cfg.time_control),
        policies=policies_to_pb(cfg.policies),
        seat_names=entry.seat_names,
        team_member=port.member,
    )


def time_control_to_pb(tc: TimeControl) -> bot_pb2.TimeControl:
    return bot_pb2.TimeControl(budget_ms=tc.budget_ms, bank_ms=tc.bank_ms, grace_ms=tc.grace_ms)


def policies_to_pb(p: Policies) -> bot_pb2.Policies:
    return bot_pb2.Policies(
        on_timeout=POLICY_TO_PB[p.on_timeout],
        on_illegal_action=POLICY_TO_PB[p.on_illegal_action],
        on_crash=POLICY_TO_PB[p.on_crash],
        on_protocol_error=POLICY_TO_PB[p.on_protocol_error],
        max_strikes=p.max_strikes,
    )


def config_from_pb(req: admin_pb2.StartMatchRequest, deal_key: bytes = b"") -> MatchConfig:
    defaults_tc = TimeControl()
    tc = req.time_control
    time_control = TimeControl(
        budget_ms=tc.budget_ms or defaults_tc.budget_ms,
        bank_ms=tc.bank_ms if req.HasField("time_control") else defaults_tc.bank_ms,
        grace_ms=tc.grace_ms or defaults_tc.grace_ms,
    )
    d = Policies()
    p = req.policies
    policies = Policies(
        on_timeout=_POLICY_FROM_PB.get(p.on_timeout) or d.on_timeout,
        on_illegal_action=_POLICY_FROM_PB.get(p.on_illegal_action) or d.on_illegal_action,
        on_crash=_POLICY_FROM_PB.get(p.on_crash) or d.on_crash,
        on_protocol_error=_POLICY_FROM_PB.get(p.on_protocol_error) or d.on_protocol_error,
        max_strikes=p.max_strikes if req.HasField("policies") else d.max_strikes,
    )
    return MatchConfig(
        variant=req.variant or "two-handed",
        options=tuple(sorted(req.options.items())),
        seed=req.seed,
        games=req.games or 1,
        time_control=time_control,
        policies=policies,
        deal_key=deal_key,
    )


class Admin(admin_pb2_grpc.AdminServicer):
    def __init__(self, manager: MatchManager) -> None:
        self.manager = manager

    async def StartMatch(
        self,
        request: admin_pb2.StartMatchRequest,
        context: grpc.aio.ServicerContext[
            admin_pb2.StartMatchRequest, admin_pb2.StartMatchResponse
        ],
    ) -> admin_pb2.StartMatchResponse:
        try:
            config = config_from_pb(request, self.manager.deal_key)
            v = config.build_variant()
            specs = [
                PlayerSpec(bot_text(s.name, MAX_NAME_CHARS) or f"player {i}", s.command)
                for i, s in enumerate(request.seats)
            ]
            for spec in specs:
                if spec.command:
                    check_command(spec.command, spec.name)
            sizes = [v.team_size(seat) for seat in range(v.seats)]
            if len(specs) != sum(sizes):
                raise ValueError(
                    f"{v.name} takes {sum(sizes)} players (seats {sizes}), got {len(specs)} seat specs"
                )
            grouped, i = [], 0
            for size in sizes:
                grouped.append(specs[i : i + size])
                i += size
            timeout = (request.connect_timeout_ms or 10_000) / 1000
            # The server's own sandbox and limits: a caller cannot loosen them.
            entry = self.manager.create(config, grouped, timeout, self.manager.limits)
        except (ValueError, VariantError, LaunchError) as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        await self.manager.start(entry)
        tokens = [
            admin_pb2.SeatToken(seat=p.seat, team_member=p.member, name=p.name, token=p.token)
            for seat in entry.players
            for p, spec in zip(seat, entry.specs[seat[0].seat], strict=True)
            if not spec.command
        ]
        return admin_pb2.StartMatchResponse(
            match_id=entry.match_id, tokens=tokens, bot_address=self.manager.address
        )

    async def ListMatches(
        self,
        request: admin_pb2.ListMatchesRequest,
        context: grpc.aio.ServicerContext[
            admin_pb2.ListMatchesRequest, admin_pb2.ListMatchesResponse
        ],
    ) -> admin_pb2.ListMatchesResponse:
        return admin_pb2.ListMatchesResponse(
            matches=[_summary(e) for e in self.manager.matches.values()]
        )

    async def GetMatch(
        self,
        request: admin_pb2.GetMatchRequest,
        context: grpc.aio.ServicerContext[admin_pb2.GetMatchRequest, admin_pb2.MatchInfo],
    ) -> admin_pb2.MatchInfo:
        entry = self.manager.matches.get(request.match_id)
        if entry is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        games = [
            serde.result_to_pb(e.result, int(e.outcome), e.detail, e.culprit) for e in entry.ends
        ]
        return admin_pb2.MatchInfo(summary=_summary(entry), games=games)

    async def WatchMatch(
        self,
        request: admin_pb2.WatchMatchRequest,
        context: grpc.aio.ServicerContext[admin_pb2.WatchMatchRequest, bot_pb2.MatchEvent],
    ) -> AsyncIterator[bot_pb2.MatchEvent]:
        if request.match_id not in self.manager.matches:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        queue = self.manager.watch(request.match_id, request.from_start)
        while (event := await queue.get()) is not None:
            yield bot_pb2.MatchEvent(
                match_id=event.match_id, game=event.game, sequence=event.sequence, text=event.text
            )


def _summary(entry: MatchEntry) -> admin_pb2.MatchSummary:
    return admin_pb2.MatchSummary(
        match_id=entry.match_id,
        variant=entry.config.variant,
        status=entry.status,
        seat_names=entry.seat_names,
        games_played=len(entry.ends),
        games=entry.config.games,
    )
