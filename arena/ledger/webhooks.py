"""An author's webhook and the deliveries queued for it (issue 45, notifications).

An author registers one URL per competition (``webhooks``, by author). The secret deliveries are
signed with is never stored: the ledger keeps a random ``nonce``, and the competition's server
derives the secret from it with a key of its own kept beside the ledger, never in it
(:mod:`arena.competition.notifications`): a copy of the ledger (the web reads it) gives no secret.

A change of a submission's status is noted in its history (:mod:`.status_history`), and the same
call queues a delivery for its author's webhook, in the same transaction: a row, nothing more, so
that a change recorded (a suspension by the play loop) never waits for a receiver, and a delivery
queued survives a restart. The server's notifier delivers the rows and retries them with backoff;
an author's queue holds at most ``max_queued`` rows (the oldest are dropped, and counted), and a
receiver that fails ``disable_after`` attempts in a row is disabled (its status says why).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from arena.ledger.errors import guarded as _guarded
from arena.ledger.times import stamp

if TYPE_CHECKING:  # the ledger's schema (arena.ledger.schema, which db imports) is this module's
    from arena.ledger.db import Ledger

SCHEMA = """
CREATE TABLE IF NOT EXISTS webhooks (
    author_id INTEGER PRIMARY KEY REFERENCES authors(id),
    url TEXT NOT NULL,
    nonce TEXT NOT NULL,
    created_at TEXT NOT NULL,
    max_queued INTEGER NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0,
    disabled_at TEXT,
    disabled_reason TEXT NOT NULL DEFAULT '',
    delivered INTEGER NOT NULL DEFAULT 0,
    dropped INTEGER NOT NULL DEFAULT 0,
    abandoned INTEGER NOT NULL DEFAULT 0,
    last_delivered_at TEXT,
    last_error TEXT NOT NULL DEFAULT '',
    digest_at TEXT
);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id INTEGER PRIMARY KEY,
    author_id INTEGER NOT NULL REFERENCES authors(id),
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_at, id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_author ON webhook_deliveries (author_id, id);
"""

# The events a change of status is told as: (status, the note that marks it, or None for any).
# "checking" is noted "built" when a build passed (competitions.set_status, the intake's step).
EVENTS = {
    "built": ("checking", "built"),
    "failed": ("failed", None),
    "active": ("active", None),
    "suspended": ("suspended", None),
    "replaced": ("replaced", None),
}
DIGEST = "digest"
MAX_ERROR = 300  # characters of a delivery's last error kept


@dataclass(frozen=True, slots=True)
class Webhook:
    author_id: int
    url: str
    nonce: str
    created_at: str
    max_queued: int
    failures: int  # attempts failed in a row
    disabled_at: str | None
    disabled_reason: str
    delivered: int
    dropped: int  # deliveries dropped from a full queue
    abandoned: int  # deliveries given up after their last attempt
    last_delivered_at: str | None
    last_error: str
    queued: int


@dataclass(frozen=True, slots=True)
class Delivery:
    id: int
    author_id: int
    kind: str
    payload: dict[str, Any]
    attempts: int
    url: str
    nonce: str


def event_of(status: str, note: str) -> str | None:
    """The event a change to ``status`` noted ``note`` is told as, or None (not told)."""
    for kind, (wanted, marked) in EVENTS.items():
        if status == wanted and (marked is None or note == marked):
            return kind
    return None


def on_status(
    conn: sqlite3.Connection, submission_id: int, status: str, note: str, at: str
) -> None:
    """A change of a submission's status, told to its author's webhook if it has one enabled and
    the change is an event: one row queued (inside the caller's transaction)."""
    kind = event_of(status, note)
    if kind is None:
        return
    row = conn.execute(
        "SELECT s.author_id, t.name, s.bot, s.version, s.reason FROM submissions s "
        "JOIN webhooks w ON w.author_id = s.author_id AND w.disabled_at IS NULL "
        "JOIN tournaments t ON t.id = s.competition_id WHERE s.id = ?",
        (submission_id,),
    ).fetchone()
    if row is None:
        return
    author_id, competition, bot, version, reason = row
    payload = {
        "event": kind,
        "competition": competition,
        "bot": bot,
        "version": version,
        "submission_id": submission_id,
        "status": status,
        # The submission's reason (a failure's, a suspension's: the note may be shorter).
        "reason": reason or note,
        "at": at,
    }
    enqueue(conn, int(author_id), kind, payload, at)


def enqueue(
    conn: sqlite3.Connection, author_id: int, kind: str, payload: dict[str, Any], at: str
) -> None:
    """Queue a delivery for the author's webhook (inside the caller's transaction); the oldest
    beyond its ``max_queued`` are dropped and counted."""
    conn.execute(
        "INSERT INTO webhook_deliveries (author_id, kind, payload, created_at) VALUES (?, ?, ?, ?)",
        (author_id, kind, json.dumps(payload, sort_keys=True), at),
    )
    cap = conn.execute(
        "SELECT max_queued FROM webhooks WHERE author_id = ?", (author_id,)
    ).fetchone()
    if cap is None:
        return
    over = conn.execute(
        "SELECT id FROM webhook_deliveries WHERE author_id = ? ORDER BY id DESC LIMIT -1 OFFSET ?",
        (author_id, int(cap[0])),
    ).fetchall()
    if over:
        conn.executemany("DELETE FROM webhook_deliveries WHERE id = ?", over)
        conn.execute(
            "UPDATE webhooks SET dropped = dropped + ? WHERE author_id = ?", (len(over), author_id)
        )


@dataclass(frozen=True, slots=True)
class Failure:
    """What :meth:`Webhooks.failed` did with a delivery that failed."""

    retry_at: float | None  # when it is tried again (None: given up)
    disabled: bool  # the webhook was disabled by this failure


@dataclass(frozen=True, slots=True)
class FailedGames:
    bot: str
    version: str
    outcome: str
    games: int


class Webhooks:
    """The webhook tables of one ledger (its connection, its lock)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.conn = ledger.conn
        self.path = ledger.path
        self.lock = ledger.lock

    @_guarded
    def set(self, author_id: int, url: str, nonce: str, max_queued: int) -> None:
        """Register (or replace) the author's webhook: enabled, its counts afresh; deliveries
        still queued go to the new URL. When its last digest was looked for is kept: setting it
        again never brings a second digest the same day."""
        with self.ledger.transaction():
            self.conn.execute(
                "INSERT INTO webhooks (author_id, url, nonce, created_at, max_queued) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (author_id) DO UPDATE SET url = excluded.url, "
                "nonce = excluded.nonce, created_at = excluded.created_at, "
                "max_queued = excluded.max_queued, failures = 0, disabled_at = NULL, "
                "disabled_reason = '', delivered = 0, dropped = 0, abandoned = 0, "
                "last_delivered_at = NULL, last_error = ''",
                (author_id, url, nonce, stamp(), max_queued),
            )

    @_guarded
    def get(self, author_id: int) -> Webhook | None:
        row = self.conn.execute(
            "SELECT author_id, url, nonce, created_at, max_queued, failures, disabled_at, "
            "disabled_reason, delivered, dropped, abandoned, last_delivered_at, last_error, "
            "(SELECT count(*) FROM webhook_deliveries d WHERE d.author_id = w.author_id) "
            "FROM webhooks w WHERE author_id = ?",
            (author_id,),
        ).fetchone()
        return Webhook(*row) if row else None

    @_guarded
    def remove(self, author_id: int) -> bool:
        """Remove the author's webhook and its queued deliveries; whether there was one."""
        with self.ledger.transaction():
            gone = self.conn.execute("DELETE FROM webhooks WHERE author_id = ?", (author_id,))
            self.conn.execute("DELETE FROM webhook_deliveries WHERE author_id = ?", (author_id,))
        return gone.rowcount > 0

    @_guarded
    def set_caps(self, competition_id: int, max_queued: int) -> None:
        """The competition file's cap on queued deliveries, for its authors' webhooks (at start)."""
        with self.ledger.transaction():
            self.conn.execute(
                "UPDATE webhooks SET max_queued = ? WHERE author_id IN "
                "(SELECT id FROM authors WHERE competition_id = ?)",
                (max_queued, competition_id),
            )

    @_guarded
    def due(
        self, competition_id: int, now: float, limit: int, skip: tuple[int, ...] = ()
    ) -> list[Delivery]:
        """Up to ``limit`` deliveries due by ``now`` (unix seconds) to enabled webhooks of the
        competition's authors, oldest first, but those in ``skip`` (under way)."""
        if limit <= 0:
            return []
        rows = self.conn.execute(
            "SELECT d.id, d.author_id, d.kind, d.payload, d.attempts, w.url, w.nonce "
            "FROM webhook_deliveries d JOIN webhooks w ON w.author_id = d.author_id "
            "JOIN authors a ON a.id = d.author_id "
            "WHERE d.next_at <= ? AND w.disabled_at IS NULL AND a.competition_id = ? "
            f"AND d.id NOT IN ({', '.join('?' * len(skip))}) ORDER BY d.next_at, d.id LIMIT ?",
            (now, competition_id, *skip, limit),
        )
        return [Delivery(i, a, k, json.loads(p), n, u, s) for i, a, k, p, n, u, s in rows]

    @_guarded
    def delivered(self, delivery: Delivery) -> None:
        with self.ledger.transaction():
            self.conn.execute("DELETE FROM webhook_deliveries WHERE id = ?", (delivery.id,))
            self.conn.execute(
                "UPDATE webhooks SET failures = 0, delivered = delivered + 1, "
                "last_delivered_at = ? WHERE author_id = ? AND nonce = ?",
                (stamp(), delivery.author_id, delivery.nonce),
            )

    @_guarded
    def failed(
        self,
        delivery: Delivery,
        error: str,
        now: float,
        *,
        attempts: int,
        first_retry: float,
        disable_after: int,
    ) -> Failure:
        """A delivery's attempt failed with ``error``: tried again after a backoff (``first_retry``
        seconds, doubled at each attempt, at most an hour) until its ``attempts`` are spent; the
        webhook disabled at its ``disable_after``-th failure in a row."""
        tried = delivery.attempts + 1
        error = error[:MAX_ERROR]
        with self.ledger.transaction():
            hook = self.conn.execute(
                "SELECT failures, disabled_at FROM webhooks WHERE author_id = ? AND nonce = ?",
                (delivery.author_id, delivery.nonce),
            ).fetchone()
            if tried >= attempts:
                self.conn.execute("DELETE FROM webhook_deliveries WHERE id = ?", (delivery.id,))
                retry_at = None
            else:
                retry_at = now + min(first_retry * 2 ** (tried - 1), 3600.0)
                self.conn.execute(
                    "UPDATE webhook_deliveries SET attempts = ?, next_at = ? WHERE id = ?",
                    (tried, retry_at, delivery.id),
                )
            if hook is None:  # removed or replaced meanwhile: its counts are not this one's
                return Failure(retry_at, False)
            failures = int(hook[0]) + 1
            disable = hook[1] is None and failures >= disable_after
            self.conn.execute(
                "UPDATE webhooks SET failures = ?, last_error = ?, abandoned = abandoned + ?, "
                "disabled_at = CASE WHEN ? THEN ? ELSE disabled_at END, "
                "disabled_reason = CASE WHEN ? THEN ? ELSE disabled_reason END "
                "WHERE author_id = ?",
                (failures, error, int(retry_at is None), disable, stamp(), disable,
                 f"disabled after {failures} failed deliveries in a row; the last: {error}; "
                 "set it again to enable it", delivery.author_id),
            )  # fmt: skip
        return Failure(retry_at, disable)

    # ------------------------------------------------------------------ the daily digest

    @_guarded
    def digest_due(self, competition_id: int, now: datetime) -> list[int]:
        """The authors whose enabled webhook has had no digest look for a day."""
        since = stamp(now, ago=timedelta(days=1))
        rows = self.conn.execute(
            "SELECT w.author_id FROM webhooks w JOIN authors a ON a.id = w.author_id "
            "WHERE a.competition_id = ? AND w.disabled_at IS NULL "
            "AND (w.digest_at IS NULL OR w.digest_at <= ?) ORDER BY w.author_id",
            (competition_id, since),
        )
        return [int(r[0]) for r in rows]

    @_guarded
    def failed_games(self, competition_id: int, author_id: int, since: str) -> list[FailedGames]:
        """The games the author's bots caused to fail since ``since`` (an ISO time in UTC), by bot,
        version and kind (outcome)."""
        rows = self.conn.execute(
            "SELECT sub.bot, sub.version, g.outcome, count(*) FROM submissions sub "
            "JOIN game_seats s ON s.entrant_id = sub.entrant_id "
            "JOIN games g ON g.id = s.game_id AND g.tournament_id = sub.competition_id "
            "WHERE sub.competition_id = ? AND sub.author_id = ? AND g.finished_at >= ? "
            "AND g.outcome != 'normal' AND g.culprit = s.seat "
            "GROUP BY sub.bot, sub.version, g.outcome ORDER BY sub.bot, sub.version, g.outcome",
            (competition_id, author_id, since),
        )
        return [FailedGames(*r) for r in rows]

    @_guarded
    def digest(self, competition_id: int, author_id: int, now: datetime) -> dict[str, Any] | None:
        """The author's daily digest: queued when their bots caused any game to fail over the last
        24 hours (its payload returned), else None; either way, the next is looked for a day
        later."""
        at = stamp(now)
        since = stamp(now, ago=timedelta(days=1))
        failed = self.failed_games(competition_id, author_id, since)
        with self.ledger.transaction():
            self.conn.execute(
                "UPDATE webhooks SET digest_at = ? WHERE author_id = ?", (at, author_id)
            )
            if not failed:
                return None
            name = self.conn.execute(
                "SELECT name FROM tournaments WHERE id = ?", (competition_id,)
            ).fetchone()
            bots: dict[tuple[str, str], dict[str, int]] = {}
            for f in failed:
                bots.setdefault((f.bot, f.version), {})[f.outcome] = f.games
            payload: dict[str, Any] = {
                "event": DIGEST,
                "competition": name[0] if name else "",
                "since": since,
                "at": at,
                "bots": [
                    {"bot": b, "version": v, "failed": kinds, "games": sum(kinds.values())}
                    for (b, v), kinds in bots.items()
                ],
            }
            enqueue(self.conn, author_id, DIGEST, payload, at)
        return payload
