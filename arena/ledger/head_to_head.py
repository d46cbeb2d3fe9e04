"""Head to head, kept as games are recorded: for each event, every two entrants that met in its
two-seat games, with wins, losses, draws, forfeits, points, duplicate sets and duplicate pairs.

A page that shows head to head reads the lines it shows (``arena run``'s pairings table, an entrant's
opponents), never the event's games: on an event of a million games that recount took minutes and
gigabytes on every request. The counts are those of :func:`arena.tournament.summary.pairing_lines`,
which stays their definition (and the tests' oracle):

- a game counts when it has exactly two seat rows (two players, no consultation);
- ``a`` is the entrant of the lower id (of the lower seat when an entrant met itself), ``b`` the other;
  the reader turns a line round when it shows ``b`` first;
- a seat forfeits when the game ended by a failure (an outcome other than normal or adjudicated) and
  it is the culprit; points count only over games played to their end;
- a duplicate set is an event's games of one pairing and deal between the two: ``fouls`` (b's
  forfeits minus a's), then ``won`` (a's wins minus its losses), then ``points`` (a's score minus b's)
  decide it; a set of exactly two games is a duplicate pair, scored ``half`` / 2 points to a (a win 1,
  a draw 1/2), whose counts by score (``pairs0`` .. ``pairs4``) the Elo is estimated from.

Tables ``head_to_head_sets`` (one row per set) and ``head_to_head`` (one row per two entrants) are
updated in the transaction that records each game (:func:`record`), built from the games by
:func:`rebuild` for ledgers made before them and after games are voided.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import NamedTuple

# Migration (see arena.ledger.schema) that makes the tables; rebuild() fills them from the games.
SCHEMA = """
CREATE TABLE IF NOT EXISTS head_to_head (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    a INTEGER NOT NULL REFERENCES entrants(id),
    b INTEGER NOT NULL REFERENCES entrants(id),
    games INTEGER NOT NULL,
    wins INTEGER NOT NULL,
    losses INTEGER NOT NULL,
    draws INTEGER NOT NULL,
    forfeits_a INTEGER NOT NULL,
    forfeits_b INTEGER NOT NULL,
    played INTEGER NOT NULL,
    points_a INTEGER NOT NULL,
    points_b INTEGER NOT NULL,
    sets_won INTEGER NOT NULL,
    sets_lost INTEGER NOT NULL,
    sets_tied INTEGER NOT NULL,
    pairs0 INTEGER NOT NULL,
    pairs1 INTEGER NOT NULL,
    pairs2 INTEGER NOT NULL,
    pairs3 INTEGER NOT NULL,
    pairs4 INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, a, b)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS head_to_head_by_b ON head_to_head (tournament_id, b);
CREATE TABLE IF NOT EXISTS head_to_head_sets (
    tournament_id INTEGER NOT NULL,
    a INTEGER NOT NULL,
    b INTEGER NOT NULL,
    pairing INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    games INTEGER NOT NULL,
    fouls INTEGER NOT NULL,
    won INTEGER NOT NULL,
    points INTEGER NOT NULL,
    half INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, a, b, pairing, deal)
) WITHOUT ROWID;
"""

PAIR_COLUMNS = (
    "games, wins, losses, draws, forfeits_a, forfeits_b, played, points_a, points_b, "
    "sets_won, sets_lost, sets_tied, pairs0, pairs1, pairs2, pairs3, pairs4"
)

# One row per two-seat game (``g``): its two seats as x (a) and y (b).
_DUELS = """
SELECT g.id AS game_id, g.tournament_id AS tournament_id, g.pairing AS pairing, g.deal AS deal,
    x.entrant_id AS a, y.entrant_id AS b,
    (x.place < y.place) - (x.place > y.place) AS won,
    (g.outcome NOT IN ('normal', 'adjudicated') AND g.culprit = x.seat) AS fa,
    (g.outcome NOT IN ('normal', 'adjudicated') AND g.culprit = y.seat) AS fb,
    (g.outcome IN ('normal', 'adjudicated')) AS played,
    x.score AS sa, y.score AS sb
FROM games g
JOIN game_seats x ON x.game_id = g.id
JOIN game_seats y ON y.game_id = g.id AND (x.entrant_id, x.seat, x.member) < (y.entrant_id, y.seat, y.member)
WHERE (SELECT count(*) FROM game_seats c WHERE c.game_id = g.id) = 2
"""


class Pair(NamedTuple):
    """One line of head to head, as stored: entrant ``a`` against ``b`` (counts from a's side)."""

    a: int
    b: int
    games: int
    wins: int
    losses: int
    draws: int
    forfeits_a: int
    forfeits_b: int
    played: int  # games played to their end (the points are over these)
    points_a: int  # a's total score over them
    points_b: int
    sets_won: int
    sets_lost: int
    sets_tied: int
    pairs: tuple[int, int, int, int, int]  # duplicate pairs by a's points x 2 (0 .. 4)

    def turned(self) -> Pair:
        """The same line from b's side."""
        return Pair(
            self.b, self.a, self.games, self.losses, self.wins, self.draws, self.forfeits_b,
            self.forfeits_a, self.played, self.points_b, self.points_a, self.sets_lost,
            self.sets_won, self.sets_tied, self.pairs[::-1],
        )  # fmt: skip


def _set_class(fouls: int, won: int, points: int) -> int:
    """+1 a set a won, -1 one it lost, 0 a tie (forfeits, then wins, then points)."""
    t = (fouls, won, points)
    return (t > (0, 0, 0)) - (t < (0, 0, 0))


def _pair_bucket(games: int, half: int) -> int | None:
    """The pentanomial count a set adds to: a set of exactly two games is a pair."""
    return half if games == 2 else None


def record(conn: sqlite3.Connection, game_id: int) -> None:
    """Count one newly recorded game (inside the caller's transaction): a game of other than two
    seat rows counts nowhere."""
    duel = conn.execute(
        f"SELECT tournament_id, pairing, deal, a, b, won, fa, fb, played, sa, sb "
        f"FROM ({_DUELS} AND g.id = ?)",
        (game_id,),
    ).fetchone()
    if duel is None:
        return
    tid, pairing, deal, a, b, won, fa, fb, played, sa, sb = duel
    diff = sa - sb if played else 0
    old = conn.execute(
        "SELECT games, fouls, won, points, half FROM head_to_head_sets "
        "WHERE tournament_id = ? AND a = ? AND b = ? AND pairing = ? AND deal = ?",
        (tid, a, b, pairing, deal),
    ).fetchone()
    before = tuple(old) if old is not None else None
    games, fouls, set_won, points, half = before or (0, 0, 0, 0, 0)
    after = (games + 1, fouls + fb - fa, set_won + won, points + diff, half + won + 1)
    conn.execute(
        "INSERT OR REPLACE INTO head_to_head_sets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (tid, a, b, pairing, deal, *after),
    )
    sets = [0, 0, 0]  # won, lost, tied: the set's class after, less its class before
    pairs = [0, 0, 0, 0, 0]
    for sign, state in ((-1, before), (1, after)):
        if state is None:
            continue
        sets[(1, 2, 0)[_set_class(state[1], state[2], state[3]) + 1]] += sign  # lost, tied, won
        bucket = _pair_bucket(state[0], state[4])
        if bucket is not None:
            pairs[bucket] += sign
    delta = (
        1, int(won > 0), int(won < 0), int(won == 0), fa, fb, played, sa if played else 0,
        sb if played else 0, *sets, *pairs,
    )  # fmt: skip
    names = [c.strip() for c in PAIR_COLUMNS.split(",")]
    conn.execute(
        f"INSERT INTO head_to_head (tournament_id, a, b, {PAIR_COLUMNS}) "
        f"VALUES (?, ?, ?, {', '.join('?' * len(names))}) "
        "ON CONFLICT (tournament_id, a, b) DO UPDATE SET "
        + ", ".join(f"{n} = {n} + excluded.{n}" for n in names),
        (tid, a, b, *delta),
    )


def rebuild(conn: sqlite3.Connection, tournament_id: int | None = None) -> None:
    """Count head to head again from the games (inside the caller's transaction): one event's, or
    every event's."""
    where, args = (
        ("WHERE tournament_id = ?", [tournament_id]) if tournament_id is not None else ("", [])
    )
    conn.execute(f"DELETE FROM head_to_head {where}", args)
    conn.execute(f"DELETE FROM head_to_head_sets {where}", args)
    scope = " AND g.tournament_id = ?" if tournament_id is not None else ""
    conn.execute(
        "INSERT INTO head_to_head_sets "
        "SELECT tournament_id, a, b, pairing, deal, count(*), sum(fb - fa), sum(won), "
        "sum(CASE WHEN played THEN sa - sb ELSE 0 END), sum(won + 1) "
        f"FROM ({_DUELS}{scope}) GROUP BY tournament_id, a, b, pairing, deal",
        args,
    )
    cls = "((fouls, won, points) > (0, 0, 0)) - ((fouls, won, points) < (0, 0, 0))"
    set_counts = (
        f"SELECT tournament_id, a, b, sum({cls} = 1) AS won, sum({cls} = -1) AS lost, "
        f"sum({cls} = 0) AS tied, "
        + ", ".join(f"sum(games = 2 AND half = {k}) AS p{k}" for k in range(5))
        + f" FROM head_to_head_sets {where} GROUP BY tournament_id, a, b"
    )
    # The sets' counts first, then the games' (joining the two grouped queries instead makes SQLite
    # scan one for each line of the other).
    conn.execute(
        f"INSERT INTO head_to_head (tournament_id, a, b, {PAIR_COLUMNS}) "
        "SELECT tournament_id, a, b, 0, 0, 0, 0, 0, 0, 0, 0, 0, won, lost, tied, p0, p1, p2, p3, p4 "
        f"FROM ({set_counts})",
        args,
    )
    games = ("games", "wins", "losses", "draws", "forfeits_a", "forfeits_b", "played", "points_a",
             "points_b")  # fmt: skip
    conn.execute(
        f"INSERT INTO head_to_head (tournament_id, a, b, {PAIR_COLUMNS}) "
        "SELECT tournament_id, a, b, count(*), sum(won > 0), sum(won < 0), sum(won = 0), sum(fa), "
        "sum(fb), sum(played), sum(CASE WHEN played THEN sa ELSE 0 END), "
        "sum(CASE WHEN played THEN sb ELSE 0 END), 0, 0, 0, 0, 0, 0, 0, 0 "
        f"FROM ({_DUELS}{scope}) WHERE true GROUP BY tournament_id, a, b "
        "ON CONFLICT (tournament_id, a, b) DO UPDATE SET "
        + ", ".join(f"{n} = excluded.{n}" for n in games),
        args,
    )


def _pair(row: Sequence[int]) -> Pair:
    a, b, games, w, lo, d, fa, fb, played, pa, pb, sw, sl, st, p0, p1, p2, p3, p4 = row
    return Pair(a, b, games, w, lo, d, fa, fb, played, pa, pb, sw, sl, st, (p0, p1, p2, p3, p4))


def pairs(conn: sqlite3.Connection, event_id: int) -> list[Pair]:
    """Every line of an event's head to head (as stored: ``a`` the lower id)."""
    rows = conn.execute(
        f"SELECT a, b, {PAIR_COLUMNS} FROM head_to_head WHERE tournament_id = ? ORDER BY a, b",
        (event_id,),
    ).fetchall()
    return [_pair(r) for r in rows]


def opponents(
    conn: sqlite3.Connection, event_id: int, entrant_id: int, *, offset: int = 0, limit: int = 100
) -> tuple[list[Pair], int]:
    """An entrant's lines in an event, each turned to its side (``a`` is the entrant), most games
    first, a page of them; and how many there are."""
    rows = conn.execute(
        f"SELECT * FROM (SELECT a, b, {PAIR_COLUMNS} FROM head_to_head "
        "WHERE tournament_id = ? AND a = ? UNION ALL "
        f"SELECT a, b, {PAIR_COLUMNS} FROM head_to_head WHERE tournament_id = ? AND b = ? AND a != b) "
        "ORDER BY games DESC, a + b LIMIT ? OFFSET ?",
        (event_id, entrant_id, event_id, entrant_id, limit, offset),
    ).fetchall()
    total = conn.execute(
        "SELECT (SELECT count(*) FROM head_to_head WHERE tournament_id = ? AND a = ?) + "
        "(SELECT count(*) FROM head_to_head WHERE tournament_id = ? AND b = ? AND a != b)",
        (event_id, entrant_id, event_id, entrant_id),
    ).fetchone()[0]
    lines = [_pair(r) for r in rows]
    return [p if p.a == entrant_id else p.turned() for p in lines], int(total)


def entrants(conn: sqlite3.Connection, event_id: int) -> int:
    """How many entrants met another in an event's two-seat games."""
    row = conn.execute(
        "SELECT count(*) FROM (SELECT a FROM head_to_head WHERE tournament_id = ? "
        "UNION SELECT b FROM head_to_head WHERE tournament_id = ?)",
        (event_id, event_id),
    ).fetchone()
    return int(row[0])
