"""``arena compete ...`` for the organiser, on the ledger: ``serve`` runs the competition; ``author
add``/``author list``, ``runtimes`` (the bundle languages this machine can build and run), ``status``,
``pause``/``resume``, ``suspend``/``reinstate`` (and ``leaderboard``, which authors share:
:mod:`arena.cli.compete.shared`)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import (
    cluster_address,
    console,
    fail,
    literal,
    logs_folder,
    open_ledger,
    plain,
)
from arena.cli.compete import shared
from arena.cli.compete.shared import Metadata, open_competition
from arena.cli.options import (
    DEFAULT_LEDGER,
    DEFAULT_LOGS_MB,
    CompetitionOption,
    LedgerOption,
    LogsMaxOption,
)
from arena.cluster.errors import ClusterError

if TYPE_CHECKING:
    from arena.competition.organiser import Status
    from arena.wire.v1 import competition_pb2, competition_pb2_grpc

_T = TypeVar("_T")

OrganiserServerOption = Annotated[
    str | None,
    typer.Option(
        "--server",
        "-s",
        help="A running competition's submission address: act through it with the organiser's "
        "token (--token) rather than on --ledger (which needs this machine's ledger).",
        show_default=False,
    ),
]
OrganiserTokenOption = Annotated[
    str,
    typer.Option(
        "--token",
        envvar="ARENA_ORGANISER_TOKEN",
        help="The organiser's token, with --server (arena compete serve shows it on its first "
        "start, or takes one with --organiser-token-file).",
        show_default=False,
    ),
]


def serve(
    file: Annotated[
        Path, typer.Argument(help="The competition file, e.g. competitions/example.toml.")
    ],
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    data: Annotated[
        Path | None,
        typer.Option(
            help="Where bundles and builds are kept (default: LEDGER.d beside the ledger)."
        ),
    ] = None,
    logs: Annotated[
        Path | None, typer.Option(help="Write each bot process's output into this folder.")
    ] = None,
    logs_max_mb: LogsMaxOption = DEFAULT_LOGS_MB,
    cluster: Annotated[
        str | None,
        typer.Option(
            help="Play the games between submitted bundles on a Ray cluster: auto, HOST:PORT, "
            "ray://HOST:PORT or local; none: on this machine. Default: the file's \\[server] "
            "cluster, else this machine. Needs the cluster extra.",
            metavar="ADDRESS",
            show_default=False,
        ),
    ] = None,
    organiser_token_file: Annotated[
        Path | None,
        typer.Option(
            help="A file holding the organiser's token (its first line, 16 characters or more): "
            "the token the organiser's calls to this server carry (--server/--token of pause, "
            "resume, suspend, reinstate, author add/list, and the web's organiser pages). Without "
            "it, the first start creates one and prints it once; only its hash is kept (in the "
            "data folder); giving a file replaces it.",
            show_default=False,
        ),
    ] = None,
    live: Annotated[
        str | None,
        typer.Option(
            help="HOST:PORT to offer the live games on, for arena web --server ADDRESS (its Live "
            "page): the games whose deal will not be played again, every call with the token. "
            "Default: the file's \\[server] live, else none.",
            metavar="ADDRESS",
            show_default=False,
        ),
    ] = None,
    live_token: Annotated[
        str | None,
        typer.Option(
            envvar="ARENA_ADMIN_TOKEN",
            help="The token every call to the live games must carry (default: a fresh one, "
            "written to a file only you can read, where arena web --server finds it).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run a competition until stopped: the submission service, the matchmaker and the referee.

    Resumes where it stopped (after a crash too). Prints the addresses: one for authors'
    submissions, one where remote entrants dial in, and the live games' with --live. Ctrl-C or
    SIGTERM stops it cleanly.

    The organiser's token, to act on the running competition from elsewhere (the --server and --token of the organiser's commands, the web's organiser pages), is made on the first start and shown once; only its hash is kept. The file given with --organiser-token-file sets another."""
    from arena.cli.serve import token_file, write_token
    from arena.competition.server import CompetitionServer, TaskDied
    from arena.competition.spec import CompetitionFileError, load
    from arena.competition.submission_api import serve_submissions
    from arena.ledger import LedgerError

    try:
        spec = load(file)
    except CompetitionFileError as exc:
        raise fail(str(exc)) from exc
    logs_folder(logs)
    address = cluster_address(cluster, spec.server.cluster)
    on = None
    if address:
        from arena.cluster.connect import connect  # Ray is imported only for a cluster

        try:
            on = connect(address)  # before the ledger: a bad address changes nothing
        except ClusterError as exc:
            raise fail(str(exc)) from exc
        console.print(f"games between bundles are played on the Ray cluster at {address}")
    from arena.competition import organiser

    folder = data or ledger.with_name(ledger.name + ".d")
    try:
        given = (
            organiser_token_file.read_text().split("\n", 1)[0]
            if organiser_token_file is not None
            else None
        )
        new_token = organiser.take_token(folder, given)
    except OSError as exc:
        raise fail(f"the organiser's token: {exc}") from exc
    except organiser.OrganiserError as exc:
        raise fail(f"{organiser_token_file}: {exc}") from exc
    led = open_ledger(ledger, must_exist=False)
    if new_token is not None:
        console.print(
            "the organiser's token (keep it secret; it is shown once, only its hash is kept; "
            "--organiser-token-file sets another):"
        )
        typer.echo(new_token)

    def say(text: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        console.print(f"[{stamp}] {escape(text)}", highlight=False, soft_wrap=True)

    async def run() -> None:
        server = CompetitionServer(
            spec, led, folder, logs, say, on, logs_max_mb, serve_submissions=serve_submissions,
            live_address=live or "", live_token=live_token or "",
        )  # fmt: skip
        await server.start()
        written = None
        if server.live_listener is not None:
            listener = server.live_listener
            if not live_token:  # written before the address is printed: whoever reads it finds it
                written = token_file(listener.address)
                write_token(written, listener.token)
            where = f"its token in {written}" if written else "the token given"
            say(
                f"live games on {listener.address} (arena web --server {listener.address}; {where})"
            )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        say(f"competition {spec.name!r}: submissions on {server.submissions_address}, "
            f"bots dial in on {server.bots_address}")  # fmt: skip
        say("stop with Ctrl-C")
        waiting = asyncio.ensure_future(server.wait())
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait([waiting, stopped], return_when=asyncio.FIRST_COMPLETED)
            if waiting.done():
                waiting.result()  # a fatal error
        finally:
            waiting.cancel()
            stopped.cancel()
            say("stopping: ending the games in play")
            await server.stop()
            if written is not None:
                with contextlib.suppress(OSError):
                    written.unlink()

    try:
        asyncio.run(run())
    except (LedgerError, OSError, ClusterError, TaskDied) as exc:
        raise fail(str(exc)) from exc
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    finally:
        if on is not None:
            on.close()


def author_add(
    name: Annotated[str, typer.Argument(help="The author's name.")],
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    server: OrganiserServerOption = None,
    token: OrganiserTokenOption = "",
) -> None:
    """Add an author and print the author's secret token (shown once; only its hash is kept)."""
    from arena.competition import organiser
    from arena.wire.v1 import competition_pb2 as pb

    if server:
        answer = _remote(
            server,
            token,
            lambda stub, md: stub.AddAuthor(pb.AddAuthorRequest(name=name), metadata=md),
        )
        secret = answer.token
    else:
        _, secret = _local(ledger, competition, organiser.add_author, name)
    console.print(f"author {escape(name)} added; their token (keep it secret, it is shown once):")
    typer.echo(secret)


def author_list(
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    server: OrganiserServerOption = None,
    token: OrganiserTokenOption = "",
) -> None:
    """List the competition's authors."""
    from arena.competition import organiser
    from arena.wire.v1 import competition_pb2 as pb

    table = Table(title="Authors")
    for col in ("id", "name", "since"):
        table.add_column(col)
    if server:
        answer = _remote(
            server, token, lambda stub, md: stub.ListAuthors(pb.ListAuthorsRequest(), metadata=md)
        )
        rows = [(a.author_id, a.name, a.since) for a in answer.authors]
    else:
        rows = [
            (a.id, a.name, a.created_at) for a in _local(ledger, competition, organiser.authors)
        ]
    for author_id, author_name, since in rows:
        table.add_row(str(author_id), plain(author_name), since)
    console.print(table)


def runtimes_command(
    competition_file: Annotated[
        Path | None,
        typer.Argument(
            help="A competition file: mark the languages it does not accept.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Print each bundle language with the versions of its toolchain on this machine, or the Debian
    packages it lacks (a bundle in a language whose toolchain is missing is refused)."""
    from arena.competition import runtimes
    from arena.competition.spec import CompetitionFileError, load

    accepted: tuple[str, ...] = runtimes.LANGUAGES
    if competition_file is not None:
        try:
            accepted = load(competition_file).submissions.languages
        except CompetitionFileError as exc:
            raise fail(str(exc)) from None
    for found in runtimes.survey():
        note = "" if found.language in accepted else "  (not accepted by this competition)"
        console.print(
            f"{found.language:<7} {escape(literal(found.line()))}{note}",
            soft_wrap=True,
            highlight=False,
        )


def status(
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    server: OrganiserServerOption = None,
    token: OrganiserTokenOption = "",
) -> None:
    """Show the competition: paused or not, its submissions by status, games played and the last
    games."""
    from arena.competition import organiser
    from arena.wire.v1 import competition_pb2 as pb

    if server:
        found = _status_of(
            _remote(
                server,
                token,
                lambda stub, md: stub.OrganiserStatus(pb.OrganiserStatusRequest(), metadata=md),
            )
        )
    else:
        found = _local(ledger, competition, organiser.status)
    _print_status(found)


def _status_of(answer: competition_pb2.OrganiserStatusResponse) -> Status:
    """The server's OrganiserStatus answer as :func:`arena.competition.organiser.status` gives it
    on the ledger: one status, printed by one function."""
    from arena.competition.organiser import Status
    from arena.ledger import competitions as store

    subs = [
        store.Submission(
            id=s.submission_id,
            author_id=0,
            author=s.author,
            bot=s.bot,
            version=s.version,
            language=s.language,
            kind=s.kind,
            bundle="",
            run="",
            build="",
            entrant_id=s.entrant_id or None,
            status=s.status,
            reason=s.reason,
            submitted_at=s.submitted_at,
            updated_at=s.updated_at,
        )  # the server's answer leaves out what the status does not show
        for s in answer.submissions
    ]
    last = [
        store.LastGame(g.game_id, g.key, g.outcome, g.finished_at, g.players)
        for g in answer.last_games
    ]
    return Status(
        answer.competition, answer.variant, answer.paused, answer.games_played, answer.failures,
        subs, last,
    )  # fmt: skip


def _print_status(found: Status) -> None:
    from arena.ledger import competitions as store

    subs = found.submissions
    counts = {s: sum(1 for x in subs if x.status == s) for s in store.STATUSES}
    console.print(
        f"competition {escape(found.name)} ({found.variant}): "
        f"{'paused' if found.paused else 'running'}; {found.played} games, {found.failures} ended "
        f"by a bot's failure"
    )
    console.print(
        "submissions: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n) if subs else
        "no submissions yet"
    )  # fmt: skip
    table = Table(title="Submissions")
    for col in ("id", "bot", "version", "author", "kind", "status", "reason", "updated"):
        table.add_column(col, overflow="fold" if col == "reason" else "ellipsis")
    for s in subs:
        table.add_row(
            str(s.id), plain(s.bot), plain(s.version), plain(s.author), s.kind, s.status,
            plain(s.reason, len(s.reason) + 1), s.updated_at,
        )  # fmt: skip
    console.print(table)
    last = found.last_games
    if not last:
        console.print("no game played yet")
        return
    games = Table(title=f"The last {len(last)} games")
    for col in ("game", "key", "players", "outcome", "finished"):
        games.add_column(col, justify="right" if col == "game" else "left")
    for g in last:
        games.add_row(str(g.game_id), g.key, plain(g.players), g.outcome, g.finished_at)
    console.print(games)


def _set_paused(
    competition: str | None, ledger: Path, server: str | None, token: str, paused: bool
) -> None:
    from arena.competition import organiser
    from arena.wire.v1 import competition_pb2 as pb

    if server:
        _remote(
            server,
            token,
            lambda stub, md: stub.SetPaused(pb.SetPausedRequest(paused=paused), metadata=md),
        )
    else:
        _local(ledger, competition, organiser.set_paused, paused)
    console.print(
        "paused: games in play finish, no new ones start"
        if paused
        else "resumed: games start again"
    )


def pause(
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    server: OrganiserServerOption = None,
    token: OrganiserTokenOption = "",
) -> None:
    """Stop pairing new games (the games in play finish)."""
    _set_paused(competition, ledger, server, token, True)


def resume(
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    server: OrganiserServerOption = None,
    token: OrganiserTokenOption = "",
) -> None:
    """Start pairing games again."""
    _set_paused(competition, ledger, server, token, False)


def suspend(
    bot: Annotated[str, typer.Argument(help="The bot's name.")],
    reason: Annotated[str, typer.Option(help="Why: shown to its author.")],
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    server: OrganiserServerOption = None,
    token: OrganiserTokenOption = "",
) -> None:
    """Take a bot out of play (its author sees the reason); reinstate brings it back."""
    from arena.competition import organiser
    from arena.wire.v1 import competition_pb2 as pb

    if server:
        _remote(
            server,
            token,
            lambda stub, md: stub.Suspend(pb.SuspendRequest(bot=bot, reason=reason), metadata=md),
        )
    else:
        _local(ledger, competition, organiser.suspend, bot, reason)
    console.print(f"{escape(bot)} suspended")


def reinstate(
    bot: Annotated[str, typer.Argument(help="The bot's name.")],
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    server: OrganiserServerOption = None,
    token: OrganiserTokenOption = "",
) -> None:
    """Put a suspended bot back into play."""
    from arena.competition import organiser
    from arena.wire.v1 import competition_pb2 as pb

    if server:
        _remote(
            server,
            token,
            lambda stub, md: stub.Reinstate(pb.ReinstateRequest(bot=bot), metadata=md),
        )
    else:
        _local(ledger, competition, organiser.reinstate, bot)
    console.print(f"{escape(bot)} reinstated")


# ---------------------------------------------------------------- on the ledger, or remotely


def _remote(
    server: str,
    token: str,
    call: Callable[[competition_pb2_grpc.CompetitionAsyncStub, Metadata], Awaitable[_T]],
) -> _T:
    """One organiser's call to the running competition (the same action as on the ledger)."""
    if not token:
        raise fail("give the organiser's token: --token or $ARENA_ORGANISER_TOKEN")
    return shared.call(server, token, call)


def _local(ledger: Path, competition: str | None, action: Callable[..., _T], *args: Any) -> _T:
    """One of :mod:`arena.competition.organiser`'s actions on the ledger, here."""
    from arena.competition.organiser import OrganiserError
    from arena.ledger import competitions as store

    led, cid = open_competition(ledger, competition)
    try:
        return action(store.Competitions(led), cid, *args)
    except OrganiserError as exc:
        raise fail(str(exc)) from exc
