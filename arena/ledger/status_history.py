"""A competition's submissions' status history: every change of a version's status (building,
checking, built, active, suspended with its reason, reinstated, replaced, withdrawn, failed) with its
time and reason, written in the transaction that makes the change (:mod:`.competitions`).

Its author reads all of it. The public (a competition's entrant page) reads it without the reasons
that may quote a bot's output or the organiser's words to the author: a failure's, a suspension's;
those of the arena's own making (replaced by version 2, withdrawn by its author) are shown.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from arena.ledger import webhooks

# Statuses whose reasons the arena writes itself, quoting nothing of the bot's: shown to anyone.
PUBLIC_REASONS = frozenset({"building", "checking", "active", "replaced", "withdrawn"})


@dataclass(frozen=True, slots=True)
class StatusChange:
    status: str
    reason: str
    at: str


def note(conn: sqlite3.Connection, submission_id: int, status: str, reason: str, at: str) -> None:
    """Record a change of ``submission_id``'s status (inside the caller's transaction)."""
    conn.execute(
        "INSERT INTO submission_history (submission_id, status, reason, public, at) "
        "VALUES (?, ?, ?, ?, ?)",
        (submission_id, status, reason, int(status in PUBLIC_REASONS), at),
    )
    webhooks.on_status(conn, submission_id, status, reason, at)  # its author's webhook told


def of_submission(conn: sqlite3.Connection, submission_id: int) -> list[StatusChange]:
    """Every change of the submission's status, oldest first, with its reason (for its author)."""
    rows = conn.execute(
        "SELECT status, reason, at FROM submission_history WHERE submission_id = ? ORDER BY id",
        (submission_id,),
    )
    return [StatusChange(*r) for r in rows]


def public(conn: sqlite3.Connection, entrant_id: int) -> list[StatusChange]:
    """The status history of the version that plays as ``entrant_id``, oldest first, for anyone:
    a reason that may quote the bot's output (a failure's, a suspension's) is left out."""
    rows = conn.execute(
        "SELECT h.status, CASE WHEN h.public THEN h.reason ELSE '' END, h.at "
        "FROM submission_history h JOIN submissions s ON s.id = h.submission_id "
        "WHERE s.entrant_id = ? ORDER BY h.id",
        (entrant_id,),
    )
    return [StatusChange(*r) for r in rows]
