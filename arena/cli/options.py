"""The command-line options several commands take, each defined once as an ``Annotated`` alias (typer
reads the help, bounds and names from it; each command keeps its own default).

Only what the options need is imported here (typer builds every command's options from the signatures,
``arena --help`` included): the bounds, the failure policies, the variants' names, the sandbox modes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.bots import logs as bot_logs
from arena.cli.bots import SANDBOX_HELP, SandboxMode
from arena.common.bounds import MAX_MB, MAX_MS
from arena.game import VARIANT_NAMES
from arena.referee import FailurePolicy

# ---------------------------------------------------------------- the ledger

DEFAULT_LEDGER = "arena.sqlite"

LedgerOption = Annotated[
    Path,
    typer.Option(
        "--ledger",
        "-l",
        help="The SQLite ledger file (default: $ARENA_LEDGER or ./arena.sqlite).",
        envvar="ARENA_LEDGER",
    ),
]

# ---------------------------------------------------------------- a match's game and its bots

VariantOption = Annotated[
    str, typer.Option("--variant", "-v", help=f"One of: {', '.join(VARIANT_NAMES)}.")
]
VariantOptionsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-o",
        help="A variant option NAME=VALUE; repeat for several.",
        show_default=False,
    ),
]
SandboxOption = Annotated[SandboxMode, typer.Option(help=SANDBOX_HELP)]
BotLogsOption = Annotated[
    Path | None,
    typer.Option(help="Write each bot's output to a log file in this folder.", show_default=False),
]

# The time control and failure policies of a match, as `arena match`, `arena start` and `arena sprt`
# take them (each command keeps its own defaults).
# Each at most MAX_MS: what the bot protocol can tell a bot.
BudgetOption = Annotated[
    int, typer.Option(min=0, max=MAX_MS, help="Time for each decision, in ms.")
]
BankOption = Annotated[
    int,
    typer.Option(
        min=0, max=MAX_MS, help="Time bank of each seat for a game, used past the budget."
    ),
]
GraceOption = Annotated[
    int,
    typer.Option(min=0, max=MAX_MS, help="Allowance for transport per decision, never charged."),
]
OnFailureOption = Annotated[
    FailurePolicy,
    typer.Option(
        help="On a timeout, illegal action, crash or protocol error: forfeit the game, or play "
        "a random legal action for the seat and count a strike."
    ),
]
MaxStrikesOption = Annotated[
    int,
    typer.Option(min=0, help="With random-action: forfeit at this many strikes (0: never)."),
]

# ---------------------------------------------------------------- servers that run for good

# The bound on --logs of a server that runs for good (arena serve, arena compete serve).
DEFAULT_LOGS_MB = bot_logs.DEFAULT_MB
LogsMaxOption = Annotated[
    int,
    typer.Option(
        "--logs-max-mb",
        min=0,
        max=MAX_MB,
        help="With --logs: remove the oldest logs once they take more than this (MiB; 0: keep "
        "them all).",
    ),
]

# ---------------------------------------------------------------- a running referee (arena serve)

RefereeOption = Annotated[
    str,
    typer.Option(
        "--server",
        "-s",
        help="The referee's admin address (arena serve --admin-address).",
        envvar="ARENA_SERVER",
    ),
]
AdminTokenOption = Annotated[
    str | None,
    typer.Option(
        "--admin-token",
        envvar="ARENA_ADMIN_TOKEN",
        help="The referee's admin token (default: the one a local arena serve wrote for this "
        "address).",
        show_default=False,
    ),
]

# ---------------------------------------------------------------- a standing competition

# Where an author's commands find the competition by default: a competition file's default
# [server] submissions address.
DEFAULT_COMPETITION_SERVER = "127.0.0.1:50061"
SubmissionServerOption = Annotated[
    str,
    typer.Option(
        "--server",
        "-s",
        envvar="ARENA_COMPETITION",
        help="The competition's submission address (printed by arena compete serve).",
    ),
]
AuthorTokenOption = Annotated[
    str,
    typer.Option(
        "--token",
        envvar="ARENA_AUTHOR_TOKEN",
        help="Your author token (from the organiser's arena compete author add).",
        show_default=False,
    ),
]
CompetitionOption = Annotated[
    str | None,
    typer.Option(
        "--competition",
        "-c",
        help="The competition's name in the ledger (default: the only one there).",
        show_default=False,
    ),
]
