"""Summaries of a tournament's results: pairings with wins, losses, average points, duplicate sets, and
the Elo difference with its 95% interval and the likelihood of superiority (``arena.stats``).

A pairing's Elo comes from its *duplicate pairs* where there are some: a deal played twice with the two
entrants' seats swapped is one pair, scored 0, 1/2, 1, 3/2 or 2 (pentanomial counts, as in ``arena
sprt``), so the luck of the cards cancels out and the interval is the honest one for correlated games.
A pairing without pairs (no duplicate deals) gets it from its games (trinomial counts). A game a bot
forfeited is its loss."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from arena.stats import Counts, EloEstimate, Pentanomial, Trinomial, estimate
from arena.stats.elo import elo_from_score, elo_text

SWEEP_CONFIDENCE = 0.95  # of the one-sided bound given for a clean sweep


@dataclass(frozen=True, slots=True)
class PairingLine:
    """Head to head between two entrants (two-player variants). A game a bot forfeited (a timeout,
    crash, illegal action... under the forfeit policy) is its loss in every column: in wins and losses,
    in its duplicate set, and it is left out of the average points, which only games played to their end
    give."""

    a: str
    b: str
    games: int
    wins: int  # of a
    losses: int
    draws: int
    forfeits_a: int  # games a lost by its own failure
    forfeits_b: int
    points_a: float | None  # average game score over the games played to their end (None: none)
    points_b: float | None
    # Duplicate sets (one deal, every seat rotation) won by a: the side that forfeited a game of the set
    # loses it; otherwise more wins, then more points.
    sets_won: int
    sets_lost: int
    sets_tied: int
    score: float  # a's share: (wins + draws / 2) / games
    low: float  # 95% Wilson interval of the score (treating games as independent)
    high: float
    # What the Elo comes from: a's duplicate pairs (pentanomial), or its games when it has no pairs
    # (trinomial); a pair whose second game is not played yet is left out.
    counts: Counts | None = None
    elo: EloEstimate | None = None  # a's Elo difference over b, 95% interval, nElo, LOS

    @property
    def sets(self) -> int:
        """Its duplicate sets: the deals it played (one game each without duplicate deals)."""
        return self.sets_won + self.sets_lost + self.sets_tied

    @property
    def pairs(self) -> int:
        """Duplicate pairs the Elo comes from (0: it comes from games)."""
        return self.counts.total if isinstance(self.counts, Pentanomial) else 0


@dataclass(frozen=True, slots=True)
class EntrantLine:
    """An entrant's record in a multi-player tournament."""

    entrant: str
    games: int
    forfeits: int  # games it lost by its own failure
    firsts: float  # first places (shared ones count a fraction)
    average_place: float
    average_score: float | None  # over the games played to their end (None: none)
    low: float  # 95% Wilson interval of the share of first places
    high: float


def forfeited(row: dict[str, Any]) -> bool:
    """Whether this seat's failure ended its game (the game's culprit)."""
    return row["outcome"] not in ("normal", "adjudicated") and row.get("culprit", -1) == row["seat"]


def _played_out(seats: Sequence[dict[str, Any]]) -> bool:
    return all(r["outcome"] in ("normal", "adjudicated") for r in seats)


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
    stats: dict[tuple[str, str], dict[str, Any]] = {}
    for seats in _by_game(rows).values():
        if len(seats) != 2:
            continue
        x, y = sorted(seats, key=lambda r: r["entrant"])
        s = stats.setdefault(
            (x["entrant"], y["entrant"]),
            {"n": 0, "w": 0, "l": 0, "d": 0, "fa": 0, "fb": 0, "played": 0, "pa": 0, "pb": 0,
             "sets": {}, "pair_points": {}},
        )  # fmt: skip
        s["n"] += 1
        s["fa"] += forfeited(x)
        s["fb"] += forfeited(y)
        won = (x["place"] < y["place"]) - (x["place"] > y["place"])
        s["w" if won > 0 else "l" if won < 0 else "d"] += 1
        diff = 0
        if _played_out(seats):
            s["played"] += 1
            s["pa"] += x["score"]
            s["pb"] += y["score"]
            diff = x["score"] - y["score"]
        # A set: forfeits (each side's, as a penalty), then wins, then points.
        fouls, games, points = s["sets"].get((x["pairing"], x["deal"]), (0, 0, 0))
        s["sets"][(x["pairing"], x["deal"])] = (
            fouls + forfeited(y) - forfeited(x),
            games + won,
            points + diff,
        )
        # a's points per set of games on one deal: a duplicate pair when there are two of them.
        n_games, got = s["pair_points"].get((x["pairing"], x["deal"]), (0, 0.0))
        s["pair_points"][(x["pairing"], x["deal"])] = (n_games + 1, got + (won + 1) / 2)
    out = []
    for (a, b), s in sorted(stats.items()):
        n = s["n"]
        share = (s["w"] + s["d"] / 2) / n
        low, high = wilson(s["w"] + s["d"] / 2, n)
        sets = list(s["sets"].values())
        played = s["played"]
        counts = head_to_head_counts(list(s["pair_points"].values()), s["w"], s["d"], s["l"])
        out.append(
            PairingLine(
                a,
                b,
                n,
                s["w"],
                s["l"],
                s["d"],
                s["fa"],
                s["fb"],
                s["pa"] / played if played else None,
                s["pb"] / played if played else None,
                sum(1 for d in sets if d > (0, 0, 0)),
                sum(1 for d in sets if d < (0, 0, 0)),
                sum(1 for d in sets if d == (0, 0, 0)),
                share,
                low,
                high,
                counts,
                estimate(counts) if counts.total else None,
            )
        )
    return out


def head_to_head_counts(
    sets: Sequence[tuple[int, float]], wins: int, draws: int, losses: int
) -> Counts:
    """The counts a pairing's Elo is estimated from: its duplicate pairs (sets of exactly two games on
    one deal, with a's points in them) when it has any, else its games."""
    pairs = Pentanomial()
    for games, points in sets:
        if games == 2:
            pairs = pairs.add(points)
    if pairs.total:
        return pairs
    return Trinomial(losses, draws, wins)


def entrant_lines(rows: Sequence[dict[str, Any]]) -> list[EntrantLine]:
    """Per-entrant lines from the ledger's seat rows (any number of players)."""
    acc: dict[str, dict[str, float]] = {}
    for seats in _by_game(rows).values():
        first = [r for r in seats if r["place"] == 0]
        sides_first = {r["side"] for r in first}
        played = _played_out(seats)
        for r in seats:
            a = acc.setdefault(
                r["entrant"], {"n": 0, "f": 0.0, "place": 0.0, "played": 0, "score": 0.0, "lost": 0}
            )
            a["n"] += 1
            a["place"] += r["place"]
            a["lost"] += forfeited(r)
            if played:
                a["played"] += 1
                a["score"] += r["score"]
            if r["place"] == 0:
                a["f"] += 1 / len(sides_first)
    out = []
    for name, a in sorted(acc.items(), key=lambda kv: (-kv[1]["f"] / kv[1]["n"], kv[0])):
        n = int(a["n"])
        low, high = wilson(a["f"], n)
        average = a["score"] / a["played"] if a["played"] else None
        out.append(EntrantLine(name, n, int(a["lost"]), a["f"], a["place"] / n, average, low, high))
    return out


def counted(n: int, thing: str) -> str:
    """``1 pair``, ``2 pairs``: a count with its noun."""
    return f"{n} {thing}" + ("" if n == 1 else "s")


def duplicated(lines: Iterable[PairingLine]) -> bool:
    """Whether any pairing played a deal more than once (duplicate deals): only then do duplicate
    sets say more than the games do, and a table shows them."""
    return any(line.sets < line.games for line in lines)


def sweep_bound(units: int, confidence: float = SWEEP_CONFIDENCE) -> float:
    """The Elo difference that a clean sweep of ``units`` (pairs or games, each won outright) shows
    at least, one-sided at ``confidence``.

    A unit scores between 0 and 1; whatever its distribution, it scores 1 with probability at most
    its mean score s, so ``units`` sweeps in a row happen with probability at most s ** units, below
    1 - ``confidence`` whenever s < (1 - confidence) ** (1 / units): that is the score's lower bound
    (Clopper-Pearson's for n successes in n), and its Elo the bound."""
    if units < 1:
        raise ValueError(f"a sweep needs at least one unit, got {units}")
    return elo_from_score((1 - confidence) ** (1 / units))


def elo_figures(line: PairingLine) -> dict[str, Any] | None:
    """A line's Elo figures as the CLI's pairings table and the web show them (None: no counts yet).

    ``pairs`` (0: from the games), ``elo``, ``elo_low``, ``elo_high``, ``nelo``, ``nelo_low``,
    ``nelo_high``, ``los``, ``regularized`` and ``sweep``. While every pair (game) scored alike,
    the figures would be the regularization's, not the games' (one pair won twice reads +1041 and
    100%): none is given. A clean sweep (every unit won by one side, ``sweep`` "won" or "lost")
    gets a one-sided bound instead (``elo_low``, or ``elo_high`` for the loser) and its LOS is 100%
    (or 0%)."""
    e = line.elo
    if line.counts is None or e is None:
        return None
    given = not e.regularized
    out: dict[str, Any] = {
        "pairs": line.pairs,
        **{
            k: (getattr(e, k) if given else None)
            for k in ("elo", "elo_low", "elo_high", "nelo", "nelo_low", "nelo_high", "los")
        },
        "regularized": e.regularized,
        "sweep": None,
    }
    values = [int(x) for x in str(line.counts).split(",")]
    units = sum(values)
    if e.regularized and values[-1] == units:  # every pair 2 points (game won) to the entrant
        out.update(sweep="won", elo_low=sweep_bound(units), los=1.0)
    elif e.regularized and values[0] == units:
        out.update(sweep="lost", elo_high=-sweep_bound(units), los=0.0)
    return out


class EloShown(NamedTuple):
    """A line's Elo figures as text, for the CLI's pairings table and the web's head to head."""

    elo: str  # the figure, or the bound with its side ("> -94"), or "-"
    note: (
        str  # the interval "[+12, +80]", "(95%, a clean sweep)" or "(all alike)"; "" with no figure
    )
    units: str  # what it comes from: "3 pairs", "1 game"; "" with no figure
    los: str  # "73%", "100%" for a won sweep; "-" with no figure


def elo_shown(figures: dict[str, Any] | None, games: int) -> EloShown:
    """:func:`elo_figures` (of a line of ``games`` games) as text."""
    e = figures
    if e is None:
        return EloShown("-", "", "", "-")
    units = counted(e["pairs"], "pair") if e["pairs"] else counted(games, "game")
    if e["sweep"] == "won":
        elo, note = f"> {_elo(e['elo_low'])}", f"({SWEEP_CONFIDENCE:.0%}, a clean sweep)"
    elif e["sweep"] == "lost":
        elo, note = f"< {_elo(e['elo_high'])}", f"({SWEEP_CONFIDENCE:.0%}, a clean sweep)"
    elif e["regularized"]:
        elo, note = "-", "(all alike)"
    else:
        elo, note = _elo(e["elo"]), f"[{_elo(e['elo_low'])}, {_elo(e['elo_high'])}]"
    los = "-" if e["los"] is None else f"{e['los'] * 100:.0f}%"
    return EloShown(elo, note, units, los)


def _elo(x: float) -> str:
    return elo_text(x, "+.0f")  # >2400 for a bound held at the limit
