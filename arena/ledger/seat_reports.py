"""Per game and seat of a competition, what its author may read of their bot beside the record: the
tail of what the bot wrote during the game, its time per decision and its bank left at the end
(table ``seat_reports``, written as each game is recorded and removed with it). The output is kept
for the competition's ``output_days`` after its game (:func:`prune_outputs`: emptied, the times kept),
so that a million games do not hold up to 64 KiB per seat each for good.

An entrant's time use (:func:`time_use`) is read over its last ``TIME_WINDOW`` games: a bounded read
however long it has played (about 10,000 decision times for a two-handed bot).
"""

from __future__ import annotations

import math
import sqlite3
import statistics
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from arena.ledger.rows import FinishedGame

TIME_WINDOW = 100  # an entrant's last games its time use is computed over
# What a removed output reads as (its row holds an empty blob, never a zlib stream: an output that was
# empty to begin with, output_kib 0 or a silent bot, stays a compressed empty text and reads as "").
REMOVED = "[removed: the competition keeps a game's bot output for its output_days after the game]"


@dataclass(frozen=True, slots=True)
class SeatReport:
    seat: int
    member: int
    entrant_id: int
    output: bytes  # the tail kept of what it wrote during the game
    output_bytes: int  # how much it wrote in all
    times_ms: tuple[int, ...]  # its time per decision, in order
    bank_left_ms: int | None  # its bank after its last decision (None: it made none)


@dataclass(frozen=True, slots=True)
class SeatOutput:
    seat: int
    member: int
    entrant_id: int
    bot: str
    version: str
    output: str
    output_bytes: int


@dataclass(frozen=True, slots=True)
class TimeUse:
    games: int = 0  # the games it is computed over
    decisions: int = 0
    median_ms: float = 0.0
    p99_ms: float = 0.0
    bank_left_ms: float = 0.0  # the median of the bank left at a game's end
    failures: dict[str, int] = field(default_factory=dict)  # games it caused to fail, by outcome


def from_game(
    game: FinishedGame, seats: list[list[int]], outputs: Iterable[tuple[int, int, bytes, int]]
) -> list[SeatReport]:
    """The reports of a finished game (``seats``: the entrant of each seat's members; ``outputs``:
    (seat, member, tail, bytes written) of each bot process)."""
    times: dict[tuple[int, int], list[int]] = {}
    bank: dict[tuple[int, int], int] = {}
    for d in game.times:
        key = (d.seat, d.member)
        times.setdefault(key, []).append(round(d.elapsed_ms))
        bank[key] = round(d.bank_ms)
    written = {(seat, member): (tail, n) for seat, member, tail, n in outputs}
    out = []
    for seat, members in enumerate(seats):
        for member, entrant in enumerate(members):
            tail, n = written.get((seat, member), (b"", 0))
            out.append(
                SeatReport(
                    seat, member, entrant, tail, n, tuple(times.get((seat, member), ())),
                    bank.get((seat, member)),
                )
            )  # fmt: skip
    return out


def write(conn: sqlite3.Connection, game_id: int, reports: Iterable[SeatReport]) -> None:
    """Store a game's seat reports (inside the caller's transaction; a game's reports are written
    once)."""
    conn.executemany(
        "INSERT OR IGNORE INTO seat_reports (game_id, seat, member, entrant_id, output, "
        "output_bytes, times, bank_left_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (game_id, r.seat, r.member, r.entrant_id, zlib.compress(r.output), r.output_bytes,
             struct.pack(f"<{len(r.times_ms)}I", *(max(0, t) for t in r.times_ms)),
             r.bank_left_ms)
            for r in reports
        ],
    )  # fmt: skip


def outputs(conn: sqlite3.Connection, game_id: int) -> list[SeatOutput]:
    """What each seat's bot wrote during the game (decoded, undecodable bytes replaced)."""
    rows = conn.execute(
        "SELECT r.seat, r.member, r.entrant_id, e.name, e.version, r.output, r.output_bytes "
        "FROM seat_reports r JOIN entrants e ON e.id = r.entrant_id WHERE r.game_id = ? "
        "ORDER BY r.seat, r.member",
        (game_id,),
    )
    return [
        SeatOutput(
            seat, member, entrant, bot, version,
            tail_text(blob), written,
        )
        for seat, member, entrant, bot, version, blob, written in rows
    ]  # fmt: skip


def tail_text(blob: bytes) -> str:
    """A stored output as text: decompressed and decoded (undecodable bytes replaced), or
    :data:`REMOVED`."""
    if not blob:
        return REMOVED
    return zlib.decompress(blob).decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class PruneStep:
    removed: int  # outputs emptied
    last: int  # the last game examined (the next step starts after it)
    caught_up: bool  # reached a game younger than the cut-off, or the last game


def prune_outputs(
    conn: sqlite3.Connection,
    games_sql: str,
    outputs_table: str,
    args: tuple[object, ...],
    after: int,
    cutoff: str,
    limit: int,
) -> PruneStep:
    """Empty the outputs of up to ``limit`` games after game id ``after`` that finished before
    ``cutoff`` (an ISO time, as the ledger writes them), in the caller's transaction. ``games_sql``
    selects ``id, finished_at`` of the competition's games with ``id > ?`` in id order (``args`` its
    parameters before that one, then ``after`` and ``limit`` are added); ids grow with time, so the
    walk stops at the first game younger than the cut-off. Costs the games examined, never the
    ledger: the server keeps where the last step ended."""
    rows = conn.execute(f"{games_sql} LIMIT ?", (*args, after, limit)).fetchall()
    old = []
    caught_up = len(rows) < limit
    for game_id, finished in rows:
        if str(finished) >= cutoff:
            caught_up = True
            break
        old.append(int(game_id))
    removed = 0
    for start in range(0, len(old), 500):
        chunk = old[start : start + 500]
        removed += conn.execute(
            f"UPDATE {outputs_table} SET output = x'' WHERE length(output) > 0 "
            f"AND game_id IN ({', '.join('?' * len(chunk))})",
            chunk,
        ).rowcount
    return PruneStep(removed, old[-1] if old else after, caught_up)


def time_use(conn: sqlite3.Connection, competition_id: int, entrant_id: int) -> TimeUse:
    """The entrant's time per decision (median, 99th percentile) and bank left at a game's end
    (median) over its last TIME_WINDOW games, and the games it caused to fail, by outcome."""
    rows = conn.execute(
        "SELECT r.times, r.bank_left_ms FROM seat_reports r JOIN games g ON g.id = r.game_id "
        "WHERE r.entrant_id = ? AND g.tournament_id = ? ORDER BY r.game_id DESC LIMIT ?",
        (entrant_id, competition_id, TIME_WINDOW),
    ).fetchall()
    failures = {
        str(outcome): int(n)
        for outcome, n in conn.execute(
            "SELECT g.outcome, count(*) FROM game_seats s JOIN games g ON g.id = s.game_id "
            "WHERE s.entrant_id = ? AND g.tournament_id = ? AND g.outcome != 'normal' "
            "AND g.culprit = s.seat GROUP BY g.outcome ORDER BY g.outcome",
            (entrant_id, competition_id),
        )
    }
    times = sorted(t for blob, _ in rows for t in struct.unpack(f"<{len(blob) // 4}I", blob))
    banks = [int(b) for _, b in rows if b is not None]
    if not times:
        return TimeUse(len(rows), 0, 0.0, 0.0, statistics.median(banks) if banks else 0.0, failures)
    return TimeUse(
        len(rows),
        len(times),
        float(statistics.median(times)),
        float(percentile(times, 0.99)),
        float(statistics.median(banks)) if banks else 0.0,
        failures,
    )


def percentile(ordered: list[int], q: float) -> float:
    """The ``q`` quantile of sorted values, by the nearest rank (the value at or above which a share
    of at least 1 - ``q`` lies): of 100 values, the 99th."""
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(q * len(ordered)))
    return float(ordered[rank - 1])
