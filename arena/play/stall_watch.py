"""Watching the event loop that times the bots for stalls of the arena's own making.

The referee measures each decision from request sent to reply received on its event loop. If that loop
is held up (the arena's own work, a machine starved of CPU), a bot's reply waits unread and the time is
charged to the bot. A watcher task sleeps in short steps and notes every wake-up that came late: a game
that ended on time while the loop was stalled for longer than the clock's grace was decided by the arena,
not the bot, and is played again instead of being recorded.
"""

from __future__ import annotations

import asyncio
from collections import deque

STEP = 0.05  # seconds between the watcher's wake-ups
KEEP = 10_000  # stalls remembered (old ones are dropped first)


class StallWatch:
    def __init__(self, threshold: float = 0.1) -> None:
        self.threshold = threshold  # a wake-up later than this (seconds) is a stall
        self.stalls: deque[tuple[float, float]] = deque(maxlen=KEEP)  # (start, end), loop time
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            # asyncio.wait, not an await of the task under suppress(CancelledError): that would also
            # swallow a cancellation of the caller's own (Ctrl-C, a fatal error) arriving meanwhile.
            await asyncio.wait({self._task})

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(STEP)
            late = loop.time() - before - STEP
            if late > self.threshold:
                self.stalls.append((before + STEP, before + STEP + late))

    def longest(self, start: float, end: float) -> float:
        """The longest stall (seconds) overlapping the interval [start, end] of loop time."""
        most = 0.0
        for a, b in self.stalls:
            if b >= start and a <= end:
                most = max(most, min(b, end) - max(a, start))
        return most
