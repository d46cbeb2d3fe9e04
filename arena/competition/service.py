"""The submission service's gRPC servicer: thin, it checks the author's token, calls the competition
server and encodes the answer; only here do errors become status codes.

It listens on its own address (never the one bots dial in to), and every call must carry an author's
token (``authorization: Bearer <token>``). The token is checked by an interceptor before the request is
read: a call without one is refused while its body is still on the wire (checked in the handler, a
stranger's 20 MB bundle was received and parsed first, and forty at once took 4 GB of memory).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import grpc

from arena.ledger import LedgerError
from arena.ledger import competitions as store
from arena.service.listener_caps import Caps, Guard, caps_for, marking
from arena.service.server import HANDSHAKE_OPTIONS, bind, check_free, open_files_limit
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

if TYPE_CHECKING:
    from typing import TypeAlias

    from arena.competition.server import CompetitionServer

    Handler: TypeAlias = grpc.RpcMethodHandler[Any, Any]  # not subscriptable at run time

Context = grpc.aio.ServicerContext[Any, Any]

# The author the interceptor found for the call under way (set in the call's own handler task).
CALLER: contextvars.ContextVar[store.Author | None] = contextvars.ContextVar("caller", default=None)

MAX_ID = 2**63 - 1  # the largest id SQLite can hold; a larger one names no submission
# An author's calls under way at a time. Each Submit holds its bundle (up to the cap) in memory until
# the author's earlier ones are taken in, one at a time: forty at once of 19 MB each took the server
# past 4 GB. Counted before a request is read, as the token is checked.
CALLS_PER_AUTHOR = 4
# Room above the bundle's cap in a Submit message: its field's tag and length (a few bytes), so that a
# bundle a little over the cap is refused by name rather than by the transport.
MESSAGE_MARGIN = 64 * 1024


def _info(s: store.Submission) -> pb.SubmissionInfo:
    return pb.SubmissionInfo(
        submission_id=s.id, bot=s.bot, version=s.version, language=s.language, kind=s.kind,
        status=s.status, reason=s.reason, submitted_at=s.submitted_at, updated_at=s.updated_at,
    )  # fmt: skip


class CompetitionServicer(competition_pb2_grpc.CompetitionServicer):
    def __init__(self, server: CompetitionServer) -> None:
        self.server = server

    async def _author(self, context: Context) -> store.Author:
        """The caller, as the interceptor found it; looked up again when the servicer is served
        without it (never unchecked)."""
        author = CALLER.get()
        if author is None:
            author, refusal = await find_author(self.server, context.invocation_metadata())
            if author is None:
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal)
        assert author is not None
        return author

    async def Submit(self, request: pb.SubmitRequest, context: Context) -> pb.SubmitResponse:
        from arena.competition.server import SubmissionError

        author = await self._author(context)
        try:
            sub = await self.server.submit(author, request.bundle)
        except SubmissionError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return pb.SubmitResponse(
            submission_id=sub.id, bot=sub.bot, version=sub.version, status=sub.status
        )

    async def RegisterRemote(
        self, request: pb.RegisterRemoteRequest, context: Context
    ) -> pb.RegisterRemoteResponse:
        from arena.competition.server import SubmissionError

        author = await self._author(context)
        try:
            sub, token = await self.server.register_remote(
                author, request.bot, request.version, request.language
            )
        except SubmissionError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return pb.RegisterRemoteResponse(
            submission_id=sub.id, token=token, address=self.server.bots_address
        )

    async def ListSubmissions(
        self, request: pb.ListSubmissionsRequest, context: Context
    ) -> pb.ListSubmissionsResponse:
        author = await self._author(context)
        subs = await self.server.db.call(self.server.store.submissions, self.server.cid, author.id)
        return pb.ListSubmissionsResponse(submissions=[_info(s) for s in subs])

    async def GetLog(self, request: pb.GetLogRequest, context: Context) -> pb.GetLogResponse:
        author = await self._author(context)
        sub = None
        if 0 < request.submission_id <= MAX_ID:  # beyond, SQLite cannot even compare it
            with contextlib.suppress(LedgerError):
                sub = await self.server.db.call(self.server.store.submission, request.submission_id)
        if sub is None or sub.author_id != author.id:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"you have no submission {request.submission_id}"
            )
        assert sub is not None
        text = await self.server.db.call(self.server.store.log, sub.id)
        return pb.GetLogResponse(log=text)

    async def Withdraw(self, request: pb.WithdrawRequest, context: Context) -> pb.WithdrawResponse:
        from arena.competition.server import SubmissionError

        author = await self._author(context)
        try:
            count = await self.server.withdraw(author, request.bot)
        except SubmissionError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        if not count:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"you have no bot {request.bot!r} in play or in intake"
            )
        return pb.WithdrawResponse(withdrawn=count)

    async def Leaderboard(
        self, request: pb.LeaderboardRequest, context: Context
    ) -> pb.LeaderboardResponse:
        await self._author(context)
        rows = await self.server.db.call(leaderboard, self.server)
        return pb.LeaderboardResponse(competition=self.server.spec.name, rows=rows)


async def find_author(
    server: CompetitionServer, metadata: Any, known: KnownAuthors | None = None
) -> tuple[store.Author | None, str]:
    """The author whose token the call's metadata carries; (None, why) when there is none. With
    ``known``, an author found before is not looked up again, and a lookup waits for the one before."""
    given = dict(metadata or ()).get("authorization", "")
    token = given.removeprefix("Bearer ").strip() if isinstance(given, str) else ""
    if token:
        if known is not None:
            author = await known.find(server, token)
        else:
            author = await server.db.call(server.store.author_of, server.cid, token)
        if author is not None:
            return author, ""
    given_one = (
        "the token given is no author's of this competition"
        if token
        else "an author's token is needed (metadata 'authorization: Bearer <token>')"
    )
    return None, f"{given_one}; the organiser gives one with: arena compete author add NAME"


class KnownAuthors:
    """The authors whose tokens have been seen, by their token's hash, and the lookups of the others
    one at a time. Every call with a wrong token costs a lookup on the ledger's one thread, where the
    competition records its games and submissions: a flood of them, all at once, queued that many
    lookups ahead of the competition's own work. Now a flood waits here, in the event loop, with one
    lookup of the ledger at a time; an author's calls after the first are not looked up at all (an
    author's token is never revoked), and an author added while the server runs is found at once."""

    def __init__(self) -> None:
        self.by_hash: dict[str, store.Author] = {}
        self._turn = asyncio.Lock()

    async def find(self, server: CompetitionServer, token: str) -> store.Author | None:
        digest = store.hash_token(token)
        author = self.by_hash.get(digest)
        if author is None:
            async with self._turn:
                author = await server.db.call(server.store.author_of, server.cid, token)
            if author is not None:
                self.by_hash[digest] = author
        return author


class AuthorGuard(grpc.aio.ServerInterceptor):
    """Checks the author's token from the call's metadata, before its request is read: a refused
    call's handler reads nothing (it is request-streaming, and aborts without taking a message), so
    its body never reaches the server's memory whole. An accepted call runs with its author known
    (:data:`CALLER`)."""

    def __init__(
        self, server: CompetitionServer, on_authenticated: Callable[[str], None] | None = None
    ) -> None:
        self.server = server
        self.known = KnownAuthors()
        self.under_way: Counter[int] = Counter()  # each author's calls under way, by id
        self.on_authenticated = on_authenticated  # the listener's guard, told of a token shown

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        metadata = handler_call_details.invocation_metadata
        author, refusal = await find_author(self.server, metadata, self.known)
        if author is None:
            return _refuse(refusal)
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler  # unknown method: UNIMPLEMENTED (the service has unary calls only)
        if self.on_authenticated is not None:
            return marking(_as(author, handler, self.under_way), self.on_authenticated)
        return _as(author, handler, self.under_way)


def _refuse(refusal: str) -> Handler:
    async def abort(requests: object, context: Context) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal)

    # No deserializer either: nothing of the request is ever taken.
    return grpc.stream_unary_rpc_method_handler(abort)


def _as(author: store.Author, handler: Handler, under_way: Counter[int]) -> Handler:
    """``handler`` run with ``author`` as the caller, when the author has fewer than
    :data:`CALLS_PER_AUTHOR` calls ``under_way``: counted before the request is read (the handler
    takes its request as a stream of one message, read only when asked), so that a call past them
    is refused with its body still on the wire."""
    behaviour: Any = handler.unary_unary  # a coroutine function on grpc.aio (the stubs say not)

    async def call(requests: AsyncIterator[Any], context: Context) -> Any:
        if under_way[author.id] >= CALLS_PER_AUTHOR:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"you have {CALLS_PER_AUTHOR} calls under way, the most at a time; "
                "wait for one to end",
            )
        under_way[author.id] += 1
        try:
            request = await anext(aiter(requests), None)
            if request is None:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the call has no request")
            CALLER.set(author)  # the handler's own task: no other call sees it
            return await behaviour(request, context)
        finally:
            under_way[author.id] -= 1
            if not under_way[author.id]:
                del under_way[author.id]

    return grpc.stream_unary_rpc_method_handler(
        call,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


def leaderboard(server: CompetitionServer) -> list[pb.LeaderboardRow]:
    """The competition's board with each entrant's author and status (on the ledger's thread)."""
    return [
        pb.LeaderboardRow(
            rank=r.rank,
            bot=r.bot,
            version=r.version,
            author=r.author,
            exposed=r.exposed,
            mu=r.mu,
            sigma=r.sigma,
            games=r.games,
            status=r.status,
        )
        for r in server.store.board(server.cid)
    ]


class SubmissionListener:
    """The submission service's gRPC server, and the guard in front of it (none on a Unix socket)."""

    def __init__(self, server: grpc.aio.Server, guard: Guard | None) -> None:
        self.server = server
        self.guard = guard

    async def stop(self, grace: float | None) -> None:
        if self.guard is not None:
            await self.guard.close()
        await self.server.stop(grace)


async def serve_submissions(server: CompetitionServer) -> tuple[SubmissionListener, str]:
    """The submission service, started on the competition's address; (its listener, address)."""
    caps = server.spec.submissions
    # A bundle travels as raw bytes (a protobuf bytes field, not base64): the largest message is the
    # bundle and a few bytes of framing. A bundle a little over the cap is told so by name; one far
    # over it is stopped by the transport (RESOURCE_EXHAUSTED) before it is held whole.
    limit = min(caps.max_bundle_mb * 1024 * 1024 + MESSAGE_MARGIN, 2**31 - 1)
    address = server.spec.server.submissions
    # Anyone on the network may reach it: a guard's caps per client and deadlines, its connections
    # a share of the open files (20,174 idle ones once spent them all, the ledger's included).
    guard = None
    if not address.startswith("unix:"):
        check_free(address, "submissions")
        guard = Guard("submissions", submission_caps(open_files_limit()))
    grpc_server = grpc.aio.server(
        interceptors=[AuthorGuard(server, guard.authenticated if guard else None)],
        options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.so_reuseport", 0),  # a port in use is an error, not shared
            *HANDSHAKE_OPTIONS,
            *([("grpc.max_allowed_incoming_connections", guard.caps.connections)] if guard else []),
        ],
    )
    competition_pb2_grpc.add_CompetitionServicer_to_server(CompetitionServicer(server), grpc_server)
    if guard is not None:
        bind(grpc_server, guard.backend_address, "submissions")
        try:
            port = await guard.listen(address)
        except OSError:
            await guard.close()
            raise
    else:
        port = bind(grpc_server, address, "submissions")
    try:
        await grpc_server.start()
    except BaseException:
        if guard is not None:
            await guard.close()
        raise
    host = address.rsplit(":", 1)[0]
    return SubmissionListener(grpc_server, guard), f"{host}:{port}"


def submission_caps(open_files: int) -> Caps:
    """The submission listener's caps: an eighth of the open files, at most 256 connections (an
    author has CALLS_PER_AUTHOR calls at a time, each a connection at most), 4 anonymous ones per
    client."""
    return caps_for(open_files, 8, 256, per_client=4)
