"""The submission service's gRPC servicer: thin, it calls the competition's submissions desk (any
:class:`~.desk_port.Desk`: the competition server is one) as the caller the access checks found
(:mod:`.submission_access`) and encodes the answer; only here do errors become status codes. The
command line starts it beside the server it serves, on its own address (never the one bots dial in
to), behind a listener guard.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import grpc

from arena.competition import organiser
from arena.competition.desk_port import Desk, SubmissionError
from arena.competition.submission_access import (
    CALLER,
    ORGANISER,
    ORGANISER_ONLY,
    AuthorGuard,
    bearer,
    find_author,
)
from arena.ledger import LedgerError, challenges, seat_reports
from arena.ledger import competitions as store
from arena.ledger.webhooks import Webhook
from arena.service.listener_caps import Caps, Guard, caps_for
from arena.service.server import (
    HANDSHAKE_OPTIONS,
    bind_guarded,
    check_free,
    open_files_limit,
    start_guarded,
)
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

if TYPE_CHECKING:
    from typing import TypeAlias

    Handler: TypeAlias = grpc.RpcMethodHandler[Any, Any]  # not subscriptable at run time

Context = grpc.aio.ServicerContext[Any, Any]

_T = TypeVar("_T")

MAX_ID = 2**63 - 1  # the largest id SQLite can hold; a larger one names no submission
# Room above the bundle's cap in a Submit message: its field's tag and length (a few bytes), so that a
# bundle a little over the cap is refused by name rather than by the transport.
MESSAGE_MARGIN = 64 * 1024


# Starts the submission service for a desk on an address, its bundles capped at a size in MB:
# (the gRPC server, the address it listens on). :func:`serve_submissions` is one.
SubmissionsStarter = Callable[[Desk, str, int], Awaitable[tuple["SubmissionListener", str]]]


def _info(s: store.Submission) -> pb.SubmissionInfo:
    return pb.SubmissionInfo(
        submission_id=s.id, bot=s.bot, version=s.version, language=s.language, kind=s.kind,
        status=s.status, reason=s.reason, submitted_at=s.submitted_at, updated_at=s.updated_at,
        entrant_id=s.entrant_id or 0, author=s.author,
    )  # fmt: skip


class CompetitionServicer(competition_pb2_grpc.CompetitionServicer):
    def __init__(self, desk: Desk) -> None:
        self.desk = desk

    async def _author(self, context: Context) -> store.Author:
        """The caller, as the interceptor found it; looked up again when the servicer is served
        without it (never unchecked)."""
        author = CALLER.get()
        if author is None:
            author, refusal = await find_author(self.desk, context.invocation_metadata())
            if author is None:
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal)
        assert author is not None
        return author

    async def Submit(self, request: pb.SubmitRequest, context: Context) -> pb.SubmitResponse:
        author = await self._author(context)
        try:
            sub = await self.desk.submit(author, request.bundle)
        except SubmissionError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return pb.SubmitResponse(
            submission_id=sub.id, bot=sub.bot, version=sub.version, status=sub.status
        )

    async def RegisterRemote(
        self, request: pb.RegisterRemoteRequest, context: Context
    ) -> pb.RegisterRemoteResponse:
        author = await self._author(context)
        try:
            sub, token = await self.desk.register_remote(
                author, request.bot, request.version, request.language
            )
        except SubmissionError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return pb.RegisterRemoteResponse(
            submission_id=sub.id, token=token, address=self.desk.bots_address
        )

    async def ListSubmissions(
        self, request: pb.ListSubmissionsRequest, context: Context
    ) -> pb.ListSubmissionsResponse:
        author = await self._author(context)
        subs = await self.desk.submissions_of(author)
        return pb.ListSubmissionsResponse(submissions=[_info(s) for s in subs])

    async def GetLog(self, request: pb.GetLogRequest, context: Context) -> pb.GetLogResponse:
        author = await self._author(context)
        sub = None
        if 0 < request.submission_id <= MAX_ID:  # beyond, SQLite cannot even compare it
            with contextlib.suppress(LedgerError):
                sub = await self.desk.submission(request.submission_id)
        if sub is None or sub.author_id != author.id:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"you have no submission {request.submission_id}"
            )
        assert sub is not None
        text = await self.desk.log(sub.id)
        history = [
            pb.StatusChange(status=c.status, reason=c.reason, at=c.at)
            for c in await self.desk.history(sub.id)
        ]
        answer = pb.GetLogResponse(log=text, history=history)
        if sub.entrant_id is not None:
            answer.failures.extend(
                pb.PlayFailure(
                    game_id=f.game_id, key=f.key, outcome=f.outcome, detail=f.detail,
                    finished_at=f.finished_at,
                )
                for f in await self.desk.play_failures(sub.entrant_id)
            )  # fmt: skip
            use = await self.desk.time_use(sub.entrant_id)
            answer.time_use.CopyFrom(
                pb.TimeUse(
                    games=use.games, decisions=use.decisions, median_ms=use.median_ms,
                    p99_ms=use.p99_ms, bank_left_ms=use.bank_left_ms, failures=use.failures,
                )
            )  # fmt: skip
        return answer

    async def GetGameLog(
        self, request: pb.GetGameLogRequest, context: Context
    ) -> pb.GetGameLogResponse:
        author = await self._author(context)
        if not 0 < request.game_id <= MAX_ID:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"no bot of yours played a game {request.game_id}"
            )
        try:
            key, outcome, outputs = await self.desk.game_log(author, request.game_id)
        except SubmissionError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
        return pb.GetGameLogResponse(
            game_id=request.game_id,
            key=key,
            outcome=outcome,
            seats=_seat_outputs(outputs),
        )

    async def Withdraw(self, request: pb.WithdrawRequest, context: Context) -> pb.WithdrawResponse:
        author = await self._author(context)
        try:
            count = await self.desk.withdraw(author, request.bot)
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
        # The public board: anyone may read it, with no token (PUBLIC_METHODS).
        rows = [_board_row(line) for line in await self.desk.board()]
        return pb.LeaderboardResponse(competition=self.desk.competition_name, rows=rows)

    # ---- Notifications: the caller's webhook.

    async def SetWebhook(
        self, request: pb.SetWebhookRequest, context: Context
    ) -> pb.SetWebhookResponse:
        author = await self._author(context)
        try:
            hook, secret = await self.desk.set_webhook(author, request.url)
        except SubmissionError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return pb.SetWebhookResponse(webhook=_webhook_info(hook), secret=secret)

    async def ShowWebhook(
        self, request: pb.ShowWebhookRequest, context: Context
    ) -> pb.ShowWebhookResponse:
        author = await self._author(context)
        hook = await self.desk.webhook(author)
        if hook is None:
            return pb.ShowWebhookResponse()
        return pb.ShowWebhookResponse(webhook=_webhook_info(hook))

    async def RemoveWebhook(
        self, request: pb.RemoveWebhookRequest, context: Context
    ) -> pb.RemoveWebhookResponse:
        author = await self._author(context)
        if not await self.desk.remove_webhook(author):
            await context.abort(grpc.StatusCode.NOT_FOUND, "you have no webhook")
        return pb.RemoveWebhookResponse()

    # ------------------------------------------------------------ the organiser's calls

    async def _organiser(self, context: Context) -> None:
        """Refuse a call without the organiser's token (the interceptor found it; looked at again
        when the servicer is served without it)."""
        if ORGANISER.get() or self.desk.is_organiser(bearer(context.invocation_metadata())):
            return
        await context.abort(grpc.StatusCode.PERMISSION_DENIED, ORGANISER_ONLY)

    async def _organise(self, context: Context, action: Callable[..., _T], *args: Any) -> _T:
        await self._organiser(context)
        try:
            return await self.desk.organise(action, *args)
        except organiser.OrganiserError as exc:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
            raise  # abort raises; for the type checker

    async def WhoAmI(self, request: pb.WhoAmIRequest, context: Context) -> pb.WhoAmIResponse:
        answer = pb.WhoAmIResponse(
            competition=self.desk.competition_name, max_bundle_mb=self.desk.max_bundle_mb
        )
        if ORGANISER.get() or self.desk.is_organiser(bearer(context.invocation_metadata())):
            answer.role = "organiser"
        else:
            answer.role, answer.name = "author", (await self._author(context)).name
        return answer

    async def SetPaused(
        self, request: pb.SetPausedRequest, context: Context
    ) -> pb.SetPausedResponse:
        paused = await self._organise(context, organiser.set_paused, request.paused)
        return pb.SetPausedResponse(paused=paused)

    async def OrganiserStatus(
        self, request: pb.OrganiserStatusRequest, context: Context
    ) -> pb.OrganiserStatusResponse:
        found = await self._organise(context, organiser.status)
        return pb.OrganiserStatusResponse(
            competition=self.desk.competition_name,
            paused=found.paused,
            submissions=[_info(s) for s in found.submissions],
            variant=found.variant,
            games_played=found.played,
            failures=found.failures,
            last_games=[
                pb.CompetitionGame(
                    game_id=g.game_id,
                    key=g.key,
                    players=g.players,
                    outcome=g.outcome,
                    finished_at=g.finished_at,
                )
                for g in found.last_games
            ],
        )

    async def Suspend(self, request: pb.SuspendRequest, context: Context) -> pb.SuspendResponse:
        count = await self._organise(context, organiser.suspend, request.bot, request.reason)
        return pb.SuspendResponse(suspended=count)

    async def Reinstate(
        self, request: pb.ReinstateRequest, context: Context
    ) -> pb.ReinstateResponse:
        count = await self._organise(context, organiser.reinstate, request.bot)
        return pb.ReinstateResponse(reinstated=count)

    async def AddAuthor(
        self, request: pb.AddAuthorRequest, context: Context
    ) -> pb.AddAuthorResponse:
        author, token = await self._organise(context, organiser.add_author, request.name)
        return pb.AddAuthorResponse(author_id=author.id, name=author.name, token=token)

    async def ListAuthors(
        self, request: pb.ListAuthorsRequest, context: Context
    ) -> pb.ListAuthorsResponse:
        found = await self._organise(context, organiser.authors)
        return pb.ListAuthorsResponse(
            authors=[pb.AuthorInfo(author_id=a.id, name=a.name, since=a.created_at) for a in found]
        )

    # ---- Challenges

    async def Challenge(self, request: pb.ChallengeRequest, context: Context) -> pb.ChallengeInfo:
        author = await self._author(context)
        try:
            found = await self.desk.challenge(author, request.bot, request.against, request.games)
        except SubmissionError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return _challenge_info(found, [])

    async def ListChallenges(
        self, request: pb.ListChallengesRequest, context: Context
    ) -> pb.ListChallengesResponse:
        author = await self._author(context)
        found = await self.desk.challenges_of(author)
        return pb.ListChallengesResponse(challenges=[_challenge_info(c, g) for c, g in found])

    async def CancelChallenge(
        self, request: pb.CancelChallengeRequest, context: Context
    ) -> pb.ChallengeInfo:
        author = await self._author(context)
        if not 0 < request.challenge_id <= MAX_ID:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"you have no challenge {request.challenge_id}"
            )
        try:
            ended = await self.desk.cancel_challenge(author, request.challenge_id)
        except SubmissionError as exc:
            await context.abort(_challenge_refusal(exc), str(exc))
        return _challenge_info(ended, [])

    async def ChallengeReplay(
        self, request: pb.ChallengeReplayRequest, context: Context
    ) -> pb.ChallengeReplayResponse:
        author = await self._author(context)
        if not 0 < request.game_id <= MAX_ID:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"you have no challenge game {request.game_id}"
            )
        try:
            game, record, outputs = await self.desk.challenge_replay(author, request.game_id)
        except SubmissionError as exc:
            await context.abort(_challenge_refusal(exc), str(exc))
        return pb.ChallengeReplayResponse(
            game=_challenge_game(game),
            record=json.dumps(record, separators=(",", ":")),
            seats=_seat_outputs(outputs),
        )


def _challenge_refusal(exc: SubmissionError) -> grpc.StatusCode:
    """A challenge call refused: NOT_FOUND for what is not the caller's ("you have no ..."), else
    FAILED_PRECONDITION (it is, but cannot be done now)."""
    if str(exc).startswith("you have no"):
        return grpc.StatusCode.NOT_FOUND
    return grpc.StatusCode.FAILED_PRECONDITION


def _seat_outputs(
    outputs: Iterable[seat_reports.SeatOutput | challenges.ChallengeOutput],
) -> list[pb.SeatOutput]:
    """What each seat's bot wrote during a game, as the protocol carries it (a ranked game's or a
    challenge game's)."""
    return [
        pb.SeatOutput(
            seat=o.seat, member=o.member, bot=o.bot, version=o.version, output=o.output,
            output_bytes=o.output_bytes,
        )
        for o in outputs
    ]  # fmt: skip


def _webhook_info(hook: Webhook) -> pb.WebhookInfo:
    return pb.WebhookInfo(
        url=hook.url, enabled=hook.disabled_at is None, disabled_at=hook.disabled_at or "",
        disabled_reason=hook.disabled_reason, failures=hook.failures, delivered=hook.delivered,
        dropped=hook.dropped, abandoned=hook.abandoned, queued=hook.queued,
        last_delivered_at=hook.last_delivered_at or "", last_error=hook.last_error,
        created_at=hook.created_at,
    )  # fmt: skip


def _challenge_game(g: challenges.ChallengeGame) -> pb.ChallengeGame:
    return pb.ChallengeGame(
        game_id=g.id, number=g.number, deal=g.deal, rotation=g.rotation, seats=list(g.seats),
        outcome=g.outcome, detail=g.detail, score=g.challenger_score,
        opponent_score=g.opponent_score, result=g.result, finished_at=g.finished_at,
    )  # fmt: skip


def _challenge_info(
    c: challenges.Challenge, games: list[challenges.ChallengeGame]
) -> pb.ChallengeInfo:
    return pb.ChallengeInfo(
        challenge_id=c.id, bot=c.bot, version=c.version, opponent_bot=c.opponent_bot,
        opponent_version=c.opponent_version, games=c.games, played=c.played, status=c.status,
        reason=c.reason, wins=c.wins, losses=c.losses, draws=c.draws, created_at=c.created_at,
        finished_at=c.finished_at, game_list=[_challenge_game(g) for g in games],
    )  # fmt: skip


def _board_row(r: store.BoardLine) -> pb.LeaderboardRow:
    row = pb.LeaderboardRow(
        rank=r.rank,
        bot=r.bot,
        version=r.version,
        author=r.author,
        exposed=r.exposed,
        mu=r.mu,
        sigma=r.sigma,
        games=r.games,
        status=r.status,
        in_play=r.in_play,
        last_played=r.last_played,
        language=r.language,
    )
    if r.rank_change is not None:
        row.rank_change = r.rank_change
    return row


class SubmissionListener:
    """The submission service's gRPC server, and the guard in front of it (none on a Unix socket)."""

    def __init__(self, server: grpc.aio.Server, guard: Guard | None) -> None:
        self.server = server
        self.guard = guard

    async def stop(self, grace: float | None) -> None:
        if self.guard is not None:
            await self.guard.close()
        await self.server.stop(grace)


async def serve_submissions(
    desk: Desk, address: str, max_bundle_mb: int
) -> tuple[SubmissionListener, str]:
    """The submission service for ``desk``, started on ``address``; (its listener, address)."""
    # A bundle travels as raw bytes (a protobuf bytes field, not base64): the largest message is the
    # bundle and a few bytes of framing. A bundle a little over the cap is told so by name; one far
    # over it is stopped by the transport (RESOURCE_EXHAUSTED) before it is held whole.
    limit = min(max_bundle_mb * 1024 * 1024 + MESSAGE_MARGIN, 2**31 - 1)
    # Anyone on the network may reach it: a guard's caps per client and deadlines, its connections
    # a share of the open files (20,174 idle ones once spent them all, the ledger's included).
    guard = None
    if not address.startswith("unix:"):
        check_free(address, "submissions")
        guard = Guard("submissions", submission_caps(open_files_limit()))
    grpc_server = grpc.aio.server(
        interceptors=[AuthorGuard(desk, guard.authenticated if guard else None)],
        options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.so_reuseport", 0),  # a port in use is an error, not shared
            *HANDSHAKE_OPTIONS,
            *([("grpc.max_allowed_incoming_connections", guard.caps.connections)] if guard else []),
        ],
    )
    competition_pb2_grpc.add_CompetitionServicer_to_server(CompetitionServicer(desk), grpc_server)
    port = await bind_guarded(grpc_server, guard, address, "submissions")
    await start_guarded(grpc_server, guard)
    host = address.rsplit(":", 1)[0]
    return SubmissionListener(grpc_server, guard), f"{host}:{port}"


def submission_caps(open_files: int) -> Caps:
    """The submission listener's caps: an eighth of the open files, at most 256 connections (an
    author has CALLS_PER_AUTHOR calls at a time, each a connection at most), 4 anonymous ones per
    client."""
    return caps_for(open_files, 8, 256, per_client=4)
