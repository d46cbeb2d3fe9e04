"""``arena compete ...`` for authors, over the network with their token: ``submit``, ``submissions``,
``log``, ``withdraw``, ``remote`` (and ``leaderboard --server``: :mod:`arena.cli.compete.shared`)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import console, fail, literal, plain
from arena.cli.compete import shared
from arena.cli.options import DEFAULT_COMPETITION_SERVER, AuthorTokenOption, SubmissionServerOption

if TYPE_CHECKING:
    from arena.wire.v1 import competition_pb2_grpc

_T = TypeVar("_T")


def _ask(
    server: str,
    token: str,
    call: Callable[[competition_pb2_grpc.CompetitionAsyncStub, shared.Metadata], Awaitable[_T]],
) -> _T:
    """One call to the submission service with the author's token (refused without one)."""
    if not token:
        raise fail("give your author token: --token or $ARENA_AUTHOR_TOKEN")
    return shared.call(server, token, call)


def submit(
    bundle: Annotated[
        Path,
        typer.Argument(help="The bot's folder (with its arena-bot.toml) or a .tar.gz of it."),
    ],
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
    wait: Annotated[
        bool, typer.Option(help="Wait until it is in play or has failed, and show why.")
    ] = True,
) -> None:
    """Submit a bot: a folder or tarball with an arena-bot.toml manifest (name, version, language,
    run, optional build).

    The competition stores it, builds it with no network, checks it with arena check-bot, and puts it
    in play if it passes; a new version replaces the old one."""
    from arena.competition import bundles
    from arena.ledger import competitions as store
    from arena.wire.v1 import competition_pb2 as pb

    if not token:  # before packing the bundle
        raise fail("give your author token: --token or $ARENA_AUTHOR_TOKEN")
    try:
        if bundle.is_dir():
            data = bundles.pack(bundle, 4 * 1024 * 1024 * 1024)
        else:
            data = bundle.read_bytes()
    except (OSError, bundles.BundleError) as exc:
        raise fail(f"{bundle}: {exc}") from exc
    answer = _ask(
        server, token, lambda stub, md: stub.Submit(pb.SubmitRequest(bundle=data), metadata=md)
    )
    console.print(
        f"submitted {escape(answer.bot)} {escape(answer.version)} as submission "
        f"{answer.submission_id}: {answer.status}"
    )
    if not wait:
        return
    status = answer.status
    final = (store.ACTIVE, store.FAILED, store.WITHDRAWN, store.SUSPENDED, store.REPLACED)
    while status not in final:
        time.sleep(1.0)
        listed = _ask(
            server,
            token,
            lambda stub, md: stub.ListSubmissions(pb.ListSubmissionsRequest(), metadata=md),
        )
        mine = [s for s in listed.submissions if s.submission_id == answer.submission_id]
        if not mine:
            raise fail("the submission is gone from the competition", 1)
        if mine[0].status != status:
            status = mine[0].status
            console.print(
                f"{status}{': ' + escape(literal(mine[0].reason)) if mine[0].reason else ''}"
            )
    if status != store.ACTIVE:
        logged = _ask(
            server,
            token,
            lambda stub, md: stub.GetLog(
                pb.GetLogRequest(submission_id=answer.submission_id), metadata=md
            ),
        )
        typer.echo(literal(logged.log))
        raise typer.Exit(1)


def submissions(
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER, token: AuthorTokenOption = ""
) -> None:
    """List your submissions with their status and reason."""
    from arena.wire.v1 import competition_pb2 as pb

    listed = _ask(
        server,
        token,
        lambda stub, md: stub.ListSubmissions(pb.ListSubmissionsRequest(), metadata=md),
    )
    table = Table(title="Your submissions")
    for col in ("id", "bot", "version", "kind", "status", "reason", "submitted"):
        table.add_column(col)
    for s in listed.submissions:
        table.add_row(
            str(s.submission_id), plain(s.bot), plain(s.version), s.kind, s.status,
            plain(s.reason, 120), s.submitted_at,
        )  # fmt: skip
    console.print(table)


def log(
    submission: Annotated[int, typer.Argument(help="The submission's id.")],
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """Print a submission's build and conformance-check log."""
    from arena.wire.v1 import competition_pb2 as pb

    logged = _ask(
        server,
        token,
        lambda stub, md: stub.GetLog(pb.GetLogRequest(submission_id=submission), metadata=md),
    )
    typer.echo(literal(logged.log))


def withdraw(
    bot: Annotated[str, typer.Argument(help="Your bot's name.")],
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """Take your bot out of play (its games and rating history stay)."""
    from arena.wire.v1 import competition_pb2 as pb

    answer = _ask(
        server, token, lambda stub, md: stub.Withdraw(pb.WithdrawRequest(bot=bot), metadata=md)
    )
    console.print(f"withdrawn: {answer.withdrawn} submission(s) of {escape(bot)}")


def remote(
    bot: Annotated[str, typer.Argument(help="Your bot's name.")],
    version: Annotated[str, typer.Option(help="Its version.")],
    language: Annotated[str, typer.Option(help="A label for the leaderboard.")] = "remote",
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """Register a bot that runs on your own machine: it dials in with the printed token and waits for
    the games it is given (absent, it is skipped, never forfeited)."""
    from arena.wire.v1 import competition_pb2 as pb

    answer = _ask(
        server,
        token,
        lambda stub, md: stub.RegisterRemote(
            pb.RegisterRemoteRequest(bot=bot, version=version, language=language), metadata=md
        ),
    )
    console.print(f"registered; your bot dials in at {escape(answer.address)} with this token:")
    typer.echo(answer.token)
