"""What the tournament and ledger CLI tests share: a two-game tournament file, the runner, and a
read of the ledger that the tests' own patches of sqlite3 do not reach."""

from __future__ import annotations

import sqlite3
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from arena.cli.main import app

REAL_CONNECT: Callable[..., sqlite3.Connection] = sqlite3.connect

TINY = textwrap.dedent(
    """\
    name = "Tiny"
    variant = "two-handed"
    format = "round-robin"
    deals_per_pairing = 1
    concurrency = 2
    seed = 5

    [time_control]
    budget_ms = 10000
    bank_ms = 120000
    grace_ms = 2000

    [[entrants]]
    name = "rnd"
    command = "{python} -m arena_bot.random_bot"

    [[entrants]]
    name = "fst"
    command = "{python} -m arena_bot.first_bot"
    """
)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def flat(text: str) -> str:
    """Output with its line wrapping undone (rich wraps long lines at the console width)."""
    return " ".join(text.split())


def rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = REAL_CONNECT(path)
    try:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()
