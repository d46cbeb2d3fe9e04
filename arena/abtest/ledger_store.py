"""An A/B test in the ledger: its games recorded as they finish, an interrupted test resumed.

An A/B test is a row of ``tournaments`` of kind ``sprt``, known by its name, with the canonical JSON
of what defines it (:class:`AbTestSpec`: the versions' names and commands, the variant, the deals, the
hypotheses, the clock) and the secret its deals are drawn with. Each pair is planned as it starts
(``planned_games``: two games, keys ``pair000012-0`` and ``-1``, the pair's index as the deal and the
game's number as the rotation) and each game recorded when it ends, with its record and ratings, like
a tournament's; so ``arena games``, ``arena replay`` and the leaderboards show them. Run again with the
same ledger and name, the test counts the pairs already recorded, plays the missing game of a pair
cut in half, and goes on; a changed definition is refused with the fields that changed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.abtest.duplicate_pairs import GameReport, PairReport, Seating, game_report, pair_seatings
from arena.game import Variant
from arena.ledger import Ledger
from arena.ledger.competitions import Competitions
from arena.ledger.leases import RENEW_SECONDS
from arena.ledger.rows import Entrant, ScheduledGame
from arena.play.game import finished
from arena.play.ledger_thread import LedgerWorker
from arena.referee import MatchRecord, TimeControl
from arena.stats import Sprt

KIND = "sprt"
_KEY = re.compile(r"pair(\d{6,})-([01])")


def game_key(index: int, number: int) -> str:
    return f"pair{index:06d}-{number}"


@dataclass(frozen=True, slots=True)
class AbTestSpec:
    """What defines an A/B test: resuming it with any of this changed is refused, except
    ``concurrency``. The game limit is not part of it: a test may be resumed to go further."""

    name: str
    variant: str
    options: tuple[tuple[str, str], ...]
    players: tuple[tuple[str, str, str], ...]  # (role, name, command), the roles it seats
    sprt: Sprt
    deals: tuple[tuple[str, str], ...]  # ("seed", "1") or ("file", path), ("sha256", digest)
    time_control: TimeControl = field(default_factory=TimeControl)
    matches_per_process: int = 1
    concurrency: int = 1
    source: str = ""  # the deal suite's file, if any

    def to_dict(self) -> dict[str, Any]:
        s, tc = self.sprt, self.time_control
        return {
            "kind": KIND,
            "name": self.name,
            "variant": self.variant,
            "options": dict(self.options),
            "players": [{"role": r, "name": n, "command": c} for r, n, c in self.players],
            "sprt": {
                "elo0": s.elo0,
                "elo1": s.elo1,
                "alpha": s.alpha,
                "beta": s.beta,
                "model": s.model.value,
            },
            "deals": dict(self.deals),
            "time_control": {
                "budget_ms": tc.budget_ms,
                "bank_ms": tc.bank_ms,
                "grace_ms": tc.grace_ms,
            },
            "matches_per_process": self.matches_per_process,
            "concurrency": self.concurrency,
        }

    @property
    def entrants(self) -> tuple[Entrant, ...]:
        return tuple(Entrant(n, c) for _, n, c in self.players)

    @property
    def roles(self) -> dict[str, str]:
        """Role by entrant name."""
        return {n: r for r, n, _ in self.players}


@dataclass(frozen=True, slots=True)
class Resumed:
    """What an earlier run of the test left in the ledger."""

    test_id: int
    deal_key: bytes  # empty: deals from the public seed (a test recorded without a secret)
    resumed: bool
    pairs: tuple[PairReport, ...]  # complete pairs, by index
    partial: dict[tuple[int, int], GameReport]  # the recorded game of each pair cut in half


def load_played(
    ledger: Ledger, test_id: int, v: Variant
) -> tuple[list[PairReport], dict[tuple[int, int], GameReport]]:
    """The pairs of a test recorded in the ledger (complete ones, by index) and the single recorded
    games of pairs cut in half."""
    seeds: dict[int, int] = {}
    games: dict[tuple[int, int], GameReport] = {}
    for row in ledger.games(test_id, limit=-1):
        m = _KEY.fullmatch(str(row["key"]))
        if m is None:
            continue  # not a game of an A/B test (cannot happen in a ledger written by the arena)
        index, number = int(m[1]), int(m[2])
        seats = pair_seatings(v, index)[number]
        record = MatchRecord.from_dict(ledger.game_record(int(row["id"])))
        games[(index, number)] = game_report(v, seats, record)
    for game in ledger.planned(test_id, 0):
        seeds[game.deal] = game.seed
    pairs = [
        PairReport(i, seeds.get(i, 0), (games[(i, 0)], games[(i, 1)]))
        for i in sorted({i for i, _ in games})
        if (i, 0) in games and (i, 1) in games
    ]
    complete = {p.index for p in pairs}
    partial = {k: g for k, g in games.items() if k[0] not in complete}
    return pairs, partial


class AbTestLedger:
    """An A/B test's :class:`~arena.abtest.duplicate_pairs.PairRecorder` on the ledger: every call runs on a
    thread of its own (:class:`LedgerWorker`), never on the event loop that times the bots."""

    def __init__(self, ledger: Ledger, spec: AbTestSpec, v: Variant) -> None:
        self.ledger = ledger
        self.spec = spec
        self.variant = v
        self.db = LedgerWorker("sprt-ledger")
        self.test_id = 0
        self.ids: dict[str, int] = {}
        self.names = {r: n for r, n, _ in spec.players}
        self.group = tuple(n for _, n, _ in spec.players)
        self.leased = False
        self.seeds: dict[int, int] = {}  # each planned pair's public deal seed

    async def open(self, deal_key: bytes | None = None) -> Resumed:
        """Register the test (new: with ``deal_key``, or a fresh secret), take its lease, and read
        what was recorded before. Raises :class:`arena.ledger.LedgerError` (a changed definition:
        :class:`~arena.ledger.errors.TournamentChanged`; another process running it:
        :class:`~arena.ledger.errors.LeaseHeld`)."""
        entry = await self.db.call(self.ledger.register, self.spec, deal_key, KIND)
        self.test_id = entry.id
        await self.db.call(self.ledger.take_lease, self.test_id)
        self.leased = True
        self.ids = await self.db.call(self.ledger.entrant_ids, self.spec.entrants)
        # Games planned by a run that stopped before playing them are planned afresh when played.
        await self.db.call(Competitions(self.ledger).unplan_unplayed, self.test_id)
        pairs, partial = await self.db.call(load_played, self.ledger, self.test_id, self.variant)
        return Resumed(self.test_id, entry.deal_key or b"", entry.resumed, tuple(pairs), partial)

    async def renew(self) -> None:
        await self.db.call(self.ledger.renew_lease, self.test_id)

    renew_seconds = RENEW_SECONDS

    def scheduled(self, index: int, number: int, seed: int, seats: Seating) -> ScheduledGame:
        return ScheduledGame(
            key=game_key(index, number),
            ord=2 * index + number,
            round=0,
            pairing=0,
            deal=index,
            rotation=number,
            seed=seed,
            seats=tuple(tuple(self.names[r] for r in seat) for seat in seats),
            group=self.group,
        )

    async def plan(self, index: int, seed: int, seatings: Sequence[Seating]) -> None:
        games = [self.scheduled(index, n, seed, s) for n, s in enumerate(seatings)]
        self.seeds[index] = seed
        await self.db.call(self.ledger.plan, self.test_id, games)

    async def record(self, index: int, number: int, seats: Seating, record: MatchRecord) -> None:
        game = self.scheduled(index, number, self.seeds[index], seats)
        await self.db.call(
            self.ledger.record_game, self.test_id, self.variant.name, game, self.ids,
            finished(record),
        )  # fmt: skip

    async def not_played(self, index: int) -> None:
        keys = (game_key(index, 0), game_key(index, 1))
        await self.db.call(Competitions(self.ledger).unplan_unplayed, self.test_id, keys)

    async def finish(self) -> None:
        """The test decided: no game of it is left to play."""
        await self.db.call(self.ledger.finish_tournament, self.test_id)

    async def close(self) -> None:
        """Forget the games planned but not played (pairs cancelled when the test decided or was
        stopped: the games after them can be rated), release the lease and end the thread."""
        try:
            if self.leased:
                await self.db.call(Competitions(self.ledger).unplan_unplayed, self.test_id)
                await self.db.call(self.ledger.release_lease, self.test_id)
        finally:
            self.db.close()
