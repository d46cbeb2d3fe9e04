"""``arena sprt``: is the new version stronger? A sequential A/B test on duplicate pairs (issue 18), or
the same report from given pair counts."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from arena.cli.bots import (
    SandboxMode,
    name_of,
    sandbox_probe,
    stop_on_sigterm,
    unique_names,
)
from arena.cli.common import deal_key, errors, logs_folder, open_ledger
from arena.cli.options import (
    BankOption,
    BotLogsOption,
    BudgetOption,
    GraceOption,
    SandboxOption,
    VariantOption,
    VariantOptionsOption,
)
from arena.cli.play import parse_options
from arena.cli.sprt_lines import (
    PAIR_SCORE,
    closing_line,
    failure_lines,
    progress_line,
    report_lines,
    summary,
)
from arena.common.bounds import MAX_CONCURRENCY, MAX_PLANNED_GAMES, MAX_SEED
from arena.game import Variant, VariantError, variant, variant_options
from arena.play.deals import DealFileError, DealSuite, load_deals, seeded_deals
from arena.referee import Policies, TimeControl
from arena.stats import Model, Pentanomial, Sprt, SprtDecision, StatsError, Trinomial
from arena.tournament.summary import counted

if TYPE_CHECKING:
    from arena.abtest.duplicate_pairs import AbTestState, PairReport, RefereePairs
    from arena.abtest.ledger_store import AbTestLedger

DEFAULT_OPPONENT = "{python} -m arena_bot.greedy_bot"
DEFAULT_MAX_GAMES = 2000
DEFAULT_SEED = 1
BROKEN_EXIT = 3  # the exit code when a version failed each of its first games


def sprt(
    bot: Annotated[
        list[str] | None,
        typer.Option(
            "--bot",
            "-b",
            help="Twice: the NEW version's command line, then the OLD one's (quoted, e.g. "
            "'{python} -m arena_bot.search_bot'; {python} is the interpreter running the arena).",
            show_default=False,
        ),
    ] = None,
    pentanomial: Annotated[
        str | None,
        typer.Option(
            help="N0,N1,N2,N3,N4: report on these pair counts without playing (pairs in which the "
            "first player scored 0, 0.5, 1, 1.5 and 2 points).",
            show_default=False,
        ),
    ] = None,
    trinomial: Annotated[
        str | None,
        typer.Option(
            help="L,D,W: report on these game counts (losses, draws, wins) without playing.",
            show_default=False,
        ),
    ] = None,
    elo0: Annotated[float, typer.Option(help="H0: the new version is this much stronger.")] = 0.0,
    elo1: Annotated[float, typer.Option(help="H1: the new version is this much stronger.")] = 5.0,
    alpha: Annotated[
        float, typer.Option(help="Largest chance of accepting H1 when H0 holds.")
    ] = 0.05,
    beta: Annotated[
        float, typer.Option(help="Largest chance of accepting H0 when H1 holds.")
    ] = 0.05,
    model: Annotated[
        Model,
        typer.Option(
            help="normalized: elo0 and elo1 are normalized Elo (fastchess's default); logistic: "
            "they are logistic Elo."
        ),
    ] = Model.NORMALIZED,
    name: Annotated[
        list[str] | None,
        typer.Option(
            "--name",
            "-n",
            help="Names for NEW and OLD (default: from the commands).",
            show_default=False,
        ),
    ] = None,
    opponent: Annotated[
        str,
        typer.Option(
            help="Three- and four-handed: the fixed opponent in the other seats, as a command line."
        ),
    ] = DEFAULT_OPPONENT,
    variant_name: VariantOption = "two-handed",
    option: VariantOptionsOption = None,
    deals: Annotated[
        Path | None,
        typer.Option(
            help="A deal suite (arena deals make): pair i plays its deal i; at most one pair per deal.",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=MAX_SEED,
            help=f"Without --deals: the seed the deals are derived from (default {DEFAULT_SEED}).",
            show_default=False,
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option(min=1, max=MAX_CONCURRENCY, help="Games played at once.")
    ] = 2,
    max_games: Annotated[
        int | None,
        typer.Option(
            help=f"Stop at this many games if the test has not decided (default {DEFAULT_MAX_GAMES}).",
            show_default=False,
        ),
    ] = None,
    games: Annotated[
        int | None,
        typer.Option(
            help="Play exactly this many games (an even number: pairs), without stopping early.",
            show_default=False,
        ),
    ] = None,
    budget_ms: BudgetOption = 1000,
    bank_ms: BankOption = 30_000,
    grace_ms: GraceOption = 200,
    matches_per_process: Annotated[
        int,
        typer.Option(
            min=1, help="Games a bot process may play before it is replaced (never a deal twice)."
        ),
    ] = 1,
    logs: BotLogsOption = None,
    sandbox: SandboxOption = SandboxMode.auto,
    ledger: Annotated[
        Path | None,
        typer.Option(
            help="Record every game in this ledger (made if missing) as the test named --test; run "
            "the same command again to resume an interrupted test.",
            show_default=False,
        ),
    ] = None,
    test_name: Annotated[
        str | None,
        typer.Option(
            "--test",
            help="With --ledger: the test's name (default 'sprt NEW vs OLD').",
            show_default=False,
        ),
    ] = None,
    deal_secret: Annotated[
        str | None,
        typer.Option(
            help="The secret the deals are drawn with (hex, at least 32 digits): two tests with the "
            "same secret and deals play the same cards. Default: a fresh random secret (with "
            "--ledger, kept there for resuming; a resumed test keeps its own).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Is the new version stronger? Play duplicate pairs until the GSPRT decides.

    With --bot NEW --bot OLD, plays pairs (one deal twice, the seats swapped) on a referee of its own and
    prints after each pair the LLR with its bounds, Elo with its 95% interval, normalized Elo and the
    likelihood of superiority; stops when H0 (elo0) or H1 (elo1) is accepted, or at --max-games.
    --games N plays a fixed number instead. With --ledger, every game is recorded there and the same
    command run again resumes the test. With --pentanomial (or --trinomial), prints the same
    report for given counts without playing. Exit code 0 when the test ran, 1 when the arena could not
    play, 2 for a usage error, 3 when a version cannot start or failed each of its first games (a
    broken bot).
    """
    try:
        test = Sprt(elo0, elo1, alpha, beta, model)
    except StatsError as exc:
        raise typer.BadParameter(str(exc), param_hint="--elo0/--elo1/--alpha/--beta") from exc
    given = [
        option
        for option, value in (
            ("--bot", bot),
            ("--pentanomial", pentanomial),
            ("--trinomial", trinomial),
        )
        if value
    ]
    if len(given) != 1:
        what = "give --bot NEW --bot OLD to play, or --pentanomial (or --trinomial) counts to report on"
        raise typer.BadParameter(
            f"{' and '.join(given)} cannot be given together: {what}" if given else what,
            param_hint="/".join(given) or "--bot/--pentanomial",
        )
    if pentanomial is not None or trinomial is not None:
        _report_counts(test, pentanomial, trinomial)
        return
    assert bot is not None
    from arena.abtest.duplicate_pairs import (
        BROKEN_STOP,
        LIMIT_STOP,
        NEW,
        NO_DEALS_STOP,
        OLD,
        OPPONENT,
        RefereePairs,
        roles_needed,
        run_ab_test,
    )
    from arena.abtest.ledger_store import AbTestLedger, AbTestSpec
    from arena.bots.limits import Limits
    from arena.ledger import LedgerError, TournamentChanged
    from arena.play.stall_watch import StallWatch
    from arena.service.match_manager import ManagerOptions
    from arena.service.server import create_server

    if len(bot) != 2:
        raise typer.BadParameter(
            f"give two: --bot NEW --bot OLD, got {len(bot)}", param_hint="--bot"
        )
    names = list(name or [])
    if names and len(names) != 2:
        raise typer.BadParameter("give two names (NEW, OLD) or none", param_hint="--name")
    v = _build_variant(variant_name, option or [])
    roles = roles_needed(v)
    commands = {NEW: bot[0], OLD: bot[1], OPPONENT: opponent}
    new_name, old_name, opp_name = unique_names(
        [*(names or [name_of(bot[0]), name_of(bot[1])]), name_of(opponent)]
    )
    role_names = {NEW: new_name, OLD: old_name, OPPONENT: opp_name}
    if games is not None and max_games is not None:
        raise typer.BadParameter("give --games or --max-games, not both", param_hint="--games")
    limit = (
        games if games is not None else max_games if max_games is not None else DEFAULT_MAX_GAMES
    )
    if limit < 2 or limit % 2 or limit > MAX_PLANNED_GAMES:
        raise typer.BadParameter(
            "a duplicate pair is two games: give an even number from 2 to "
            f"{MAX_PLANNED_GAMES:,}, got {limit}",
            param_hint="--games" if games is not None else "--max-games",
        )
    max_pairs = limit // 2
    key = _deal_secret(deal_secret)
    if test_name is not None and ledger is None:
        raise typer.BadParameter(
            "--test names a test in a ledger: give --ledger", param_hint="--test"
        )
    if test_name is not None and not test_name.strip():
        raise typer.BadParameter("the test's name must not be empty", param_hint="--test")
    if deals is not None and seed is not None:
        raise typer.BadParameter(
            "--deals and --seed both choose the deals: give one of them", param_hint="--seed"
        )
    seed = DEFAULT_SEED if seed is None else seed
    suite = _suite(deals, v, seed, max_pairs)
    if len(suite) < max_pairs:
        print(
            f"the deal suite holds {counted(len(suite), 'deal')}: "
            f"at most {counted(len(suite), 'pair')}"
        )
    shown_pairs = min(max_pairs, len(suite))
    try:
        time_control = TimeControl(budget_ms=budget_ms, bank_ms=bank_ms, grace_ms=grace_ms)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--budget-ms/--bank-ms") from exc
    # What each game's launch would refuse, refused before any: the opponent is the user's choice (a
    # usage error), a version that cannot start is broken, as one that fails each of its first games.
    for role in sorted(roles, key=lambda r: r != OPPONENT):
        why = _cannot_start(commands[role], role_names[role])
        if why and role == OPPONENT:
            raise typer.BadParameter(why, param_hint="--opponent")
        if why:
            errors.print(
                f"[red]error:[/] the {role} version cannot start: {escape(why)}", soft_wrap=True
            )
            raise typer.Exit(BROKEN_EXIT)
    print(
        f"{v.name}: {new_name} (new) against {old_name} (old)"
        + (f", opponents {opp_name}" if OPPONENT in roles else "")
        + f"; H0 {model.value} Elo {elo0:g}, H1 {elo1:g}, alpha {alpha:g}, beta {beta:g}; "
        + ("" if games is not None else "at most ")
        + counted(shown_pairs, "pair")
        + f" on {'deals of ' + suite.source if suite.source else 'the deal suite'}",
        flush=True,
    )

    options = tuple(sorted(parse_options(option or []).items()))
    logs_folder(logs)
    sandbox_probe(sandbox.value)
    led = open_ledger(ledger, must_exist=False) if ledger is not None else None
    spec = AbTestSpec(
        name=(test_name or f"sprt {new_name} vs {old_name}").strip(),
        variant=v.name,
        options=options,
        players=tuple((r, role_names[r], commands[r]) for r in roles),
        sprt=test,
        deals=_deals_identity(deals, suite, seed),
        time_control=time_control,
        matches_per_process=matches_per_process,
        concurrency=concurrency,
        source=str(deals or ""),
    )

    latest: list[AbTestState] = []  # the test so far, for a summary when it is interrupted
    players: list[RefereePairs] = []  # ... and the games it played
    began = time.monotonic()

    def closing(state: AbTestState) -> None:
        played = players[0].played if players else 0
        print(closing_line(state, role_names, played, time.monotonic() - began))

    def on_pair(pair: PairReport, state: AbTestState) -> None:
        if not latest:
            print(PAIR_SCORE, flush=True)
        latest[:] = [state]
        print(progress_line(pair, state), flush=True)
        for line in failure_lines(pair, role_names):
            print(line, flush=True)

    async def main() -> AbTestState:
        stop_on_sigterm()
        server, _, manager = await create_server(
            "127.0.0.1:0",
            logs_dir=logs,
            options=ManagerOptions(
                idle_per_kind=concurrency + 1,
                # Never shown to a sandboxed bot: the ledger holds the deals' secret, the suite
                # the deals.
                hidden=tuple(Path(p) for p in (ledger, deals) if p is not None),
            ),
        )
        watch = StallWatch(threshold=max(time_control.grace_ms / 1000, 0.05))
        recorder = AbTestLedger(led, spec, v) if led is not None else None
        background: list[asyncio.Task[None]] = []
        try:
            deal_key = key if key is not None else secrets.token_bytes(32)
            played: tuple[PairReport, ...] = ()
            player = RefereePairs(
                manager=manager,
                variant=v,
                options=options,
                deals=suite,
                commands={r: commands[r] for r in roles},
                names={r: role_names[r] for r in roles},
                time_control=time_control,
                policies=Policies(),
                limits=Limits(sandbox=sandbox.value),
                matches_per_process=matches_per_process,
                concurrency=concurrency,
                watch=watch,
            )
            players.append(player)
            if recorder is not None:
                resumed = await recorder.open(key)
                deal_key, played = resumed.deal_key, resumed.pairs
                player.recorded, player.recorder = resumed.partial, recorder
                if resumed.resumed:
                    if key is not None and key != deal_key:
                        print(
                            "--deal-secret ignored: a resumed test keeps the secret it began with"
                        )
                    print(
                        f"resuming test {spec.name!r} of {ledger}: "
                        f"{counted(len(played), 'pair')} recorded"
                        + (
                            f", {len(resumed.partial)} game of a pair cut in half"
                            if len(resumed.partial) == 1
                            else f", {len(resumed.partial)} games of pairs cut in half"
                            if resumed.partial
                            else ""
                        ),
                        flush=True,
                    )
                else:
                    print(f"recording test {spec.name!r} in {ledger}", flush=True)
                background.append(asyncio.create_task(_renew(recorder)))
            player.deal_key = deal_key
            if not deal_key:
                print("deals: from the public seeds alone (a test recorded before secret deals)")
            watch.start()
            state = await run_ab_test(
                player,
                test,
                max_pairs,
                # Enough pairs under way to keep every game slot busy.
                concurrency=max(1, math.ceil(concurrency / 2)),
                sequential=games is None,
                played=played,
                on_pair=on_pair,
                deals=len(suite),
            )
            # Decided, or every game of a fixed test (or every deal of the suite) played: none is
            # left to play. (A sequential test stopped at --max-games may be run on with more.)
            fixed = games is not None and state.stopped == LIMIT_STOP
            over = fixed or state.stopped == NO_DEALS_STOP
            if recorder is not None and (state.decision is not SprtDecision.CONTINUE or over):
                await recorder.finish()
            return state
        finally:
            for task in background:
                task.cancel()
            await watch.stop()
            await manager.close()
            await server.stop(None)
            if recorder is not None:
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(5.0):
                        await recorder.close()

    try:
        state = asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted: the bots are stopped")
        if latest:
            latest[0].stopped = "interrupted"
            summary(latest[0], v, role_names, roles)
            closing(latest[0])
        raise typer.Exit(130) from None
    except TournamentChanged as exc:
        errors.print(
            f"[red]error:[/] {escape(str(ledger))}: the test {escape(repr(spec.name))} was started "
            f"with other settings ({escape(', '.join(exc.fields))} changed): run it as it was to "
            "resume it, or give the changed test a new name with --test NAME",
            soft_wrap=True,
        )
        raise typer.Exit(2) from exc
    except LedgerError as exc:
        errors.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from exc
    except OSError as exc:
        errors.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from exc
    finally:
        if led is not None:
            led.close()
    summary(state, v, role_names, roles)
    closing(state)
    if state.stopped == "arena errors" or state.report is None:
        raise typer.Exit(1)
    # A broken version (its command fails every game) is no test result a script may read as one.
    raise typer.Exit(BROKEN_EXIT if BROKEN_STOP in state.stopped else 0)


async def _renew(recorder: AbTestLedger) -> None:
    while True:
        await asyncio.sleep(recorder.renew_seconds)
        await recorder.renew()


def _cannot_start(command: str, name: str) -> str:
    """Why the launcher would refuse to start this command when a game begins (its own checks, the
    same message), or "" when it would start it."""
    from arena.bots.launcher import LaunchError, bot_environment, check_startable, split_command

    try:
        argv = split_command(command, name)
        check_startable(name, argv, bot_environment().get("PATH"))
    except LaunchError as exc:
        return str(exc)
    return ""


def _deal_secret(text: str | None) -> bytes | None:
    if text is None:
        return None
    try:
        return deal_key(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--deal-secret") from exc


def _deals_identity(path: Path | None, suite: DealSuite, seed: int) -> tuple[tuple[str, str], ...]:
    """What identifies the deals of a test in the ledger: the seed, or the suite's file and content."""
    if path is None:
        return (("seed", str(seed)),)
    return (("file", str(path)), ("sha256", hashlib.sha256(suite.text().encode()).hexdigest()))


def _report_counts(test: Sprt, pentanomial: str | None, trinomial: str | None) -> None:
    hint = "--pentanomial" if pentanomial is not None else "--trinomial"
    try:
        if pentanomial is not None:
            counts: Pentanomial | Trinomial = Pentanomial.parse(pentanomial)
        else:
            assert trinomial is not None
            counts = Trinomial.parse(trinomial)
        if counts.total == 0:
            raise StatsError("every count is 0: there is nothing to report on")
    except StatsError as exc:
        raise typer.BadParameter(str(exc), param_hint=hint) from exc
    for line in report_lines(test.report(counts)):
        print(line)


def _build_variant(name: str, options: list[str]) -> Variant:
    try:
        variant_options(name)
    except VariantError as exc:
        raise typer.BadParameter(str(exc), param_hint="--variant") from exc
    try:
        return variant(name, **parse_options(options))
    except (VariantError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--option") from exc


def _suite(deals: Path | None, v: Variant, seed: int, max_pairs: int) -> DealSuite:
    if deals is None:
        # More deals than pairs: a pair the arena could not play leaves its deal unused.
        return seeded_deals(seed, 2 * max_pairs + 10, v.name)
    try:
        return load_deals(deals, v.name)
    except DealFileError as exc:
        errors.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from exc
