"""Summaries of a tournament's results: pairings with wins, losses, average points, duplicate sets and
95% confidence intervals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class PairingLine:
    """Head to head between two entrants (two-player variants)."""

    a: str
    b: str
    games: int
    wins: int  # of a
    losses: int
    draws: int
    points_a: float  # average game score
    points_b: float
    sets_won: int  # duplicate sets (one deal, every seat rotation) won by a on total points
    sets_lost: int
    sets_tied: int
    score: float  # a's share: (wins + draws / 2) / games
    low: float  # 95% Wilson interval of the score
    high: float


@dataclass(frozen=True, slots=True)
class EntrantLine:
    """An entrant's record in a multi-player tournament."""

    entrant: str
    games: int
    firsts: float  # first places (shared ones count a fraction)
    average_place: float
    average_score: float
    low: float  # 95% Wilson interval of the share of first places
    high: float


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _by_game(rows: Sequence[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    games: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        games.setdefault(row["game_id"], []).append(row)
    return games


def pairing_lines(rows: Sequence[dict[str, Any]]) -> list[PairingLine]:
    """Head-to-head lines from the ledger's seat rows of a two-player tournament."""
    games = _by_game(rows)
    stats: dict[tuple[str, str], dict[str, Any]] = {}
    for seats in games.values():
        if len(seats) != 2:
            continue
        x, y = sorted(seats, key=lambda r: r["entrant"])
        key = (x["entrant"], y["entrant"])
        s = stats.setdefault(key, {"n": 0, "w": 0, "l": 0, "d": 0, "pa": 0, "pb": 0, "sets": {}})
        s["n"] += 1
        s["pa"] += x["score"]
        s["pb"] += y["score"]
        if x["place"] < y["place"]:
            s["w"] += 1
        elif x["place"] > y["place"]:
            s["l"] += 1
        else:
            s["d"] += 1
        diff = s["sets"].setdefault((x["pairing"], x["deal"]), 0)
        s["sets"][(x["pairing"], x["deal"])] = diff + x["score"] - y["score"]
    out = []
    for (a, b), s in sorted(stats.items()):
        n = s["n"]
        share = (s["w"] + s["d"] / 2) / n
        low, high = wilson(s["w"] + s["d"] / 2, n)
        sets = list(s["sets"].values())
        out.append(
            PairingLine(
                a,
                b,
                n,
                s["w"],
                s["l"],
                s["d"],
                s["pa"] / n,
                s["pb"] / n,
                sum(1 for d in sets if d > 0),
                sum(1 for d in sets if d < 0),
                sum(1 for d in sets if d == 0),
                share,
                low,
                high,
            )
        )
    return out


def entrant_lines(rows: Sequence[dict[str, Any]]) -> list[EntrantLine]:
    """Per-entrant lines from the ledger's seat rows (any number of players)."""
    games = _by_game(rows)
    acc: dict[str, dict[str, float]] = {}
    for seats in games.values():
        first = [r for r in seats if r["place"] == 0]
        sides_first = {r["side"] for r in first}
        for r in seats:
            a = acc.setdefault(r["entrant"], {"n": 0, "f": 0.0, "place": 0.0, "score": 0.0})
            a["n"] += 1
            a["place"] += r["place"]
            a["score"] += r["score"]
            if r["place"] == 0:
                a["f"] += 1 / len(sides_first)
    out = []
    for name, a in sorted(acc.items(), key=lambda kv: (-kv[1]["f"] / kv[1]["n"], kv[0])):
        n = int(a["n"])
        low, high = wilson(a["f"], n)
        out.append(EntrantLine(name, n, a["f"], a["place"] / n, a["score"] / n, low, high))
    return out
