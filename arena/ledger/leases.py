"""Leases: one tournament is run by one process at a time.

A run takes its tournament's lease in a write transaction (atomic: of two racing runs exactly one gets
it), renews it while it runs and releases it when it ends. A lease whose holder is gone is taken over:
on the same host, when the process no longer exists (or its pid now belongs to a process started at
another time); from another host, when it has not been renewed for ``STALE_SECONDS``.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from arena.ledger.times import stamp

STALE_SECONDS = 120.0  # a lease not renewed for this long is free (its holder's host is elsewhere)
RENEW_SECONDS = 20.0  # how often a running process renews its lease


@dataclass(frozen=True, slots=True)
class Holder:
    host: str
    pid: int
    pid_started: str  # the process's start time (Linux /proc), telling a reused pid apart
    taken_at: str
    renewed_at: float

    def describe(self) -> str:
        return f"process {self.pid} on {self.host} (since {self.taken_at})"


def me() -> Holder:
    return Holder(
        socket.gethostname(),
        os.getpid(),
        _started(os.getpid()),
        stamp(),
        time.time(),
    )


def _started(pid: int) -> str:
    """A process's start time in clock ticks since boot, or "" where /proc cannot tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _alive(holder: Holder) -> bool:
    """Whether the holder still runs (same host only)."""
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, another user's
    started = _started(holder.pid)
    return not (started and holder.pid_started and started != holder.pid_started)


def holder_of(conn: sqlite3.Connection, tournament_id: int) -> Holder | None:
    row = conn.execute(
        "SELECT host, pid, pid_started, taken_at, renewed_at FROM leases WHERE tournament_id = ?",
        (tournament_id,),
    ).fetchone()
    return Holder(row[0], int(row[1]), row[2], row[3], float(row[4])) if row else None


def take(conn: sqlite3.Connection, tournament_id: int) -> Holder | None:
    """Inside a write transaction: take the lease and return None, or return who holds it."""
    mine = me()
    held = holder_of(conn, tournament_id)
    if held is not None and not _free(held, mine):
        return held
    conn.execute(
        "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?, ?)",
        (tournament_id, mine.host, mine.pid, mine.pid_started, mine.taken_at, mine.renewed_at),
    )
    return None


def _free(held: Holder, mine: Holder) -> bool:
    if held.host == mine.host:
        if held.pid == mine.pid and held.pid_started == mine.pid_started:
            return True  # this process's own (taken again)
        return not _alive(held)
    return time.time() - held.renewed_at > STALE_SECONDS


def renew(conn: sqlite3.Connection, tournament_id: int) -> None:
    mine = me()
    conn.execute(
        "UPDATE leases SET renewed_at = ? WHERE tournament_id = ? AND host = ? AND pid = ?",
        (time.time(), tournament_id, mine.host, mine.pid),
    )


def release(conn: sqlite3.Connection, tournament_id: int) -> None:
    mine = me()
    conn.execute(
        "DELETE FROM leases WHERE tournament_id = ? AND host = ? AND pid = ?",
        (tournament_id, mine.host, mine.pid),
    )
