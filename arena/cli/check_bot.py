"""``arena check-bot CMD``: a conformance run that reports every protocol mistake a bot makes."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated

import typer

from arena.cli.bots import SandboxMode, sandbox_probe, stop_on_sigterm
from arena.cli.options import SandboxOption
from arena.game import VARIANT_NAMES, VariantError, variant

if TYPE_CHECKING:
    from arena.play.conformance import Report


def check_bot(
    command: Annotated[
        str,
        typer.Argument(
            help="The bot's command line, quoted as one argument (e.g. '{python} -m "
            "arena_bot.random_bot'; {python} stands for the interpreter running the arena). It "
            "finds the referee's address and its token in ARENA_ADDRESS and ARENA_TOKEN ({address} "
            "in the command is replaced too).",
            show_default=False,
        ),
    ],
    variant_name: Annotated[
        str,
        typer.Option(
            "--variant",
            "-v",
            help=f"One of: {', '.join(VARIANT_NAMES)}. two-handed also plays a Polish and a "
            "Rubicon game.",
        ),
    ] = "two-handed",
    budget_ms: Annotated[
        int,
        typer.Option(
            min=1,
            help="Time for each decision in ms; there is no bank, so a slower answer is a timeout.",
        ),
    ] = 2000,
    show: Annotated[int, typer.Option(min=0, help="Mistakes spelt out per kind.")] = 10,
    sandbox: SandboxOption = SandboxMode.auto,
) -> None:
    """Check that a bot follows the protocol, and report every mistake it makes.

    The bot plays a scripted session against first-legal opponents, with deals arranged for the
    tricky moments: a declaring turn with several declarations, the seven of trumps exchange,
    declining with done, the last tricks where it must follow suit and win, carte blanche in Rubicon.
    Reported: illegal or unreadable actions (with the legal list), timeouts, protocol errors, crashes
    and disconnects (with the bot's exit code and last output; a bot that dies before it connects is
    reported at once), Hello problems. A failure never ends the session (a random action is played for
    the bot), so that every mistake is found. Exit code 0 when there are none, 1 otherwise.
    """
    from arena.bots.launcher import LaunchError, check_command
    from arena.bots.limits import Limits
    from arena.play.conformance import check_bot as run_check

    try:
        variant(variant_name)
    except VariantError as exc:
        raise typer.BadParameter(str(exc), param_hint="--variant") from exc
    try:
        check_command(command)
    except LaunchError as exc:
        raise typer.BadParameter(str(exc), param_hint="COMMAND") from exc
    sandbox_probe(sandbox.value)
    typer.echo(f"checking {command!r} ({variant_name}, {budget_ms} ms per decision)")
    limits = Limits(sandbox=sandbox.value)

    async def run() -> Report:
        stop_on_sigterm()
        return await run_check(
            command, variant_name, budget_ms, on_progress=typer.echo, limits=limits
        )

    try:
        report = asyncio.run(run())
    except (KeyboardInterrupt, asyncio.CancelledError):
        typer.echo("interrupted", err=True)
        raise typer.Exit(130) from None
    for line in report.lines(per_kind=show):
        typer.echo(line)
    raise typer.Exit(0 if report.ok else 1)
