"""The ledger's errors, and SQLite's errors in words a user can act on."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar


class LedgerError(Exception):
    """The ledger file cannot be used (not a database, locked, read-only, full, newer schema); the
    message names the file and the problem. Nothing stored is changed."""


class TournamentChanged(LedgerError):
    """A tournament file changed since the tournament started, in fields that can change its games."""

    def __init__(self, message: str, fields: Sequence[str]) -> None:
        super().__init__(message)
        self.fields = tuple(fields)


class LeaseHeld(LedgerError):
    """Another process is running this tournament."""


_P = ParamSpec("_P")
_R = TypeVar("_R")


LOCKED = "the database is locked by another program"


def explain(exc: sqlite3.Error) -> str:
    """SQLite's error in words a user can act on."""
    text = str(exc)
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        return f"{LOCKED} ({text})"
    if "disk is full" in lowered or "database or disk is full" in lowered:
        return f"disk full ({text})"
    if "readonly" in lowered or "read-only" in lowered:
        return f"the ledger is read-only ({text})"
    return text


def guarded(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """SQLite's errors (locked, read-only, full, corrupt) become LedgerError naming the file.

    The call runs whole under its object's ``lock`` (its ledger's: see :class:`arena.ledger.Ledger`)
    when it has one: one connection has one transaction, and a call made from a second thread while
    the first was inside a transaction either failed ("cannot start a transaction within a
    transaction") or had its statements committed or rolled back with the other's."""

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        ledger = args[0]
        lock = getattr(ledger, "lock", None)
        try:
            if lock is None:
                return method(*args, **kwargs)
            with lock:
                return method(*args, **kwargs)
        except sqlite3.Error as exc:
            path = getattr(ledger, "path", "ledger")
            raise LedgerError(f"{path}: {explain(exc)}") from exc

    return wrapper
