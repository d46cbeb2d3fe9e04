"""Leaderboards: TrueSkill ratings per board, updated game by game in the ledger's rating order.

Every game of a tournament counts on two boards: its tournament's own, and the pooled board of its
variant, which gathers every tournament of that variant. A standing competition's game counts on the
competition's board only. All follow one sequence (``games.rating_seq``): a tournament's
games are rated in its schedule's order, so each board is a pure function of the games and can be
rebuilt exactly.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from arena.rating import Rating, initial, rate_game

TOURNAMENT = "tournament"
POOLED = "pooled"
COMPETITION = "competition"

Current = Callable[[int, int], tuple[Rating, int]]  # (board, entrant) -> (rating, games)


@dataclass(frozen=True, slots=True)
class Update:
    board: int
    entrant: int
    before: Rating
    after: Rating
    games: int


def board_id(
    conn: sqlite3.Connection, kind: str, name: str, variant: str, tournament_id: int | None
) -> int:
    """The board's id, made on first use (inside the caller's transaction)."""
    row = conn.execute("SELECT id FROM boards WHERE kind = ? AND name = ?", (kind, name)).fetchone()
    if row is not None:
        return int(row[0])
    cur = conn.execute(
        "INSERT INTO boards (kind, name, variant, tournament_id) VALUES (?, ?, ?, ?)",
        (kind, name, variant, tournament_id),
    )
    return int(cur.lastrowid or 0)


def boards_of_game(conn: sqlite3.Connection, game_id: int) -> list[int]:
    """The boards a game counts on: its tournament's and its variant's pooled board, or its
    competition's."""
    tid, tname, kind, variant = conn.execute(
        "SELECT t.id, t.name, t.kind, g.variant FROM games g "
        "JOIN tournaments t ON t.id = g.tournament_id WHERE g.id = ?",
        (game_id,),
    ).fetchone()
    return [board_id(conn, k, n, v, t) for k, n, v, t in _boards(tid, tname, kind, variant)]


def _boards(tid: int, name: str, kind: str, variant: str) -> list[tuple[str, str, str, int | None]]:
    if kind == COMPETITION:
        return [(COMPETITION, name, variant, tid)]
    return [(TOURNAMENT, name, variant, tid), (POOLED, variant, variant, None)]


def stored(conn: sqlite3.Connection) -> Current:
    def current(board: int, entrant: int) -> tuple[Rating, int]:
        row = conn.execute(
            "SELECT mu, sigma, games FROM ratings WHERE board_id = ? AND entrant_id = ?",
            (board, entrant),
        ).fetchone()
        if row is None:
            return initial(), 0
        return Rating(row[0], row[1]), int(row[2])

    return current


def rate_seats(
    seats: Sequence[tuple[int, int, int, int]], boards: Iterable[int], current: Current
) -> list[Update]:
    """TrueSkill update of one game, from its (side, place, entrant, seat) rows, on each board.
    Players sharing a seat (consultation) share its weight: see :mod:`arena.rating`."""
    teams: dict[int, list[int]] = {}
    places: dict[int, int] = {}
    seat_of: dict[int, list[int]] = {}
    for side, place, entrant, seat in seats:
        teams.setdefault(side, []).append(entrant)
        seat_of.setdefault(side, []).append(seat)
        places[side] = place
    order = sorted(teams)
    sharing = Counter(seat for side in order for seat in seat_of[side])
    weights = None
    if any(n > 1 for n in sharing.values()):
        weights = [[1.0 / sharing[seat] for seat in seat_of[s]] for s in order]
    out = []
    for board in boards:
        before = {e: current(board, e) for side in order for e in teams[side]}
        new = rate_game(
            [[before[e][0] for e in teams[s]] for s in order], [places[s] for s in order], weights
        )
        for side, ratings in zip(order, new, strict=True):
            for entrant, r in zip(teams[side], ratings, strict=True):
                old, games = before[entrant]
                out.append(Update(board, entrant, old, r, games + 1))
    return out


def write(conn: sqlite3.Connection, game_id: int, updates: Sequence[Update]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO ratings VALUES (?, ?, ?, ?, ?, ?)",
        [
            (u.board, u.entrant, u.after.mu, u.after.sigma, u.after.exposed, u.games)
            for u in updates
        ],
    )
    conn.executemany(
        "INSERT OR REPLACE INTO rating_history VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (u.board, game_id, u.entrant, u.before.mu, u.before.sigma, u.after.mu, u.after.sigma)
            for u in updates
        ],
    )


def seats_of(conn: sqlite3.Connection, game_id: int) -> list[tuple[int, int, int, int]]:
    return [
        (int(r[0]), int(r[1]), int(r[2]), int(r[3]))
        for r in conn.execute(
            "SELECT side, place, entrant_id, seat FROM game_seats WHERE game_id = ? "
            "ORDER BY side, seat, member",
            (game_id,),
        )
    ]


def rate(conn: sqlite3.Connection, game_id: int) -> None:
    """Rate one game on its boards from the stored ratings, and write the result."""
    write(
        conn,
        game_id,
        rate_seats(seats_of(conn, game_id), boards_of_game(conn, game_id), stored(conn)),
    )


HISTORY_CHUNK = 20_000  # rating history rows written at a time by a rebuild


def rebuild(conn: sqlite3.Connection) -> float:
    """Recompute every board from the rated games in rating order; rewrite them (inside the caller's
    transaction) and return the largest difference from the numbers stored before (0.0 when the ledger
    was consistent).

    The games and their seats are read in one pass in rating order and the history is written as it
    is made, a chunk at a time, so that neither is held whole (a million games took 1.5 GB). A game
    of one player against one, the arena's every two-handed game, takes a short path: each board's
    update from the two ratings before it, and when a board holds the very ratings (the same
    objects) the board before it held (a variant with one tournament: its pooled board is its
    tournament's), that board's update is counted again, not made again."""
    before = {
        (r[0], r[1]): (r[2], r[3])
        for r in conn.execute("SELECT board_id, entrant_id, mu, sigma FROM ratings")
    }
    tournaments = {
        int(r[0]): (str(r[1]), str(r[2]))
        for r in conn.execute("SELECT id, name, kind FROM tournaments")
    }
    ids: dict[tuple[str, str], int] = {}
    boards_of: dict[tuple[int, str], list[int]] = {}

    def on(tid: int, variant: str) -> list[int]:
        found = boards_of.get((tid, variant))
        if found is None:
            name, kind = tournaments[tid]
            found = []
            for k, n, v, t in _boards(tid, name, kind, variant):
                if (k, n) not in ids:
                    ids[(k, n)] = board_id(conn, k, n, v, t)
                found.append(ids[(k, n)])
            boards_of[(tid, variant)] = found
        return found

    current: dict[tuple[int, int], tuple[Rating, int]] = {}
    new = initial()
    history: list[tuple[int, int, int, float, float, float, float]] = []
    # The history's own indexes are made again once it is written: sorting it once costs less
    # than putting each row in its place as it comes (a million games write four million rows).
    indexes = [
        (str(name), str(sql))
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' "
            "AND tbl_name = 'rating_history' AND sql IS NOT NULL"
        ).fetchall()
    ]
    for name, _ in indexes:
        conn.execute(f'DROP INDEX "{name}"')
    conn.execute("DELETE FROM ratings")
    conn.execute("DELETE FROM rating_history")
    insert = "INSERT INTO rating_history VALUES (?, ?, ?, ?, ?, ?, ?)"

    def rate_one(game_id: int, tid: int, variant: str, rows: list[tuple[int, ...]]) -> None:
        board_ids = on(tid, variant)
        if (
            len(rows) == 2
            and rows[0][0] == 0
            and rows[1][0] == 1
            and rows[0][2] != rows[1][2]
            and rows[0][4] == rows[1][4] == 0
        ):
            # One player against one (sides 0 and 1, one member each).
            a, b = rows[0][2], rows[1][2]
            last: tuple[Rating, Rating, Rating, Rating] | None = None
            for board in board_ids:
                ra, na = current.get((board, a), (new, 0))
                rb, nb = current.get((board, b), (new, 0))
                if last is not None and last[0] is ra and last[1] is rb:
                    xa, xb = last[2], last[3]  # the very ratings of the board before: its update
                else:
                    (xa,), (xb,) = rate_game([[ra], [rb]], [rows[0][1], rows[1][1]])
                    last = (ra, rb, xa, xb)
                current[(board, a)] = (xa, na + 1)
                current[(board, b)] = (xb, nb + 1)
                history.append((board, game_id, a, ra.mu, ra.sigma, xa.mu, xa.sigma))
                history.append((board, game_id, b, rb.mu, rb.sigma, xb.mu, xb.sigma))
            return
        seats = [(side, place, entrant, seat) for side, place, entrant, seat, _ in rows]
        for u in rate_seats(seats, board_ids, lambda b, e: current.get((b, e), (new, 0))):
            current[(u.board, u.entrant)] = (u.after, u.games)
            history.append(
                (
                    u.board,
                    game_id,
                    u.entrant,
                    u.before.mu,
                    u.before.sigma,
                    u.after.mu,
                    u.after.sigma,
                )
            )

    game: tuple[int, int, str] | None = None
    rows: list[tuple[int, ...]] = []
    # The seats of the rated games in rating order (the games' rating index, then each game's seats
    # by its key), read as they come.
    for game_id, tid, variant, side, place, entrant, seat, member in conn.execute(
        "SELECT g.id, g.tournament_id, g.variant, s.side, s.place, s.entrant_id, s.seat, s.member "
        "FROM games g JOIN game_seats s ON s.game_id = g.id WHERE g.rating_seq IS NOT NULL "
        "ORDER BY g.rating_seq, s.side, s.seat, s.member"
    ):
        if game is None or game[0] != game_id:
            if game is not None:
                rate_one(*game, rows)
                if len(history) >= HISTORY_CHUNK:
                    conn.executemany(insert, history)
                    history.clear()
            game, rows = (game_id, tid, variant), []
        rows.append((side, place, entrant, seat, member))
    if game is not None:
        rate_one(*game, rows)
    conn.executemany(insert, history)
    history.clear()
    for _, sql in indexes:
        conn.execute(sql)
    conn.executemany(
        "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?)",
        [(b, e, r.mu, r.sigma, r.exposed, n) for (b, e), (r, n) in current.items()],
    )
    diff = 0.0 if set(before) == set(current) else float("inf")
    for key, (mu, sigma) in before.items():
        if key in current:
            r = current[key][0]
            diff = max(diff, abs(r.mu - mu), abs(r.sigma - sigma))
    return diff
