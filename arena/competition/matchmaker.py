"""Matchmaking for a standing competition, after Halite III's, improved.

The next game goes to the entrant that most needs games: the fewest games (finished and in play), then
the most uncertain rating (highest sigma), then the one that waited longest. Its opponents are drawn at
random from the ``window`` entrants nearest to it in mu, never two bots of one author in a game. The
game's deal is then played once per seat rotation (duplicate), so that luck cancels.

The pool keeps its entrants ordered by mu and by need, updated as games start and end, so that a pairing
costs a few heap and bisect steps, not a pass over every entrant: a competition of thousands of
entrants pairs in well under a millisecond (``benchmarks/competition.py``).
"""

from __future__ import annotations

import bisect
import heapq
import random
from dataclasses import dataclass

Need = tuple[int, float, int, str]


@dataclass(frozen=True, slots=True)
class Candidate:
    entrant: int  # the entrant's id (one version of one bot)
    author: int
    mu: float
    sigma: float
    games: int  # finished and in play
    last: int  # when it last played (a growing counter; -1: never)
    name: str = ""

    @property
    def need(self) -> Need:
        """Sort key: the entrant that needs a game most comes first."""
        return (self.games, -self.sigma, self.last, self.name)


class Pool:
    """The entrants that may be paired now."""

    def __init__(self) -> None:
        self._by_mu: list[tuple[float, int]] = []  # (mu, entrant), sorted
        self._members: dict[int, Candidate] = {}
        self._heap: list[tuple[Need, int]] = []  # (need, entrant); stale entries are skipped

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, entrant: int) -> bool:
        return entrant in self._members

    def get(self, entrant: int) -> Candidate | None:
        return self._members.get(entrant)

    def put(self, c: Candidate) -> None:
        """Add an entrant, or update one (its rating, its games)."""
        self.remove(c.entrant)
        self._members[c.entrant] = c
        bisect.insort(self._by_mu, (c.mu, c.entrant))
        heapq.heappush(self._heap, (c.need, c.entrant))
        if len(self._heap) > 4 * len(self._members) + 64:  # too many stale entries: rebuild
            self._heap = [(m.need, e) for e, m in self._members.items()]
            heapq.heapify(self._heap)

    def remove(self, entrant: int) -> None:
        old = self._members.pop(entrant, None)
        if old is not None:
            i = bisect.bisect_left(self._by_mu, (old.mu, entrant))
            del self._by_mu[i]

    def _neediest(self, skip: set[int]) -> list[Candidate]:
        """Up to a few of the neediest entrants, in order (stale heap entries dropped)."""
        out: list[Candidate] = []
        kept: list[tuple[Need, int]] = []
        while self._heap and len(out) < 8:
            need, entrant = heapq.heappop(self._heap)
            c = self._members.get(entrant)
            if c is None or c.need != need:
                continue  # stale
            kept.append((need, entrant))
            if entrant not in skip:
                out.append(c)
        for item in kept:
            heapq.heappush(self._heap, item)
        return out

    def pick(self, players: int, window: int, rng: random.Random) -> list[Candidate] | None:
        """The entrants of the next game (the neediest first), or None when none can be made."""
        if len(self._members) < players:
            return None
        for first in self._neediest(set()):
            game = self._around(first, players, window, rng)
            if game is not None:
                return game
        return None

    def _around(
        self, first: Candidate, players: int, window: int, rng: random.Random
    ) -> list[Candidate] | None:
        game = [first]
        authors = {first.author}
        while len(game) < players:
            near = self._nearest(first, authors, window)
            if not near:
                return None
            chosen = near[rng.randrange(len(near))]
            game.append(chosen)
            authors.add(chosen.author)
        return game

    def _nearest(self, first: Candidate, authors: set[int], window: int) -> list[Candidate]:
        """The ``window`` entrants nearest to ``first`` in mu whose author is not in ``authors``."""
        by_mu = self._by_mu
        i = bisect.bisect_left(by_mu, (first.mu, first.entrant))
        lo, hi = i - 1, i + 1
        out: list[Candidate] = []
        while len(out) < window and (lo >= 0 or hi < len(by_mu)):
            below = first.mu - by_mu[lo][0] if lo >= 0 else float("inf")
            above = by_mu[hi][0] - first.mu if hi < len(by_mu) else float("inf")
            if below <= above:
                c = self._members[by_mu[lo][1]]
                lo -= 1
            else:
                c = self._members[by_mu[hi][1]]
                hi += 1
            if c.author not in authors:
                out.append(c)
        return out
