"""Who sits where in one deal's games, and the seed a deal is drawn from: what tournaments' schedules
and competitions' pairings share.

A group of entrants meets on a deal once per seating (:func:`arrangements`): each player through every
position, or with partners the two teams exchanging sides; a group of four with two teams of two meets
in its three team splits (:func:`team_splits`).
"""

from __future__ import annotations

import hashlib
from typing import Protocol

from arena.game import Variant


def deal_seed(spec_seed: int, round_: int, pairing: int, deal: int) -> int:
    digest = hashlib.sha256(f"arena-deal:{spec_seed}:{round_}:{pairing}:{deal}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


class HasVariant(Protocol):
    def build_variant(self) -> Variant: ...


def players_per_game(spec: HasVariant) -> tuple[int, ...]:
    v = spec.build_variant()
    return tuple(v.team_size(s) for s in range(v.seats))


def two_teams_of_two(spec: HasVariant) -> bool:
    """Partners (seats 0 and 2 against 1 and 3), or two seats each shared by two players: a group of
    four meets in its three team splits, not in rotations (which keep two of the teams apart)."""
    v = spec.build_variant()
    return bool(v.partnerships) or tuple(v.team_size(s) for s in range(v.seats)) == (2, 2)


def is_series(spec: HasVariant) -> bool:
    """Three-handed consultation played as a series (docs/rules.md §3.2): a pairing's games are played
    one after the other, each seated by the results of the ones before, not by the schedule."""
    return spec.build_variant().consultation == "series"


def team_splits(group: tuple[str, ...]) -> list[tuple[str, ...]]:
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
    elif two_teams_of_two(spec):
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
