"""Head to head on the web: every two entrants of an event's two-player games, as ``arena run``'s
pairings table shows them, and one entrant's opponents. Read from the lines the ledger keeps as games
are recorded (:mod:`arena.ledger.head_to_head`): a page reads the lines it shows, never the event's
games."""

from __future__ import annotations

import sqlite3
from collections import Counter
from typing import Any

from arena.ledger import head_to_head as stored
from arena.stats import Pentanomial, Trinomial, estimate
from arena.tournament.summary import PairingLine, wilson
from arena.web.queries import cap

# Head to head is a table of every two entrants: worth showing whole for a tournament's field, not for
# a competition of hundreds (a thousand entrants: half a million lines), where each entrant's page
# shows its own opponents instead, a page at a time.
MAX_PAIRING_ENTRANTS = 32
OPPONENTS_PAGE = 100


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
    e = line.elo
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
    if line.counts is not None and e is not None:
        out["counts"] = {
            "model": "pentanomial" if isinstance(line.counts, Pentanomial) else "trinomial",
            "values": [int(x) for x in str(line.counts).split(",")],
        }
        # Every pair (game) scored alike: the figures would be the regularization's, not the
        # games' (one pair won twice reads +1041 and 100%): none is given.
        shown = not e.regularized
        out["elo"] = {
            "pairs": line.pairs,
            **{
                k: (getattr(e, k) if shown else None)
                for k in ("elo", "elo_low", "elo_high", "nelo", "nelo_low", "nelo_high", "los")
            },
            "regularized": e.regularized,
        }
    return out
