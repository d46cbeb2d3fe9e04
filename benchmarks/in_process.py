"""The referee without gRPC, in this process: the figures of ``benchmarks/referee.py``'s breakdown
that leave the transport out. The same match loop with seats answering at once (the rules and the
loop alone), and through the referee's own stream ports with the transport faked in the event loop
(its whole Python path without gRPC). Each is the best of IN_PROCESS_RUNS matches."""

from __future__ import annotations

import asyncio
import time

from arena.referee import Decision, Match, MatchConfig, SeatPort, TimeControl
from arena.service.stream_port import Outgoing, StreamPort
from arena.wire.v1 import bot_pb2

# A generous clock: the benchmark measures speed, never a timeout.
CLOCK = TimeControl(budget_ms=10_000, bank_ms=60_000, grace_ms=1000)


class _Instant:
    """A seat answering the first legal action in-process, at once."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def decide(self, decision: Decision) -> str:
        return decision.legal[0].text

    async def departure(self) -> None:
        return None

    async def game_over(self, *args: object) -> None:
        return None

    async def match_over(self, match_id: str, *args: object) -> None:
        return None


IN_PROCESS_RUNS = (
    3  # an in-process figure is the best of this many matches: the others were disturbed
)


async def _per_decision(seed: int, games: int, seats: list[list[SeatPort]]) -> float:
    """Microseconds per decision of a match of ``games`` games between ``seats``, in this process."""
    match = Match("bench", MatchConfig(seed=seed, games=games, time_control=CLOCK), seats)
    start = time.perf_counter()
    record = await match.run()
    elapsed = time.perf_counter() - start
    return elapsed / sum(len(g.decisions) for g in record.games) * 1e6


async def in_process_cost(seed: int, games: int = 5) -> float:
    """Microseconds per decision of the referee and the rules alone: the same match loop with seats
    answering in-process at once (no transport, no serialisation); the best of IN_PROCESS_RUNS."""
    runs = []
    for _ in range(IN_PROCESS_RUNS):
        runs.append(await _per_decision(seed, games, [[_Instant("a")], [_Instant("b")]]))
    return min(runs)


class _LoopPort(StreamPort):
    """The referee's own stream port with the transport faked in the event loop: a write completes
    a loop turn later (as gRPC's completion callback does), and the reply, the first legal action,
    comes a turn after that through a reader task, as the gateway's reader hands a reply over."""

    def __init__(self, name: str, match_id: str, seat: int) -> None:
        super().__init__(name, match_id, seat, 0, "")
        self.asked: Decision | None = None
        self.inbox: asyncio.Queue[Decision] = asyncio.Queue()
        self.attach(self._write)

    async def decide(self, decision: Decision) -> str:
        self.asked = decision
        return await super().decide(decision)

    async def _write(self, message: Outgoing) -> None:
        loop = asyncio.get_running_loop()
        written = loop.create_future()
        loop.call_soon(written.set_result, None)
        await written
        if type(message) is bytes and self.asked is not None:
            loop.call_soon(self.inbox.put_nowait, self.asked)

    async def read(self) -> None:
        while True:
            asked = await self.inbox.get()
            action = asked.legal[0].text
            self.on_reply(
                bot_pb2.Reply(request_id=asked.request_id, match_id=self.match_id, action=action)
            )


async def port_path_cost(seed: int, games: int = 5) -> float:
    """Microseconds per decision of the same match loop through the referee's stream ports, their
    requests serialised, with the transport faked in this process (:class:`_LoopPort`): what the
    referee's own Python costs a decision, without gRPC; the best of IN_PROCESS_RUNS."""
    runs = []
    for _ in range(IN_PROCESS_RUNS):
        seats = [_LoopPort(f"p{seat}", "bench", seat) for seat in (0, 1)]
        readers = [asyncio.create_task(port.read()) for port in seats]
        try:
            runs.append(await _per_decision(seed, games, [[port] for port in seats]))
        finally:
            for reader in readers:
                reader.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
    return min(runs)
