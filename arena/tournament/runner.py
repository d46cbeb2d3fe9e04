"""Play a tournament's schedule through the referee into the ledger; resume it when run again.

Games are keyed in the ledger, so a run that was interrupted (even killed) skips the games already
recorded and plays the rest; none is lost or played twice. Up to ``concurrency`` games run at once on one
in-process referee server; each is a one-game match between local bot processes.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.ledger import Ledger
from arena.referee import MatchConfig
from arena.service.manager import MatchManager, PlayerSpec
from arena.service.server import create_server
from arena.tournament.schedule import ScheduledGame, full_schedule, games_for_round, swiss_pairings
from arena.tournament.spec import TournamentSpec

CONNECT_TIMEOUT = 30.0  # seconds for local bots to start and dial in, on a loaded machine
SWISS_ROUND_STRIDE = 1_000_000  # ord of round r starts at r * stride: rounds rate in order


@dataclass(slots=True)
class Progress:
    planned: int = 0
    done: int = 0  # recorded, this run or an earlier one
    resumed: int = 0  # already in the ledger when this run started
    running: int = 0
    failures: int = 0  # games ended by a bot's failure (timeout, crash, ...)
    errors: int = 0  # games the arena could not play (recorded nowhere; a rerun plays them)
    last: str = ""


ProgressSink = Callable[[Progress], None]


def command_for(template: str) -> str:
    """Expand ``{python}`` to the interpreter running the arena, so bots run in its environment."""
    return template.replace("{python}", shlex.quote(sys.executable))


class TournamentRunner:
    def __init__(
        self,
        spec: TournamentSpec,
        ledger: Ledger,
        on_progress: ProgressSink | None = None,
        logs_dir: Path | None = None,
    ) -> None:
        self.spec = spec
        self.ledger = ledger
        self.on_progress = on_progress or (lambda p: None)
        self.logs_dir = logs_dir
        self.progress = Progress()
        self.commands = {e.name: command_for(e.command) for e in spec.entrants}

    async def run(self) -> int:
        """Play every game not yet recorded; returns the tournament's id in the ledger."""
        spec = self.spec
        tid, _ = self.ledger.tournament(spec)
        self.tid = tid
        self.ids = self.ledger.entrant_ids(spec.entrants)
        server, _, manager = await create_server(logs_dir=self.logs_dir)
        # Enough waiting bot processes of each entrant for every game that may run at once.
        manager.idle_per_kind = spec.concurrency + 1
        try:
            if spec.format == "swiss":
                self.progress.planned = (
                    spec.rounds * (len(spec.entrants) // 2) * self._per_pairing()
                )
                for round_ in range(spec.rounds):
                    await self._play(manager, self._swiss_round(round_))
            else:
                await self._play(manager, full_schedule(spec))
            if self.progress.errors == 0:
                self.ledger.finish_tournament(tid)
        finally:
            await manager.close()
            await server.stop(0)
        return tid

    def _per_pairing(self) -> int:
        size = sum(
            self.spec.build_variant().team_size(s) for s in range(self.spec.build_variant().seats)
        )
        return self.spec.deals_per_pairing * (size if self.spec.duplicate else 1)

    def _swiss_round(self, round_: int) -> list[ScheduledGame]:
        """Round ``round_``'s games: as planned before (a resumed run), or paired now from the results of
        the rounds before."""
        planned = self.ledger.planned(self.tid, round_)
        if planned:
            return planned
        names = [e.name for e in self.spec.entrants]
        points: dict[str, float] = dict.fromkeys(names, 0.0)
        met: set[frozenset[str]] = set()
        per_pairing = float(self._per_pairing())
        for r in range(round_):
            seen: set[str] = set()
            for game in self.ledger.planned(self.tid, r):
                met.add(frozenset(game.group))
                seen.update(game.group)
            for name in names:
                if (
                    name not in seen
                ):  # the bye: as if every game of the pairing won, and no second bye
                    points[name] += per_pairing
                    met.add(frozenset((name,)))
        # A game's first place is worth one point, shared on a draw.
        firsts: dict[int, list[str]] = {}
        for row in self.ledger.seat_rows(self.tid):
            if row["place"] == 0:
                firsts.setdefault(row["game_id"], []).append(row["entrant"])
        for winners in firsts.values():
            for name in winners:
                points[name] += 1.0 / len(winners)
        pairs, _ = swiss_pairings(names, points, met, round_)
        games = games_for_round(self.spec, round_, pairs, first_ord=round_ * SWISS_ROUND_STRIDE)
        self.ledger.plan(self.tid, games)
        return games

    async def _play(self, manager: MatchManager, games: list[ScheduledGame]) -> None:
        spec = self.spec
        if spec.format != "swiss":
            self.progress.planned = len(games)
            self.ledger.plan(self.tid, games)
        done = self.ledger.done_keys(self.tid)
        todo = [g for g in games if g.key not in done]
        already = len(games) - len(todo)
        self.progress.resumed += already
        self.progress.done += already
        self.on_progress(self.progress)
        gate = asyncio.Semaphore(spec.concurrency)
        await asyncio.gather(*(self._one(manager, gate, g) for g in todo))

    async def _one(
        self, manager: MatchManager, gate: asyncio.Semaphore, game: ScheduledGame
    ) -> None:
        spec = self.spec
        async with gate:
            self.progress.running += 1
            self.on_progress(self.progress)
            try:
                config = MatchConfig(
                    variant=spec.variant,
                    options=spec.options,
                    seed=game.seed,
                    games=1,
                    time_control=spec.time_control,
                    policies=spec.policies,
                    game_seeds=(game.seed,),
                )
                players = [[PlayerSpec(n, self.commands[n]) for n in seat] for seat in game.seats]
                entry = manager.create(
                    config, players, CONNECT_TIMEOUT, spec.limits, spec.matches_per_process
                )
                await manager.start(entry)
                await entry.done.wait()
                if entry.record is None:
                    self.progress.errors += 1
                    self.progress.last = f"{game.key}: {entry.error or 'no record'}"
                    return
                data = entry.record.to_dict()
                self.ledger.record_game(self.tid, spec.variant, game, self.ids, data)
                outcome = data["games"][0]["outcome"]
                if outcome != "normal":
                    self.progress.failures += 1
                self.progress.done += 1
                self.progress.last = f"{game.key}: {outcome}"
            finally:
                self.progress.running -= 1
                self.on_progress(self.progress)
