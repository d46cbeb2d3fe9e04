"""The pool of local bot processes waiting between matches.

A local bot process may play several matches over its stream when the match allows it
(``matches_per_process``: see :mod:`arena.service.sessions`). After a match its session waits here,
frozen, by kind (entrant, command, limits), for the next match of that kind that has not played any
of its deals; at most ``idle_per_kind`` wait of each kind (the longest waiting is retired first),
and the processes of commands no longer in play (a competition's withdrawn bundle) are stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

from arena.bots.launcher import BotProcess
from arena.service.sessions import BotSession, SessionKey
from arena.service.stream_port import StreamPort

IDLE_PER_KIND = 4  # sessions of one kind (entrant, command, limits) kept waiting between matches
DRAIN_SECONDS = 2.0  # for local bots to read the match's last messages and exit on their own


class ProcessPool:
    def __init__(self, idle_per_kind: int = IDLE_PER_KIND) -> None:
        self.idle_per_kind = idle_per_kind
        self._idle: dict[SessionKey, list[BotSession]] = {}
        # The commands still in play, once end_waiting has named them (None: every command).
        self._in_play: frozenset[str] | None = None
        self._retiring: set[asyncio.Task[None]] = set()

    def park(self, session: BotSession, port: StreamPort) -> bool:
        """After ``port``'s match: keep a local bot's session for another match (True) or let it
        end."""
        key, proc = session.key, session.process
        if (
            key is None
            or proc is None
            or session.ended
            or session.played >= session.quota
            or not port.ended_normally
            or proc.returncode is not None
            or (self._in_play is not None and key.command not in self._in_play)
        ):
            return False
        limit = key.limits.cpu_seconds
        if limit and proc.cpu_seconds() * 2 >= limit:
            return False  # a fresh process, rather than one killed by RLIMIT_CPU mid-game
        idle = [s for s in self._idle.get(key, []) if s.idle]
        while len(idle) >= self.idle_per_kind:
            idle.pop(0).end()  # the longest waiting: its stream closes, its process is stopped
        session.park()
        proc.freeze()  # fairness option: a waiting bot runs on nobody's turn
        idle.append(session)
        self._idle[key] = idle
        return True

    def pooled(self, name: str) -> int:
        """How many of entrant ``name``'s processes wait in the pool for a match."""
        return sum(
            1 for key, idle in self._idle.items() if key.name == name for s in idle if s.idle
        )

    def end_waiting(self, keep: Iterable[str]) -> int:
        """End the sessions waiting in the pool whose processes run a command not in ``keep`` (their
        entrant has left play: a competition's withdrawn, replaced or suspended bundle); their
        processes are stopped. How many. From now on a session of such a command is not kept after
        its match either (a game that was under way when its entrant left), until a later call
        names its command again."""
        self._in_play = keep = frozenset(keep)
        ended = 0
        for key, idle in self._idle.items():
            if key.command not in keep:
                for session in idle:
                    ended += not session.ended
                    session.end()
                idle.clear()
        return ended

    def take(self, key: SessionKey, seeds: set[int]) -> BotSession | None:
        """A waiting session of this kind that has not played any of these deals."""
        idle = self._idle.get(key, [])
        for i, session in enumerate(idle):
            if session.idle and not session.seen & seeds:
                del idle[i]
                return session
        return None

    def stop_later(self, proc: BotProcess) -> None:
        """Stop a process whose session ended between matches, once it has had a moment to exit."""
        task = asyncio.get_running_loop().create_task(_stop_after_drain(proc))
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    async def close(self) -> None:
        """Every waiting session ended, and the processes being retired stopped."""
        self.end_waiting(())
        if self._retiring:
            await asyncio.gather(*self._retiring, return_exceptions=True)


async def _stop_after_drain(proc: BotProcess) -> None:
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(DRAIN_SECONDS):
            await proc.wait()
    await proc.stop()
