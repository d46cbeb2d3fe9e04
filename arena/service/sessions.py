"""A bot's connection, which may carry several matches one after another.

A bot dials in with a seat's token and its stream becomes a session. A remote bot's session carries
that one match. A local bot's session may carry more when its match allows (``matches_per_process``
> 1, set by a tournament): when the match ends normally the session waits in the manager's pool, and a
later match that needs a player with the same name, command and limits is given to it with a new
``Welcome`` on the same stream, instead of a new process being launched.

A session is never given a match dealt from a seed it has already played: with duplicate deals a
process that stayed alive would otherwise know its opponent's hand the second time round. The manager
retires a session (ends its stream, stops its process) after its quota of matches, when one of its
processes has spent half of its CPU limit (a limit counts over every match the process plays), after
a match it did not finish normally, or when the pool holds enough idle sessions of its kind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from arena.bots.launcher import BotProcess
from arena.bots.limits import Limits
from arena.referee import Outcome
from arena.service.stream_port import StreamPort
from arena.wire.v1 import bot_pb2

RECENT_MATCHES = 4  # matches whose late replies a session still routes (and ignores)


@dataclass(frozen=True, slots=True)
class SessionKey:
    """Which sessions are interchangeable: the same entrant, command and limits."""

    name: str
    command: str
    limits: Limits


class BotSession:
    """One bot stream and, for a local bot, the process behind it."""

    def __init__(
        self, key: SessionKey | None, process: BotProcess | None, quota: int, match_id: str = ""
    ) -> None:
        self.key = key  # None: a remote bot, whose session carries one match
        self.process = process
        self.match_id: str | None = match_id  # the match it belongs to; None while in the pool
        self.quota = quota  # matches it may play
        self.played = 0
        self.seen: set[int] = set()  # seeds of the deals it has played
        self.port: StreamPort | None = None  # the player it is in the match it is playing now
        self._recent: dict[str, StreamPort] = {}
        self._next: asyncio.Future[StreamPort | None] | None = None
        self.ended = False
        # Called when the session ends while it belongs to no match (waiting in the pool): nobody
        # else would stop its process then.
        self.on_idle_end: Callable[[], None] | None = None
        # A remote entrant waiting in the lobby for the games it is given (its name), or "".
        self.entrant = ""

    def begin(self, port: StreamPort, seeds: Iterable[int]) -> None:
        """Start playing ``port``'s match."""
        self.port = port
        self.match_id = port.match_id
        self.played += 1
        self.seen.update(seeds)
        self._recent[port.match_id] = port
        while len(self._recent) > RECENT_MATCHES:
            del self._recent[next(iter(self._recent))]
        port.process = self.process

    # ---------------------------------------------------------------- between matches

    @property
    def idle(self) -> bool:
        return self._next is not None and not self._next.done()

    def park(self) -> None:
        """The match is over and the session waits for another (see :meth:`next_match`)."""
        self.port = None
        self.match_id = None
        self._next = asyncio.get_running_loop().create_future()

    async def next_match(self) -> StreamPort | None:
        """The next match's player, or None when the session is to end."""
        if self._next is None:
            return None
        try:
            return await self._next
        finally:
            self._next = None

    def give(self, port: StreamPort) -> None:
        assert self._next is not None and not self._next.done()
        self.match_id = port.match_id
        self._next.set_result(port)

    def end(self) -> None:
        """End the session: the stream is closed once its current match (if any) is over."""
        if self.ended:
            return
        self.ended = True
        if self._next is not None and not self._next.done():
            self._next.set_result(None)
        if self.match_id is None and self.on_idle_end is not None:
            self.on_idle_end()

    # ---------------------------------------------------------------- what the bot sends

    def port_for(self, match_id: str) -> StreamPort | None:
        """The player a reply naming ``match_id`` is for: the current one's, or a recent one's."""
        return self._recent.get(match_id)

    def violation(self, what: str) -> bool:
        """A protocol error: the current match's, or, once its match is over (its MatchOver sent) or
        between matches, the end of the session. False when it is one of a flood (see
        :meth:`_unless_flooded`)."""
        if self.port is not None and not (self.port.over or self.port.finished.is_set()):
            self.port.on_violation(what)
            return self._unless_flooded(self.port)
        self.end()
        return True

    def reply(self, port: StreamPort, reply: bot_pb2.Reply) -> bool:
        """A reply for ``port``'s match (the current one, or a late reply to a recent one). False
        when it was one of a flood of protocol errors (see :meth:`_unless_flooded`)."""
        port.on_reply(reply)
        return self._unless_flooded(port)

    def _unless_flooded(self, port: StreamPort) -> bool:
        """True, unless ``port`` has been closed for a flood of protocol errors
        (:meth:`StreamPort.on_violation`): the session then ends, and its stream is to be read no
        more."""
        if port.flooded:
            self.end()
        return not port.flooded

    def lost(self, outcome: Outcome, detail: str) -> None:
        """The stream has closed or broken."""
        if self.port is not None:
            self.port.on_closed(outcome, detail)
        self.end()
