"""A remote entrant is one connection that plays one game at a time: once picked, it is reserved until
that game ends, whatever the lobby says meanwhile.

Game c000000964-s0 was forfeited as "the bot never connected" while its remote entrant had been dialled
in for minutes: the play loop had taken the entrant out of the pool when it picked it, but until the new
game claimed its waiting session the lobby still said it waited, and a refresh put it back in the pool;
it was picked for a second game whose seat nobody took. The game player here stands in for the referee:
it refreshes the roster (as the refresher, or another entrant's lobby event, may at that moment) before
it claims the entrant's session, as the match manager's start does after launching the other seats.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace

from intake_helpers import run, until

from arena.competition.server import CompetitionServer
from arena.competition.spec import parse
from arena.ledger import Ledger
from arena.ledger import competitions as store
from arena.ledger.rows import ScheduledGame
from arena.play.game import Played
from arena.service.sessions import BotSession


class SlowToClaim:
    """A game player whose games refresh the roster, then claim their remote entrants' waiting
    sessions (a session that is not free then is a seat nobody takes: forfeited as never
    connected), play a moment and give the sessions back to the lobby."""

    def __init__(self, server: CompetitionServer, games: int) -> None:
        self.server = server
        self.wanted = games
        self.started = 0
        self.in_play: set[str] = set()
        self.twice: list[str] = []  # an entrant given a game while in another
        self.unclaimed: list[str] = []  # a seat whose entrant's session was not free

    async def play(self, game: ScheduledGame, commands: Mapping[str, str]) -> Played:
        names = [n for seat in game.seats for n in seat]
        self.started += 1
        self.twice += [n for n in names if n in self.in_play]
        self.in_play.update(names)
        lobby = self.server.manager.lobby
        try:
            await self.server._refresh()  # the window between the pick and the claim
            await asyncio.sleep(0.2)
            sessions: list[BotSession] = []
            for name in names:
                session = lobby.free(name)
                if session is None:
                    self.unclaimed.append(name)
                    continue
                # claimed by a stand-in match: no longer idle
                session.give(SimpleNamespace(match_id=f"stand-in-{game.key}"))  # type: ignore[arg-type]
                sessions.append(session)
            await asyncio.sleep(0.05)
            for session in sessions:
                lobby.park(session)  # the game is over: back to the lobby
        finally:
            self.in_play.difference_update(names)
        if self.started >= self.wanted:
            await self.server.db.call(self.server.store.set_paused, self.server.cid, True)
        return Played(None, "played by a stand-in")


def test_a_remote_entrant_is_never_given_a_second_game_before_its_first_ends(
    tmp_path: Path,
) -> None:
    run(one_game_at_a_time, tmp_path)


async def one_game_at_a_time(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "ledger.sqlite")
    spec = parse(
        {
            "name": "Remote",
            "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
            "matchmaking": {"games_at_once": 2, "pause_seconds": 0.01},
        }
    )
    server = CompetitionServer(spec, led, tmp_path / "data")
    await server.start()
    try:
        comp = store.Competitions(led)
        tokens = []
        for name in ("ada", "bob"):
            comp.add_author(server.cid, name)
            author = comp.authors(server.cid)[-1]
            sid, token = comp.submit(server.cid, author.id, f"{name}-far", "1", "remote")
            comp.activate(sid, f"remote:{author.id}:{name}-far")
            tokens.append(token)
        player = SlowToClaim(server, games=12)
        server.player = player  # type: ignore[assignment]
        await server._refresh()
        for token in tokens:
            assert server.manager.lobby.join(token) is not None  # dialled in, waiting
        await until(lambda: player.started >= 12 and not server.running, lambda: player.started)
        assert player.twice == [], "an entrant was given a game while it played another"
        assert player.unclaimed == [], "a seat was left for a session another game had taken"
    finally:
        await server.stop()
        led.close()
