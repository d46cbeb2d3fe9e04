"""Commands that read the ledger: leaderboard, games, replay, export, ratings rebuild."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import DEFAULT_LEDGER, LedgerOption, console, errors, open_ledger, print_board
from arena.game import Action, GameState
from arena.game.transcript import Narrator
from arena.ledger import LedgerError
from arena.referee.record import GameRecord, MatchRecord
from arena.referee.record import replay as replay_state


def leaderboard(
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    variant: Annotated[
        str | None, typer.Option(help="Only this variant (default: every variant).")
    ] = None,
) -> None:
    """Show the leaderboard of each variant, sorted by mu - 3 sigma, with games played."""
    led = open_ledger(ledger)
    variants = [variant] if variant else led.variants()
    if not variants:
        console.print("no rated games yet")
    for v in variants:
        print_board(led, v)


def games(
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    tournament: Annotated[
        int | None, typer.Option(help="Only this tournament's games (its id).")
    ] = None,
    limit: Annotated[int, typer.Option(help="How many games, newest first.")] = 50,
) -> None:
    """List recorded games, newest first: id, tournament, key, outcome and each player's score."""
    led = open_ledger(ledger)
    table = Table(title="Games")
    for col in (
        "id",
        "tournament",
        "key",
        "variant",
        "outcome",
        "players (entrant:score)",
        "detail",
    ):
        table.add_column(col)
    for g in led.games(tournament, limit):
        table.add_row(
            str(g["id"]),
            g["tournament"],
            g["key"],
            g["variant"],
            g["outcome"],
            g["players"] or "",
            g["detail"],
        )
    console.print(table)


def replay(
    game_id: Annotated[
        int | None,
        typer.Argument(help="The game's id in the ledger (see arena games).", show_default=False),
    ] = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    record: Annotated[
        Path | None,
        typer.Option(
            help="Read a match record file instead (arena serve --records, arena match --record).",
            show_default=False,
        ),
    ] = None,
    game: Annotated[int, typer.Option(min=1, help="With --record: which game of the match.")] = 1,
    seat: Annotated[int | None, typer.Option(help="Show only what this seat saw.")] = None,
) -> None:
    """Print a readable transcript of a recorded game: the full game, or one seat's view."""
    if record is not None:
        try:
            match_record = MatchRecord.from_dict(json.loads(record.read_text()))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            errors.print(
                f"[red]error:[/] {escape(str(record))}: not a readable match record: {escape(str(exc))}"
            )
            raise typer.Exit(2) from exc
        if not 1 <= game <= len(match_record.games):
            errors.print(f"[red]error:[/] --game must be 1..{len(match_record.games)}")
            raise typer.Exit(2)
        chosen = match_record.games[game - 1]
    else:
        if game_id is None:
            errors.print("[red]error:[/] give a GAME_ID from the ledger, or --record FILE")
            raise typer.Exit(2)
        led = open_ledger(ledger)
        try:
            match_record = MatchRecord.from_dict(led.game_record(game_id))
        except LedgerError as exc:
            errors.print(f"[red]error:[/] {escape(str(exc))}")
            raise typer.Exit(2) from exc
        chosen = match_record.games[0]
    state = replay_state(match_record, chosen)
    if seat is not None and not 0 <= seat < state.variant.seats:
        errors.print(
            f"[red]error:[/] --seat must be 0..{state.variant.seats - 1} for {match_record.variant}"
        )
        raise typer.Exit(2)
    for line in transcript(match_record, chosen, state, seat):
        typer.echo(line)


def transcript(
    record: MatchRecord, game: GameRecord, state: GameState, seat: int | None
) -> list[str]:
    narrator = Narrator(state, seat)
    names = ", ".join(f"seat {s}: {' + '.join(p)}" for s, p in enumerate(record.players))
    lines = [*narrator.header(), f"players: {names}", *narrator.catch_up()]
    for d in game.decisions:
        if d.failure:
            lines.append(f"  ! seat {d.seat}: {d.failure}: {d.detail}")
        if not d.action:
            break
        lines.extend(narrator.before_decision())
        state.apply(Action.parse(d.action))
        lines.extend(narrator.catch_up())
    if state.is_terminal():
        lines.extend(narrator.result_lines())
    else:
        lines.append(f"game ended: {game.outcome}: {game.detail}")
        lines.append(f"result: sides {game.result['sides']} places {game.result['ranking']}")
    return lines


def export(
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    what: Annotated[
        str, typer.Option(help="games (one row per seat of each game) or ratings.")
    ] = "games",
    fmt: Annotated[str, typer.Option("--format", help="csv or json.")] = "csv",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")
    ] = None,
) -> None:
    """Export games or ratings from the ledger as CSV or JSON."""
    if what not in ("games", "ratings"):
        errors.print(f"[red]error:[/] --what must be games or ratings, got {what!r}")
        raise typer.Exit(2)
    if fmt not in ("csv", "json"):
        errors.print(f"[red]error:[/] --format must be csv or json, got {fmt!r}")
        raise typer.Exit(2)
    led = open_ledger(ledger)
    if what == "games":
        rows: list[dict[str, Any]] = list(
            led.db.query(
                "SELECT g.id AS game_id, t.name AS tournament, g.key, g.variant, g.seed, g.outcome, g.detail, "
                "s.seat, s.member, e.name AS entrant, s.side, s.place, s.score FROM games g "
                "JOIN tournaments t ON t.id = g.tournament_id JOIN game_seats s ON s.game_id = g.id "
                "JOIN entrants e ON e.id = s.entrant_id ORDER BY g.id, s.seat, s.member"
            )
        )
    else:
        rows = list(
            led.db.query(
                "SELECT e.name AS entrant, r.variant, r.mu, r.sigma, r.exposed, r.games FROM ratings r "
                "JOIN entrants e ON e.id = r.entrant_id ORDER BY r.variant, r.exposed DESC"
            )
        )
    if fmt == "json":
        text = json.dumps(rows, indent=1)
    else:
        buf = io.StringIO()
        if rows:
            writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        text = buf.getvalue()
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text)
        console.print(f"wrote {len(rows)} rows to {output}")


ratings_app = typer.Typer(help="Ratings kept in the ledger.", no_args_is_help=True)


@ratings_app.command("rebuild")
def rebuild(ledger: LedgerOption = Path(DEFAULT_LEDGER)) -> None:
    """Recompute every rating from the recorded games, in the schedule's order, and report whether the
    stored ratings were exactly reproduced."""
    led = open_ledger(ledger)
    try:
        diff = led.rebuild_ratings()
    except LedgerError as exc:
        errors.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    if diff == 0.0:
        console.print("ratings rebuilt: identical to the stored ratings")
    else:
        console.print(
            f"ratings rebuilt: they differed from the stored ones by up to {diff:.6g}; now rewritten"
        )
