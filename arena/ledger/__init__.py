"""The ledger: one SQLite file, the single source of truth for entrants, tournaments, games, their
records and the ratings. See :mod:`arena.ledger.schema` for the tables."""

from arena.ledger.db import Ledger, LedgerError

__all__ = ["Ledger", "LedgerError"]
