"""Options and helpers shared by the command modules."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from arena.ledger import Ledger, LedgerError

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

console = Console()
errors = Console(stderr=True)


def open_ledger(path: Path, must_exist: bool = True) -> Ledger:
    if must_exist and str(path) != ":memory:" and not path.exists():
        errors.print(
            f"[red]error:[/] no ledger at {escape(str(path))} (run a tournament first: arena run FILE)"
        )
        raise typer.Exit(2)
    try:
        return Ledger(path)
    except LedgerError as exc:
        errors.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc


def print_board(led: Ledger, variant: str) -> None:
    """The leaderboard of one variant: every entrant of the ledger, by mu - 3 sigma."""
    board = Table(title=f"Leaderboard: {variant}")
    board.add_column("#", justify="right")
    board.add_column("entrant")
    for col in ("mu - 3 sigma", "mu", "sigma", "games"):
        board.add_column(col, justify="right")
    for i, row in enumerate(led.leaderboard(variant), start=1):
        board.add_row(
            str(i),
            row.entrant,
            f"{row.exposed:.2f}",
            f"{row.mu:.2f}",
            f"{row.sigma:.2f}",
            str(row.games),
        )
    console.print(board)
