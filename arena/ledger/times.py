"""How the ledger writes a moment: UTC, ISO 8601, to the second (``2026-12-06T23:45:41+00:00``), so
that times compare as text in SQL. Every writer of a time, and every reader that compares one with a
cut-off, takes it from here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def stamp(moment: datetime | None = None, ago: timedelta = timedelta(0)) -> str:
    """``moment`` (now when None) less ``ago``, as the ledger writes times."""
    return ((moment or datetime.now(UTC)) - ago).astimezone(UTC).isoformat(timespec="seconds")
