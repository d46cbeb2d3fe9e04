"""``arena match``: a match between bots started as local processes, on an in-process referee, with a
live progress line and the result."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from arena.cli.bots import (
    SandboxMode,
    name_of,
    sandbox_probe,
    stop_on_sigterm,
    unique_names,
)
from arena.cli.common import errors, logs_folder
from arena.cli.options import (
    BankOption,
    BotLogsOption,
    BudgetOption,
    GraceOption,
    MaxStrikesOption,
    OnFailureOption,
    SandboxOption,
    VariantOption,
    VariantOptionsOption,
)
from arena.cli.play import parse_options
from arena.common.bounds import MAX_SEED
from arena.game import GameState, Variant, VariantError, variant, variant_options
from arena.referee import FailurePolicy, MatchConfig, MatchRecord, Outcome, Policies, TimeControl
from arena.referee.match import GameEnd
from arena.referee.record import seat_view

if TYPE_CHECKING:
    from arena.bots.limits import Limits
    from arena.play.deals import DealSuite
    from arena.service.match_manager import MatchEntry, PlayerSpec

BOT_HELP = (
    "A bot's command line, quoted as one argument (e.g. '{python} -m arena_bot.random_bot'); one "
    "--bot per player, in seat order. A consultation seat takes several players: its bots follow one "
    "another (three-handed-consultation: seat 0's bot, then seat 1's two allies; "
    "four-handed-consultation: two bots for seat 0, then two for seat 1). {python} stands for the "
    "interpreter running the arena. The bot finds the referee's address and its token in "
    "ARENA_ADDRESS and ARENA_TOKEN ({address} in the command is replaced too; a token never goes "
    "on a command line)."
)


def rotations_of(v: Variant) -> int:
    """Games of one duplicate set: one per seat, each deal dealt by each seat in turn, so that every
    seat holds every position's cards once."""
    return v.seats


def match(
    bot: Annotated[list[str], typer.Option("--bot", "-b", help=BOT_HELP, show_default=False)],
    name: Annotated[
        list[str] | None,
        typer.Option(
            "--name",
            "-n",
            help="A name for each bot, in the order of --bot (default: from the command).",
            show_default=False,
        ),
    ] = None,
    variant_name: VariantOption = "two-handed",
    option: VariantOptionsOption = None,
    games: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Number of games (default: one duplicate set, a game per seat). With duplicate "
            "deals, a multiple of the number of seats.",
            show_default=False,
        ),
    ] = None,
    duplicate: Annotated[
        bool,
        typer.Option(
            help="Play every deal once per seat (each seat deals it in turn, so that every bot "
            "holds every hand), each time with fresh bot processes: luck cancels out.",
        ),
    ] = True,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=MAX_SEED,
            help="Public seed of the deals. Without it, the deals come from a fresh secret and "
            "cannot be predicted; with it, the same seed gives the same deals every time, and any "
            "bot that knows it can compute them (for testing).",
            show_default=False,
        ),
    ] = None,
    deals: Annotated[
        Path | None,
        typer.Option(
            help="A deal suite (arena deals make N FILE): play its deals in order, each once per "
            "seat with duplicate deals (its seeds, dealers and decks, dealt from the seeds alone: "
            "the same cards every time, so that two matches compare on them). Not with --seed; "
            "--games then plays the first deals only.",
            show_default=False,
        ),
    ] = None,
    budget_ms: BudgetOption = 1000,
    bank_ms: BankOption = 10_000,
    grace_ms: GraceOption = 100,
    on_failure: OnFailureOption = FailurePolicy.FORFEIT,
    max_strikes: MaxStrikesOption = 3,
    record: Annotated[
        Path | None,
        typer.Option(help="Write the full match record (JSON) to this file.", show_default=False),
    ] = None,
    seat_record: Annotated[
        Path | None,
        typer.Option(
            help="Write each seat's view of the match (JSON) into this folder.", show_default=False
        ),
    ] = None,
    logs: BotLogsOption = None,
    connect_timeout: Annotated[
        float, typer.Option(min=0.1, help="Seconds for the bots to connect.")
    ] = 30.0,
    sandbox: SandboxOption = SandboxMode.auto,
) -> None:
    """Play a match between bots started as local processes, with a live progress line.

    The match runs on a referee of its own (loopback, any free port; no admin service). By default
    each deal is played once per seat, with fresh bot processes each time, and the deals come from a
    fresh secret. Prints each game's outcome and scores, the last output of a bot that crashed, then a
    summary per seat. Exit code 0 when every game ended normally, 1 when a bot's failure ended a game,
    2 for a usage error.
    """
    from arena.bots.launcher import LaunchError, check_command
    from arena.bots.limits import Limits
    from arena.service.match_manager import PlayerSpec

    v = _build_variant(variant_name, option or [])
    sizes = [v.team_size(seat) for seat in range(v.seats)]
    if len(bot) != sum(sizes):
        raise typer.BadParameter(
            f"{v.name} takes {sum(sizes)} bots (players per seat: "
            f"{', '.join(map(str, sizes))}), got {len(bot)}",
            param_hint="--bot",
        )
    for command in bot:
        try:
            check_command(command)
        except LaunchError as exc:
            raise typer.BadParameter(str(exc), param_hint="--bot") from exc
    names = list(name or [])
    if names and len(names) != len(bot):
        raise typer.BadParameter(
            f"give one --name per --bot ({len(bot)}), or none; got {len(names)}",
            param_hint="--name",
        )
    names = unique_names(names or [name_of(cmd) for cmd in bot])
    rotations = rotations_of(v) if duplicate else 1
    suite = _suite(deals, v, seed)
    total = games if games is not None else rotations * (len(suite) if suite else 1)
    if total % rotations:
        raise typer.BadParameter(
            f"with duplicate deals, {v.name} plays each deal {rotations} times (once per seat): "
            f"give a multiple of {rotations}, or --no-duplicate",
            param_hint="--games",
        )
    try:
        time_control = TimeControl(budget_ms=budget_ms, bank_ms=bank_ms, grace_ms=grace_ms)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--budget-ms/--bank-ms") from exc
    if suite is not None and total // rotations > len(suite):
        raise typer.BadParameter(
            f"the deal suite {deals} holds {len(suite)} deals: at most {len(suite) * rotations} "
            f"games{' (each deal once per seat)' if rotations > 1 else ''}, got {total}",
            param_hint="--games",
        )
    sandbox_probe(sandbox.value)
    # A suite's deals come from its seeds alone: the suite is the user's own file, and the point of
    # it is that two matches play the same cards.
    key = b"" if seed is not None or suite is not None else secrets.token_bytes(32)
    public_seed = seed if seed is not None else secrets.randbelow(2**48)
    config = MatchConfig(
        variant=v.name,
        options=tuple(sorted(parse_options(option or []).items())),
        seed=public_seed,
        games=total // rotations,
        time_control=time_control,
        policies=Policies(on_failure, on_failure, on_failure, on_failure, max_strikes),
        deal_key=key,
    )
    if suite is not None:
        config = _on_suite(config, suite)
        errors.print(
            f"deals: the first {config.games} of the deal suite {deals} (from its seeds alone: the "
            "same cards every time, predictable by any bot that knows the suite)",
            markup=False,
            highlight=False,
        )
    elif seed is not None:
        errors.print(
            f"deals: from --seed {seed}: the same every time, and predictable by any bot that "
            "knows the seed (for testing; leave --seed out for secret deals)",
            markup=False,
            highlight=False,
        )
    logs_folder(logs)
    configs = duplicate_configs(config, rotations)
    specs: list[list[PlayerSpec]] = []
    players = iter(zip(names, bot, strict=True))
    for size in sizes:
        specs.append([PlayerSpec(n, cmd) for n, cmd in (next(players) for _ in range(size))])
    out = Console(highlight=False)
    # Never shown to a sandboxed bot: what it writes, and the deals it is about to play.
    hidden = [p for p in (record, seat_record, deals) if p is not None]
    limits = Limits(sandbox=sandbox.value)
    try:
        entries = asyncio.run(_play(configs, specs, logs, connect_timeout, limits, hidden))
    except (KeyboardInterrupt, asyncio.CancelledError):
        out.print("interrupted: the bots are stopped")
        raise typer.Exit(130) from None
    except OSError as exc:
        out.print(f"error: {exc}", markup=False)
        raise typer.Exit(1) from exc
    failed = _print_result(out, entries)
    _print_tails(out, entries)
    merged = merge_records(entries)
    if record is not None and merged is not None:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(merged.to_dict(), indent=1))
        out.print(f"match record written to {record}", markup=False)
    if seat_record is not None and merged is not None:
        seat_record.mkdir(parents=True, exist_ok=True)
        for s in range(v.seats):
            path = seat_record / f"seat{s}.json"
            path.write_text(json.dumps(seat_view(merged, s), indent=1))
        out.print(f"seat records written to {seat_record}", markup=False)
    raise typer.Exit(1 if failed else 0)


def duplicate_configs(config: MatchConfig, rotations: int) -> list[MatchConfig]:
    """One match per rotation of a duplicate set, each on the same deals: in rotation r each game is
    dealt by the seat r places after its first dealer, so that the hand (and the turn) each seat got
    in rotation 0 goes to the next seat, and so on round the table."""
    if rotations == 1:
        return [config]
    seats = config.build_variant().seats
    first = [
        d if (d := config.dealer(g)) is not None else config.deal_seed(g) % seats
        for g in range(config.games)
    ]
    return [
        replace(config, dealers=tuple((d + r) % seats for d in first)) for r in range(rotations)
    ]


def _suite(path: Path | None, v: Variant, seed: int | None) -> DealSuite | None:
    """The deal suite of --deals (None without it); a file that cannot be played ends the command
    with a usage error naming it."""
    from arena.play.deals import DealFileError, load_deals

    if path is None:
        return None
    if seed is not None:
        raise typer.BadParameter(
            "--deals and --seed both choose the deals: give one of them", param_hint="--seed"
        )
    try:
        return load_deals(path, v.name)
    except DealFileError as exc:
        raise typer.BadParameter(str(exc), param_hint="--deals") from exc


def _on_suite(config: MatchConfig, suite: DealSuite) -> MatchConfig:
    """``config`` playing the suite's first ``config.games`` deals in order: their seeds, dealers and
    decks. A deal without a dealer gets the one the engine draws from its seed (the config gives a
    dealer for every game or for none)."""
    chosen = suite.deals[: config.games]
    config = replace(
        config,
        seed=chosen[0].seed,
        game_seeds=tuple(d.seed for d in chosen),
        decks=tuple(d.decks for d in chosen) if any(d.decks for d in chosen) else (),
    )
    if all(d.dealer is None for d in chosen):
        return config
    v = config.build_variant()
    dealers = tuple(
        d.dealer if d.dealer is not None else GameState.new(v, config.deal_seed(g)).first_dealer
        for g, d in enumerate(chosen)
    )
    return replace(config, dealers=dealers)


def merge_records(entries: Sequence[MatchEntry]) -> MatchRecord | None:
    """The matches of a duplicate set as one record (the same players in the same seats), its games
    in the order played."""
    records = [MatchRecord.from_dict(e.record.to_dict()) for e in entries if e.record is not None]
    if not records:
        return None
    merged = records[0]
    merged.match_id = "+".join(r.match_id for r in records)
    merged.games = [game for r in records for game in r.games]
    for index, game in enumerate(merged.games):
        game.index = index
    return merged


def _build_variant(name: str, options: list[str]) -> Variant:
    try:
        variant_options(name)
    except VariantError as exc:
        raise typer.BadParameter(str(exc), param_hint="--variant") from exc
    try:
        return variant(name, **parse_options(options))
    except VariantError as exc:
        raise typer.BadParameter(str(exc), param_hint="--option") from exc


# ---------------------------------------------------------------------------------------- running


@dataclass(slots=True)
class _Live:
    """What the progress line shows, followed from the match's public events."""

    game: int = 0
    deal: int = 0
    trick: int = 0
    actions: int = 0
    seen: int = 0

    def follow(self, entry: MatchEntry) -> None:
        events = entry.events
        while self.seen < len(events):
            e = events[self.seen]
            self.seen += 1
            if e.game != self.game:
                self.game, self.deal, self.trick, self.actions = e.game, 0, 0, 0
            words = e.text.split()
            if words[0] == "deal":
                self.deal, self.trick = int(words[1].rstrip(":")), 0
            elif words[2:4] == ["wins", "trick"]:
                self.trick = int(words[4])
            elif words[2] in ("plays", "declares", "exchanges", "shows"):
                self.actions += 1


@dataclass(slots=True)
class _Tally:
    """Each bot's games: won, drawn, lost and points, in the rows of :meth:`of`."""

    names: list[str]
    wins: list[int]
    draws: list[int]
    losses: list[int]
    points: list[int]
    alone: list[int]  # a consultation series: games played as the single player
    series: bool = False  # rows per player of a consultation series (else per seat)

    @classmethod
    def of(cls, entry: MatchEntry, ends: Sequence[GameEnd]) -> _Tally:
        """Per seat (its bots keep it all match), or, in a consultation series (docs/rules.md
        §3.2), whose players change seats from game to game, per player (in the match's order): a
        game's result and score count for every bot of its seat in that game."""
        seat_names = entry.seat_names
        series = any(end.seating for end in ends) or (
            dict(entry.config.options).get("consultation") == "series"
        )
        players = [p.name for seat in entry.specs for p in seat]
        names = players if series else seat_names
        n = len(names)
        t = cls(names, [0] * n, [0] * n, [0] * n, [0] * n, [0] * n, series)
        for end in ends:
            r = end.result
            rows = end.seating if series else tuple((s,) for s in range(len(seat_names)))
            firsts = sum(1 for place in r.ranking if place == 0)
            for side, place in zip(r.sides, r.ranking, strict=True):
                for seat in side:
                    for row in rows[seat]:
                        if place != 0:
                            t.losses[row] += 1
                        elif firsts > 1:
                            t.draws[row] += 1
                        else:
                            t.wins[row] += 1
            for seat, score in enumerate(r.scores):
                for row in rows[seat]:
                    t.points[row] += score
                    if series and len(rows[seat]) == 1:
                        t.alone[row] += 1
        return t


def _status(entries: Sequence[MatchEntry], live: _Live, total: int) -> str:
    entry = entries[-1]
    done = sum(len(e.ends) for e in entries)
    if entry.status == "waiting":
        return f"waiting for {sum(len(s) for s in entry.players)} bots to connect"
    ends = [end for e in entries for end in e.ends]
    tally = _Tally.of(entry, ends)
    score = ", ".join(
        f"{escape(n)} {tally.wins[i]}-{tally.draws[i]}-{tally.losses[i]}"
        for i, n in enumerate(tally.names)
    )
    current = min(done + 1, total)
    return (
        f"game {current}/{total} (done {done}) | deal {live.deal} trick {live.trick} "
        f"| {live.actions} actions | won-drawn-lost: {score}"
    )


async def _play(
    configs: Sequence[MatchConfig],
    specs: list[list[PlayerSpec]],
    logs: Path | None,
    connect_timeout: float,
    limits: Limits,
    hidden: Sequence[Path],
) -> list[MatchEntry]:
    """Play the matches one after another (each with bot processes of its own), with a progress
    line."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from arena.service.server import create_server

    stop_on_sigterm()
    server, _, manager = await create_server("127.0.0.1:0", logs_dir=logs, limits=limits)
    manager.hide(*hidden)
    total = sum(c.games for c in configs)
    entries: list[MatchEntry] = []
    try:
        columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
            task = progress.add_task("starting the bots", total=total)
            for config in configs:
                entry = manager.create(config, specs, connect_timeout)
                entries.append(entry)
                await manager.start(entry)
                live = _Live()
                while not entry.done.is_set():
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(0.2):
                            await entry.done.wait()
                    live.follow(entry)
                    progress.update(
                        task,
                        completed=sum(len(e.ends) for e in entries),
                        description=_status(entries, live, total),
                    )
        return entries
    finally:
        await manager.close()
        await server.stop(None)


# ---------------------------------------------------------------------------------------- the result


def _print_result(out: Console, entries: Sequence[MatchEntry]) -> bool:
    """Print each game and the summary; True when a bot's failure ended a game (or a match). Every
    text a bot had a hand in (details quote its replies) is printed as it is, never as markup."""
    failed = False
    number = 0
    ends = [end for entry in entries for end in entry.ends]
    for rotation, entry in enumerate(entries):
        for end in entry.ends:
            number += 1
            r = end.result
            names = _game_names(entry, end)
            scores = ", ".join(
                f"{' & '.join(names[s] for s in side)} {score}"
                for side, score in zip(r.sides, r.side_scores, strict=True)
            )
            verdict = _verdict(names, _players(entry, end), r.winners)
            where = f" (deal {end.game + 1}, dealt by seat {_dealer(entry, end.game)})"
            line = f"game {number}: {end.outcome.text}"
            if end.outcome is not Outcome.NORMAL:
                failed = True
                line += f" ({end.detail})"
            out.print(
                Text(f"{line} | {scores} | {verdict}" + (where if len(entries) > 1 else "")),
                soft_wrap=True,
            )
        if entry.error:
            failed = True
            out.print(Text(f"error: match {rotation + 1} stopped: {entry.error}"), soft_wrap=True)
    out.print(_summary(entries, ends))
    return failed


def _summary(entries: Sequence[MatchEntry], ends: Sequence[GameEnd]) -> Table:
    """The match's summary, a row per bot: per seat, or per player in a consultation series (its
    players change seats; a row per seat would tally the single player's seat, not a bot)."""
    games_planned = sum(e.config.games for e in entries)
    tally = _Tally.of(entries[0], ends)
    table = Table(
        title=f"{entries[0].config.variant}: {len(ends)} of {games_planned} games",
        caption="a row per player: a series seats them game by game" if tally.series else None,
    )
    first = ("player", "games alone") if tally.series else ("seat", "name")
    for col in (*first, "wins", "draws", "losses", "points"):
        table.add_column(col, justify="left" if col in ("name", "player") else "right")
    for i, n in enumerate(tally.names):
        table.add_row(
            *((Text(n), str(tally.alone[i])) if tally.series else (str(i), Text(n))),
            str(tally.wins[i]),
            str(tally.draws[i]),
            str(tally.losses[i]),
            str(tally.points[i]),
        )
    return table


def _verdict(names: Sequence[str], players: Sequence[int], winners: Sequence[int]) -> str:
    """A game's verdict: "draw", or its winning seats' players and the verb agreeing with them:
    "ann wins", but "ann + cat win" (two players sharing a seat) and "ann & bob win" (two seats)."""
    if not winners:
        return "draw"
    many = sum(players[s] for s in winners) > 1
    return " & ".join(names[s] for s in winners) + (" win" if many else " wins")


def _players(entry: MatchEntry, end: GameEnd) -> list[int]:
    """How many players each seat had in this game (as :func:`_game_names` names them)."""
    if end.seating:
        return [len(seat) for seat in end.seating]
    return [len(seat) for seat in entry.specs]


def _game_names(entry: MatchEntry, end: GameEnd) -> list[str]:
    """Each seat's players in this game: as the match seats them, or as a consultation series
    seated them for the game (docs/rules.md §3.2)."""
    if not end.seating:
        return entry.seat_names
    players = [p.name for seat in entry.specs for p in seat]
    return [" + ".join(players[i] for i in seat) for seat in end.seating]


def _dealer(entry: MatchEntry, game: int) -> str:
    record = entry.record
    if record is not None and game < len(record.games):
        return str(record.games[game].dealer)
    dealer = entry.config.dealer(game)
    return "?" if dealer is None else str(dealer)


def _print_tails(out: Console, entries: Sequence[MatchEntry]) -> None:
    """The last output of each bot process that crashed or died before it connected."""
    shown: set[int] = set()
    for entry in entries:
        culprits = {
            end.culprit
            for end in entry.ends
            if end.outcome in (Outcome.CRASH, Outcome.DISCONNECT) and end.culprit >= 0
        }
        for seat in sorted(culprits):
            for port in entry.players[seat]:
                proc = port.process
                if proc is None or id(proc) in shown:
                    continue
                shown.add(id(proc))
                lines = proc.output_shown()
                what = proc.exit_text() if proc.returncode is not None else "bot process"
                if not lines:
                    out.print(Text(f"{port.name} (seat {seat}): {what}; it wrote nothing"))
                    continue
                out.print(Text(f"{port.name} (seat {seat}): {what}; its output:"))
                for line in lines:
                    out.print(Text(f"    | {line}"), soft_wrap=True)
