"""How the referee reaches a seat: an asynchronous port, whatever the transport."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from arena.game import Action, GameResult, Observation
from arena.referee.config import Outcome


class Decision(NamedTuple):
    """One decision request: everything a seat is told when it must act."""

    request_id: int
    match_id: str
    game: int
    seat: int
    deciding_member: int
    observation: Observation  # built by the engine's observe; its log holds the new public events
    legal: tuple[Action, ...]
    budget_ms: int
    bank_ms: int


@dataclass(frozen=True, slots=True)
class GameEnd:
    """How a game of the match ended."""

    game: int
    result: GameResult
    outcome: Outcome
    detail: str
    culprit: int
    # Consultation series (docs/rules.md §3.2): the players of each seat in this game, as indexes into
    # the match's players in the order given; empty: the match's seats as given.
    seating: tuple[tuple[int, ...], ...] = ()


class SeatFailure(Exception):
    """A seat failed to answer properly; the outcome says how (timeouts are the referee's own)."""

    def __init__(self, outcome: Outcome, detail: str) -> None:
        super().__init__(detail)
        self.outcome = outcome
        self.detail = detail


class SeatPort(Protocol):
    """One player of a seat, as the referee sees it."""

    name: str

    async def decide(self, decision: Decision) -> str:
        """Send the request and return the raw reply (an action's text). Raises SeatFailure when the
        player has crashed, disconnected or broken the protocol. The referee bounds the wait."""
        ...

    async def departure(self) -> tuple[Outcome, str] | None:
        """Why the player is gone, if it is known to have left (its connection ended): awaited when a
        decision's clock runs out, so that a player who left is not recorded as one who was slow.
        None when it has not left (or a port cannot tell)."""
        ...

    async def game_over(
        self,
        match_id: str,
        game: int,
        result: GameResult,
        outcome: Outcome,
        detail: str,
        culprit: int,
    ) -> None:
        """Tell the player a game has ended (best effort: failures are ignored)."""
        ...

    async def match_over(self, match_id: str, games: Sequence[GameEnd]) -> None:
        """Tell the player the match has ended, with every game's end (best effort)."""
        ...
