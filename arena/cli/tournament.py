"""``arena run FILE``: play a tournament (or resume it) into the ledger, then show its tables."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.cli.common import DEFAULT_LEDGER, LedgerOption, console, errors, open_ledger, print_board
from arena.ledger import Ledger, LedgerError
from arena.tournament import runner as tournament_runner
from arena.tournament.spec import TournamentFileError, TournamentSpec, load
from arena.tournament.summary import entrant_lines, pairing_lines


def run(
    file: Annotated[
        Path, typer.Argument(help="The tournament file (TOML), e.g. tournaments/quickstart.toml.")
    ],
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    logs: Annotated[
        Path | None,
        typer.Option(
            help="Write each bot process's output to a log file in this folder (named after its first game)."
        ),
    ] = None,
) -> None:
    """Run a tournament into the ledger, resuming it if it was interrupted; print the leaderboard and
    the pairings."""
    try:
        spec = load(file)
    except TournamentFileError as exc:
        errors.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    led = open_ledger(ledger, must_exist=False)
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
        task = bar.add_task(spec.name, total=None, running=0, failures=0, errors=0)

        def show(p: tournament_runner.Progress) -> None:
            bar.update(
                task,
                total=p.planned or None,
                completed=p.done,
                running=p.running,
                failures=p.failures,
                errors=p.errors,
            )

        try:
            runner = tournament_runner.TournamentRunner(spec, led, show, logs_dir=logs)
            tid = asyncio.run(runner.run())
        except LedgerError as exc:
            errors.print(f"[red]error:[/] {escape(str(exc))}")
            raise typer.Exit(2) from exc
        except KeyboardInterrupt:
            errors.print("interrupted: every finished game is in the ledger; run again to resume")
            raise typer.Exit(130) from None
    p = runner.progress
    if p.resumed:
        console.print(f"resumed: {p.resumed} game(s) were already in the ledger")
    print_tables(led, spec, tid)
    if p.errors:
        errors.print(
            f"[red]{p.errors} game(s) could not be played[/] (last: {escape(p.last)}); run again to retry"
        )
        raise typer.Exit(1)


def print_tables(led: Ledger, spec: TournamentSpec, tid: int) -> None:
    print_board(led, spec.variant)
    rows = led.seat_rows(tid)
    v = spec.build_variant()
    if v.seats == 2 and all(v.team_size(s) == 1 for s in range(2)):
        table = Table(title=f"Pairings: {spec.name}")
        for col in (
            "entrant",
            "opponent",
            "games",
            "W-L-D",
            "avg points",
            "duplicate sets W-L-T",
            "score (95% CI)",
        ):
            table.add_column(col)
        for line in pairing_lines(rows):
            table.add_row(
                line.a,
                line.b,
                str(line.games),
                f"{line.wins}-{line.losses}-{line.draws}",
                f"{line.points_a:.0f} : {line.points_b:.0f}",
                f"{line.sets_won}-{line.sets_lost}-{line.sets_tied}",
                f"{line.score:.0%} ({line.low:.0%}-{line.high:.0%})",
            )
    else:
        table = Table(title=f"Entrants: {spec.name}")
        for col in (
            "entrant",
            "games",
            "first places",
            "avg place",
            "avg points",
            "firsts (95% CI)",
        ):
            table.add_column(col)
        for e in entrant_lines(rows):
            table.add_row(
                e.entrant,
                str(e.games),
                f"{e.firsts:g}",
                f"{e.average_place + 1:.2f}",
                f"{e.average_score:.0f}",
                f"{e.firsts / e.games:.0%} ({e.low:.0%}-{e.high:.0%})",
            )
    console.print(table)
