"""Commands that read the ledger: leaderboard, games (and voiding them), replay, export, ratings
rebuild."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import console, errors, fail, open_ledger, plain, print_board
from arena.cli.options import DEFAULT_LEDGER, LedgerOption
from arena.game import VARIANT_NAMES, Action, GameState
from arena.game.transcript import Narrator
from arena.referee.config import Outcome
from arena.referee.record import GameRecord, MatchRecord
from arena.referee.record import replay as replay_state

OUTCOMES = tuple(o.text for o in Outcome)  # how a game ended, as recorded


def known_outcomes(given: list[str]) -> list[str]:
    """The outcomes given, each checked against the recorded ones (a typo would select nothing)."""
    for outcome in given:
        if outcome not in OUTCOMES:
            raise fail(f"no outcome {outcome!r}: one of {', '.join(OUTCOMES)}")
    return given


def leaderboard(
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    tournament: Annotated[
        str | None,
        typer.Option(help="Only this tournament's board (its name or id; see arena tournaments)."),
    ] = None,
    pooled: Annotated[
        bool,
        typer.Option(
            "--pooled",
            help="The pooled board of each variant instead: every tournament of the variant together.",
        ),
    ] = False,
    variant: Annotated[
        str | None, typer.Option(help="With --pooled: only this variant's board.")
    ] = None,
) -> None:
    """Show leaderboards sorted by mu - 3 sigma, with versions and games played.

    Each tournament has its own board (all of them, or one with --tournament); --pooled shows the
    board of each variant that pools every tournament of that variant."""
    from arena.ledger import LedgerError

    if tournament is not None and pooled:
        raise fail(
            "--tournament shows a tournament's own board; --pooled every variant's: not both"
        )
    led = open_ledger(ledger)
    if variant is not None and not pooled:
        raise fail(
            "--variant goes with --pooled (the boards pooling every tournament of a variant)"
        )
    if pooled:
        variants = [variant] if variant else led.variants()
        if variant is not None and variant not in led.variants():
            # A typo, or a variant no tournament here plays: said so, not shown as an empty board.
            if variant not in VARIANT_NAMES:
                raise fail(f"no variant {variant!r}: one of {', '.join(VARIANT_NAMES)}")
            rated = ", ".join(led.variants()) or "none yet"
            console.print(f"no rated games of {variant} yet (pooled boards: {rated})")
            return
        if not variants:
            console.print(
                "no pooled board yet (a standing competition's games count on its own board only: "
                "arena leaderboard --tournament NAME)"
                if any(t.kind == "competition" for t in led.tournaments())
                else "no rated games yet"
            )
        for v in variants:
            print_board(led, v)
        return
    try:
        chosen = [led.find_tournament(tournament)] if tournament else led.tournaments()
    except LedgerError as exc:
        raise fail(str(exc)) from exc
    if not chosen:
        console.print("no rated games yet")
    for t in chosen:
        print_board(led, tournament=t.name)


games_app = typer.Typer(invoke_without_command=True)


@games_app.callback()
def games(
    ctx: typer.Context,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    tournament: Annotated[
        str | None, typer.Option(help="Only this tournament's games (its name or id).")
    ] = None,
    outcome: Annotated[
        str | None,
        typer.Option(help="Only games with this outcome (normal, timeout, crash, ...)."),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="How many games, newest first.")] = 50,
) -> None:
    """List recorded games, newest first: id, tournament, key, outcome and each player's score.

    arena games void takes games the arena spoiled out of the results."""
    if ctx.invoked_subcommand is not None:
        return
    from arena.ledger import LedgerError

    if outcome is not None:
        known_outcomes([outcome])
    led = open_ledger(ledger)
    try:
        tid = led.find_tournament(tournament).id if tournament else None
        found = led.games(tid, limit, outcome)
    except LedgerError as exc:
        raise fail(str(exc)) from exc
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
    for g in found:
        table.add_row(
            str(g["id"]),
            plain(g["tournament"]),
            g["key"],
            g["variant"],
            g["outcome"],
            plain(g["players"] or ""),
            plain(g["detail"]),
        )
    console.print(table)


@games_app.command("void")
def void(
    tournament: Annotated[
        str, typer.Option(help="The tournament whose games are voided (its name or id).")
    ],
    reason: Annotated[
        str,
        typer.Option(help="Why, kept with the voided games (e.g. 'a bot's runtime was missing')."),
    ],
    game: Annotated[
        list[int] | None,
        typer.Option("--game", "-g", help="A game's id (see arena games); repeat for several."),
    ] = None,
    outcome: Annotated[
        list[str] | None,
        typer.Option(
            help="Every game of the tournament with this outcome (e.g. crash); repeatable."
        ),
    ] = None,
    all_games: Annotated[bool, typer.Option("--all", help="Every game of the tournament.")] = False,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
) -> None:
    """Void games of a tournament that the arena, not the bots, spoiled.

    The games leave the results and every board is rebuilt without them; their records are kept apart
    (table voided_games); running the tournament again plays them again."""
    from arena.ledger import LedgerError

    if not (game or outcome or all_games):
        raise fail("say which games: --game ID, --outcome OUTCOME, or --all")
    if all_games and (game or outcome):
        raise fail("--all voids every game: give it alone")
    if not reason.strip():
        raise fail("--reason must say why the games are voided")
    known_outcomes(outcome or [])
    led = open_ledger(ledger)
    try:
        t = led.find_tournament(tournament)
        keys = led.void_games(t.id, reason.strip(), game or (), outcome or ())
    except LedgerError as exc:
        raise fail(str(exc)) from exc
    if not keys:
        console.print(f"no game of {escape(t.name)} matched: nothing voided")
        return
    console.print(
        f"voided {len(keys)} game(s) of {escape(t.name)}; the boards are rebuilt without them, and "
        f"running the tournament again plays them again"
    )


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
    if record is not None and game_id is not None:
        raise fail("give a GAME_ID from the ledger or --record FILE (with --game N), not both")
    if record is not None:
        try:
            match_record = MatchRecord.from_dict(json.loads(record.read_text()))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise fail(f"{record}: not a readable match record: {exc}") from exc
        if not match_record.games:
            raise fail(f"{record}: the record holds no game")
        if not 1 <= game <= len(match_record.games):
            errors.print(f"[red]error:[/] --game must be 1..{len(match_record.games)}")
            raise typer.Exit(2)
        chosen = match_record.games[game - 1]
    else:
        if game_id is None:
            errors.print("[red]error:[/] give a GAME_ID from the ledger, or --record FILE")
            raise typer.Exit(2)
        from arena.ledger import LedgerError

        led = open_ledger(ledger)
        try:
            match_record = MatchRecord.from_dict(led.game_record(game_id))
        except LedgerError as exc:
            raise fail(str(exc)) from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise fail(
                f"{ledger}: game {game_id}: the stored record is not a match record: {exc}"
            ) from exc
        chosen = match_record.games[0]
    source = str(record) if record is not None else f"{ledger}: game {game_id}"
    try:
        state = replay_state(match_record, chosen)
    except ValueError as exc:
        raise fail(f"{source}: the record's deal cannot be set up: {exc}") from exc
    if seat is not None and not 0 <= seat < state.variant.seats:
        errors.print(
            f"[red]error:[/] --seat must be 0..{state.variant.seats - 1} for {match_record.variant}"
        )
        raise typer.Exit(2)
    try:
        lines = transcript(match_record, chosen, state, seat)
    except (ValueError, TypeError, KeyError) as exc:  # a decision the deal does not allow
        raise fail(f"{source}: the record does not replay: {exc}") from exc
    for line in lines:
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
        str,
        typer.Option(
            help="games (one row per seat of each game), ratings (one row per entrant and board), "
            "or records (each game's full match record; JSON only)."
        ),
    ] = "games",
    fmt: Annotated[str, typer.Option("--format", help="csv or json.")] = "csv",
    tournament: Annotated[
        str | None, typer.Option(help="Only this tournament (its name or id).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")
    ] = None,
) -> None:
    """Export games, ratings or full game records from the ledger as CSV or JSON."""
    from arena.ledger import LedgerError

    if what not in ("games", "ratings", "records"):
        raise fail(f"--what must be games, ratings or records, got {what!r}")
    if fmt not in ("csv", "json"):
        raise fail(f"--format must be csv or json, got {fmt!r}")
    if what == "records" and fmt != "json":
        raise fail("records are exported as JSON: add --format json")
    if output is not None and not output.parent.is_dir():
        raise fail(f"--output {output}: the folder {output.parent} does not exist")
    led = open_ledger(ledger)
    try:
        tid = led.find_tournament(tournament).id if tournament else None
        rows = led.export_rows(what, tid)
    except LedgerError as exc:
        raise fail(str(exc)) from exc
    if fmt == "json":
        text = json.dumps(rows, indent=1) + "\n"
    else:
        buf = io.StringIO()
        if rows:
            writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        text = buf.getvalue()
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text)
    except OSError as exc:
        raise fail(f"--output {output}: cannot write: {exc.strerror or exc}") from exc
    console.print(f"wrote {len(rows)} rows to {escape(str(output))}")


ratings_app = typer.Typer(help="Ratings kept in the ledger.", no_args_is_help=True)


@ratings_app.command("rebuild")
def rebuild(
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Only say whether the stored ratings are reproduced; write nothing (a read-only "
            "ledger, or a copy of one, too).",
        ),
    ] = False,
) -> None:
    """Recompute every rating from the recorded games, in the schedule's order, and report whether the
    stored ratings were exactly reproduced."""
    from arena.ledger import LedgerError

    led = open_ledger(ledger)
    try:
        diff = led.check_ratings() if check else led.rebuild_ratings()
    except LedgerError as exc:
        hint = "" if check else " (--check compares without writing)"
        raise fail(f"{exc}{hint}") from exc
    if check:
        if diff == 0.0:
            console.print("ratings checked: the games give exactly the stored ratings")
        else:
            console.print(
                f"ratings checked: the games give ratings that differ from the stored ones by up "
                f"to {diff:.6g} (arena ratings rebuild rewrites them)"
            )
            raise typer.Exit(1)
    elif diff == 0.0:
        console.print("ratings rebuilt: identical to the stored ratings")
    else:
        console.print(
            f"ratings rebuilt: they differed from the stored ones by up to {diff:.6g}; now rewritten"
        )
