"""Head to head on the web: every two entrants of an event's two-player games, as ``arena run``'s
pairings table shows them (read from the ledger the pages read, see :mod:`arena.web.queries`)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from typing import Any

from arena.stats import Pentanomial
from arena.tournament.summary import PairingLine, pairing_lines
from arena.web.queries import cap

# Head to head is a table of every two entrants: worth computing (and reading) for a tournament's
# field, not for a competition of hundreds (a thousand entrants: half a million lines).
MAX_PAIRING_ENTRANTS = 32


def pairing_entrants(conn: sqlite3.Connection, event_id: int) -> int:
    """How many entrants played in an event's games."""
    row = conn.execute(
        "SELECT count(DISTINCT s.entrant_id) FROM games g JOIN game_seats s ON s.game_id = g.id "
        "WHERE g.tournament_id = ?",
        (event_id,),
    ).fetchone()
    return int(row[0])


def pairings(conn: sqlite3.Connection, event_id: int) -> list[dict[str, Any]]:
    """Head to head between each two entrants of an event's two-player games (``arena run``'s pairings
    table): wins, losses, forfeits, duplicate sets, and the Elo difference with its 95% interval and
    the likelihood of superiority, from the duplicate pairs where there are some (``counts`` says
    which: ``pentanomial``, pairs scored 0..2, or ``trinomial``, games' losses, draws, wins).

    Lines are entrants', as on the leaderboard: a competition's versions of one bot are entrants of
    one name, each with a line of its own, named with its version (:func:`entrant_labels`)."""
    rows = conn.execute(
        "SELECT g.id AS game_id, g.pairing, g.deal, g.outcome, g.culprit, s.seat, s.side, s.place, "
        "s.score, e.id AS entrant_id, e.name, e.version FROM games g "
        "JOIN game_seats s ON s.game_id = g.id JOIN entrants e ON e.id = s.entrant_id "
        "WHERE g.tournament_id = ? ORDER BY g.ord, s.seat",
        (event_id,),
    ).fetchall()
    labels = entrant_labels({r["entrant_id"]: (r["name"], r["version"]) for r in rows})
    ids = {label: entrant_id for entrant_id, label in labels.items()}
    seats = [dict(r) | {"entrant": labels[r["entrant_id"]]} for r in rows]
    return [_pairing(line, ids) for line in pairing_lines(seats)]


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


def _pairing(line: PairingLine, ids: dict[str, int]) -> dict[str, Any]:
    e = line.elo
    out: dict[str, Any] = {
        "entrant_id": ids[line.a],
        "entrant": cap(line.a),
        "opponent_id": ids[line.b],
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
