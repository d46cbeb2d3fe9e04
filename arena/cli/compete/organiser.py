"""``arena compete ...`` for the organiser, on the ledger: ``serve`` runs the competition; ``author
add``/``author list``, ``runtimes`` (the bundle languages this machine can build and run), ``status``,
``pause``/``resume``, ``suspend``/``reinstate`` (and ``leaderboard``, which authors share:
:mod:`arena.cli.compete.shared`)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
from arena.cli.compete.shared import competition_id, open_competition
from arena.cli.options import (
    DEFAULT_LEDGER,
    DEFAULT_LOGS_MB,
    CompetitionOption,
    LedgerOption,
    LogsMaxOption,
)
from arena.cluster.errors import ClusterError

if TYPE_CHECKING:
    from arena.ledger import Ledger
    from arena.ledger import competitions as store


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
    SIGTERM stops it cleanly."""
    from arena.cli.serve import token_file, write_token
    from arena.competition.server import CompetitionServer
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
    led = open_ledger(ledger, must_exist=False)
    folder = data or ledger.with_name(ledger.name + ".d")

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
    except (LedgerError, OSError, ClusterError) as exc:
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
) -> None:
    """Add an author and print the author's secret token (shown once; only its hash is kept)."""
    from arena.ledger import LedgerError
    from arena.ledger import competitions as store

    led, cid = open_competition(ledger, competition)
    try:
        token = store.Competitions(led).add_author(cid, name)
    except LedgerError as exc:
        raise fail(str(exc)) from exc
    console.print(f"author {escape(name)} added; their token (keep it secret, it is shown once):")
    typer.echo(token)


def author_list(
    competition: CompetitionOption = None, ledger: LedgerOption = Path(DEFAULT_LEDGER)
) -> None:
    """List the competition's authors."""
    from arena.ledger import competitions as store

    led = open_ledger(ledger, first=FIRST_COMPETITION)
    table = Table(title="Authors")
    for col in ("id", "name", "since"):
        table.add_column(col)
    for a in store.Competitions(led).authors(competition_id(led, competition)):
        table.add_row(str(a.id), plain(a.name), a.created_at)
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
    competition: CompetitionOption = None, ledger: LedgerOption = Path(DEFAULT_LEDGER)
) -> None:
    """Show the competition: paused or not, its submissions by status, games played and the last
    games."""
    from arena.ledger import competitions as store

    led, cid = open_competition(ledger, competition)
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
        table.add_column(col, overflow="fold" if col == "reason" else "ellipsis")
    for s in subs:
        table.add_row(
            str(s.id), plain(s.bot), plain(s.version), plain(s.author), s.kind, s.status,
            plain(s.reason, len(s.reason) + 1), s.updated_at,
        )  # fmt: skip
    console.print(table)
    last = comp.last_games(cid, LAST_GAMES)
    if not last:
        console.print("no game played yet")
        return
    games = Table(title=f"The last {len(last)} games")
    for col in ("game", "key", "players", "outcome", "finished"):
        games.add_column(col, justify="right" if col == "game" else "left")
    for g in last:
        games.add_row(str(g.game_id), g.key, plain(g.players), g.outcome, g.finished_at)
    console.print(games)


LAST_GAMES = 10  # games compete status lists


def _set_paused(competition: str | None, ledger: Path, paused: bool) -> None:
    from arena.ledger import LedgerError
    from arena.ledger import competitions as store

    led, cid = open_competition(ledger, competition)
    try:
        store.Competitions(led).set_paused(cid, paused)
    except LedgerError as exc:
        raise fail(str(exc)) from exc
    console.print(
        "paused: games in play finish, no new ones start"
        if paused
        else "resumed: games start again"
    )


def pause(
    competition: CompetitionOption = None, ledger: LedgerOption = Path(DEFAULT_LEDGER)
) -> None:
    """Stop pairing new games (the games in play finish)."""
    _set_paused(competition, ledger, True)


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


def suspend(
    bot: Annotated[str, typer.Argument(help="The bot's name.")],
    reason: Annotated[str, typer.Option(help="Why: shown to its author.")],
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
) -> None:
    """Take a bot out of play (its author sees the reason); reinstate brings it back."""
    from arena.ledger import competitions as store

    led, cid = open_competition(ledger, competition)
    for s in _by_bot(led, cid, bot, (store.ACTIVE,)):
        store.Competitions(led).set_status(
            s.id, store.SUSPENDED, f"suspended: {reason}", when=(store.ACTIVE,)
        )
    console.print(f"{escape(bot)} suspended")


def reinstate(
    bot: Annotated[str, typer.Argument(help="The bot's name.")],
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
) -> None:
    """Put a suspended bot back into play."""
    from arena.ledger import competitions as store

    led, cid = open_competition(ledger, competition)
    for s in _by_bot(led, cid, bot, (store.SUSPENDED,)):
        # Only while still suspended: a later version may have entered play (and replaced it).
        store.Competitions(led).set_status(s.id, store.ACTIVE, "", when=(store.SUSPENDED,))
    console.print(f"{escape(bot)} reinstated")
