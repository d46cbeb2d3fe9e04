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

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from arena.ledger.rows import ScheduledGame
from arena.play.seatings import (
    arrangements,
    deal_seed,
    is_series,
    players_per_game,
    team_splits,
    two_teams_of_two,
)

if TYPE_CHECKING:  # (the spec's pydantic models are not loaded to read a schedule from the ledger)
    from arena.tournament.spec import TournamentSpec


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
    if two_teams_of_two(spec):
        groups = [split for g in groups for split in team_splits(g)]
    return groups


def games_for_round(
    spec: TournamentSpec, round_: int, groups: Sequence[tuple[str, ...]], first_ord: int = 0
) -> list[ScheduledGame]:
    out: list[ScheduledGame] = []
    ord_ = first_ord
    # A consultation series seats its players by the results (the runner, as the games are played):
    # every game of the pairing is planned in the base order, the series' roster.
    series = is_series(spec)
    for p, group in enumerate(groups):
        seatings = arrangements(spec, group)
        for deal in range(spec.deals_per_pairing):
            # With a deal suite, deal d of every pairing is the suite's deal d (the same cards for
            # all); its dealer and decks are set when the game is played (GameRules.deals).
            if spec.deals is not None:
                seed = spec.deals.deal(deal).seed
            else:
                seed = deal_seed(spec.seed, round_, p, deal)
            # Duplicate: every seating on the same deal. Otherwise deals take the seatings in turn.
            rots = (
                range(len(seatings)) if spec.duplicate else (0 if series else deal % len(seatings),)
            )
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
