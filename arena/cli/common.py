"""Helpers shared by the command modules (the options they share: :mod:`arena.cli.options`).

Text that comes from a bot or a tournament file (names, versions, failure details, replies) is data:
it reaches a table through :func:`plain`, which shows it as it is, never as rich markup.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from arena.ledger import BoardRow, Ledger

# The command modules import at their top only what their options need (typer reads the signatures
# to build the command line, `arena --help` included); the rest (the ledger, the referee's server,
# tournaments, pydantic, grpc, ...) inside the commands, so that each command pays for its own.


MAX_CELL = 200  # characters of bot-provided text shown in a table cell

# Wide enough for every table's columns when the output goes to a file or a pipe (rich would cut
# cells at 80 columns there).
PIPE_WIDTH = 160


class _Console(Console):
    """A console that takes its width when it prints, not when it is made: ``COLUMNS`` as it is then,
    else the terminal's, else :data:`PIPE_WIDTH` when the output is not a terminal."""

    @property
    def size(self) -> ConsoleDimensions:
        height = super().size.height
        columns = os.environ.get("COLUMNS", "")
        if columns.isdigit() and int(columns) > 0:
            return ConsoleDimensions(int(columns), height)
        if not self.is_terminal:
            return ConsoleDimensions(PIPE_WIDTH, height)
        self._width = None  # the terminal's own width (not COLUMNS as it was at import)
        return super().size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


console = _Console()
errors = _Console(stderr=True)


MIN_DEAL_KEY_BYTES = 16


def deal_key(text: str) -> bytes:
    """A deal secret given on the command line: hexadecimal, at least 16 bytes (raises ValueError
    saying what is wrong)."""
    # Said in the secret's own terms, not bytes.fromhex's ("non-hexadecimal number found in
    # fromhex() arg at position 3", of the hex digits 'abc').
    bad = next((c for c in text if c not in "0123456789abcdefABCDEF"), None)
    if bad is not None:
        raise ValueError(f"expected hexadecimal digits (0-9, a-f), got {bad!r}")
    if len(text) % 2:
        raise ValueError(f"expected an even number of hex digits (two a byte), got {len(text)}")
    key = bytes.fromhex(text)
    if len(key) < MIN_DEAL_KEY_BYTES:
        raise ValueError(
            f"a deal secret is at least {MIN_DEAL_KEY_BYTES} bytes ({2 * MIN_DEAL_KEY_BYTES} hex digits)"
        )
    return key


# Control characters but the line break and the tab, shown as U+FFFD: an escape sequence in a name
# stored by an older arena (files now refuse them) must not act on the terminal.
_CONTROLS = {c: "\ufffd" for c in (*range(0, 9), *range(11, 32), *range(127, 160))}


def literal(text: str) -> str:
    """``text`` with no control characters but line breaks and tabs: another's text (a bot's
    output, a build's log) printed as it is, escape sequences shown rather than acted on."""
    return text.translate(_CONTROLS)


def plain(value: object, limit: int = MAX_CELL) -> Text:
    """A table cell showing ``value`` literally (no markup, no control characters), cut at
    ``limit`` characters."""
    text = literal(str(value))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return Text(text)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` (the message shown literally) and return the exit to raise."""
    errors.print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
    return typer.Exit(code)


def cluster_address(given: str | None, from_file: str) -> str:
    """The cluster a run plays on: ``--cluster`` if given, else the file's; "" for this machine
    (``none``). An empty ``--cluster`` is a mistake (a variable left unset), not this machine."""
    if given is None:
        address = from_file
    elif not given.strip():
        raise fail("--cluster: give auto, HOST:PORT, ray://HOST:PORT, local or none; got nothing")
    else:
        address = given.strip()
    return "" if address == "none" else address


def logs_folder(logs: Path | None) -> None:
    """Make the folder of ``--logs`` before anything starts: a file of that name, or a place the
    arena may not write in, is the option's error (exit 2), not a failure once bots are running."""
    if logs is None:
        return
    try:
        logs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise fail(f"--logs: cannot use {logs} as the folder of the logs: {exc}") from exc


FIRST_RUN = "run a tournament first: arena run FILE"
FIRST_COMPETITION = "start the competition first: arena compete serve FILE"


def open_ledger(path: Path, must_exist: bool = True, first: str = FIRST_RUN) -> Ledger:
    """The ledger at ``path``; one that must exist and does not is refused, saying what makes it
    (``first``: a tournament's run, or for a competition's commands its server)."""
    from arena.ledger import Ledger, LedgerError

    if must_exist and str(path) != ":memory:" and not path.exists():
        raise fail(f"no ledger at {path} ({first})")
    if must_exist and str(path) != ":memory:" and path.is_file() and path.stat().st_size == 0:
        # SQLite would take it for a database of no tables, and the ledger would be made in it.
        raise fail(f"{path} is an empty file, not a ledger ({first})")
    try:
        return Ledger(path)
    except LedgerError as exc:
        raise fail(str(exc)) from exc


def board_table(title: str, rows: list[BoardRow]) -> Table:
    """A leaderboard by mu - 3 sigma, with each entrant's version."""
    board = Table(title=escape(title))
    board.add_column("#", justify="right")
    board.add_column("entrant")
    board.add_column("version")
    for col in ("mu - 3 sigma", "mu", "sigma", "games"):
        board.add_column(col, justify="right")
    for i, row in enumerate(rows, start=1):
        board.add_row(
            str(i),
            plain(row.entrant),
            plain(row.version),
            f"{row.exposed:.2f}",
            f"{row.mu:.2f}",
            f"{row.sigma:.2f}",
            str(row.games),
        )
    return board


def print_board(led: Ledger, variant: str | None = None, *, tournament: str | None = None) -> None:
    """One board: a tournament's own, or the pooled board of a variant."""
    from arena.ledger import LedgerError

    try:
        if tournament is not None:
            rows = led.leaderboard(tournament=tournament)
            title = f"Leaderboard: {tournament}"
        else:
            rows = led.leaderboard(variant)
            title = f"Leaderboard: {variant} (every tournament)"
    except LedgerError as exc:
        raise fail(str(exc)) from exc
    console.print(board_table(title, rows))
