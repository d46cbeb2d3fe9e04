"""The rows the ledger stores, as the values it is handed and gives back: an entrant (a program, known
by its name, command and version) and a scheduled game (its key, place in the schedule, seed and
seats). The rooms that make them (tournament files, schedules, competitions) import them from here;
the ledger imports nothing of theirs."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Entrant:
    name: str
    command: str
    language: str = ""
    version: str = ""

    @property
    def command_hash(self) -> str:
        """Identifies a program: the same name with another command or version is another entrant."""
        return hashlib.sha256(f"{self.command}\0{self.version}".encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    key: str
    ord: int
    round: int
    pairing: int
    deal: int
    rotation: int
    seed: int
    seats: tuple[tuple[str, ...], ...]  # entrant names per seat (several when players share a seat)
    group: tuple[str, ...]  # the pairing's entrants in base order
    # A consultation series' game after its first (docs/rules.md §3.2), as it is played: the seating
    # of the pairing's game before it (indexes into ``seats``' players) and whether that game's allies
    # won it. Set by the runner when it plays the game; never stored with the schedule.
    series_before: tuple[tuple[tuple[int, ...], ...], bool] | None = None

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(name for seat in self.seats for name in seat)
