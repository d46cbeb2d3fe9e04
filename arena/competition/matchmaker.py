"""Matchmaking for a standing competition, after Halite III's, improved so that every entrant plays
from the start.

The next game goes to the entrant that most needs games: the fewest games (finished and in play), then
the one that has waited longest (the oldest ``last``: its last game's order, -1 for never), then the
lowest entrant id (its registration order; never its name, which an author chooses). Its opponents are
drawn from the entrants that also need games: those with fewer games than the median, or when there
are none, those with the fewest (a fresh competition: the ones that have not played yet). Among those,
they are drawn at random from the ``window`` nearest to it in mu, never two bots of one author in a
game; only when the needy cannot fill the game (too few, or all of its authors) do the others make up
the rest, the nearest in mu first. So an entrant with fewer games than the median gets one before
anyone at or above it, and of 5,000 fresh entrants each plays in the first 2,500 two-player pairings
or so (``tests/competition/test_matchmaker.py`` checks the bound). The game's deal is then played once
per seat rotation (duplicate), so that luck cancels.

Cost: the pool keeps one list sorted by mu per number of games (a *level*) and a heap of needs, so
that a change of one entrant (:meth:`Pool.put`, :meth:`Pool.remove`) is a bisect and a heap push
(O(log n) comparisons; the list's insertion moves pointers in one memmove), never a pass over the
entrants, and a pairing costs a few heap steps plus a bisect per needy level (a handful: the
matchmaker keeps the entrants' games together). ``benchmarks/competition.py`` prints the figures.
"""

from __future__ import annotations

import bisect
import heapq
import random
from dataclasses import dataclass

Need = tuple[int, int, int]  # (games, last, entrant): the smallest needs a game most


@dataclass(frozen=True, slots=True)
class Candidate:
    entrant: int  # the entrant's id (one version of one bot)
    author: int
    mu: float
    sigma: float
    games: int  # finished and in play
    last: int  # when it last played (a growing counter; -1: never)
    name: str = ""  # shown in the server's messages; never part of the order

    @property
    def need(self) -> Need:
        """Sort key: the entrant that needs a game most comes first."""
        return (self.games, self.last, self.entrant)


class Pool:
    """The entrants that may be paired now."""

    def __init__(self) -> None:
        self._members: dict[int, Candidate] = {}
        # Per number of games: (mu, entrant) sorted; and the levels present, sorted.
        self._levels: dict[int, list[tuple[float, int]]] = {}
        self._level_keys: list[int] = []
        self._heap: list[tuple[Need, int]] = []  # (need, entrant); stale entries are skipped

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, entrant: int) -> bool:
        return entrant in self._members

    def get(self, entrant: int) -> Candidate | None:
        return self._members.get(entrant)

    def put(self, c: Candidate) -> None:
        """Add an entrant, or update one (its rating, its games)."""
        old = self._members.get(c.entrant)
        if old is not None and old == c:
            return
        self.remove(c.entrant)
        self._members[c.entrant] = c
        level = self._levels.get(c.games)
        if level is None:
            level = self._levels[c.games] = []
            bisect.insort(self._level_keys, c.games)
        bisect.insort(level, (c.mu, c.entrant))
        heapq.heappush(self._heap, (c.need, c.entrant))
        if len(self._heap) > 4 * len(self._members) + 64:  # too many stale entries: rebuild
            self._heap = [(m.need, e) for e, m in self._members.items()]
            heapq.heapify(self._heap)

    def remove(self, entrant: int) -> None:
        old = self._members.pop(entrant, None)
        if old is None:
            return
        level = self._levels[old.games]
        del level[bisect.bisect_left(level, (old.mu, entrant))]
        if not level:
            del self._levels[old.games]
            del self._level_keys[bisect.bisect_left(self._level_keys, old.games)]

    def median(self) -> int:
        """The lower median of the entrants' games (0 for an empty pool)."""
        position = (len(self._members) - 1) // 2
        for games in self._level_keys:
            position -= len(self._levels[games])
            if position < 0:
                return games
        return 0

    def needy_below(self) -> int:
        """Entrants with fewer games than this need games: those below the median, or when none is,
        those with the fewest games."""
        if not self._level_keys:
            return 0
        return max(self.median(), self._level_keys[0] + 1)

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
        below = self.needy_below()
        needy = [g for g in self._level_keys if g < below]
        others = [g for g in self._level_keys if g >= below]
        while len(game) < players:
            near = self._nearest(first, authors, window, needy)
            if not near:
                near = self._nearest(first, authors, window, others)
            if not near:
                return None
            chosen = near[rng.randrange(len(near))]
            game.append(chosen)
            authors.add(chosen.author)
        return game

    def _nearest(
        self, first: Candidate, authors: set[int], window: int, levels: list[int]
    ) -> list[Candidate]:
        """The ``window`` entrants of these levels nearest to ``first`` in mu whose author is not in
        ``authors``: each level's list walked outwards from ``first``'s mu, the nearest step of all
        taken each time (a heap of one frontier per direction and level)."""
        frontier: list[tuple[float, int, int, int]] = []  # (distance, level, index, step)
        for games in levels:
            by_mu = self._levels[games]
            i = bisect.bisect_left(by_mu, (first.mu, first.entrant))
            if i - 1 >= 0:
                frontier.append((first.mu - by_mu[i - 1][0], games, i - 1, -1))
            if i < len(by_mu):
                frontier.append((by_mu[i][0] - first.mu, games, i, 1))
        heapq.heapify(frontier)
        out: list[Candidate] = []
        while frontier and len(out) < window:
            _, games, i, step = heapq.heappop(frontier)
            by_mu = self._levels[games]
            c = self._members[by_mu[i][1]]
            j = i + step
            if 0 <= j < len(by_mu):
                heapq.heappush(frontier, (abs(by_mu[j][0] - first.mu), games, j, step))
            if c.author not in authors:
                out.append(c)
        return out
