"""``arena compete ...`` for authors, over the network with their token: ``submit``, ``submissions``,
``log``, ``withdraw``, ``remote``, ``webhook set|show|remove``, the challenges (``challenge``,
``challenges``, ``challenge-cancel``, ``challenge-replay``) (and ``leaderboard --server``:
:mod:`arena.cli.compete.shared`)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import FIRST_COMPETITION, console, fail, literal, open_ledger, plain
from arena.cli.compete import shared
from arena.cli.options import (
    DEFAULT_COMPETITION_SERVER,
    AuthorTokenOption,
    CompetitionOption,
    SubmissionServerOption,
)
from arena.competition.runtimes import LANGUAGES

if TYPE_CHECKING:
    from arena.wire.v1 import competition_pb2 as pb
    from arena.wire.v1 import competition_pb2_grpc

# A remote entrant's language, as the competition accepts it: a bundle's languages, or "remote".
REMOTE_LANGUAGES = (*LANGUAGES, "remote")

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
    wait_timeout: Annotated[
        float,
        typer.Option(help="Seconds to wait for that at most (then exit 1, saying where it is)."),
    ] = 3600.0,
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
    deadline = time.monotonic() + wait_timeout
    while status not in final:
        if time.monotonic() > deadline:
            raise fail(
                f"submission {answer.submission_id} is still {status} after {wait_timeout:g} s; "
                "arena compete submissions shows where it is",
                1,
            )
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
    """List your submissions with their status and reason (and say so when your webhook has been
    disabled)."""
    import grpc

    from arena.wire.v1 import competition_pb2 as pb

    async def listing(
        stub: competition_pb2_grpc.CompetitionAsyncStub, md: shared.Metadata
    ) -> tuple[pb.ListSubmissionsResponse, pb.ShowWebhookResponse | None]:
        listed = await stub.ListSubmissions(pb.ListSubmissionsRequest(), metadata=md)
        try:
            hook = await stub.ShowWebhook(pb.ShowWebhookRequest(), metadata=md)
        except grpc.aio.AioRpcError as exc:
            if exc.code() is not grpc.StatusCode.UNIMPLEMENTED:  # a server before notifications
                raise
            hook = None
        return listed, hook

    listed, hook = _ask(server, token, listing)
    table = Table(title="Your submissions")
    for col in ("id", "bot", "version", "kind", "status", "reason", "submitted"):
        # A reason is shown whole at any width (a suspension quotes the bot's last failure).
        table.add_column(col, overflow="fold" if col == "reason" else "ellipsis")
    for s in listed.submissions:
        table.add_row(
            str(s.submission_id), plain(s.bot), plain(s.version), s.kind, s.status,
            plain(s.reason, len(s.reason) + 1), s.submitted_at,
        )  # fmt: skip
    console.print(table)
    if hook is not None and hook.HasField("webhook") and not hook.webhook.enabled:
        typer.echo(
            f"your webhook is disabled (since {hook.webhook.disabled_at}): "
            f"{literal(hook.webhook.disabled_reason)}; arena compete webhook show"
        )


def log(
    submission: Annotated[
        int | None,
        typer.Argument(help="The submission's id (not with --game).", show_default=False),
    ] = None,
    game: Annotated[
        int | None,
        typer.Option(
            "--game",
            help="A game's id (as the web shows it): what your own bot wrote during that game.",
            show_default=False,
        ),
    ] = None,
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
    ledger: Annotated[
        Path | None,
        typer.Option(
            help="The organiser: read a game's output of every bot from the ledger (with --game).",
            show_default=False,
        ),
    ] = None,
    competition: CompetitionOption = None,
) -> None:
    """Print a submission's build and conformance-check log, its status history, the games it caused
    to fail (with what the referee saw) and its time use; with --game ID, what your bot wrote during
    that game (the organiser: every bot's, with --ledger)."""
    if (submission is None) == (game is None):
        raise fail("give a submission's id, or --game GAME_ID")
    if game is not None:
        _game_log(game, server, token, ledger, competition)
        return
    assert submission is not None
    from arena.wire.v1 import competition_pb2 as pb

    logged = _ask(
        server,
        token,
        lambda stub, md: stub.GetLog(pb.GetLogRequest(submission_id=submission), metadata=md),
    )
    typer.echo(literal(logged.log))
    _print_history(logged.history)
    if logged.failures:
        typer.echo(f"\ngames it caused to fail (the last {len(logged.failures)}, newest first):")
        for f in logged.failures:
            typer.echo(
                f"game {f.game_id} ({literal(f.key)}), {f.finished_at}: {literal(f.outcome)}"
            )
            for line in literal(f.detail).splitlines() or [""]:
                typer.echo(f"    {line}")
    use = logged.time_use
    if use.games:
        typer.echo(f"\ntime use over its last {use.games} games: {_time_use(use)}")


def _time_use(use: pb.TimeUse) -> str:
    failures = ", ".join(f"{kind} {n}" for kind, n in sorted(use.failures.items())) or "none"
    return (
        f"{use.decisions} decisions, median {use.median_ms:.0f} ms, 99th percentile "
        f"{use.p99_ms:.0f} ms, bank left at a game's end {use.bank_left_ms:.0f} ms (median); "
        f"games it caused to fail: {failures}"
    )


def _print_history(history: Any) -> None:
    if not history:
        return
    typer.echo("\nstatus history:")
    for c in history:
        typer.echo(f"{c.at}  {c.status}" + (f": {literal(c.reason)}" if c.reason else ""))


def _game_log(
    game: int, server: str, token: str, ledger: Path | None, competition: str | None
) -> None:
    """A game's bots' output: the author's own (over the network), or every bot's (the organiser,
    from the ledger)."""
    if ledger is not None:
        from arena.ledger import competitions as store

        led = open_ledger(ledger, first=FIRST_COMPETITION)
        comp = store.Competitions(led)
        cid = shared.competition_id(led, competition)
        found = comp.game(cid, game)
        if found is None:
            raise fail(f"no game {game} in the competition")
        typer.echo(f"game {game} ({literal(found[0])}): {found[1]}")
        outputs = comp.game_outputs(game)
        if not outputs:
            typer.echo("no bot output kept for this game")
        for o in outputs:
            _print_output(o.seat, o.bot, o.version, o.output, o.output_bytes)
        return
    from arena.wire.v1 import competition_pb2 as pb

    if not token:
        raise fail(
            "give your author token: --token or $ARENA_AUTHOR_TOKEN (the organiser: --ledger)"
        )
    answer = shared.call(
        server,
        token,
        lambda stub, md: stub.GetGameLog(pb.GetGameLogRequest(game_id=game), metadata=md),
    )
    typer.echo(f"game {answer.game_id} ({literal(answer.key)}): {answer.outcome}")
    for seat in answer.seats:
        _print_output(seat.seat, seat.bot, seat.version, seat.output, seat.output_bytes)


def _print_output(seat: int, bot: str, version: str, output: str, written: int) -> None:
    kept = len(output.encode())
    cut = f", its last {kept} bytes shown" if written > kept else ""
    typer.echo(f"--- seat {seat}: {literal(bot)} {literal(version)} wrote {written} bytes{cut}")
    if output:
        typer.echo(literal(output).rstrip("\n"))


def history(
    submission: Annotated[int, typer.Argument(help="The submission's id.")],
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """Print every change of your submission's status, with its time and reason."""
    from arena.wire.v1 import competition_pb2 as pb

    logged = _ask(
        server,
        token,
        lambda stub, md: stub.GetLog(pb.GetLogRequest(submission_id=submission), metadata=md),
    )
    for c in logged.history:
        typer.echo(f"{c.at}  {c.status}" + (f": {literal(c.reason)}" if c.reason else ""))


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
    language: Annotated[
        str,
        typer.Option(
            help=f"Its language, shown on the leaderboard: one of {', '.join(REMOTE_LANGUAGES)}."
        ),
    ] = "remote",
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """Register a bot that runs on your own machine: it dials in with the printed token and waits for
    the games it is given (absent, it is skipped, never forfeited)."""
    from arena.wire.v1 import competition_pb2 as pb

    if language not in REMOTE_LANGUAGES:
        raise fail(f"--language: expected one of {', '.join(REMOTE_LANGUAGES)}, got {language!r}")
    answer = _ask(
        server,
        token,
        lambda stub, md: stub.RegisterRemote(
            pb.RegisterRemoteRequest(bot=bot, version=version, language=language), metadata=md
        ),
    )
    console.print(f"registered; your bot dials in at {escape(answer.address)} with this token:")
    typer.echo(answer.token)


# ---- Notifications: arena compete webhook set / show / remove


def webhook_set(
    url: Annotated[
        str,
        typer.Argument(
            help="Where to POST your notifications: an https URL (http only to a host the "
            "organiser allows)."
        ),
    ],
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """Register your webhook (replacing yours, enabled again): the competition POSTs signed JSON to
    it when a submission of yours is built, fails, enters play, is suspended or replaced, and once a
    day the games your bots caused to fail. Prints the signing secret, this once."""
    from arena.wire.v1 import competition_pb2 as pb

    answer = _ask(
        server,
        token,
        lambda stub, md: stub.SetWebhook(pb.SetWebhookRequest(url=url), metadata=md),
    )
    console.print(
        f"webhook set: {escape(answer.webhook.url)}; its secret (shown this once: check each "
        "delivery's X-Arena-Signature with it):"
    )
    typer.echo(answer.secret)


def webhook_show(
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER, token: AuthorTokenOption = ""
) -> None:
    """Show your webhook and how its deliveries go: enabled or disabled (and why), deliveries
    made, waiting, dropped and given up, the last error."""
    from arena.wire.v1 import competition_pb2 as pb

    answer = _ask(
        server,
        token,
        lambda stub, md: stub.ShowWebhook(pb.ShowWebhookRequest(), metadata=md),
    )
    if not answer.HasField("webhook"):
        typer.echo("no webhook (arena compete webhook set URL)")
        return
    typer.echo(_webhook_text(answer.webhook))


def _webhook_text(hook: pb.WebhookInfo) -> str:
    lines = [f"url: {literal(hook.url)} (set {hook.created_at})"]
    if hook.enabled:
        lines.append("status: enabled")
    else:
        lines.append(f"status: disabled at {hook.disabled_at}: {literal(hook.disabled_reason)}")
    lines.append(
        f"deliveries: {hook.delivered} made, {hook.queued} waiting, {hook.dropped} dropped "
        f"(queue full), {hook.abandoned} given up; {hook.failures} failed in a row"
    )
    if hook.last_delivered_at:
        lines.append(f"last delivered: {hook.last_delivered_at}")
    if hook.last_error:
        lines.append(f"last error: {literal(hook.last_error)}")
    return "\n".join(lines)


def webhook_remove(
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER, token: AuthorTokenOption = ""
) -> None:
    """Remove your webhook and the deliveries waiting for it."""
    from arena.wire.v1 import competition_pb2 as pb

    _ask(
        server,
        token,
        lambda stub, md: stub.RemoveWebhook(pb.RemoveWebhookRequest(), metadata=md),
    )
    typer.echo("webhook removed")


# ---- Challenges: unrated games of a bot of yours against another entrant in play.


def challenge(
    bot: Annotated[
        str, typer.Argument(help="Your bot in play: NAME, or NAME@VERSION.", show_default=False)
    ],
    against: Annotated[
        str,
        typer.Option(
            help="Its opponent, any entrant in play (another author's, or another bot of yours): "
            "NAME or NAME@VERSION.",
            show_default=False,
        ),
    ],
    games: Annotated[
        int,
        typer.Option(
            help="How many games (1 to the competition's max_challenge_games; with duplicate "
            "deals each deal is played once per seat rotation)."
        ),
    ] = 10,
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """Ask for unrated games of your bot against another entrant: played between ranked games,
    never on the board, their deals never a ranked game's. Follow it with arena compete
    challenges."""
    from arena.wire.v1 import competition_pb2 as pb

    if games < 1:
        raise fail(f"--games: expected at least 1, got {games}")
    answer = _ask(
        server,
        token,
        lambda stub, md: stub.Challenge(
            pb.ChallengeRequest(bot=bot, against=against, games=games), metadata=md
        ),
    )
    typer.echo(
        f"challenge {answer.challenge_id}: {literal(answer.bot)} {literal(answer.version)} against "
        f"{literal(answer.opponent_bot)} {literal(answer.opponent_version)}, {answer.games} "
        f"game(s), {answer.status}"
    )


def challenges(
    challenge_id: Annotated[
        int | None,
        typer.Argument(help="One challenge's id: list its games.", show_default=False),
    ] = None,
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """List your challenges with their status and results (your bot's wins, losses and draws); with
    an id, that challenge's games (their ids for arena compete challenge-replay)."""
    from arena.wire.v1 import competition_pb2 as pb

    listed = _ask(
        server,
        token,
        lambda stub, md: stub.ListChallenges(pb.ListChallengesRequest(), metadata=md),
    )
    if challenge_id is not None:
        found = [c for c in listed.challenges if c.challenge_id == challenge_id]
        if not found:
            raise fail(f"you have no challenge {challenge_id}")
        _challenge_games(found[0])
        return
    table = Table(title="Your challenges")
    for col in ("id", "bot", "against", "games", "W-L-D", "status", "reason", "asked"):
        table.add_column(col, overflow="fold" if col == "reason" else "ellipsis")
    for c in listed.challenges:
        table.add_row(
            str(c.challenge_id), f"{plain(c.bot)} {plain(c.version)}",
            f"{plain(c.opponent_bot)} {plain(c.opponent_version)}", f"{c.played}/{c.games}",
            f"{c.wins}-{c.losses}-{c.draws}", c.status, plain(c.reason, len(c.reason) + 1),
            c.created_at,
        )  # fmt: skip
    console.print(table)


def _challenge_games(c: pb.ChallengeInfo) -> None:
    typer.echo(
        f"challenge {c.challenge_id}: {literal(c.bot)} {literal(c.version)} against "
        f"{literal(c.opponent_bot)} {literal(c.opponent_version)}: {c.played} of {c.games} "
        f"game(s) played, {c.wins}-{c.losses}-{c.draws}, {c.status}"
        + (f" ({literal(c.reason)})" if c.reason else "")
    )
    table = Table()
    for col in ("game id", "#", "deal", "rotation", "seats", "outcome", "score", "result"):
        table.add_column(col)
    for g in c.game_list:
        table.add_row(
            str(g.game_id), str(g.number), str(g.deal), str(g.rotation),
            plain(" v ".join(g.seats)), plain(g.outcome),
            f"{g.score}-{g.opponent_score}", g.result,
        )  # fmt: skip
    console.print(table)


def challenge_cancel(
    challenge_id: Annotated[int, typer.Argument(help="Your challenge's id.")],
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """Cancel your open challenge: the game under way ends as it would, no other is started."""
    from arena.wire.v1 import competition_pb2 as pb

    answer = _ask(
        server,
        token,
        lambda stub, md: stub.CancelChallenge(
            pb.CancelChallengeRequest(challenge_id=challenge_id), metadata=md
        ),
    )
    typer.echo(f"challenge {answer.challenge_id}: {answer.status} after {answer.played} game(s)")


def challenge_replay(
    game_id: Annotated[
        int, typer.Argument(help="The challenge game's id (arena compete challenges ID).")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write the game's record there (default: challenge-GAME_ID.json); read it with "
            "arena replay --record FILE.",
            show_default=False,
        ),
    ] = None,
    server: SubmissionServerOption = DEFAULT_COMPETITION_SERVER,
    token: AuthorTokenOption = "",
) -> None:
    """Save a game of your challenge, once every game of its deal is over (with duplicate deals,
    the deal's other seat rotation too), as a match record file."""
    from arena.wire.v1 import competition_pb2 as pb

    answer = _ask(
        server,
        token,
        lambda stub, md: stub.ChallengeReplay(
            pb.ChallengeReplayRequest(game_id=game_id), metadata=md
        ),
    )
    target = out if out is not None else Path(f"challenge-{game_id}.json")
    try:
        target.write_text(answer.record + "\n", encoding="utf-8")
    except OSError as exc:
        raise fail(f"{target}: cannot write the record: {exc.strerror or exc}") from exc
    typer.echo(
        f"challenge game {game_id}: written to {target}; read it with: arena replay --record {target}"
    )
