"""A competition's live games for the web's Live page: the admin service's spectator calls
(``ListMatches``, ``GetMatch``, ``WatchMatch``: ``arena web --server ADDRESS`` follows them as it
follows ``arena serve``), on an address of its own, every call carrying its token, and showing only
the games whose deal will not be played again.

A duplicate pairing plays its deal once per seat rotation, one rotation after the other: a game of
rotation 0 shown live (or its results) would tell anyone watching the cards the next rotation's
players are about to hold. So a game is shown live only when no game of its deal is still to be
played: a pairing's last rotation (the others are over by then), or a single deal (a remote entrant's
games, or a competition without duplicate deals). The earlier rotations are never listed here; their
replays are on the competition's game pages once the deal is over (the web keeps a game sealed while
a game of its deal is still planned). Challenge games (their deals a stream of their own, see
:mod:`.challenges`) are their authors' alone and never shown. Nothing here starts a match: the
matchmaker does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from arena.common.secret_tokens import new_token
from arena.service.listener_caps import Guard
from arena.service.match_manager import MatchEntry, MatchManager
from arena.service.server import (
    ADMIN_SERVICE,
    HANDSHAKE_OPTIONS,
    SERVER_OPTIONS,
    AdminGuard,
    admin_caps,
    bind_guarded,
    check_free,
    open_files_limit,
    start_guarded,
)
from arena.service.servicers import Admin
from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2

Context = grpc.aio.ServicerContext[Any, Any]
# A game, as the live service knows it: its public seed and each seat's players' names.
GameKey = tuple[int, tuple[tuple[str, ...], ...]]


def game_key(entry: MatchEntry) -> GameKey:
    return entry.config.seed, tuple(tuple(p.name for p in seat) for seat in entry.specs)


class LiveGames(Admin):
    """The admin service's spectator calls on the matches ``shown`` allows; any other match is
    answered as no match at all, and starting one is refused."""

    def __init__(self, manager: MatchManager, shown: Callable[[MatchEntry], bool]) -> None:
        super().__init__(manager)
        self.shown = shown

    def _visible(self, match_id: str) -> bool:
        entry = self.manager.matches.get(match_id)
        return entry is not None and self.shown(entry)

    async def StartMatch(
        self,
        request: admin_pb2.StartMatchRequest,
        context: grpc.aio.ServicerContext[
            admin_pb2.StartMatchRequest, admin_pb2.StartMatchResponse
        ],
    ) -> admin_pb2.StartMatchResponse:
        await context.abort(
            grpc.StatusCode.PERMISSION_DENIED,
            "a competition's games are made by its matchmaker; this service only shows them",
        )
        raise AssertionError("abort returns no answer")  # pragma: no cover

    async def ListMatches(
        self,
        request: admin_pb2.ListMatchesRequest,
        context: grpc.aio.ServicerContext[
            admin_pb2.ListMatchesRequest, admin_pb2.ListMatchesResponse
        ],
    ) -> admin_pb2.ListMatchesResponse:
        found = await super().ListMatches(request, context)
        return admin_pb2.ListMatchesResponse(
            matches=[m for m in found.matches if self._visible(m.match_id)]
        )

    async def GetMatch(
        self,
        request: admin_pb2.GetMatchRequest,
        context: grpc.aio.ServicerContext[admin_pb2.GetMatchRequest, admin_pb2.MatchInfo],
    ) -> admin_pb2.MatchInfo:
        if not self._visible(request.match_id):
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        return await super().GetMatch(request, context)

    async def WatchMatch(
        self,
        request: admin_pb2.WatchMatchRequest,
        context: grpc.aio.ServicerContext[admin_pb2.WatchMatchRequest, bot_pb2.MatchEvent],
    ) -> AsyncIterator[bot_pb2.MatchEvent]:
        if not self._visible(request.match_id):
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        async for event in super().WatchMatch(request, context):
            yield event


class LiveListener:
    """The live service's gRPC server, its guard, the address it listens on and its token."""

    def __init__(
        self, server: grpc.aio.Server, guard: Guard | None, address: str, token: str
    ) -> None:
        self.server = server
        self.guard = guard
        self.address = address
        self.token = token

    async def stop(self, grace: float | None) -> None:
        if self.guard is not None:
            await self.guard.close()
        await self.server.stop(grace)


async def serve_live(
    manager: MatchManager, address: str, shown: Callable[[MatchEntry], bool], token: str = ""
) -> LiveListener:
    """The live service on ``address``, its calls carrying ``token`` (a fresh one when none)."""
    token = token or new_token(32)
    guard = None
    if not address.startswith("unix:"):
        check_free(address, "the live games")
        guard = Guard("the live games", admin_caps(open_files_limit()))
    server = grpc.aio.server(
        interceptors=[AdminGuard(token, guard.authenticated if guard else None)],
        options=[*SERVER_OPTIONS, *HANDSHAKE_OPTIONS],
    )
    admin_pb2_grpc.add_AdminServicer_to_server(LiveGames(manager, shown), server)
    checks = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    port = await bind_guarded(server, guard, address, "the live games")
    await start_guarded(server, guard)
    for name in ("", ADMIN_SERVICE):
        await checks.set(name, health_pb2.HealthCheckResponse.SERVING)
    return LiveListener(server, guard, f"{address.rsplit(':', 1)[0]}:{port}", token)
