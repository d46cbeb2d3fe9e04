"""``arena run FILE``: play a tournament (or resume it) into the ledger, then show its tables;
``arena tournaments``: the tournaments a ledger holds."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import (
    cluster_address,
    console,
    deal_key,
    errors,
    fail,
    logs_folder,
    open_ledger,
    plain,
    print_board,
)
from arena.cli.options import DEFAULT_LEDGER, LedgerOption
from arena.cluster.errors import ClusterError

if TYPE_CHECKING:
    from arena.cluster.connect import Cluster
    from arena.cluster.player import ClusterPlayer
    from arena.ledger import Ledger
    from arena.tournament import runner as tournament_runner
    from arena.tournament.spec import TournamentSpec
    from arena.tournament.summary import PairingLine


def run(
    file: Annotated[
        Path, typer.Argument(help="The tournament file (TOML), e.g. tournaments/quickstart.toml.")
    ],
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    logs: Annotated[
        Path | None,
        typer.Option(
            help="Write each bot process's output to a log file in this folder (named after its first game, "
            "seat and name: MATCH-seatS-M-NAME.log)."
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            help="Run the file as the tournament of this name instead of the name it gives (e.g. to "
            "start a new tournament from a file that changed).",
            show_default=False,
        ),
    ] = None,
    deal_secret: Annotated[
        str | None,
        typer.Option(
            help="For a new tournament: the secret its deals are drawn with (hex), to reproduce a "
            "tournament of another ledger exactly. Anyone who knows it can compute the deals. "
            "Default: a fresh random secret, kept in the ledger.",
            show_default=False,
        ),
    ] = None,
    progress_every: Annotated[
        float,
        typer.Option(
            min=0.5,
            help="Without a terminal (output to a file or pipe): seconds between progress lines.",
        ),
    ] = 10.0,
    cluster: Annotated[
        str | None,
        typer.Option(
            help="Play the games on a Ray cluster: auto (the cluster started on this machine), "
            "HOST:PORT (a head node), ray://HOST:PORT (its client server) or local (a Ray instance "
            "of this machine); none: on this machine without Ray. Default: the file's cluster "
            "field, else this machine. Needs the cluster extra (pip install "
            "'bezique-arena\\[cluster]').",
            metavar="ADDRESS",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run a tournament into the ledger (resuming it if interrupted), then print its tables.

    Prints the tournament's leaderboard and the pairings. Exit status: 0 when every planned game is
    recorded, 1 when some could not be played (run again to retry them), 2 for a bad file or option, a
    ledger that cannot be used, or a fatal error during the run (every game and bot is stopped first;
    nothing recorded is lost)."""
    from arena.ledger import LedgerError
    from arena.sandbox import SandboxUnavailable, require
    from arena.tournament import runner as tournament_runner
    from arena.tournament.spec import TournamentFileError, load

    try:
        spec = load(file)
    except TournamentFileError as exc:
        raise fail(str(exc)) from exc
    if name is not None:
        if not name.strip():
            raise fail("--name must not be empty")
        spec = dataclasses.replace(spec, name=name.strip())
    key: bytes | None = None
    if deal_secret is not None:
        try:
            key = deal_key(deal_secret)
        except ValueError as exc:
            raise fail(f"--deal-secret: {exc}") from exc
    logs_folder(logs)
    for warning in spec.warnings:
        errors.print(f"[yellow]warning:[/] {escape(str(file))}: {escape(warning)}")
    address = cluster_address(cluster, spec.cluster)
    spec = dataclasses.replace(spec, cluster=address)
    isolation = None
    if not address:
        try:
            isolation = require(spec.limits.sandbox)
        except SandboxUnavailable as exc:
            raise fail(f"{file}: {exc}; nothing was played") from exc
    on = _connect(address) if address else None  # before the ledger: a bad address changes nothing
    led = open_ledger(ledger, must_exist=False)
    if isolation is not None:
        # Before the first game, which mode the bots run in (a warning when they are not isolated);
        # after the ledger is open, so that a ledger's error is not read as the sandbox's.
        (console if isolation.isolated else errors).print(
            escape(isolation.describe()), soft_wrap=True
        )
    remote: ClusterPlayer | None = None
    try:
        if on is not None:
            remote = _cluster_player(on, spec, led, logs)
        runner = tournament_runner.TournamentRunner(
            spec, led, logs_dir=logs, deal_key=key, remote=remote
        )
        if not led.finished(spec.name):
            from arena.play.game import CONNECT_TIMEOUT

            # The check prints no progress, and a bot that never dials in holds it for its whole
            # connect timeout: say what is being waited for.
            console.print(
                f"checking {len(spec.entrants)} entrants before the first game: each must start, "
                f"dial in and say Hello (within {CONNECT_TIMEOUT:g} s)",
                soft_wrap=True,
            )
        if console.is_terminal:
            tid = _run_with_bar(runner)
        else:
            tid = _run_with_lines(runner, progress_every)
    except LedgerError as exc:
        raise fail(str(exc)) from exc
    except tournament_runner.EntrantCannotStart as exc:
        raise fail(
            f"{file}: the run stops before its first game, nothing recorded "
            '(with [policies] on_check_failure = "exclude" the others would play): '
            + "; ".join(exc.failures)
        ) from exc
    except KeyboardInterrupt:
        errors.print("interrupted: every finished game is in the ledger; run again to resume")
        raise typer.Exit(130) from None
    except ClusterError as exc:
        raise fail(str(exc)) from exc
    except SandboxUnavailable as exc:  # on a cluster: the node's (checked before the first game)
        raise fail(f"{file}: {exc}; nothing was played") from exc
    finally:
        if on is not None:
            on.close()
    p = runner.progress
    for name, why in runner.excluded.items():  # on_check_failure = "exclude"
        errors.print(
            f"[yellow]warning:[/] entrant {escape(repr(name))} forfeited its games, {escape(why)}",
            soft_wrap=True,
        )
    if remote is not None:
        played = remote
        console.print(
            f"played on a Ray cluster: {len(played.nodes)} node(s) played this run's games"
        )
        if runner.isolation:
            isolated = runner.isolation.startswith("sandbox: bubblewrap")
            (console if isolated else errors).print(escape(runner.isolation), soft_wrap=True)
        if played.resent:
            console.print(
                f"{played.resent} game(s) were sent again: a node or worker process died under them"
            )
    if p.resumed:
        console.print(f"resumed: {p.resumed} game(s) were already in the ledger")
    if p.replayed:
        console.print(
            f"{p.replayed} game(s) were played again: the arena had stalled the bots' clock"
        )
    print_tables(led, spec, tid)
    if p.errors:
        errors.print(
            f"[red]{p.errors} game(s) could not be played[/] (last: {escape(p.last)}); run again to retry"
        )
        raise typer.Exit(1)


def _cluster_player(
    cluster: Cluster, spec: TournamentSpec, led: Ledger, logs: Path | None
) -> ClusterPlayer:
    """The tournament's games played on the cluster: its bots' folders shipped (never the ledger,
    the tournament file, its deal suite or the logs)."""
    from arena.cluster.player import for_tournament
    from arena.tournament.runner import hidden_paths

    exclude = [*hidden_paths(spec, led), *([logs] if logs else [])]
    return for_tournament(cluster, spec, exclude, logs)


def _connect(address: str) -> Cluster:
    from arena.cluster.connect import connect  # Ray is imported only for a run on a cluster

    try:
        return connect(address)
    except ClusterError as exc:
        raise fail(str(exc)) from exc


def _run_with_bar(runner: tournament_runner.TournamentRunner) -> int:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "running {task.fields[running]}  bot failures {task.fields[failures]}  errors {task.fields[errors]}"
        ),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(escape(runner.spec.name), total=None, running=0, failures=0, errors=0)

        def show(p: tournament_runner.Progress) -> None:
            bar.update(
                task,
                total=p.planned or None,
                completed=p.done,
                running=p.running,
                failures=p.failures,
                errors=p.errors,
            )

        runner.on_progress = show
        return asyncio.run(runner.run())


def _run_with_lines(runner: tournament_runner.TournamentRunner, every: float) -> int:
    """Without a terminal: a plain line at a steady pace (and one at the end, unless the last line
    said the same: a resumed run that had nothing left to play printed its one line twice), flushed
    at once."""
    start = time.monotonic()
    last = [-every]
    said = [""]  # the counts of the last line printed

    def counts(p: tournament_runner.Progress) -> str:
        return (
            f"{runner.spec.name}: {p.done}/{p.planned or '?'} games, {p.running} running, "
            f"{p.failures} bot failures, {p.errors} errors"
        )

    def say(p: tournament_runner.Progress) -> None:
        elapsed = int(time.monotonic() - start)
        said[0] = counts(p)
        stamp = f"[{elapsed // 3600:d}:{elapsed // 60 % 60:02d}:{elapsed % 60:02d}]"
        print(f"{stamp} {said[0]}", flush=True)

    def show(p: tournament_runner.Progress) -> None:
        now = time.monotonic()
        if now - last[0] >= every:
            last[0] = now
            say(p)

    runner.on_progress = show
    try:
        return asyncio.run(runner.run())
    finally:
        if counts(runner.progress) != said[0]:
            say(runner.progress)


def elo_cells(line: PairingLine) -> tuple[str, str]:
    """The Elo difference of the entrant over its opponent with its 95% interval, from the duplicate
    pairs (or the games, without pairs), and the likelihood of superiority, as the web shows them
    (:func:`arena.tournament.summary.elo_shown`): a clean sweep gets a one-sided bound and a LOS of
    100% (or 0%); while every pair (game) scored alike otherwise, no figure (it would be the
    regularization's, not the games': one pair won twice would read +1041 and 100%)."""
    from arena.tournament.summary import elo_figures, elo_shown

    shown = elo_shown(elo_figures(line), line.games)
    if not shown.units:
        return "-", "-"
    return f"{shown.elo} {shown.note}, {shown.units}", shown.los


def print_tables(led: Ledger, spec: TournamentSpec, tid: int) -> None:
    from arena.tournament.summary import duplicated, entrant_lines, pairing_lines

    print_board(led, tournament=spec.name)
    rows = led.seat_rows(tid)
    v = spec.build_variant()
    if v.seats == 2 and all(v.team_size(s) == 1 for s in range(2)):
        lines = pairing_lines(rows)
        sets = duplicated(lines)  # without duplicate deals each game is a set of its own
        table = Table(title=f"Pairings: {escape(spec.name)}")
        for col in (
            "entrant",
            "opponent",
            "games",
            "W-L-D",
            "forfeits",
            "avg points",
            *(["duplicate sets W-L-T"] if sets else []),
            "score",
            "Elo (95% CI)",
            "LOS",
        ):
            table.add_column(col)
        for line in lines:
            points = (
                f"{line.points_a:.0f} : {line.points_b:.0f}"
                if line.points_a is not None and line.points_b is not None
                else "-"
            )
            table.add_row(
                plain(line.a),
                plain(line.b),
                str(line.games),
                f"{line.wins}-{line.losses}-{line.draws}",
                f"{line.forfeits_a}-{line.forfeits_b}",
                points,
                *([f"{line.sets_won}-{line.sets_lost}-{line.sets_tied}"] if sets else []),
                f"{line.score:.0%}",
                *elo_cells(line),
            )
    else:
        table = Table(title=f"Entrants: {escape(spec.name)}")
        for col in (
            "entrant",
            "games",
            "forfeits",
            "first places",
            "avg place",
            "avg points",
            "firsts (95% CI)",
        ):
            table.add_column(col)
        for e in entrant_lines(rows):
            table.add_row(
                plain(e.entrant),
                str(e.games),
                str(e.forfeits),
                f"{e.firsts:g}",
                f"{e.average_place + 1:.2f}",
                f"{e.average_score:.0f}" if e.average_score is not None else "-",
                f"{e.firsts / e.games:.0%} ({e.low:.0%}-{e.high:.0%})",
            )
    console.print(table)


def tournaments(ledger: LedgerOption = Path(DEFAULT_LEDGER)) -> None:
    """List the tournaments, competitions and A/B tests in the ledger, with their games and failures.

    For each: id, name, kind (tournament, competition or sprt), variant, games played of planned, bot
    failures, voided games, started and finished."""
    from arena.ledger import LedgerError

    led = open_ledger(ledger)
    try:
        found = led.tournaments()
    except LedgerError as exc:
        raise fail(str(exc)) from exc
    if not found:
        console.print("no tournaments yet (arena run FILE)")
        return
    table = Table(title="Tournaments")
    for col in (
        "id",
        "name",
        "kind",
        "variant",
        "games",
        "bot failures",
        "voided",
        "started",
        "finished",
    ):
        table.add_column(col)
    for t in found:
        table.add_row(
            str(t.id),
            plain(t.name),
            t.kind,
            t.variant,
            f"{t.played}/{t.planned}",
            str(t.failures),
            str(t.voided),
            t.created_at,
            t.finished_at or "-",
        )
    console.print(table)
