"""Read-only queries over the ledger for the game pages: the filtered game list, one game, and its
stored record for the replay (the ledger's read-only connection and text caps: :mod:`queries`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.ledger import records
from arena.referee.match import public_detail
from arena.web.queries import GAMES_PAGE, MAX_DETAIL, NotFound, cap
from arena.web.reader import LedgerUnavailable


@dataclass(frozen=True, slots=True)
class GameFilter:
    event: int | None = None
    entrant: int | None = None
    outcome: str | None = None
    before: int | None = None  # only games with a smaller id (the next page)
    limit: int = GAMES_PAGE


_GAME_SQL = (
    "SELECT g.id, g.tournament_id, t.name AS event, t.kind AS event_kind, g.key, g.round, "
    "g.pairing, g.deal, g.rotation, g.variant, g.outcome, g.detail, g.culprit, g.finished_at, "
    "g.rating_seq, g.seed FROM games g JOIN tournaments t ON t.id = g.tournament_id"
)


def games(conn: sqlite3.Connection, f: GameFilter) -> tuple[list[dict[str, Any]], int | None]:
    """Games newest first, filtered; and the id to continue from (None: no more)."""
    where: list[str] = []
    args: list[Any] = []
    if f.event is not None:
        where.append("g.tournament_id = ?")
        args.append(f.event)
    if f.entrant is not None:
        where.append("g.id IN (SELECT game_id FROM game_seats WHERE entrant_id = ?)")
        args.append(f.entrant)
    if f.outcome is not None:
        where.append("g.outcome = ?")
        args.append(f.outcome)
    if f.before is not None:
        where.append("g.id < ?")
        args.append(f.before)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"{_GAME_SQL}{clause} ORDER BY g.id DESC LIMIT ?", [*args, f.limit + 1]
    ).fetchall()
    more = len(rows) > f.limit
    rows = rows[: f.limit]
    seats = _seats(conn, [r["id"] for r in rows])
    out = [_game(conn, r, seats.get(r["id"], [])) for r in rows]
    return out, (rows[-1]["id"] if more and rows else None)


def _game(conn: sqlite3.Connection, r: sqlite3.Row, seats: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": r["id"],
        "event_id": r["tournament_id"],
        "event": cap(r["event"]),
        "event_kind": r["event_kind"],
        "key": cap(r["key"]),
        "variant": r["variant"],
        "outcome": r["outcome"],
        "detail": cap(_detail(conn, r), MAX_DETAIL),
        "culprit": r["culprit"],
        "finished_at": r["finished_at"],
        "rated": r["rating_seq"] is not None,
        "seats": seats,
    }


def _seats(conn: sqlite3.Connection, game_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    if not game_ids:
        return {}
    marks = ", ".join("?" * len(game_ids))
    rows = conn.execute(
        "SELECT s.game_id, s.seat, s.member, s.side, s.place, s.score, e.id AS entrant_id, e.name, "
        "e.version FROM game_seats s JOIN entrants e ON e.id = s.entrant_id "
        f"WHERE s.game_id IN ({marks}) ORDER BY s.game_id, s.seat, s.member",
        list(game_ids),
    )
    out: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["game_id"], []).append(
            {
                "seat": r["seat"],
                "member": r["member"],
                "side": r["side"],
                "place": r["place"],
                "score": r["score"],
                "entrant_id": r["entrant_id"],
                "entrant": cap(r["name"]),
                "version": cap(r["version"]),
            }
        )
    return out


def game(conn: sqlite3.Connection, game_id: int) -> dict[str, Any]:
    row = conn.execute(f"{_GAME_SQL} WHERE g.id = ?", (game_id,)).fetchone()
    if row is None:
        raise NotFound(f"no game {game_id}")
    out = _game(conn, row, _seats(conn, [game_id]).get(game_id, []))
    out["sealed"] = sealed(conn, row["tournament_id"], row["round"], row["seed"])
    return out


def _detail(conn: sqlite3.Connection, r: sqlite3.Row) -> str:
    """The game's detail, without what it tells of a hand while the game is sealed (an illegal
    action's legal actions). Only a detail that would change asks whether the game is sealed."""
    detail: str = r["detail"] or ""
    public = public_detail(detail)
    if public != detail and sealed(conn, r["tournament_id"], r["round"], r["seed"]):
        return public
    return detail


def sealed(conn: sqlite3.Connection, event_id: int, round_: int, seed: int) -> bool:
    """Whether the game's deal is still to be played: then its hidden cards are still secret, for the
    players of the games to come, and its record stays closed.

    A deal is known by its seed (the same seed and the event's secret deal the same cards): with
    duplicate deals every seat rotation of a pairing's deal has its seed, and with a deal suite deal
    *d* of every pairing, and of every Swiss round, has the suite's seed *d*. Without a suite each
    pairing's deals have seeds of their own (drawn from the round, pairing and deal), so only the
    deal's other rotations share them."""
    row = conn.execute(
        "SELECT 1 FROM planned_games p WHERE p.tournament_id = ? AND p.seed = ? "
        "AND NOT EXISTS (SELECT 1 FROM games g WHERE g.tournament_id = p.tournament_id "
        "AND g.key = p.key) LIMIT 1",
        (event_id, seed),
    ).fetchone()
    return row is not None or _rounds_to_come(conn, event_id, round_)


def _rounds_to_come(conn: sqlite3.Connection, event_id: int, round_: int) -> bool:
    """Whether a Swiss tournament on a deal suite is still to plan a round after ``round_``: each
    round plays the suite's deals again, and a round is planned only when the one before is done."""
    t = conn.execute(
        "SELECT kind, spec, finished_at FROM tournaments WHERE id = ?", (event_id,)
    ).fetchone()
    if t is None or t["kind"] != "tournament" or t["finished_at"]:
        return False
    try:
        spec = json.loads(t["spec"])
    except ValueError:
        return False
    if not isinstance(spec, dict) or spec.get("format") != "swiss" or not spec.get("deals"):
        return False
    rounds = spec.get("rounds")
    if not isinstance(rounds, int) or round_ >= rounds - 1:
        return False
    last = conn.execute(
        "SELECT 1 FROM planned_games WHERE tournament_id = ? AND round >= ? LIMIT 1",
        (event_id, rounds - 1),
    ).fetchone()
    return last is None


def stored_record(conn: sqlite3.Connection, game_id: int) -> tuple[str, bytes | str]:
    """A game's record as stored: (encoding, data)."""
    row = conn.execute(
        "SELECT encoding, record FROM game_records WHERE game_id = ?", (game_id,)
    ).fetchone()
    if row is None:
        raise NotFound(f"no record of game {game_id}")
    return row["encoding"], row["record"]


def decode_record(game_id: int, encoding: str, data: bytes | str) -> dict[str, Any]:
    try:
        return records.decode(encoding, data)
    except records.RecordError as exc:
        raise LedgerUnavailable(f"game {game_id}: {exc}") from exc


def record(conn: sqlite3.Connection, game_id: int) -> dict[str, Any]:
    """A game's full match record (decoded)."""
    return decode_record(game_id, *stored_record(conn, game_id))
