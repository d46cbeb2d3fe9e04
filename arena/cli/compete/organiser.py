"""``arena compete ...``: a standing competition.

For the organiser (on the ledger): ``serve`` runs it; ``author add`` gives an author a token; ``status``,
``leaderboard``, ``pause``/``resume``, ``suspend``/``reinstate``. For authors (over the network, with
their token): ``submit``, ``submissions``, ``log``, ``withdraw``, ``remote``, and ``leaderboard
--server``.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import (
    FIRST_COMPETITION,
    cluster_address,
    console,
    fail,
    literal,
    logs_folder,
    open_ledger,
    plain,
)
from arena.cli.options import (
    DEFAULT_COMPETITION_SERVER,
    DEFAULT_LEDGER,
    DEFAULT_LOGS_MB,
    AuthorTokenOption,
    CompetitionOption,
    LedgerOption,
    LogsMaxOption,
    SubmissionServerOption,
)
from arena.cluster.errors import ClusterError

if TYPE_CHECKING:
    from arena.ledger import Ledger
    from arena.ledger import competitions as store
    from arena.wire.v1 import competition_pb2 as pb
    from arena.wire.v1 import competition_pb2_grpc

app = typer.Typer(
    help="A standing competition: submissions, a continuous ladder, authors and versions.",
    no_args_is_help=True,
)
author_app = typer.Typer(help="The competition's authors.", no_args_is_help=True)
app.add_typer(author_app, name="author")


# ---------------------------------------------------------------------------------- the organiser


@app.command("serve")
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
) -> None:
    """Run a competition until stopped: the submission service, the matchmaker and the referee.

    Resumes where it stopped (after a crash too). Prints the two addresses: one for authors'
    submissions, one where remote entrants dial in. Ctrl-C or SIGTERM stops it cleanly."""
    from arena.competition.server import CompetitionServer
    from arena.competition.spec import CompetitionFileError, load
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
    led = open_ledger(ledger, must_exist=False)
    folder = data or ledger.with_name(ledger.name + ".d")

    def say(text: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        console.print(f"[{stamp}] {escape(text)}", highlight=False, soft_wrap=True)

    async def run() -> None:
        server = CompetitionServer(spec, led, folder, logs, say, on, logs_max_mb)
        await server.start()
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

    try:
        asyncio.run(run())
    except (LedgerError, OSError, ClusterError) as exc:
        raise fail(str(exc)) from exc
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    finally:
        if on is not None:
            on.close()


def _competition(led: Ledger, name: str | None) -> int:
    competitions = [t for t in led.tournaments() if t.kind == "competition"]
    if not competitions:
        raise fail(f"no competition in {led.path} yet (arena compete serve FILE starts one)")
    if name is None:
        if len(competitions) == 1:
            return competitions[0].id
        names = ", ".join(repr(t.name) for t in competitions)
        raise fail(f"say which competition with --competition (competitions: {names})")
    for t in competitions:
        if t.name == name or str(t.id) == name:
            return t.id
    raise fail(f"no competition {name!r} in {led.path}")


@author_app.command("add")
def author_add(
    name: Annotated[str, typer.Argument(help="The author's name.")],
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
) -> None:
    """Add an author and print the author's secret token (shown once; only its hash is kept)."""
    from arena.ledger import LedgerError
    from arena.ledger import competitions as store

    led = open_ledger(ledger, first=FIRST_COMPETITION)
    cid = _competition(led, competition)
    try:
        token = store.Competitions(led).add_author(cid, name)
    except LedgerError as exc:
        raise fail(str(exc)) from exc
    console.print(f"author {escape(name)} added; their token (keep it secret, it is shown once):")
    typer.echo(token)


@author_app.command("list")
def author_list(
    competition: CompetitionOption = None, ledger: LedgerOption = Path(DEFAULT_LEDGER)
) -> None:
    """List the competition's authors."""
    from arena.ledger import competitions as store

    led = open_ledger(ledger, first=FIRST_COMPETITION)
    table = Table(title="Authors")
    for col in ("id", "name", "since"):
        table.add_column(col)
    for a in store.Competitions(led).authors(_competition(led, competition)):
        table.add_row(str(a.id), plain(a.name), a.created_at)
    console.print(table)


@app.command("status")
def status(
    competition: CompetitionOption = None, ledger: LedgerOption = Path(DEFAULT_LEDGER)
) -> None:
    """Show the competition: paused or not, its submissions by status, games played and the last
    games."""
    from arena.ledger import competitions as store

    led = open_ledger(ledger, first=FIRST_COMPETITION)
    cid = _competition(led, competition)
    comp = store.Competitions(led)
    t = led.find_tournament(str(cid))
    subs = comp.submissions(cid)
    counts = {s: sum(1 for x in subs if x.status == s) for s in store.STATUSES}
    console.print(
        f"competition {escape(t.name)} ({t.variant}): "
        f"{'paused' if comp.paused(cid) else 'running'}; {t.played} games, {t.failures} ended by "
        f"a bot's failure"
    )
    console.print(
        "submissions: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n) if subs else
        "no submissions yet"
    )  # fmt: skip
    table = Table(title="Submissions")
    for col in ("id", "bot", "version", "author", "kind", "status", "reason", "updated"):
        table.add_column(col)
    for s in subs:
        table.add_row(
            str(s.id), plain(s.bot), plain(s.version), plain(s.author), s.kind, s.status,
            plain(s.reason, 120), s.updated_at,
        )  # fmt: skip
    console.print(table)


def _board(title: str, rows: list[store.BoardLine] | list[pb.LeaderboardRow]) -> Table:
    table = Table(title=escape(title))
    for col in ("#", "bot", "version", "author", "mu - 3 sigma", "mu", "sigma", "games", "status"):
        table.add_column(col, justify="right" if col in ("#", "games") else "left")
    for r in rows:
        table.add_row(
            str(r.rank), plain(r.bot), plain(r.version), plain(r.author), f"{r.exposed:.2f}",
            f"{r.mu:.2f}", f"{r.sigma:.2f}", str(r.games), r.status,
        )  # fmt: skip
    return table


@app.command("leaderboard")
def leaderboard(
    ctx: typer.Context,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            "-s",
            help="Ask a running competition (with --token; with a token and no --ledger: "
            f"{DEFAULT_COMPETITION_SERVER}, as for submit).",
            envvar="ARENA_COMPETITION",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="ARENA_AUTHOR_TOKEN",
            help="Your author token: without --ledger, ask the running competition.",
        ),
    ] = None,
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
) -> None:
    """Show the competition's leaderboard by mu - 3 sigma, with versions, authors and status."""
    ledger_source = ctx.get_parameter_source("ledger")  # typer's own click: compared by name
    if token and not server and ledger_source is not None and ledger_source.name == "DEFAULT":
        server = (
            DEFAULT_COMPETITION_SERVER  # an author's token, as for submit: the running competition
        )
    if server:
        from arena.wire.v1 import competition_pb2 as pb

        if not token:
            raise fail("--server needs your --token (or $ARENA_AUTHOR_TOKEN)")
        answer = _call(
            server, token, lambda stub, md: stub.Leaderboard(pb.LeaderboardRequest(), metadata=md)
        )
        console.print(_board(f"Leaderboard: {answer.competition}", list(answer.rows)))
        return
    from arena.ledger import competitions as store

    led = open_ledger(ledger, first=FIRST_COMPETITION)
    cid = _competition(led, competition)
    name = led.find_tournament(str(cid)).name
    console.print(_board(f"Leaderboard: {name}", store.Competitions(led).board(cid)))


def _set_paused(competition: str | None, ledger: Path, paused: bool) -> None:
    from arena.ledger import LedgerError
    from arena.ledger import competitions as store

    led = open_ledger(ledger, first=FIRST_COMPETITION)
    cid = _competition(led, competition)
    try:
        store.Competitions(led).set_paused(cid, paused)
    except LedgerError as exc:
        raise fail(str(exc)) from exc
    console.print(
        "paused: games in play finish, no new ones start"
        if paused
        else "resumed: games start again"
    )


@app.command("pause")
def pause(
    competition: CompetitionOption = None, ledger: LedgerOption = Path(DEFAULT_LEDGER)
) -> None:
    """Stop pairing new games (the games in play finish)."""
    _set_paused(competition, ledger, True)


@app.command("resume")
def resume(
    competition: CompetitionOption = None, ledger: LedgerOption = Path(DEFAULT_LEDGER)
) -> None:
    """Start pairing games again."""
    _set_paused(competition, ledger, False)


def _by_bot(led: Ledger, cid: int, bot: str, statuses: tuple[str, ...]) -> list[store.Submission]:
    from arena.ledger import competitions as store

    found = [s for s in store.Competitions(led).submissions(cid, None, statuses) if s.bot == bot]
    if not found:
        raise fail(f"no {'/'.join(statuses)} submission of a bot named {bot!r}")
    return found


@app.command("suspend")
def suspend(
    bot: Annotated[str, typer.Argument(help="The bot's name.")],
    reason: Annotated[str, typer.Option(help="Why: shown to its author.")],
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
) -> None:
    """Take a bot out of play (its author sees the reason); reinstate brings it back."""
    from arena.ledger import competitions as store

    led = open_ledger(ledger, first=FIRST_COMPETITION)
    cid = _competition(led, competition)
    for s in _by_bot(led, cid, bot, (store.ACTIVE,)):
        store.Competitions(led).set_status(
            s.id, store.SUSPENDED, f"suspended: {reason}", when=(store.ACTIVE,)
        )
    console.print(f"{escape(bot)} suspended")


@app.command("reinstate")
def reinstate(
    bot: Annotated[str, typer.Argument(help="The bot's name.")],
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
) -> None:
    """Put a suspended bot back into play."""
    from arena.ledger import competitions as store

    led = open_ledger(ledger, first=FIRST_COMPETITION)
    cid = _competition(led, competition)
    for s in _by_bot(led, cid, bot, (store.SUSPENDED,)):
        # Only while still suspended: a later version may have entered play (and replaced it).
        store.Competitions(led).set_status(s.id, store.ACTIVE, "", when=(store.SUSPENDED,))
    console.print(f"{escape(bot)} reinstated")


# ---------------------------------------------------------------------------------- authors


Metadata = tuple[tuple[str, str], ...]
_T = TypeVar("_T")


def _call(
    server: str,
    token: str,
    call: Callable[[competition_pb2_grpc.CompetitionAsyncStub, Metadata], Awaitable[_T]],
) -> _T:
    """One call to the submission service; a failure is a one-line error (exit 1)."""
    import grpc

    from arena.wire.v1 import competition_pb2_grpc

    async def go() -> _T:
        async with grpc.aio.insecure_channel(
            server, options=[("grpc.max_send_message_length", 2**31 - 1)]
        ) as channel:
            stub = competition_pb2_grpc.CompetitionStub(channel)
            return await call(stub, (("authorization", f"Bearer {token}"),))

    try:
        return asyncio.run(go())
    except grpc.aio.AioRpcError as exc:
        code = exc.code()
        if code is grpc.StatusCode.UNAVAILABLE:
            raise fail(
                f"no competition answers at {server}: is arena compete serve running?", 1
            ) from None
        raise fail(
            f"the competition at {server} answered {code.name}: {exc.details()}", 1
        ) from None


@app.command("submit")
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

    if not token:
        raise fail("give your author token: --token or $ARENA_AUTHOR_TOKEN")
    try:
        if bundle.is_dir():
            data = bundles.pack(bundle, 4 * 1024 * 1024 * 1024)
        else:
            data = bundle.read_bytes()
    except (OSError, bundles.BundleError) as exc:
        raise fail(f"{bundle}: {exc}") from exc
    answer = _call(
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
        listed = _call(
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
        logged = _call(
            server,
            token,
            lambda stub, md: stub.GetLog(
                pb.GetLogRequest(submission_id=answer.submission_id), metadata=md
            ),
        )
        typer.echo(literal(logged.log))
        raise typer.Exit(1)


@app.command("submissions")
def submissions(
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER, token: AuthorTokenOption = ""
) -> None:
    """List your submissions with their status and reason."""
    from arena.wire.v1 import competition_pb2 as pb

    if not token:
        raise fail("give your author token: --token or $ARENA_AUTHOR_TOKEN")
    listed = _call(
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


@app.command("log")
def log(
    submission: Annotated[int, typer.Argument(help="The submission's id.")],
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """Print a submission's build and conformance-check log."""
    from arena.wire.v1 import competition_pb2 as pb

    if not token:
        raise fail("give your author token: --token or $ARENA_AUTHOR_TOKEN")
    logged = _call(
        server,
        token,
        lambda stub, md: stub.GetLog(pb.GetLogRequest(submission_id=submission), metadata=md),
    )
    typer.echo(literal(logged.log))


@app.command("withdraw")
def withdraw(
    bot: Annotated[str, typer.Argument(help="Your bot's name.")],
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """Take your bot out of play (its games and rating history stay)."""
    from arena.wire.v1 import competition_pb2 as pb

    if not token:
        raise fail("give your author token: --token or $ARENA_AUTHOR_TOKEN")
    answer = _call(
        server, token, lambda stub, md: stub.Withdraw(pb.WithdrawRequest(bot=bot), metadata=md)
    )
    console.print(f"withdrawn: {answer.withdrawn} submission(s) of {escape(bot)}")


@app.command("remote")
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

    if not token:
        raise fail("give your author token: --token or $ARENA_AUTHOR_TOKEN")
    answer = _call(
        server,
        token,
        lambda stub, md: stub.RegisterRemote(
            pb.RegisterRemoteRequest(bot=bot, version=version, language=language), metadata=md
        ),
    )
    console.print(f"registered; your bot dials in at {escape(answer.address)} with this token:")
    typer.echo(answer.token)
