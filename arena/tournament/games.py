"""Playing one scheduled game on the in-process referee: what tournaments and competitions share.

A game is a one-game match between local bot processes (or remote bots). A game that ended on time
while the event loop timing the bots was stalled by the arena itself is played again (up to
``REPLAYS`` times), so that no bot is charged for the arena's own delay.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from arena.bots.limits import Limits
from arena.referee import FailurePolicy, MatchConfig, Policies, TimeControl
from arena.service.manager import MatchManager, PlayerSpec
from arena.tournament.deals import DealSuite
from arena.tournament.schedule import ScheduledGame
from arena.tournament.stalls import StallWatch

CONNECT_TIMEOUT = 30.0  # seconds for local bots to start and dial in, on a loaded machine
REPLAYS = 3  # times a game decided by a stall of the arena's own is played again


@dataclass(frozen=True, slots=True)
class Rules:
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


@dataclass(frozen=True, slots=True)
class Played:
    record: dict[str, Any] | None  # the match record (None: the arena could not play the game)
    error: str = ""  # why not
    replays: int = 0  # times it was played again because the arena stalled the clock

    @property
    def outcome(self) -> str:
        return str(self.record["games"][0]["outcome"]) if self.record else ""


class GamePlayer:
    def __init__(self, manager: MatchManager, rules: Rules, watch: StallWatch) -> None:
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
            if entry.record is None:
                return Played(None, entry.error or "no record", replays)
            data = entry.record.to_dict()
            stalled = self.watch.longest(started, loop.time())
            if (
                data["games"][0]["outcome"] == "timeout"
                and stalled > self.watch.threshold
                and replays < REPLAYS
            ):
                replays += 1  # the arena held the clock up: the bot is not charged
                continue
            return Played(data, "", replays)
