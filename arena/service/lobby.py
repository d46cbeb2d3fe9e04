"""The lobby: remote entrants that dialled in with an entrant token (not a seat's) and wait, connected,
for the games they are given (a standing competition's remote bots).

``entrant_of`` tells an entrant token's entrant (None: unknown); ``on_change`` hears of an entrant
arriving or leaving (the competition puts it in its matchmaker's pool, or takes it out). A newer
connection of an entrant replaces its older one.
"""

from __future__ import annotations

from collections.abc import Callable

from arena.service.sessions import BotSession


class Lobby:
    def __init__(
        self,
        entrant_of: Callable[[str], str | None] | None = None,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        self.entrant_of = entrant_of
        self.on_change = on_change
        self._waiting: dict[str, BotSession] = {}

    def join(self, token: str) -> BotSession | None:
        """The waiting session of the remote entrant whose token this is (a newer connection
        replaces an older one), or None when the token is no entrant's."""
        name = self.entrant_of(token) if self.entrant_of is not None else None
        if name is None:
            return None
        old = self._waiting.pop(name, None)
        if old is not None:
            old.end()
        session = BotSession(None, None, 2**62)
        session.entrant = name
        session.park()
        self._waiting[name] = session
        if self.on_change is not None:
            self.on_change(name)
        return session

    def leave(self, session: BotSession) -> None:
        if session.entrant and self._waiting.get(session.entrant) is session:
            del self._waiting[session.entrant]
            if self.on_change is not None:
                self.on_change(session.entrant)

    def waiting(self, name: str) -> bool:
        """Whether the remote entrant ``name`` is connected and free for a game."""
        session = self._waiting.get(name)
        return session is not None and session.idle and not session.ended

    def free(self, name: str) -> BotSession | None:
        """The session of the remote entrant ``name``, when it is connected and free for a game."""
        return self._waiting[name] if self.waiting(name) else None

    def park(self, session: BotSession) -> bool:
        """After a match, a remote entrant goes back to the lobby, whatever the match was: False
        when it has left meanwhile (or a newer connection replaced it)."""
        if session.ended or self._waiting.get(session.entrant) is not session:
            return False
        session.park()
        if self.on_change is not None:
            self.on_change(session.entrant)
        return True
