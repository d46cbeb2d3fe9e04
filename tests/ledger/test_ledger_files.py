"""Unusable ledger files: a corrupt, locked or read-only ledger gives a clear LedgerError naming the
file, and the file is left untouched.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ledger_helpers import (
    REAL_CONNECT,
    Fixture,
    dump,
    make_spec,
    play_in_order,
    synthetic_record,
)
from typer.testing import CliRunner

from arena.cli.main import app
from arena.ledger import Ledger, LedgerError
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.ledger.schema import MIGRATIONS
from arena.tournament.schedule import full_schedule


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.sqlite"


@pytest.fixture
def led(ledger_path: Path) -> Iterator[Ledger]:
    ledger = Ledger(ledger_path)
    yield ledger
    ledger.close()


# ---------------------------------------------------------------- unusable files


@pytest.fixture
def filled(ledger_path: Path) -> Path:
    led = Ledger(ledger_path)
    play_in_order(led, make_spec(3), [1, 0, 2, 3, 4, 5])
    led.close()
    return ledger_path


def test_garbage_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "garbage.sqlite"
    data = bytes(range(256)) * 64
    path.write_bytes(data)
    with pytest.raises(LedgerError) as info:
        Ledger(path)
    message = str(info.value)
    assert str(path) in message
    assert "not a database" in message
    assert path.read_bytes() == data


def test_a_truncated_ledger_is_refused_untouched(filled: Path) -> None:
    data = filled.read_bytes()[: filled.stat().st_size // 2]
    filled.write_bytes(data)
    with pytest.raises(LedgerError) as info:
        led = Ledger(filled)
        led.leaderboard("two-handed")
    assert str(filled) in str(info.value)
    assert filled.read_bytes() == data


@pytest.mark.parametrize(
    ("table", "what"),
    [("game_seats", "games"), ("games", "records"), ("boards", "ratings")],
)
def test_exporting_a_damaged_ledger_is_refused_untouched(
    filled: Path, table: str, what: str
) -> None:
    """A ledger whose header is sound opens; a damaged table found while exporting (arena export)
    is a LedgerError naming the file, not sqlite3's DatabaseError."""
    conn = REAL_CONNECT(filled)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    conn.close()
    with filled.open("r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(b"\xff" * page_size)
    data = filled.read_bytes()
    led = Ledger(filled)
    with pytest.raises(LedgerError) as info:
        led.export_rows(what)
    led.close()
    assert str(filled) in str(info.value)
    assert "malformed" in str(info.value)
    result = CliRunner().invoke(
        app, ["export", "--what", what, "--format", "json", "--ledger", str(filled)]
    )
    assert result.exit_code == 2, result.exception
    assert "malformed" in result.output
    assert filled.read_bytes() == data


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ledger waits 10 s for a lock; these tests need not."""

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        kwargs["timeout"] = 0.2
        return REAL_CONNECT(*args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)


@pytest.mark.usefixtures("short_busy_timeout")
def test_a_locked_ledger_cannot_be_opened(filled: Path) -> None:
    data = filled.read_bytes()
    holder = REAL_CONNECT(filled, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(LedgerError) as info:
            Ledger(filled)
        assert str(filled) in str(info.value)
        assert "locked by another program" in str(info.value)
        # A good ledger that is busy is not to be taken for a damaged file.
        assert "not a usable" not in str(info.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert filled.read_bytes() == data
    Ledger(filled).close()


@pytest.mark.usefixtures("short_busy_timeout")
def test_a_newer_schema_being_written_is_named_not_locked(filled: Path) -> None:
    """A newer arena writing the ledger holds its write lock: this arena reading it is told the schema
    is newer (what to do: upgrade), not that the ledger is locked, and without waiting for the lock."""
    conn = REAL_CONNECT(filled)
    conn.execute("INSERT INTO _migrations VALUES (?, 'later')", (len(MIGRATIONS) + 1,))
    conn.commit()
    conn.close()
    data = filled.read_bytes()
    holder = REAL_CONNECT(filled, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(LedgerError, match="newer than this arena") as info:
            Ledger(filled)
        assert str(filled) in str(info.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert filled.read_bytes() == data


@pytest.mark.usefixtures("short_busy_timeout")
def test_writing_while_locked(filled: Path) -> None:
    led = Ledger(filled)
    f = Fixture(led, make_spec(3, seed=77, name="Another"))
    data = filled.read_bytes()
    before = dump(filled)
    holder = REAL_CONNECT(filled, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(LedgerError, match="locked") as info:
            f.record(f.games[0])
        assert str(filled) in str(info.value)
        with pytest.raises(LedgerError, match="locked"):
            led.finish_tournament(f.tid)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert filled.read_bytes() == data
    assert dump(filled) == before
    assert f.record(f.games[0]) > 0, "once the lock is gone the game is recorded"


@pytest.mark.usefixtures("short_busy_timeout")
def test_rebuild_while_locked(filled: Path) -> None:
    led = Ledger(filled)
    data = filled.read_bytes()
    holder = REAL_CONNECT(filled, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(LedgerError, match="locked"):
            led.rebuild_ratings()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert filled.read_bytes() == data


@pytest.fixture
def read_only(filled: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The ledger file made read-only. Root writes through file modes, so there the ledger's
    connections are opened the way SQLite opens a file it may not write: read-only."""
    if os.geteuid() == 0:

        def connect(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
            kwargs["uri"] = True
            return REAL_CONNECT(f"file:{database}?mode=ro", *args, **kwargs)

        monkeypatch.setattr(sqlite3, "connect", connect)
        yield filled
    else:
        filled.chmod(0o444)
        try:
            yield filled
        finally:
            filled.chmod(0o644)


def test_a_read_only_ledger_can_be_read(read_only: Path) -> None:
    data = read_only.read_bytes()
    led = Ledger(read_only)
    assert len(led.leaderboard("two-handed")) == 3
    assert len(led.games()) == 6
    led.close()
    assert read_only.read_bytes() == data


@pytest.fixture
def earlier(filled: Path) -> Path:
    """The filled ledger as an arena before the last migration left it (its last migration not yet
    applied)."""
    conn = REAL_CONNECT(filled)
    # What the last migration made (an index of each event's games), undone.
    conn.execute("DROP INDEX games_by_event")
    conn.execute("DELETE FROM _migrations WHERE version = ?", (len(MIGRATIONS),))
    conn.commit()
    conn.close()
    return filled


def test_a_read_only_ledger_of_an_earlier_schema_says_it_needs_upgrading(
    earlier: Path, read_only: Path
) -> None:
    """Reading it needs the one-time upgrade, a write: the error says so, not just that a write
    failed (which a command that only reads, arena leaderboard, gave without saying why)."""
    data = read_only.read_bytes()
    with pytest.raises(LedgerError) as info:
        Ledger(read_only)
    message = str(info.value)
    assert str(read_only) in message
    assert f"schema (version {len(MIGRATIONS) - 1}) must be upgraded" in message
    assert "read-only" in message
    assert read_only.read_bytes() == data


def test_writing_a_read_only_ledger(read_only: Path) -> None:
    data = read_only.read_bytes()
    led = Ledger(read_only)
    spec = make_spec(
        3, seed=1234, name="New"
    )  # a tournament it has not seen: writing it must fail clearly
    with pytest.raises(LedgerError) as info:
        led.tournament(spec)
    assert str(read_only) in str(info.value)
    assert "read" in str(info.value).lower()
    with pytest.raises(LedgerError):
        led.rebuild_ratings()
    led.close()
    assert read_only.read_bytes() == data


def test_recording_into_a_read_only_ledger(read_only: Path) -> None:
    data = read_only.read_bytes()
    led = Ledger(read_only)
    spec = make_spec(3)
    tid, resumed = led.tournament(spec)
    assert resumed
    ids = {n: i + 1 for i, n in enumerate(["e0", "e1", "e2"])}
    game = full_schedule(spec)[0]
    extra = ScheduledGame(
        "r000-p9999-d000-s0", 9999, 0, 9999, 0, 0, 1, (("e0",), ("e1",)), ("e0", "e1")
    )
    with pytest.raises(LedgerError) as info:
        led.record_game(
            tid,
            spec.variant,
            extra,
            ids,
            FinishedGame.from_data(synthetic_record(game, "two-handed")),
        )
    assert str(read_only) in str(info.value)
    led.close()
    assert read_only.read_bytes() == data
