"""Play a tournament's schedule through the referee into the ledger; resume it when run again.

Games are keyed in the ledger, so a run that was interrupted (even killed) skips the games already
recorded and plays the rest; none is lost or played twice. Up to ``concurrency`` games run at once on one
in-process referee server; each is a one-game match between local bot processes.

One process runs a tournament at a time (a lease in the ledger). Every ledger call runs on a thread of
its own (:mod:`arena.play.ledger_thread`), never on the event loop that times the bots; a game that ended
on time while that loop was stalled is played again, not charged to the bot (:mod:`arena.play.stall_watch`). A fatal
error (the ledger locked for longer than its busy timeout, a full disk) ends the run at once: every game
is cancelled and every bot stopped before the error is raised.

With a Ray cluster (``cluster`` in the file, ``arena run --cluster``) the games are played on its nodes
instead: the command line connects to it and hands the runner the cluster's player
(:class:`RemotePlayer`, :class:`arena.cluster.player.ClusterPlayer`); the entrants are checked there,
and each game's record comes back here to be written exactly as a local game's is. The runner itself
never imports the cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from arena.bots.launcher import resolve_paths
from arena.bots.limits import Limits
from arena.ledger import Ledger
from arena.ledger.leases import RENEW_SECONDS
from arena.ledger.rows import ScheduledGame
from arena.play.game import CONNECT_TIMEOUT, GamePlayer, GameRules, Played, finished
from arena.play.ledger_thread import LedgerWorker
from arena.play.seatings import is_series
from arena.play.stall_watch import StallWatch
from arena.referee import GameRecord, MatchConfig, MatchRecord
from arena.referee.series import allies_won
from arena.sandbox import require
from arena.service.match_manager import ManagerOptions, MatchManager, PlayerSpec
from arena.service.server import create_server
from arena.tournament.schedule import full_schedule, games_for_round, swiss_pairings
from arena.tournament.spec import TournamentSpec

SWISS_ROUND_STRIDE = 1_000_000  # ord of round r starts at r * stride: rounds rate in order
TICK = 1.0  # seconds between progress reports while games run


@dataclass(slots=True)
class Progress:
    planned: int = 0
    done: int = 0  # recorded, this run or an earlier one
    resumed: int = 0  # already in the ledger when this run started
    running: int = 0
    failures: int = 0  # games ended by a bot's failure (timeout, crash, ...)
    errors: int = 0  # games the arena could not play (recorded nowhere; a rerun plays them)
    replayed: int = 0  # games played again because the arena stalled the bots' clock
    last: str = ""


ProgressSink = Callable[[Progress], None]


class Player(Protocol):
    """Plays one scheduled game: on this machine (:class:`GamePlayer`) or on a Ray cluster
    (:class:`arena.cluster.player.ClusterPlayer`)."""

    async def play(self, game: ScheduledGame, commands: dict[str, str]) -> Played: ...


class RemotePlayer(Player, Protocol):
    """A player of games on other machines (a Ray cluster: :class:`arena.cluster.player.ClusterPlayer`),
    handed to the runner by the command line: it checks the entrants where they will play, is told
    the rules once the tournament is registered, and says how many games it can take at once."""

    rules: GameRules | None
    hidden: tuple[str, ...]  # paths never shown to a bot

    async def preflight(
        self,
        commands: Mapping[str, str],
        variant: str,
        options: tuple[tuple[str, str], ...],
        limits: Limits,
        concurrency: int,
    ) -> tuple[str, list[str]]: ...

    def in_flight(self) -> int: ...

    async def finish(self) -> None: ...


def hidden_paths(spec: TournamentSpec, ledger: Ledger) -> list[Path]:
    """Never shown to a bot, nor sent to a node: the ledger, the tournament file, its deal suite."""
    return [
        Path(ledger.path),
        *([Path(spec.source)] if spec.source else []),
        *([Path(spec.deals_file)] if spec.deals_file else []),
    ]


class EntrantCannotStart(Exception):
    """Entrants that did not start, dial in and say Hello (one line each, with why)."""

    def __init__(self, failures: list[str]) -> None:
        super().__init__("\n".join(failures))
        self.failures = failures


class TournamentRunner:
    def __init__(
        self,
        spec: TournamentSpec,
        ledger: Ledger,
        on_progress: ProgressSink | None = None,
        logs_dir: Path | None = None,
        deal_key: bytes | None = None,
        remote: RemotePlayer | None = None,
    ) -> None:
        self.spec = spec
        self.ledger = ledger
        self.on_progress = on_progress or (lambda p: None)
        self.logs_dir = logs_dir
        self.new_deal_key = deal_key  # for a new tournament only (to reproduce one elsewhere)
        self.progress = Progress()
        self.commands = {e.name: resolve_paths(e.command, spec.base_dir) for e in spec.entrants}
        self.deal_key: bytes | None = None
        self.tid = 0
        # Games go to this player on other machines (a Ray cluster's, connected by the caller).
        self.remote = remote
        self.isolation = ""  # on a cluster: the sandbox a node gave the entrants' check
        # Entrants the pre-run check left out of play (on_check_failure = "exclude"), and why.
        self.excluded: dict[str, str] = {}

    async def run(self) -> int:
        """Play every game not yet recorded; returns the tournament's id in the ledger.

        Before anything is written: raises :class:`arena.sandbox.SandboxUnavailable` when the
        tournament requires isolation that this machine (on a cluster: a node) cannot give, and
        :class:`EntrantCannotStart` when an entrant does not start, dial in and say Hello (each is
        tried once, unless the tournament is already finished)."""
        if self.remote is not None:
            return await self._run_remote(self.remote)
        spec = self.spec
        self.sandbox = require(spec.limits.sandbox)
        server, _, manager = await create_server(
            logs_dir=self.logs_dir,
            options=ManagerOptions(
                # Never shown to a sandboxed bot, even inside a folder it may see.
                hidden=tuple(self._hidden()),
                # Enough waiting bot processes of each entrant for every game that may run at once.
                idle_per_kind=spec.concurrency + 1,
            ),
        )
        watch = StallWatch(threshold=max(spec.time_control.grace_ms / 1000, 0.05))
        try:

            async def play(rules: GameRules) -> None:
                watch.start()
                try:
                    self.player = GamePlayer(manager, rules, watch)
                    await self._run_with(self.player)
                finally:
                    await watch.stop()

            await self._run_ledger(lambda: self._preflight(manager), play)
        finally:
            await manager.close()
            await server.stop(0)
        return self.tid

    async def _run_remote(self, on: RemotePlayer) -> int:
        """Each game played elsewhere (a Ray task); the records come back to be written here."""
        on.hidden = tuple(str(p) for p in self._hidden())

        async def preflight() -> None:
            spec = self.spec
            self.isolation, failures = await on.preflight(
                self.commands, spec.variant, spec.options, spec.limits, spec.concurrency
            )
            self._judge_check(failures)

        async def play(rules: GameRules) -> None:
            on.rules = rules
            await self._run_with(on)

        await self._run_ledger(preflight, play)
        # The bots' logs that the nodes still hold come back before the cluster goes.
        await on.finish()
        return self.tid

    def _hidden(self) -> list[Path]:
        return hidden_paths(self.spec, self.ledger)

    async def _run_ledger(
        self,
        preflight: Callable[[], Awaitable[None]],
        play: Callable[[GameRules], Awaitable[None]],
    ) -> None:
        """The entrants checked (unless the tournament is finished), the tournament registered and
        leased, then its games played by ``play``."""
        spec = self.spec
        db = self.db = LedgerWorker()
        try:
            if not await db.call(self.ledger.finished, spec.name):
                await preflight()
            entry = await db.call(self.ledger.register, spec, self.new_deal_key)
            self.tid, self.deal_key = entry.id, entry.deal_key
            await db.call(self.ledger.take_lease, self.tid)
            try:
                self.ids = await db.call(self.ledger.entrant_ids, spec.entrants)
                await play(
                    GameRules(
                        spec.variant,
                        spec.options,
                        spec.time_control,
                        spec.policies,
                        spec.limits,
                        spec.matches_per_process,
                        self.deal_key,
                        spec.deals,
                        tuple(self.excluded.items()),
                    )
                )
            finally:
                # A lock held by another program must not keep an interrupted run waiting: the lease of
                # a process that is gone is taken over anyway.
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(2.0):
                        await db.call(self.ledger.release_lease, self.tid)
        finally:
            db.close()

    async def _preflight(self, manager: MatchManager) -> None:
        """Start each entrant once: it must dial in and say Hello, or the run stops here."""
        spec = self.spec
        config = MatchConfig(variant=spec.variant, options=spec.options)
        gate = asyncio.Semaphore(spec.concurrency)

        async def check(name: str) -> str:
            async with gate:
                why = await manager.preflight(
                    PlayerSpec(name, self.commands[name]),
                    config,
                    spec.limits,
                    CONNECT_TIMEOUT,
                    spec.matches_per_process,  # a checked process then plays: one start fewer
                )
            return f"entrant {name!r} ({self.commands[name]}): {why}" if why else ""

        failures = [f for f in await asyncio.gather(*(check(e.name) for e in spec.entrants)) if f]
        self._judge_check(failures)

    def _judge_check(self, failures: list[str]) -> None:
        """What the pre-run check's failures (one line each, ``entrant 'NAME' (COMMAND): why``) do
        to the run: with ``on_check_failure = "stop"`` they stop it (EntrantCannotStart); with
        "exclude" each failing entrant is left out of play (:attr:`excluded`: it forfeits its own
        games, recorded with the check's reason) while at least two entrants remain to play."""
        if not failures:
            return
        names = [e.name for e in self.spec.entrants]
        failed = {
            name: line
            for line in failures
            for name in names
            if line.startswith(f"entrant {name!r} ")
        }
        if self.spec.on_check_failure != "exclude" or len(names) - len(failed) < 2:
            raise EntrantCannotStart(failures)
        for name, line in failed.items():
            local = f"entrant {name!r} ({self.commands[name]}): "
            why = line.removeprefix(local) if line.startswith(local) else line.split("): ", 1)[-1]
            self.excluded[name] = f"excluded by the pre-run check: {why}"

    async def _run_with(self, player: Player) -> None:
        spec = self.spec
        background = [
            asyncio.create_task(self._renew_lease()),
            asyncio.create_task(self._tick()),
        ]
        try:
            if spec.format == "swiss":
                self.progress.planned = (
                    spec.rounds * (len(spec.entrants) // 2) * self._per_pairing()
                )
                for round_ in range(spec.rounds):
                    await self._play(player, await self._swiss_round(round_))
            else:
                await self._play(player, full_schedule(spec))
            if self.progress.errors == 0:
                await self.db.call(self.ledger.finish_tournament, self.tid)
        finally:
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)

    async def _renew_lease(self) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            await self.db.call(self.ledger.renew_lease, self.tid)

    async def _tick(self) -> None:
        """Report progress at a steady pace too (a long game shows the time passing)."""
        while True:
            await asyncio.sleep(TICK)
            self.on_progress(self.progress)

    def _per_pairing(self) -> int:
        v = self.spec.build_variant()
        size = sum(v.team_size(s) for s in range(v.seats))
        return self.spec.deals_per_pairing * (size if self.spec.duplicate else 1)

    async def _swiss_round(self, round_: int) -> list[ScheduledGame]:
        """Round ``round_``'s games: as planned before (a resumed run), or paired now from the results of
        the rounds before."""
        planned = await self.db.call(self.ledger.planned, self.tid, round_)
        if planned:
            return planned
        names = [e.name for e in self.spec.entrants]
        points: dict[str, float] = dict.fromkeys(names, 0.0)
        met: set[frozenset[str]] = set()
        per_pairing = float(self._per_pairing())
        for r in range(round_):
            seen: set[str] = set()
            for game in await self.db.call(self.ledger.planned, self.tid, r):
                met.add(frozenset(game.group))
                seen.update(game.group)
            for name in names:
                if name not in seen:
                    # The bye: as if every game of the pairing won, and no second bye.
                    points[name] += per_pairing
                    met.add(frozenset((name,)))
        # A game's first place is worth one point, shared on a draw.
        firsts: dict[int, list[str]] = {}
        for row in await self.db.call(self.ledger.seat_rows, self.tid):
            if row["place"] == 0:
                firsts.setdefault(row["game_id"], []).append(row["entrant"])
        for winners in firsts.values():
            for name in winners:
                points[name] += 1.0 / len(winners)
        pairs, _ = swiss_pairings(names, points, met, round_)
        games = games_for_round(self.spec, round_, pairs, first_ord=round_ * SWISS_ROUND_STRIDE)
        await self.db.call(self.ledger.plan, self.tid, games)
        return games

    async def _play(self, player: Player, games: list[ScheduledGame]) -> None:
        spec = self.spec
        if spec.format != "swiss":
            self.progress.planned = len(games)
            await self.db.call(self.ledger.plan, self.tid, games)
        done = await self.db.call(self.ledger.done_keys, self.tid)
        todo = [g for g in games if g.key not in done]
        already = len(games) - len(todo)
        self.progress.resumed += already
        self.progress.done += already
        self.on_progress(self.progress)
        jobs: list[Callable[[], Awaitable[Any]]]
        if is_series(spec):
            # A consultation series: each pairing's games one after the other (pairings at once).
            series: dict[tuple[int, int], list[ScheduledGame]] = {}
            for g in games:
                series.setdefault((g.round, g.pairing), []).append(g)
            jobs = [
                _job(self._series, player, run, done)
                for run in series.values()
                if any(g.key not in done for g in run)
            ]
        else:
            jobs = [_job(self._one, player, g) for g in todo]
        pending = iter(jobs)
        at_once = spec.concurrency
        if self.remote is not None and jobs:
            # As many games as the cluster's nodes have room for, and one waiting per node.
            at_once = await asyncio.to_thread(self.remote.in_flight)
        workers = [asyncio.create_task(_work(pending)) for _ in range(min(at_once, len(jobs)))]
        await _all_or_none(workers)

    async def _series(self, player: Player, games: list[ScheduledGame], done: set[str]) -> None:
        """A pairing's consultation series (docs/rules.md §3.2), its games in deal order: the first
        seated by the three players' cut, each next one by the seating and result of the one before
        (the single player stays unless the allies won; then the two cut), every cut drawn by the
        referee from the seed of the game it comes before. A resumed series starts at its first game
        not recorded, after the record of the game before it (its seating and result, read from the
        ledger): the same cut from the same seed, so the same seating as an uninterrupted run. A game
        the arena could not play stops its series there (the next run resumes it)."""
        before: GameRecord | None = None
        for i, game in enumerate(games):
            if game.key in done:
                before = None
                continue
            if i > 0:
                if before is None:
                    data = await self.db.call(self.ledger.recorded, self.tid, games[i - 1].key)
                    before = None if data is None else MatchRecord.from_dict(data).games[0]
                if before is None:  # (not recorded: the game before has not been played)
                    self.progress.errors += 1
                    self.progress.last = f"{game.key}: {games[i - 1].key} is not recorded"
                    return
                seating = tuple(tuple(seat) for seat in before.seating)
                won = allies_won(before.result["ranking"])
                game = replace(game, series_before=(seating, won))
            before = await self._one(player, game)
            if before is None:
                return

    async def _one(self, player: Player, game: ScheduledGame) -> GameRecord | None:
        """Play one game and record it; returns its record (None: the arena could not play it)."""
        self.progress.running += 1
        self.on_progress(self.progress)
        try:
            played = await player.play(game, self.commands)
            self.progress.replayed += played.replays
            if played.record is None:
                self.progress.errors += 1
                self.progress.last = f"{game.key}: {played.error}"
                return None
            record = played.record.games[0]
            await self.db.call(
                self.ledger.record_game,
                self.tid,
                self.spec.variant,
                _as_seated(game, record),
                self.ids,
                finished(played.record),
            )
            if played.outcome != "normal":
                self.progress.failures += 1
            self.progress.done += 1
            self.progress.last = f"{game.key}: {played.outcome}"
            return record
        finally:
            self.progress.running -= 1
            self.on_progress(self.progress)


def _as_seated(game: ScheduledGame, record: GameRecord) -> ScheduledGame:
    """The game with the seats it was played in: a consultation series' game records its seating
    (indexes into the match's players, as planned), which the ledger's seats and ratings follow."""
    seating = record.seating
    if not seating:
        return game
    roster = game.players
    return replace(game, seats=tuple(tuple(roster[i] for i in seat) for seat in seating))


def _job(fn: Callable[..., Awaitable[Any]], *args: Any) -> Callable[[], Awaitable[Any]]:
    return lambda: fn(*args)


async def _work(pending: Iterator[Callable[[], Awaitable[Any]]]) -> None:
    for job in pending:
        await job()


async def _all_or_none(tasks: Iterable[asyncio.Task[None]]) -> None:
    """Wait for every task; the first to fail cancels the others (their games and bots stop) and its
    error is raised once they are all gone."""
    tasks = list(tasks)
    if not tasks:
        return
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
