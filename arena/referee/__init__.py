"""The referee: runs one match between seats, knowing seats, not sockets.

A seat is reached through a :class:`~arena.referee.seat_port.SeatPort` (a gRPC stream in the service, a
scripted fake in tests). The referee builds every observation with the engine's ``observe``, measures the
clock, checks every answer against the legal actions, applies the match's failure policies and keeps the
match record.

It may use the rules engine (:mod:`arena.game`) and :mod:`arena.common`; never the wire, the
service or the sandbox.
"""

from arena.referee.config import FailurePolicy, MatchConfig, Outcome, Policies, TimeControl
from arena.referee.match import Match
from arena.referee.record import DecisionRecord, GameRecord, MatchRecord
from arena.referee.seat_port import Decision, GameEnd, SeatFailure, SeatPort

__all__ = [
    "Decision",
    "DecisionRecord",
    "FailurePolicy",
    "GameEnd",
    "GameRecord",
    "Match",
    "MatchConfig",
    "MatchRecord",
    "Outcome",
    "Policies",
    "SeatFailure",
    "SeatPort",
    "TimeControl",
]
