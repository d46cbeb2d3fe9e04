"""The ledger: one SQLite file, the single source of truth for entrants, tournaments, games, their
records and the ratings. See :mod:`arena.ledger.schema` for the tables.

It owns the row types it stores (:mod:`arena.ledger.rows`) and may use only the ratings and
:mod:`arena.common`: never the rules, the referee, the wire's protobuf objects or any room above.
"""

from arena.ledger.db import Ledger, TournamentEntry
from arena.ledger.errors import LeaseHeld, LedgerError, TournamentChanged
from arena.ledger.queries import BoardInfo, BoardRow, TournamentInfo

__all__ = [
    "BoardInfo",
    "BoardRow",
    "LeaseHeld",
    "Ledger",
    "LedgerError",
    "TournamentChanged",
    "TournamentEntry",
    "TournamentInfo",
]
