"""The rows the ledger stores, as the values it is handed and gives back: an entrant (a program, known
by its name, command and version), a scheduled game (its key, place in the schedule, seed and
seats) and a finished game (its result and its record's text). The rooms that make them (tournament
files, schedules, competitions, the players of games) import them from here; the ledger imports
nothing of theirs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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


@dataclass(frozen=True, slots=True)
class DecisionTime:
    """One decision's timing in a finished game: who made it, its time and the bank left after it."""

    seat: int
    member: int
    elapsed_ms: float
    bank_ms: float


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """A finished game as the ledger is handed it: what it stores of the result (the sides, their
    ranking and each seat's score; the outcome, its detail and the culprit seat, -1 for none), each
    decision's time (for a competition's seat reports) and the match record's text, stored as it is.
    Made from a referee's record by :func:`arena.play.game.finished`."""

    outcome: str
    detail: str
    culprit: int
    sides: tuple[tuple[int, ...], ...]
    ranking: tuple[int, ...]  # ranking[i]: the place of side i (0 = first)
    scores: tuple[int, ...]  # per seat
    record: str  # the one-game match record as compact JSON
    times: tuple[DecisionTime, ...] = ()

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> FinishedGame:
        """From a one-game match record's plain data (the form the ledger stores and gives back:
        for tools that hold only that, such as stored records and benchmarks)."""
        g = data["games"][0]
        r = g["result"]
        times = tuple(
            DecisionTime(
                int(d["seat"]), int(d["member"]),
                float(d.get("elapsed_ms", 0.0)), float(d.get("bank_ms", 0.0)),
            )
            for d in g.get("decisions", ())
            if "seat" in d  # (a record made up for a test may hold bare decisions)
        )  # fmt: skip
        return cls(
            str(g["outcome"]), str(g["detail"]), int(g["culprit"]),
            tuple(tuple(int(s) for s in side) for side in r["sides"]),
            tuple(int(p) for p in r["ranking"]), tuple(int(s) for s in r["scores"]),
            record_text(data), times,
        )  # fmt: skip


def record_text(data: Mapping[str, Any]) -> str:
    """A match record's plain data as the ledger stores it: compact JSON, non-ASCII kept as it is."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)
