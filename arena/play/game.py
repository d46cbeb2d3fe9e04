"""Playing one scheduled game on the in-process referee: what tournaments and competitions share.

A game is a one-game match between local bot processes (or remote bots). A game that ended on time
while the event loop timing the bots was stalled by the arena itself is played again (up to
``REPLAYS`` times), so that no bot is charged for the arena's own delay.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, replace

from arena.bots.limits import Limits
from arena.ledger.rows import DecisionTime, FinishedGame, ScheduledGame, record_text
from arena.play.deals import DealSuite
from arena.play.stall_watch import StallWatch
from arena.referee import (
    FailurePolicy,
    GameRecord,
    MatchConfig,
    MatchRecord,
    Outcome,
    Policies,
    TimeControl,
)
from arena.service.match_manager import MatchEntry, MatchManager, PlayerSpec

CONNECT_TIMEOUT = 30.0  # seconds for local bots to start and dial in, on a loaded machine
REPLAYS = 3  # times a game decided by a stall of the arena's own is played again
OUTPUT_SETTLE_SECONDS = 1.0  # for an exited bot's last output to be read


@dataclass(frozen=True, slots=True)
class GameRules:
    """What every game of a tournament or competition shares."""

    variant: str
    options: tuple[tuple[str, str], ...]
    time_control: TimeControl
    policies: Policies
    limits: Limits
    matches_per_process: int = 1
    deal_key: bytes | None = None  # the event's secret (None: deals follow the public seed)
    # A tournament's deal suite: a game's deal d is its deal d (seed, dealer, decks); None: the
    # scheduled game's seed alone.
    deals: DealSuite | None = None
    # Entrants that will not play, and why (excluded by a tournament's pre-run check, with
    # on_check_failure = "exclude"): nothing is started for them, and each forfeits its games at its
    # first decision, whatever the policy for a crash.
    absent: tuple[tuple[str, str], ...] = ()
    # Bytes of each bot's output kept per game (the tail of what it wrote during the game; 0: none).
    output_bytes: int = 0


@dataclass(frozen=True, slots=True)
class SeatOutput:
    """What a seat's bot process wrote during a game: the tail kept, and how much in all."""

    seat: int
    member: int
    tail: bytes
    written: int


@dataclass(frozen=True, slots=True)
class Played:
    record: MatchRecord | None  # the one-game match's record (None: the arena could not play it)
    error: str = ""  # why not
    replays: int = 0  # times it was played again because the arena stalled the clock
    # Each local bot's output during the game (GameRules.output_bytes; none for a remote bot).
    outputs: tuple[SeatOutput, ...] = ()

    @property
    def game(self) -> GameRecord | None:
        """The record of the game played."""
        return self.record.games[0] if self.record is not None else None

    @property
    def outcome(self) -> str:
        return self.record.games[0].outcome if self.record is not None else ""


def finished(record: MatchRecord) -> FinishedGame:
    """A one-game match record as the ledger is handed it: its game's result and each decision's
    time, and the whole record's JSON text."""
    g = record.games[0]
    result = g.result
    times = tuple(DecisionTime(d.seat, d.member, d.elapsed_ms, d.bank_ms) for d in g.decisions)
    return FinishedGame(
        g.outcome, g.detail, g.culprit,
        tuple(tuple(side) for side in result["sides"]), tuple(result["ranking"]),
        tuple(result["scores"]), record_text(record.to_dict()), times,
    )  # fmt: skip


class GamePlayer:
    def __init__(self, manager: MatchManager, rules: GameRules, watch: StallWatch) -> None:
        self.manager = manager
        self.rules = rules
        self.watch = watch

    async def play(self, game: ScheduledGame, commands: Mapping[str, str]) -> Played:
        """Play ``game``; ``commands`` gives each player's command line ("" for a remote bot)."""
        rules = self.rules
        absent = dict(rules.absent)
        policies = rules.policies
        if any(n in absent for seat in game.seats for n in seat):
            policies = replace(policies, on_crash=FailurePolicy.FORFEIT)
        loop = asyncio.get_running_loop()
        replays = 0
        while True:
            config = MatchConfig(
                variant=rules.variant,
                options=rules.options,
                seed=game.seed,
                games=1,
                time_control=rules.time_control,
                policies=policies,
                game_seeds=(game.seed,),
                deal_key=rules.deal_key or b"",
                series_before=game.series_before,
            )
            if rules.deals is not None:
                config = rules.deals.deal(game.deal).configure(config)
            players = [
                [PlayerSpec(n, commands[n], absent.get(n, "")) for n in seat] for seat in game.seats
            ]
            entry = self.manager.create(
                config, players, CONNECT_TIMEOUT, rules.limits, rules.matches_per_process
            )
            started = loop.time()
            await self.manager.start(entry)
            await entry.done.wait()
            outputs = await self._outputs(entry) if rules.output_bytes > 0 else ()
            if entry.record is None:
                return Played(None, entry.error or "no record", replays)
            stalled = self.watch.longest(started, loop.time())
            if (
                entry.record.games[0].outcome == Outcome.TIMEOUT.text
                and stalled > self.watch.threshold
                and replays < REPLAYS
            ):
                replays += 1  # the arena held the clock up: the bot is not charged
                continue
            return Played(entry.record, "", replays, outputs)

    async def _outputs(self, entry: MatchEntry) -> tuple[SeatOutput, ...]:
        """What each seat's bot process wrote during the game just over (all of it read first when
        the process has exited: a crash's traceback comes last)."""
        out = []
        for seat, ports in enumerate(entry.players):
            for member, port in enumerate(ports):
                proc = port.process
                if proc is None:
                    continue
                if proc.returncode is not None:
                    await proc.output_done(OUTPUT_SETTLE_SECONDS)
                tail, written = proc.take_output(self.rules.output_bytes)
                out.append(SeatOutput(seat, member, tail, written))
        return tuple(out)
