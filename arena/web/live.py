"""Following a running referee (``arena serve``) through its admin service: the list of its matches, and
a match's public events as server-sent events.

The spectator stream (``WatchMatch``) carries the public log alone: what every player at the table
sees (cards played, declarations, scores), never a hand or the stock. It is passed on as it comes, one
server-sent event per entry (``id`` game:sequence, so that a browser that reconnects picks up where it
left off), then the match's results (``GetMatch``) as an ``end`` event.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc

from arena.referee.match import public_detail
from arena.web.queries import MAX_DETAIL, MAX_TEXT, cap, whole_number
from arena.wire.v1 import admin_pb2, admin_pb2_grpc, game_pb2

HEARTBEAT = 15.0  # seconds between comments on an idle stream (proxies close silent ones)
# Live streams at a time: each holds a stream of the referee's admin service, and anyone who can
# reach the web may open them.
MAX_WATCHERS = 64
# ... and at most this many for one client (by its address): one client's 70 streams held all 64 and
# every other visitor was told the server was full. A browser follows one match per tab.
MAX_WATCHERS_PER_CLIENT = 4
CALL_TIMEOUT = 10.0  # seconds for a unary call to the referee

OUTCOME_NAMES = {
    v.number: v.name.removeprefix("OUTCOME_").lower().replace("_", "-")
    for v in game_pb2.Outcome.DESCRIPTOR.values
}


class LiveError(Exception):
    """The referee could not be asked; the message says what it answered. ``status``: the HTTP status
    that says so (404 for a match it does not have, 502 for a referee that cannot be used)."""

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.status = status


class _Count:
    """The live streams open now, in all and by client."""

    def __init__(self) -> None:
        self.n = 0
        self.by_client: dict[str, int] = {}

    def take(self, client: str) -> None:
        self.n += 1
        self.by_client[client] = self.by_client.get(client, 0) + 1

    def give_back(self, client: str) -> None:
        self.n -= 1
        left = self.by_client.pop(client) - 1
        if left:
            self.by_client[client] = left  # a client with none holds no entry: no growth per client


@dataclass(frozen=True, slots=True)
class Referee:
    address: str
    token: str | None = None
    watchers: _Count = field(default_factory=_Count, compare=False, repr=False)

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()

    def _explain(self, exc: grpc.aio.AioRpcError) -> LiveError:
        code = exc.code()
        if code is grpc.StatusCode.UNAVAILABLE:
            return LiveError(f"the referee at {self.address} cannot be reached")
        if code is grpc.StatusCode.UNAUTHENTICATED:
            return LiveError(
                f"the referee at {self.address} wants its admin token (arena web --admin-token)"
            )
        if code is grpc.StatusCode.UNIMPLEMENTED:  # the bots' address, say: no admin service
            return LiveError(
                f"{self.address} serves no referee's admin service: give arena web --server the "
                "admin address (arena serve's --admin-address, 127.0.0.1:50052 by default)"
            )
        if code is grpc.StatusCode.NOT_FOUND:
            return LiveError(cap(exc.details() or "no such match", MAX_TEXT), 404)
        return LiveError(
            f"the referee at {self.address} answered {code.name}: {cap(exc.details() or '')}"
        )

    async def matches(self) -> list[dict[str, Any]]:
        try:
            async with grpc.aio.insecure_channel(self.address) as channel:
                found = await admin_pb2_grpc.AdminStub(channel).ListMatches(
                    admin_pb2.ListMatchesRequest(), metadata=self.metadata, timeout=CALL_TIMEOUT
                )
        except grpc.aio.AioRpcError as exc:
            raise self._explain(exc) from exc
        return [_summary(m) for m in found.matches]

    async def match(self, match_id: str) -> dict[str, Any]:
        try:
            async with grpc.aio.insecure_channel(self.address) as channel:
                info = await admin_pb2_grpc.AdminStub(channel).GetMatch(
                    admin_pb2.GetMatchRequest(match_id=match_id),
                    metadata=self.metadata,
                    timeout=CALL_TIMEOUT,
                )
        except grpc.aio.AioRpcError as exc:
            raise self._explain(exc) from exc
        return {
            **_summary(info.summary),
            "results": [
                {
                    "game": i,
                    "outcome": OUTCOME_NAMES.get(g.outcome, str(g.outcome)),
                    # Its match is under way: its deal may be played again in it.
                    "detail": cap(public_detail(g.detail), MAX_DETAIL),
                    "scores": list(g.scores),
                    "ranking": list(g.ranking),
                    "culprit": g.culprit,
                }
                for i, g in enumerate(info.games)
            ],
        }

    async def stream(
        self, match_id: str, after: tuple[int, int] | None, client: str = ""
    ) -> AsyncIterator[str]:
        """Server-sent events: the match's public events from the start (those up to ``after``,
        (game, sequence), left out), a comment every :data:`HEARTBEAT` seconds while it is quiet, then
        ``end`` with the results, or ``failure`` with what went wrong. ``client``: who asks (its
        address), held to :data:`MAX_WATCHERS_PER_CLIENT` streams at a time."""
        if self.watchers.n >= MAX_WATCHERS:
            message = f"this server follows {MAX_WATCHERS} live streams at most; try again later"
            yield _sse("failure", {"message": message})
            return
        if self.watchers.by_client.get(client, 0) >= MAX_WATCHERS_PER_CLIENT:
            message = (
                f"you follow {MAX_WATCHERS_PER_CLIENT} live streams already, the most for one "
                "client; close one first"
            )
            yield _sse("failure", {"message": message})
            return
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        async def pump() -> None:
            try:
                async with grpc.aio.insecure_channel(self.address) as channel:
                    call = admin_pb2_grpc.AdminStub(channel).WatchMatch(
                        admin_pb2.WatchMatchRequest(match_id=match_id, from_start=True),
                        metadata=self.metadata,
                    )
                    async for e in call:
                        await queue.put(("event", e))
                await queue.put(("end", await self.match(match_id)))
            except grpc.aio.AioRpcError as exc:
                await queue.put(("failure", str(self._explain(exc))))
            except LiveError as exc:
                await queue.put(("failure", str(exc)))

        task = asyncio.create_task(pump())
        self.watchers.take(client)
        try:
            yield "retry: 2000\n\n"
            while True:
                try:
                    async with asyncio.timeout(HEARTBEAT):
                        kind, value = await queue.get()
                except TimeoutError:
                    yield ": still watching\n\n"
                    continue
                if kind == "event":
                    if after is not None and (value.game, value.sequence) <= after:
                        continue
                    data = {"game": value.game, "sequence": value.sequence, "text": cap(value.text)}
                    yield _sse("public", data, f"{value.game}:{value.sequence}")
                elif kind == "end":
                    yield _sse("end", value)
                    return
                else:
                    yield _sse("failure", {"message": value})
                    return
        finally:
            self.watchers.give_back(client)
            task.cancel()
            await asyncio.wait({task})  # a cancellation of this generator's own goes on
            failed = None if task.cancelled() else task.exception()
            if failed is not None:
                raise failed


def _summary(m: admin_pb2.MatchSummary) -> dict[str, Any]:
    return {
        "match_id": cap(m.match_id),
        "variant": cap(m.variant),
        "status": cap(m.status),
        "seat_names": [cap(n) for n in m.seat_names],
        "games_played": m.games_played,
        "games": m.games,
    }


def _sse(event: str, data: Any, event_id: str | None = None) -> str:
    # JSON has no raw newline, so the data is one line; the browser parses it, never as markup.
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def parse_last_id(value: str | None) -> tuple[int, int] | None:
    """The ``Last-Event-ID`` a reconnecting browser sends: ``game:sequence``."""
    if not value:
        return None
    before, colon, after = value.partition(":")
    game, sequence = whole_number(before), whole_number(after)
    if not colon or game is None or sequence is None:
        return None
    return game, sequence
