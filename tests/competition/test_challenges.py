"""Authors' challenges (issue 45): unrated games of a bot of theirs against another entrant, played by
the competition's server between ranked games within its share of the capacity, with a daily quota,
never rated, their deals a stream of their own, their replays shown once the deal is over, and
another author's challenge neither shown nor cancelled. Played with fake players (no bot is run), as
test_fair_start does."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.competition.challenges import CHALLENGE_ROUND, challenge_key
from arena.competition.desk_port import SubmissionError
from arena.competition.server import CompetitionServer
from arena.competition.spec import parse
from arena.competition.submission_api import serve_submissions
from arena.ledger import Ledger
from arena.ledger import challenges as ch
from arena.ledger import competitions as store
from arena.ledger.rows import ScheduledGame
from arena.play.game import Played, SeatOutput
from arena.referee import MatchConfig
from arena.referee.record import GameRecord, MatchRecord

TIMEOUT = 120.0


class Counter:
    """The games under way, of both players together, and the most there were at once."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0


class FakePlayer:
    """Plays a game in a few milliseconds, the first seat winning; notes each game. A game whose
    number is in ``held`` waits for ``gate``."""

    def __init__(self, counter: Counter, delay: float = 0.01) -> None:
        self.counter = counter
        self.delay = delay
        self.games: list[ScheduledGame] = []
        self.running = 0
        self.most = 0
        self.gate = asyncio.Event()
        self.held: set[int] = set()
        self.outputs = False  # each seat's bot "wrote" a line naming its seat and the game's key

    async def play(self, game: ScheduledGame, commands: Mapping[str, str]) -> Played:
        self.games.append(game)
        self.running += 1
        self.most = max(self.most, self.running)
        self.counter.now += 1
        self.counter.most = max(self.counter.most, self.counter.now)
        try:
            if game.round == CHALLENGE_ROUND and game.ord in self.held:
                await self.gate.wait()
            await asyncio.sleep(self.delay)
        finally:
            self.running -= 1
            self.counter.now -= 1
        result = {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 500]}
        record = MatchRecord(
            game.key, "two-handed", {}, game.seed, [list(s) for s in game.seats], {}, {},
            games=[GameRecord(0, game.seed, 0, result=result)],
        )  # fmt: skip
        outputs = (
            tuple(
                SeatOutput(seat, 0, f"seat {seat} of {game.key}\n".encode(), 1000 + seat)
                for seat in range(len(game.seats))
            )
            if self.outputs
            else ()
        )
        return Played(record, outputs=outputs)


class Arena:
    """A competition's server with fake players, and its authors."""

    def __init__(
        self, server: CompetitionServer, comp: store.Competitions, tokens: dict[str, str]
    ) -> None:
        self.server = server
        self.comp = comp
        self.tokens = tokens
        self.said: list[str] = []
        self.counter = Counter()
        self.ranked = FakePlayer(self.counter)
        self.challenges = FakePlayer(self.counter)
        self.ranked_key = server.player.rules.deal_key
        self.challenge_key = server.challenge_player.rules.deal_key
        self.challenge_output_bytes = server.challenge_player.rules.output_bytes
        server.player = self.ranked  # type: ignore[assignment]
        server.challenge_player = self.challenges  # type: ignore[assignment]

    def author(self, name: str) -> store.Author:
        found = [a for a in self.comp.authors(self.server.cid) if a.name == name]
        return found[0]


def enter(
    comp: store.Competitions, cid: int, builds: Path, bots: dict[str, list[str]]
) -> dict[str, str]:
    """Each author with their bots in play (each build a folder with a bot.py); their tokens."""
    tokens = {}
    for name, names in bots.items():
        tokens[name] = comp.add_author(cid, name)
        author = comp.author_of(cid, tokens[name])
        assert author is not None
        for bot in names:
            sid, _ = comp.submit(
                cid, author.id, bot, "1", "python", bundle="a" * 64, run="{python} bot.py"
            )
            (builds / str(sid)).mkdir(parents=True)
            (builds / str(sid) / "bot.py").write_text("")
            assert comp.activate(sid, f"bundle:{bot}") is not None
    return tokens


def run(
    tmp: Path,
    bots: dict[str, list[str]],
    body: Callable[[Arena], Awaitable[None]],
    **settings: Any,
) -> None:
    matchmaking = {"games_at_once": 5, "duplicate": True, "pause_seconds": 0.05}
    matchmaking.update(settings.pop("matchmaking", {}))
    spec = parse(
        {
            "name": "Challenges",
            "variant": "two-handed",
            "matchmaking": matchmaking,
            "submissions": settings.pop("submissions", {}),
            "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
        }
    )
    led = Ledger(tmp / "ledger.sqlite")
    cid = led.register(spec, None, "competition").id
    comp = store.Competitions(led)
    tokens = enter(comp, cid, tmp / "data" / "builds", bots)
    serving = serve_submissions if settings.pop("serve", False) else None
    prepare: Callable[[Arena], None] = settings.pop("prepare", lambda arena: None)
    said: list[str] = []  # what the server says, shown when a wait times out

    async def main() -> None:
        server = CompetitionServer(
            spec, led, tmp / "data", on_event=said.append, serve_submissions=serving
        )
        # Paused until the fake players are in place (set after start, before any pairing).
        comp.set_paused(cid, True)
        await server.start()
        arena = Arena(server, comp, tokens)
        arena.said = said
        prepare(arena)  # before the first pairing
        try:
            comp.set_paused(cid, False)
            await server._refresh()
            await body(arena)
        finally:
            await server.stop()

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))


async def until(test: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT / 2
    while not test():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def done(arena: Arena, challenge_id: int) -> Callable[[], bool]:
    def test() -> bool:
        found = arena.comp.challenge(arena.server.cid, challenge_id)
        return found is not None and found.status != ch.OPEN

    return test


def test_challenge_slots_are_a_share_of_games_at_once() -> None:
    def slots(games_at_once: int, share: float | None = None) -> int:
        mm: dict[str, Any] = {"games_at_once": games_at_once}
        if share is not None:
            mm["challenge_share"] = share
        return parse({"name": "x", "matchmaking": mm}).matchmaking.challenge_slots

    assert [slots(n) for n in (1, 4, 5, 9, 10, 15)] == [1, 1, 1, 1, 2, 3]
    assert slots(10, 0.5) == 5
    assert slots(10, 0) == 0
    assert slots(1, 0.01) == 1


def test_bad_input_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    async def body(arena: Arena) -> None:
        s = arena.server
        ada, bob = arena.author("ada"), arena.author("bob")

        async def refused(author: store.Author, bot: str, against: str, games: int) -> str:
            with pytest.raises(SubmissionError) as err:
                await s.challenge(author, bot, against, games)
            return str(err.value)

        assert "games: expected 1..50 (max_challenge_games), got 0" in await refused(
            ada, "a1", "b1", 0
        )
        assert "got 51" in await refused(ada, "a1", "b1", 51)
        assert "you have no bot 'zz' in play" in await refused(ada, "zz", "b1", 2)
        # Another author's bot is not the caller's to challenge with.
        assert "you have no bot 'b1' in play" in await refused(ada, "b1", "a1", 2)
        assert "no entrant 'nobody' is in play" in await refused(ada, "a1", "nobody", 2)
        assert "no entrant 'b1@9' is in play" in await refused(ada, "a1", "b1@9", 2)
        assert "against: expected NAME or NAME@VERSION" in await refused(ada, "a1", "b 1", 2)
        assert "against itself" in await refused(ada, "a1", "a1", 2)
        # Another bot of one's own, and a named version, are fine.
        own = await s.challenge(ada, "a1@1", "a2", 2)
        assert (own.bot, own.opponent_bot, own.games, own.status) == ("a1", "a2", 2, ch.OPEN)
        theirs = await s.challenge(bob, "b1", "a1@1", 1)
        assert theirs.author_id == bob.id

    run(tmp_path, {"ada": ["a1", "a2"], "bob": ["b1"]}, body)


def test_no_challenges_when_the_share_is_zero(tmp_path: Path) -> None:
    async def body(arena: Arena) -> None:
        with pytest.raises(SubmissionError, match="plays no challenges"):
            await arena.server.challenge(arena.author("ada"), "a1", "b1", 1)

    run(tmp_path, {"ada": ["a1"], "bob": ["b1"]}, body, matchmaking={"challenge_share": 0})


def test_the_daily_quota_is_kept_and_games_never_played_are_given_back(tmp_path: Path) -> None:
    async def body(arena: Arena) -> None:
        s = arena.server
        ada = arena.author("ada")
        arena.challenges.held = set(range(50))  # no challenge game ends meanwhile
        first = await s.challenge(ada, "a1", "b1", 20)
        with pytest.raises(SubmissionError) as err:
            await s.challenge(ada, "a1", "b1", 11)
        assert str(err.value) == (
            "you have asked for 20 challenge games in the last 24 hours and the most is 30 "
            "(challenge_games_per_day): ask for at most 10 now, or try again later"
        )
        await s.challenge(ada, "a1", "b1", 10)  # up to the quota exactly
        with pytest.raises(SubmissionError, match="ask for at most 0 now"):
            await s.challenge(ada, "a1", "b1", 1)
        # Bob's quota is his own.
        await s.challenge(arena.author("bob"), "b1", "a1", 5)
        # A cancelled challenge gives back the games it will never play.
        await s.cancel_challenge(ada, first.id)
        await s.challenge(ada, "a1", "b1", 19)

    run(
        tmp_path,
        {"ada": ["a1"], "bob": ["b1"]},
        body,
        submissions={"challenge_games_per_day": 30},
    )


def test_another_author_cannot_see_cancel_or_replay_a_challenge(tmp_path: Path) -> None:
    async def body(arena: Arena) -> None:
        s = arena.server
        ada, bob = arena.author("ada"), arena.author("bob")
        mine = await s.challenge(ada, "a1", "b1", 2)
        await until(done(arena, mine.id), "the challenge's games")
        games = arena.comp.challenge_games(mine.id)
        assert len(games) == 2
        # Bob, whose bot was the opponent, is not shown it.
        assert await s.challenges_of(bob) == []
        listed = await s.challenges_of(ada)
        assert [c.id for c, _ in listed] == [mine.id]
        with pytest.raises(SubmissionError, match=f"you have no challenge {mine.id}$"):
            await s.cancel_challenge(bob, mine.id)
        with pytest.raises(SubmissionError, match=f"you have no challenge {mine.id}$"):
            await s.challenge_replay(bob, games[0].id)
        game, record, _ = await s.challenge_replay(ada, games[0].id)
        assert game.id == games[0].id and record["games"]
        # A challenge over cannot be cancelled.
        with pytest.raises(SubmissionError, match="is done already"):
            await s.cancel_challenge(ada, mine.id)

    run(tmp_path, {"ada": ["a1"], "bob": ["b1"]}, body)


def test_challenges_are_never_rated(tmp_path: Path) -> None:
    async def body(arena: Arena) -> None:
        s = arena.server
        ada = arena.author("ada")
        # Ada's two bots alone: no ranked game can be made (never two bots of one author), so
        # every game played is the challenge's.
        mine = await s.challenge(ada, "a1", "a2", 6)
        await until(done(arena, mine.id), "the challenge's games")
        found = arena.comp.challenge(s.cid, mine.id)
        assert found is not None
        assert (found.status, found.played, found.wins + found.losses + found.draws) == (
            ch.DONE,
            6,
            6,
        )
        conn = arena.comp.conn
        for table in ("games", "game_seats", "ratings", "rating_history", "head_to_head"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
        assert all(line.games == 0 for line in arena.comp.board(s.cid))
        assert arena.ranked.games == []

    run(tmp_path, {"ada": ["a1", "a2"]}, body)


def test_challenges_take_their_share_of_the_capacity_between_ranked_games(tmp_path: Path) -> None:
    async def body(arena: Arena) -> None:
        s = arena.server
        ada, bob = arena.author("ada"), arena.author("bob")
        await until(lambda: len(arena.ranked.games) >= 6, "ranked games")
        asked = [
            await s.challenge(ada, "a1", "b1", 4),
            await s.challenge(bob, "b2", "c1", 4),
            await s.challenge(ada, "a2", "c2", 4),
        ]
        ranked_before = len(arena.ranked.games)
        for c in asked:
            await until(done(arena, c.id), f"challenge {c.id}")
        # Games at once: 5; challenges' share 0.2 of it: 1.
        assert arena.challenges.most == 1
        assert arena.counter.most <= 5
        # Ranked games went on meanwhile.
        assert len(arena.ranked.games) > ranked_before
        assert len(arena.challenges.games) == 12

    run(
        tmp_path,
        {"ada": ["a1", "a2"], "bob": ["b1", "b2"], "cid": ["c1", "c2"]},
        body,
    )


def test_a_larger_capacity_gives_challenges_more_places(tmp_path: Path) -> None:
    async def body(arena: Arena) -> None:
        s = arena.server
        ada, bob = arena.author("ada"), arena.author("bob")
        arena.challenges.held = set(range(4))  # every challenge game waits until let go
        asked = [
            await s.challenge(ada, "a1", "b1", 4),
            await s.challenge(bob, "b2", "c1", 4),
            await s.challenge(ada, "a2", "c2", 4),
        ]
        await until(lambda: arena.challenges.running == 2, "two challenge games at once")
        ranked = len(arena.ranked.games)
        await until(lambda: len(arena.ranked.games) >= ranked + 10, "ranked games meanwhile")
        assert arena.challenges.running == 2  # floor(0.2 * 10), however many places free up
        arena.challenges.gate.set()
        for c in asked:
            await until(done(arena, c.id), f"challenge {c.id}")
        assert arena.challenges.most == 2
        assert arena.counter.most <= 10

    run(
        tmp_path,
        {"ada": ["a1", "a2"], "bob": ["b1", "b2"], "cid": ["c1", "c2"]},
        body,
        matchmaking={"games_at_once": 10},
    )


def test_challenge_deals_are_never_ranked_deals(tmp_path: Path) -> None:
    async def body(arena: Arena) -> None:
        s = arena.server
        mine = await s.challenge(arena.author("ada"), "a1", "b1", 10)
        await until(done(arena, mine.id), "the challenge's games")
        await until(lambda: len(arena.ranked.games) >= 10, "ranked games")
        assert arena.challenge_key == challenge_key(s.deal_key) != arena.ranked_key

        def dealt(key: bytes | None, seed: int) -> int:
            config = MatchConfig(
                variant="two-handed", seed=seed, games=1, game_seeds=(seed,), deal_key=key or b""
            )
            return config.deal_seed(0)

        ranked = {dealt(arena.ranked_key, g.seed) for g in arena.ranked.games}
        challenged = {dealt(arena.challenge_key, g.seed) for g in arena.challenges.games}
        assert len(challenged) == 5  # 5 deals, each in both seat rotations
        assert not ranked & challenged
        # The same public seed, dealt in a challenge, is not the ranked game's deal either.
        seed = arena.ranked.games[0].seed
        assert dealt(arena.challenge_key, seed) != dealt(arena.ranked_key, seed)
        # ... and no challenge seed is a ranked one.
        assert not {g.seed for g in arena.ranked.games} & {g.seed for g in arena.challenges.games}

    run(tmp_path, {"ada": ["a1"], "bob": ["b1"]}, body)


def test_a_challenge_replay_is_shown_once_its_deal_is_over(tmp_path: Path) -> None:
    async def body(arena: Arena) -> None:
        s = arena.server
        ada = arena.author("ada")
        arena.challenges.held = {1}  # the deal's second seat rotation waits
        mine = await s.challenge(ada, "a1", "b1", 2)
        await until(lambda: len(arena.comp.challenge_games(mine.id)) == 1, "the first game")
        first = arena.comp.challenge_games(mine.id)[0]
        with pytest.raises(SubmissionError, match="still to be played in another seat rotation"):
            await s.challenge_replay(ada, first.id)
        # Cancelled with the other rotation under way: still not shown until that game ends.
        await until(lambda: len(arena.challenges.games) == 2, "the second game to start")
        await s.cancel_challenge(ada, mine.id)
        with pytest.raises(SubmissionError, match="still to be played"):
            await s.challenge_replay(ada, first.id)
        arena.challenges.gate.set()
        await until(lambda: mine.id not in s.challenge_busy, "the second game")
        game, record, _ = await s.challenge_replay(ada, first.id)
        assert game.deal == 0 and record["games"][0]["seed"] == first_seed(arena)
        a, b = arena.challenges.games
        assert a.seed == b.seed and a.seats == tuple(reversed(b.seats))

    def first_seed(arena: Arena) -> int:
        return arena.challenges.games[0].seed

    run(tmp_path, {"ada": ["a1"], "bob": ["b1"]}, body)


def test_a_challenge_stops_when_its_bot_leaves_play(tmp_path: Path) -> None:
    async def body(arena: Arena) -> None:
        s = arena.server
        ada = arena.author("ada")
        arena.challenges.held = {1}
        mine = await s.challenge(ada, "a1", "b1", 4)
        await until(lambda: len(arena.challenges.games) == 2, "the second game to start")
        assert await s.withdraw(arena.author("bob"), "b1") == 1
        arena.challenges.gate.set()
        await until(done(arena, mine.id), f"the challenge to stop; {arena.said[-12:]}")
        found = arena.comp.challenge(s.cid, mine.id)
        assert found is not None
        assert (found.status, found.reason, found.played) == (ch.STOPPED, "b1 1 left play", 2)

    run(tmp_path, {"ada": ["a1"], "bob": ["b1"]}, body)


def test_the_command_line_asks_lists_replays_and_cancels_over_the_submission_service(
    tmp_path: Path,
) -> None:
    async def body(arena: Arena) -> None:
        address = arena.server.submissions_address

        def cli(author: str, *args: str) -> Any:
            given = ["compete", *args, "--server", address, "--token", arena.tokens[author]]
            return CliRunner().invoke(app, given, env={"COLUMNS": "200"})

        async def call(author: str, *args: str) -> Any:
            return await asyncio.to_thread(cli, author, *args)

        asked = await call("ada", "challenge", "a1", "--against", "b1", "--games", "2")
        assert asked.exit_code == 0, asked.output
        assert "challenge 1: a1 1 against b1 1, 2 game(s), open" in asked.output
        bad = await call("ada", "challenge", "a1", "--against", "b1", "--games", "99")
        assert bad.exit_code != 0
        assert "games: expected 1..50 (max_challenge_games), got 99" in bad.output
        await until(done(arena, 1), "the challenge's games")
        listed = await call("ada", "challenges")
        assert listed.exit_code == 0, listed.output
        # The first seat wins every fake game, and the seats swap between the deal's rotations.
        assert "a1 1" in listed.output and "b1 1" in listed.output and "1-1-0" in listed.output
        games = arena.comp.challenge_games(1)
        shown = await call("ada", "challenges", "1")
        assert shown.exit_code == 0, shown.output
        assert all(str(g.id) in shown.output for g in games)
        assert "1000-500" in shown.output and "500-1000" in shown.output
        # Bob, the opponent's author, sees none of it and cannot act on it.
        theirs = await call("bob", "challenges")
        assert theirs.exit_code == 0 and "a1" not in theirs.output
        refused = await call("bob", "challenge-replay", str(games[0].id))
        assert refused.exit_code != 0 and "you have no challenge 1" in refused.output
        refused = await call("bob", "challenge-cancel", "1")
        assert refused.exit_code != 0 and "you have no challenge 1" in refused.output
        out = tmp_path / "replay.json"
        saved = await call("ada", "challenge-replay", str(games[0].id), "--out", str(out))
        assert saved.exit_code == 0, saved.output
        transcript = await asyncio.to_thread(
            CliRunner().invoke, app, ["replay", "--record", str(out)]
        )
        assert transcript.exit_code == 0, transcript.output
        # With --log, ada's own bot's output of the game (none kept by the fake player).
        logged = await call("ada", "challenge-replay", str(games[0].id), "--out", str(out), "--log")
        assert logged.exit_code == 0, logged.output
        assert "no output of your bots kept for this game" in logged.output
        arena.challenges.held = {0, 1}  # the next challenge's games wait
        again = await call("ada", "challenge", "a1", "--against", "b1", "--games", "2")
        assert again.exit_code == 0, again.output
        cancelled = await call("ada", "challenge-cancel", "2")
        assert cancelled.exit_code == 0, cancelled.output
        assert "challenge 2: cancelled after 0 game(s)" in cancelled.output

    run(tmp_path, {"ada": ["a1"], "bob": ["b1"]}, body, serve=True)


def test_a_challenge_games_output_is_kept_per_seat_and_given_to_its_author_alone(
    tmp_path: Path,
) -> None:
    async def body(arena: Arena) -> None:
        s = arena.server
        assert arena.challenge_output_bytes == 3 * 1024, "capped by output_kib"
        arena.challenges.outputs = True
        ada, bob = arena.author("ada"), arena.author("bob")
        against_bob = await s.challenge(ada, "a1", "b1", 2)
        own = await s.challenge(ada, "a1", "a2", 2)
        await until(done(arena, against_bob.id), "the challenge against bob's bot")
        await until(done(arena, own.id), "the challenge between ada's bots")
        for g in arena.comp.challenge_games(against_bob.id):
            _, _, outputs = await s.challenge_replay(ada, g.id)
            # Ada's bot's seat alone: bob's bot's output is his.
            mine = g.seats.index("a1")
            assert [(o.seat, o.bot, o.version) for o in outputs] == [(mine, "a1", "1")]
            assert outputs[0].output == f"seat {mine} of x{against_bob.id:09d}-{g.number}\n"
            assert outputs[0].output_bytes == 1000 + mine
            stored = arena.comp.challenge_outputs(g.id)
            assert sorted(o.author_id for o in stored) == sorted([ada.id, bob.id])
            with pytest.raises(SubmissionError, match="you have no challenge"):
                await s.challenge_replay(bob, g.id)
        for g in arena.comp.challenge_games(own.id):
            _, _, outputs = await s.challenge_replay(ada, g.id)
            assert sorted(o.bot for o in outputs) == ["a1", "a2"], "both bots are hers"

    run(
        tmp_path,
        {"ada": ["a1", "a2"], "bob": ["b1"]},
        body,
        submissions={"output_kib": 3},
    )
