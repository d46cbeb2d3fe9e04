"""Read-only access to one ledger file for the web: a connection per thread, each page's reads in one
short transaction, and the ledger's schema checked once when it is opened.

The ledger is opened read-only (``mode=ro``): a running tournament or competition, the ledger's only
writer, is never made to wait for longer than a query takes (its busy timeout is ten seconds; our
queries take milliseconds).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from arena.ledger.schema import MIGRATIONS

BUSY_TIMEOUT = 5.0  # seconds a read waits while a writer commits (commits take milliseconds)


class LedgerUnavailable(Exception):
    """The ledger cannot be read (missing, not a ledger, busy for too long, of another schema)."""


class Reader:
    """Read-only access to one ledger file, from any thread (a connection per thread)."""

    def __init__(self, path: str | Path, timeout: float = BUSY_TIMEOUT) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._local = threading.local()
        if not self.path.is_file():
            raise LedgerUnavailable(
                f"no ledger at {self.path} (run a tournament first: arena run FILE)"
            )
        with self.read() as conn:
            check_schema(conn, self.path)

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
            try:
                conn = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None)
            except sqlite3.Error as exc:
                raise LedgerUnavailable(f"{self.path}: cannot open the ledger: {exc}") from exc
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
        return conn

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: a consistent view of the ledger, its shared lock held only while the
        caller queries."""
        conn = self._connection()
        try:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if "locked" in text or "busy" in text:
                raise LedgerUnavailable(
                    f"the ledger is busy (a writer held it for more than {self.timeout:g} s); try again"
                ) from exc
            _left_mid_write(exc, self.path)
            raise LedgerUnavailable(f"{self.path}: cannot read the ledger: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise LedgerUnavailable(f"{self.path}: cannot read the ledger: {exc}") from exc


def _left_mid_write(exc: sqlite3.Error, path: Path) -> None:
    """A writer killed in the middle of a write leaves a hot journal: the ledger's old pages, to be
    put back before anyone reads it, which a read-only connection may not do."""
    if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_READONLY_ROLLBACK:
        raise LedgerUnavailable(
            f"{path}: a writer stopped in the middle of a write and left its journal "
            f"({path.name}-journal), which only a writer can roll back: open the ledger once for "
            f"writing (arena tournaments --ledger {path}) and serve it again"
        ) from exc


def check_schema(conn: sqlite3.Connection, path: Path) -> None:
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        _left_mid_write(exc, path)
        raise LedgerUnavailable(f"{path}: not a SQLite ledger: {exc}") from exc
    if "_migrations" not in tables:
        raise LedgerUnavailable(f"{path}: not an arena ledger (no _migrations table)")
    version = conn.execute("SELECT coalesce(max(version), 0) FROM _migrations").fetchone()[0]
    if version < len(MIGRATIONS):
        raise LedgerUnavailable(
            f"{path}: the ledger has schema version {version} and this arena reads version "
            f"{len(MIGRATIONS)}; upgrade it once with a command that opens it for writing "
            f"(arena tournaments --ledger {path})"
        )
    if version > len(MIGRATIONS):
        raise LedgerUnavailable(
            f"{path}: schema version {version} is newer than this arena ({len(MIGRATIONS)}); "
            "upgrade the arena"
        )
