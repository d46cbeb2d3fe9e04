"""A competition's live games (issue 45): ``compete serve`` offers its matches' public events to the
web's Live page over the admin service's spectator calls, as ``arena serve`` does, but only the games
whose deal will not be played again: a duplicate pairing's last seat rotation, a single deal; never
an earlier rotation (its deal's next rotation is still to be played) and never a challenge's game.
And the competition's game pages keep a game sealed while its deal's other rotation is unplayed.

The players are fakes that put each game's match into the referee's manager, as the real player
does, and ask the live service (through the web's own client) whether it is listed while the game
is under way."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import grpc
import pytest
from starlette.testclient import TestClient
from test_challenges import enter, until

from arena.competition.server import CompetitionServer
from arena.competition.spec import parse
from arena.ledger import Ledger
from arena.ledger import competitions as store
from arena.ledger.rows import ScheduledGame
from arena.play.game import GameRules, Played, finished
from arena.referee import MatchConfig
from arena.referee.record import GameRecord, MatchRecord
from arena.service.match_manager import PlayerSpec
from arena.web.app import create_app
from arena.web.live import LiveError, Referee
from arena.wire.v1 import admin_pb2, admin_pb2_grpc

TIMEOUT = 120.0


def record_of(game: ScheduledGame) -> MatchRecord:
    result = {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 500]}
    return MatchRecord(
        game.key, "two-handed", {}, game.seed, [list(s) for s in game.seats], {}, {},
        games=[GameRecord(0, game.seed, 0, result=result)],
    )  # fmt: skip


class Watched:
    """Puts each game's match into the manager (not started: no bot is run) and notes whether the
    live service lists it, and answers for it, while the game is under way."""

    def __init__(self, server: CompetitionServer, rules: GameRules, referee: Referee) -> None:
        self.server = server
        self.rules = rules
        self.referee = referee
        self.seen: list[tuple[ScheduledGame, str, bool]] = []

    async def play(self, game: ScheduledGame, commands: Mapping[str, str]) -> Played:
        rules = self.rules
        config = MatchConfig(
            variant=rules.variant, options=rules.options, seed=game.seed, games=1,
            time_control=rules.time_control, policies=rules.policies, game_seeds=(game.seed,),
            deal_key=rules.deal_key or b"",
        )  # fmt: skip
        players = [[PlayerSpec(name, "") for name in seat] for seat in game.seats]
        entry = self.server.manager.create(config, players, 30.0, rules.limits)
        listed = {m["match_id"] for m in await self.referee.matches()}
        shown = entry.match_id in listed
        if not shown:  # nor answered for by its id: no match at all, as far as anyone can tell
            with pytest.raises(LiveError) as err:
                await self.referee.match(entry.match_id)
            assert err.value.status == 404
            # ... nor streamed: the web's event stream ends at once with the service's refusal.
            events = [e async for e in self.referee.stream(entry.match_id, None)]
            assert events[-1].startswith("event: failure") and "no match" in events[-1]
            assert not any(e.startswith("id:") or "event: public" in e for e in events)
        else:
            assert (await self.referee.match(entry.match_id))["match_id"] == entry.match_id
        self.seen.append((game, entry.match_id, shown))
        await asyncio.sleep(0.01)
        return Played(record_of(game))


def serve(tmp: Path, bots: dict[str, list[str]], duplicate: bool, body: Any, **over: Any) -> None:
    spec = parse(
        {
            "name": "Live",
            "variant": "two-handed",
            "matchmaking": {"games_at_once": 2, "duplicate": duplicate, "pause_seconds": 0.05},
            "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0", "live": "127.0.0.1:0"},
        }
    )
    led = Ledger(tmp / "ledger.sqlite")
    cid = led.register(spec, None, "competition").id
    comp = store.Competitions(led)
    enter(comp, cid, tmp / "data" / "builds", bots)

    async def main() -> None:
        server = CompetitionServer(spec, led, tmp / "data", **over)
        comp.set_paused(cid, True)
        await server.start()
        try:
            listener = server.live_listener
            assert listener is not None
            referee = Referee(listener.address, listener.token)
            ranked = Watched(server, server.player.rules, referee)
            challenged = Watched(server, server.challenge_player.rules, referee)
            server.player = ranked  # type: ignore[assignment]
            server.challenge_player = challenged  # type: ignore[assignment]
            comp.set_paused(cid, False)
            await server._refresh()
            await body(server, ranked, challenged, referee)
        finally:
            await server.stop()

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))


def test_a_duplicate_pairing_is_shown_live_only_in_its_last_rotation(tmp_path: Path) -> None:
    async def body(
        server: CompetitionServer, ranked: Watched, challenged: Watched, referee: Referee
    ) -> None:
        await until(lambda: len(ranked.seen) >= 8, "ranked games")
        ada = next(a for a in server.store.authors(server.cid) if a.name == "ada")
        asked = await server.challenge(ada, "a1", "b1", 2)
        await until(lambda: len(challenged.seen) >= 2, "the challenge's games")
        assert asked.id
        for game, match_id, shown in ranked.seen:
            # Rotation 0 while rotation 1 of its deal is still to be played: never shown.
            assert shown == (game.rotation == 1), (game.key, match_id)
        assert not any(shown for _, _, shown in challenged.seen)
        # Afterwards too: a game not shown while it was played is not listed once it is over (its
        # replay is on the game pages once its deal is done); the last rotations are, finished.
        seen = [*ranked.seen, *challenged.seen]
        listed = {m["match_id"] for m in await referee.matches()}
        assert not listed & {match_id for _, match_id, shown in seen if not shown}
        assert {match_id for _, match_id, shown in ranked.seen[:4] if shown} <= listed

    serve(tmp_path, {"ada": ["a1"], "bob": ["b1"], "cid": ["c1"]}, True, body)


def test_a_single_deal_game_is_shown_live(tmp_path: Path) -> None:
    async def body(
        server: CompetitionServer, ranked: Watched, challenged: Watched, referee: Referee
    ) -> None:
        await until(lambda: len(ranked.seen) >= 4, "ranked games")
        assert all(shown for _, _, shown in ranked.seen)

    serve(tmp_path, {"ada": ["a1"], "bob": ["b1"]}, False, body)


def test_the_live_games_need_their_token_and_start_nothing(tmp_path: Path) -> None:
    async def body(
        server: CompetitionServer, ranked: Watched, challenged: Watched, referee: Referee
    ) -> None:
        listener = server.live_listener
        assert listener is not None and listener.token == "sesame-live-token"
        with pytest.raises(LiveError, match="wants its admin token"):
            await Referee(listener.address, "wrong").matches()
        async with grpc.aio.insecure_channel(listener.address) as channel:
            stub = admin_pb2_grpc.AdminStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.StartMatch(
                    admin_pb2.StartMatchRequest(variant="two-handed"),
                    metadata=referee.metadata,
                )
            assert err.value.code() is grpc.StatusCode.PERMISSION_DENIED
            assert "made by its matchmaker" in (err.value.details() or "")

    serve(tmp_path, {"ada": ["a1"], "bob": ["b1"]}, False, body, live_token="sesame-live-token")


def test_a_competitions_game_stays_sealed_on_the_web_until_its_deal_is_done(
    tmp_path: Path,
) -> None:
    """The games pages: a duplicate pairing's rotation 0, recorded while rotation 1 is planned
    and unplayed, is sealed (no record, no replay); open once rotation 1 is recorded."""
    spec = parse({"name": "Sealed", "variant": "two-handed"})
    path = tmp_path / "ledger.sqlite"
    led = Ledger(path)
    cid = led.register(spec, None, "competition").id
    comp = store.Competitions(led)
    enter(comp, cid, tmp_path / "builds", {"ada": ["a1"], "bob": ["b1"]})
    ids = {s.bot: s.entrant_id for s in comp.submissions(cid, None)}
    games = [
        ScheduledGame(f"c{r:09d}-s{r}", r, 0, 0, 0, r, 4242, seats, ("a1", "b1"))
        for r, seats in enumerate(((("a1",), ("b1",)), (("b1",), ("a1",))))
    ]
    led.plan(cid, games)
    first = led.record_game(cid, "two-handed", games[0], ids, finished(record_of(games[0])))
    with TestClient(create_app(path)) as client:
        game = client.get(f"/api/games/{first}").json()
        assert game["sealed"] is True and game["record"] is None
        assert client.get(f"/api/games/{first}/replay").status_code == 403
    led.record_game(cid, "two-handed", games[1], ids, finished(record_of(games[1])))
    with TestClient(create_app(path)) as client:
        assert client.get(f"/api/games/{first}").json()["sealed"] is False
