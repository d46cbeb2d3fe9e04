"""Head to head on the web: every two entrants of an event's two-player games, as ``arena run``'s
pairings table shows them, the event's crosstable (entrant x entrant, score and games), and one
entrant's opponents. Read from the lines the ledger keeps as games are recorded
(:mod:`arena.ledger.head_to_head`): a page reads the lines it shows, never the event's games."""

from __future__ import annotations

import sqlite3
from collections import Counter
from typing import Any, NamedTuple

from arena.ledger import head_to_head as stored
from arena.stats import Pentanomial, Trinomial, estimate
from arena.tournament.summary import PairingLine, elo_figures, elo_shown, wilson
from arena.web.queries import cap

# Head to head is a table of every two entrants: worth showing whole for a tournament's field, not for
# a competition of hundreds (a thousand entrants: half a million lines), where each entrant's page
# shows its own opponents instead, a page at a time.
MAX_PAIRING_ENTRANTS = 32
OPPONENTS_PAGE = 100
# A crosstable (entrant x entrant) is a square: 40 entrants make 1,600 cells, about what a page holds.
MAX_CROSSTABLE_ENTRANTS = 40


def pairing_entrants(conn: sqlite3.Connection, event_id: int) -> int:
    """How many entrants met another in an event's two-player games."""
    return stored.entrants(conn, event_id)


def line(p: stored.Pair, a: str, b: str) -> PairingLine:
    """A stored line as the summary's pairing line between ``a`` (p.a) and ``b``."""
    counts = Pentanomial(p.pairs) if sum(p.pairs) else Trinomial(p.losses, p.draws, p.wins)
    points = p.wins + p.draws / 2
    low, high = wilson(points, p.games)
    return PairingLine(
        a, b, p.games, p.wins, p.losses, p.draws, p.forfeits_a, p.forfeits_b,
        p.points_a / p.played if p.played else None, p.points_b / p.played if p.played else None,
        p.sets_won, p.sets_lost, p.sets_tied, points / p.games, low, high, counts,
        estimate(counts) if counts.total else None,
    )  # fmt: skip


def _names(conn: sqlite3.Connection, ids: set[int]) -> dict[int, tuple[str, str]]:
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(f"SELECT id, name, version FROM entrants WHERE id IN ({marks})", list(ids))
    return {int(r[0]): (r[1], r[2]) for r in rows}


def pairings(conn: sqlite3.Connection, event_id: int) -> list[dict[str, Any]]:
    """Head to head between each two entrants of an event's two-player games (``arena run``'s pairings
    table): wins, losses, forfeits, duplicate sets, and the Elo difference with its 95% interval and
    the likelihood of superiority, from the duplicate pairs where there are some (``counts`` says
    which: ``pentanomial``, pairs scored 0..2, or ``trinomial``, games' losses, draws, wins).

    Lines are entrants', as on the leaderboard: a competition's versions of one bot are entrants of
    one name, each with a line of its own, named with its version (:func:`entrant_labels`). Each
    line's entrant is the first of the two by label, the lines in the labels' order."""
    found = stored.pairs(conn, event_id)
    if not found:
        return []
    labels = entrant_labels(_names(conn, {i for p in found for i in (p.a, p.b)}))
    turned = [p if labels[p.a] <= labels[p.b] else p.turned() for p in found]
    turned.sort(key=lambda p: (labels[p.a], labels[p.b]))
    return [_pairing(line(p, labels[p.a], labels[p.b]), p.a, p.b) for p in turned]


def opponents(
    conn: sqlite3.Connection, event_id: int, entrant_id: int, page: int
) -> tuple[list[dict[str, Any]], int]:
    """An entrant's head to head in an event, against each opponent, most games first: page ``page``
    (from 1) of :data:`OPPONENTS_PAGE` lines, and how many lines there are."""
    found, total = stored.opponents(
        conn, event_id, entrant_id, offset=(page - 1) * OPPONENTS_PAGE, limit=OPPONENTS_PAGE
    )
    labels = entrant_labels(_names(conn, {i for p in found for i in (p.a, p.b)} | {entrant_id}))
    return [_pairing(line(p, labels[p.a], labels[p.b]), p.a, p.b) for p in found], total


def crosstable(conn: sqlite3.Connection, event_id: int, order: list[int]) -> dict[str, Any] | None:
    """An event's crosstable: each entrant that met another against each, its score (points: a win
    1, a draw 1/2) and games, read from the stored head to head (never the games); the entrants in
    ``order`` (the board's), any other after them by label. None above
    :data:`MAX_CROSSTABLE_ENTRANTS`: the caller checks the board's size first, as this reads every
    line of the event.

    ``entrants``: ``{id, name, games, points}`` in order (``points`` over ``games`` against all);
    ``cells[i][j]``: ``{games, wins, losses, draws, points}`` of entrant i against j, None where they
    never met (and on the diagonal, unless an entrant met itself)."""
    found = stored.pairs(conn, event_id)
    ids = {i for p in found for i in (p.a, p.b)}
    if not ids or len(ids) > MAX_CROSSTABLE_ENTRANTS:
        return None
    labels = entrant_labels(_names(conn, ids))
    place = {entrant: k for k, entrant in enumerate(order)}
    shown = sorted(ids, key=lambda i: (place.get(i, len(place)), labels[i], i))
    index = {entrant: k for k, entrant in enumerate(shown)}
    cells: list[list[dict[str, Any] | None]] = [[None] * len(shown) for _ in shown]
    totals = {entrant: [0, 0.0] for entrant in shown}  # games, points
    for p in found:
        for side in (p,) if p.a == p.b else (p, p.turned()):
            points = side.wins + side.draws / 2
            cells[index[side.a]][index[side.b]] = {
                "games": side.games,
                "wins": side.wins,
                "losses": side.losses,
                "draws": side.draws,
                "points": points,
            }
            totals[side.a][0] += side.games
            totals[side.a][1] += points
    return {
        "entrants": [
            {"id": i, "name": cap(labels[i]), "games": totals[i][0], "points": totals[i][1]}
            for i in shown
        ],
        "cells": cells,
    }


class Shown(NamedTuple):
    """A head-to-head line as a page shows it, formatted once (a table may have hundreds)."""

    entrant_id: int
    entrant: str
    opponent_id: int
    opponent: str
    games: int
    record: str  # W-L-D
    forfeits: str  # the entrant's - the opponent's
    sets: str  # duplicate sets W-L-T
    score: str
    elo: str  # the figure, or the bound with its side ("> -94"), or "-"
    note: str  # the interval, "(95%, a clean sweep)" or "(all alike)"
    units: str  # "3 pairs", "1 game"; "" with no figure
    los: str


def shown(p: dict[str, Any]) -> Shown:
    """A line of :func:`pairings` or :func:`opponents` formatted for a page: its Elo as the CLI's
    pairings table shows it (:func:`arena.tournament.summary.elo_shown`)."""
    elo, note, units, los = elo_shown(p["elo"], p["games"])
    return Shown(
        p["entrant_id"], p["entrant"], p["opponent_id"], p["opponent"], p["games"],
        f"{p['wins']}-{p['losses']}-{p['draws']}", f"{p['forfeits']}-{p['opponent_forfeits']}",
        f"{p['sets_won']}-{p['sets_lost']}-{p['sets_tied']}", f"{p['score'] * 100:.0f}%", elo,
        note, units, los,
    )  # fmt: skip


def points_text(points: float) -> str:
    """A score in points with halves: 3, 1½, ½."""
    whole = int(points)
    if points == whole:
        return str(whole)
    return f"{whole}½" if whole else "½"


class CrossRow(NamedTuple):
    """A crosstable's row as the page shows it: each cell its text and title ("" where the two never
    met; a multiplication sign on the diagonal)."""

    number: int
    entrant_id: int
    entrant: str
    score: str
    cells: list[tuple[str, str]]


def cross_rows(cross: dict[str, Any]) -> list[CrossRow]:
    """:func:`crosstable` formatted for a page."""
    entrants = cross["entrants"]
    rows = []
    for i, (e, row) in enumerate(zip(entrants, cross["cells"], strict=True)):
        cells = []
        for j, c in enumerate(row):
            if c is None:
                cells.append(("\u00d7" if i == j else "", ""))
            else:
                title = (
                    f"{e['name']} v {entrants[j]['name']}: {c['wins']}-{c['losses']}-{c['draws']}"
                )
                cells.append((f"{points_text(c['points'])}/{c['games']}", title))
        score = f"{points_text(e['points'])}/{e['games']}"
        rows.append(CrossRow(i + 1, e["id"], e["name"], score, cells))
    return rows


def entrant_labels(entrants: dict[int, tuple[str, str]]) -> dict[int, str]:
    """A label for each entrant (id: name and version) that tells it from the others: its name, with
    its version when another has the name too, and its id when that is shared too."""
    names = Counter(name for name, _ in entrants.values())
    labels = {
        i: name if names[name] == 1 else f"{name} ({version})"
        for i, (name, version) in entrants.items()
    }
    taken = Counter(labels.values())
    return {i: label if taken[label] == 1 else f"{label} #{i}" for i, label in labels.items()}


def _pairing(line: PairingLine, a: int, b: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "entrant_id": a,
        "entrant": cap(line.a),
        "opponent_id": b,
        "opponent": cap(line.b),
        "games": line.games,
        "wins": line.wins,
        "losses": line.losses,
        "draws": line.draws,
        "forfeits": line.forfeits_a,
        "opponent_forfeits": line.forfeits_b,
        "points": line.points_a,
        "opponent_points": line.points_b,
        "sets_won": line.sets_won,
        "sets_lost": line.sets_lost,
        "sets_tied": line.sets_tied,
        "score": line.score,
        "counts": None,
        "elo": None,
    }
    if line.counts is not None and line.elo is not None:
        out["counts"] = {
            "model": "pentanomial" if isinstance(line.counts, Pentanomial) else "trinomial",
            "values": [int(x) for x in str(line.counts).split(",")],
        }
        out["elo"] = elo_figures(line)
    return out
