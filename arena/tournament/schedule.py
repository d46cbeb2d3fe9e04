"""The schedule: which entrants meet, on which deals, in which seats, in a canonical order.

Formats share one idea (cutechess's ``next_pair``): a list of *pairings*, each a group of entrants in a
base order, played on ``deals_per_pairing`` deals. With duplicate deals (the default) every deal is
played once per seat rotation, so that each entrant holds each position's cards; luck cancels out and a
*duplicate set* of games can be compared as a whole. Without duplicates, successive deals rotate the seats.

Round robin takes every group of entrants once (double: twice, the second time in reverse order, on other
deals); a gauntlet pits its challenger against the field; Swiss pairs rounds by score with no repeat
pairing (see :func:`swiss_pairings`). Each game gets a key, unique within its tournament and sorting in
the canonical order, in which ratings are updated whatever order games finish in.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from arena.game import Variant
from arena.ledger.rows import ScheduledGame

if TYPE_CHECKING:  # (the spec's pydantic models are not loaded to read a schedule from the ledger)
    from arena.tournament.spec import TournamentSpec


def deal_seed(spec_seed: int, round_: int, pairing: int, deal: int) -> int:
    digest = hashlib.sha256(f"arena-deal:{spec_seed}:{round_}:{pairing}:{deal}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


class HasVariant(Protocol):
    def build_variant(self) -> Variant: ...


def players_per_game(spec: HasVariant) -> tuple[int, ...]:
    v = spec.build_variant()
    return tuple(v.team_size(s) for s in range(v.seats))


def pairings(spec: TournamentSpec) -> list[tuple[str, ...]]:
    """The groups of a round robin, double round robin or gauntlet (one round). With partners, each
    group of four is split into teams in the three possible ways, each split a pairing of its own, in
    seat order (the first team sits at seats 0 and 2)."""
    names = [e.name for e in spec.entrants]
    size = sum(players_per_game(spec))
    if spec.format == "gauntlet":
        field = [n for n in names if n != spec.challenger]
        groups = [(spec.challenger, *rest) for rest in itertools.combinations(field, size - 1)]
    else:
        groups = list(itertools.combinations(names, size))
        if spec.format == "double-round-robin":
            groups += [tuple(reversed(g)) for g in groups]
    if _two_teams_of_two(spec):
        groups = [split for g in groups for split in _team_splits(g)]
    return groups


def _two_teams_of_two(spec: HasVariant) -> bool:
    """Partners (seats 0 and 2 against 1 and 3), or two seats each shared by two players: a group of
    four meets in its three team splits, not in rotations (which keep two of the teams apart)."""
    v = spec.build_variant()
    return bool(v.partnerships) or tuple(v.team_size(s) for s in range(v.seats)) == (2, 2)


def _team_splits(group: tuple[str, ...]) -> list[tuple[str, ...]]:
    a, b, c, d = group
    return [(a, c, b, d), (a, b, c, d), (a, b, d, c)]  # teams {a,b}, {a,c}, {a,d}


def arrangements(spec: HasVariant, group: tuple[str, ...]) -> list[tuple[tuple[str, ...], ...]]:
    """The seatings of one deal's duplicate set: each player through every position (with partners:
    the two teams exchange sides). Each seating gives the players of each seat."""
    sizes = players_per_game(spec)
    orders: list[tuple[str, ...]]
    if spec.build_variant().partnerships:
        a, c, b, d = group  # seats 0, 1, 2, 3: team {a, b} against {c, d}
        orders = [(a, c, b, d), (c, a, d, b)]
    elif _two_teams_of_two(spec):
        a, c, b, d = group  # seat 0 shared by {a, b}, seat 1 by {c, d}
        orders = [(a, b, c, d), (c, d, a, b)]
    else:
        orders = [group[r:] + group[:r] for r in range(len(group))]
    out = []
    for players in orders:
        seats, i = [], 0
        for n in sizes:
            seats.append(tuple(players[i : i + n]))
            i += n
        out.append(tuple(seats))
    return out


def games_for_round(
    spec: TournamentSpec, round_: int, groups: Sequence[tuple[str, ...]], first_ord: int = 0
) -> list[ScheduledGame]:
    out: list[ScheduledGame] = []
    ord_ = first_ord
    for p, group in enumerate(groups):
        seatings = arrangements(spec, group)
        for deal in range(spec.deals_per_pairing):
            # With a deal suite, deal d of every pairing is the suite's deal d (the same cards for
            # all); its dealer and decks are set when the game is played (Rules.deals).
            if spec.deals is not None:
                seed = spec.deals.deal(deal).seed
            else:
                seed = deal_seed(spec.seed, round_, p, deal)
            # Duplicate: every seating on the same deal. Otherwise deals take the seatings in turn.
            rots = range(len(seatings)) if spec.duplicate else (deal % len(seatings),)
            for rot in rots:
                # Zero-padded so that keys sort in the canonical order (a million pairings, 10000 deals).
                key = f"r{round_:03d}-p{p:06d}-d{deal:04d}-s{rot}"
                out.append(
                    ScheduledGame(key, ord_, round_, p, deal, rot, seed, seatings[rot], group)
                )
                ord_ += 1
    return out


def full_schedule(spec: TournamentSpec) -> list[ScheduledGame]:
    """Every game of a round robin, double round robin or gauntlet."""
    if spec.format == "swiss":
        raise ValueError("a swiss schedule is made round by round (swiss_pairings)")
    return games_for_round(spec, 0, pairings(spec))


def swiss_pairings(
    names: Sequence[str], points: Mapping[str, float], met: set[frozenset[str]], round_: int
) -> tuple[list[tuple[str, str]], str | None]:
    """Pair players of equal score top-down with no repeat pairing (backtracking when needed); with an
    odd number, the lowest-placed player who has not had a bye gets it. Ties keep the entrants' order, so
    the pairing is deterministic. Returns (pairs, bye)."""
    order = sorted(names, key=lambda n: (-points.get(n, 0.0), names.index(n)))
    bye = None
    if len(order) % 2:
        byes = {n for n in names if frozenset((n,)) in met}
        for n in reversed(order):
            if n not in byes:
                bye = n
                break
        if bye is None:
            bye = order[-1]
        order.remove(bye)

    def pair(rest: list[str]) -> list[tuple[str, str]] | None:
        if not rest:
            return []
        first = rest[0]
        for j in range(1, len(rest)):
            other = rest[j]
            if frozenset((first, other)) in met:
                continue
            tail = pair(rest[1:j] + rest[j + 1 :])
            if tail is not None:
                return [(first, other), *tail]
        return None

    pairs = pair(order)
    if pairs is None:  # everyone has met everyone it could: allow repeats rather than stop
        pairs = [(order[i], order[i + 1]) for i in range(0, len(order), 2)]
    return pairs, bye
