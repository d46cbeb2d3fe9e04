"""The submission service's gRPC servicer: thin, it checks the author's token, calls the competition
server and encodes the answer; only here do errors become status codes.

It listens on its own address (never the one bots dial in to), and every call must carry an author's
token (``authorization: Bearer <token>``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import grpc

from arena.ledger import LedgerError
from arena.ledger import competitions as store
from arena.service.server import bind
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

if TYPE_CHECKING:
    from arena.competition.server import CompetitionServer

Context = grpc.aio.ServicerContext[Any, Any]


def _info(s: store.Submission) -> pb.SubmissionInfo:
    return pb.SubmissionInfo(
        submission_id=s.id, bot=s.bot, version=s.version, language=s.language, kind=s.kind,
        status=s.status, reason=s.reason, submitted_at=s.submitted_at, updated_at=s.updated_at,
    )  # fmt: skip


class CompetitionServicer(competition_pb2_grpc.CompetitionServicer):
    def __init__(self, server: CompetitionServer) -> None:
        self.server = server

    async def _author(self, context: Context) -> store.Author:
        metadata = dict(context.invocation_metadata() or ())
        given = metadata.get("authorization", "")
        token = given.removeprefix("Bearer ").strip() if isinstance(given, str) else ""
        author = None
        if token:
            author = await self.server.db.call(self.server.store.author_of, self.server.cid, token)
        if author is None:
            given_one = (
                "the token given is no author's of this competition"
                if token
                else "an author's token is needed (metadata 'authorization: Bearer <token>')"
            )
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                f"{given_one}; the organiser gives one with: arena compete author add NAME",
            )
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
        try:
            sub = await self.server.db.call(self.server.store.submission, request.submission_id)
        except LedgerError:
            sub = None
        if sub is None or sub.author_id != author.id:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"you have no submission {request.submission_id}"
            )
        assert sub is not None
        text = await self.server.db.call(self.server.store.log, sub.id)
        return pb.GetLogResponse(log=text)

    async def Withdraw(self, request: pb.WithdrawRequest, context: Context) -> pb.WithdrawResponse:
        author = await self._author(context)
        count = await self.server.withdraw(author, request.bot)
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


async def serve_submissions(server: CompetitionServer) -> tuple[grpc.aio.Server, str]:
    """The submission service, started on the competition's address; (server, address)."""
    caps = server.spec.submissions
    # Room above the cap, so that a bundle somewhat over it is told so by name; one far over it is
    # stopped by the transport (RESOURCE_EXHAUSTED).
    limit = min(4 * caps.max_bundle_mb * 1024 * 1024 + 1024 * 1024, 2**31 - 1)
    grpc_server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.so_reuseport", 0),  # a port in use is an error, not shared
        ]
    )
    competition_pb2_grpc.add_CompetitionServicer_to_server(CompetitionServicer(server), grpc_server)
    address = server.spec.server.submissions
    port = bind(grpc_server, address, "submissions")
    await grpc_server.start()
    host = address.rsplit(":", 1)[0]
    return grpc_server, f"{host}:{port}"
