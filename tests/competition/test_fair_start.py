"""Issue 47, through the competition server itself with a fake player (no bot is run): every entrant
of a fresh competition plays within its first pass of pairings, and a newcomer plays in the next
pairing made after it enters play. (The matchmaker's own bounds, at 5,000 entrants: test_matchmaker.)
"""

from __future__ import annotations

import asyncio
import math
import random
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from arena.competition.matchmaker import Candidate
from arena.competition.server import CompetitionServer
from arena.competition.spec import parse
from arena.ledger import Ledger
from arena.ledger import competitions as store
from arena.ledger.rows import ScheduledGame
from arena.play.game import Played
from arena.referee.record import GameRecord, MatchRecord

ENTRANTS = 120
SLOTS = 4
TIMEOUT = 240.0


class FakePlayer:
    """Plays a game in a few milliseconds, the first seat winning at random; notes each game's
    players in the order the games were planned."""

    def __init__(self) -> None:
        self.games: list[tuple[int, tuple[str, ...]]] = []
        self.rng = random.Random(3)

    async def play(self, game: ScheduledGame, commands: Mapping[str, str]) -> Played:
        self.games.append((game.ord, game.group))
        await asyncio.sleep(0.005)
        win = self.rng.randrange(2)
        result = {"sides": [[0], [1]], "ranking": [1 - win, win], "scores": [1000, 500]}
        record = MatchRecord(
            game.key, "two-handed", {}, game.seed, [list(s) for s in game.seats], {}, {},
            games=[GameRecord(0, game.seed, 0, result=result)],
        )  # fmt: skip
        return Played(record)


def enter(comp: store.Competitions, cid: int, builds: Path, names: list[str]) -> None:
    """Each name: an author with a bot of that name, in play (its build a folder with a bot.py)."""
    for name in names:
        author = comp.author_of(cid, comp.add_author(cid, f"author-{name}"))
        assert author is not None
        sid, _ = comp.submit(
            cid, author.id, name, "1", "python", bundle="a" * 64, run="{python} bot.py"
        )
        (builds / str(sid)).mkdir(parents=True)
        (builds / str(sid) / "bot.py").write_text("")
        assert comp.activate(sid, f"bundle:{name}") is not None


def test_every_entrant_plays_in_the_first_pass_and_a_newcomer_at_once() -> None:
    # A ledger in memory-backed files where the machine has them: 120 games' commits.
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as tmp:
        asyncio.run(asyncio.wait_for(fair_start(Path(tmp)), TIMEOUT))


async def fair_start(tmp: Path) -> None:
    spec = parse(
        {
            "name": "Fair start",
            "variant": "two-handed",
            "matchmaking": {"games_at_once": SLOTS, "duplicate": False, "pause_seconds": 0.05},
            "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
        }
    )
    led = Ledger(tmp / "ledger.sqlite")
    cid = led.register(spec, None, "competition").id
    comp = store.Competitions(led)
    names = [f"bot{i:03d}" for i in range(ENTRANTS)]
    enter(comp, cid, tmp / "data" / "builds", names)
    server = CompetitionServer(spec, led, tmp / "data")
    await server.start()
    fake = FakePlayer()
    server.player = fake  # type: ignore[assignment]  # before the matchmaker's first pairing
    try:
        # Every entrant's first game is in the first pass: ENTRANTS / 2 pairings (one more when the
        # last two left are one author's; here each author has one bot).
        first_pass = math.ceil(ENTRANTS / 2)
        deadline = time.monotonic() + TIMEOUT / 2
        while len(fake.games) < first_pass:
            assert time.monotonic() < deadline, f"{len(fake.games)} games in {TIMEOUT / 2} s"
            await asyncio.sleep(0.05)
        played = {name for _, group in sorted(fake.games)[:first_pass] for name in group}
        assert played == set(names), f"no game for {sorted(set(names) - played)[:10]}"
        # A newcomer enters play (from another connection, as the intake's activation is seen).
        # Any refresh may be the one that puts it in the pool (the periodic one, or one after a
        # game ends, can come before the one awaited here): the pairing order at that moment is
        # noted, and the first pairing made from then on must be the newcomer's.
        joined: list[int] = []
        put = server.pool.put

        def noting_put(c: Candidate) -> None:
            if c.name == "newcomer" and not joined:
                joined.append(server.order)
            put(c)

        server.pool.put = noting_put  # type: ignore[method-assign]
        await asyncio.to_thread(enter, comp, cid, tmp / "data" / "builds", ["newcomer"])
        await server._refresh()
        assert joined, "the newcomer is not in the pool after a refresh"
        since = joined[0]
        while not any(o >= since for o, _ in fake.games):
            assert time.monotonic() < deadline, "no pairing after the newcomer entered play"
            await asyncio.sleep(0.02)
        after = [group for o, group in sorted(fake.games) if o >= since]
        assert "newcomer" in after[0], f"the next pairing was {after[0]}"
    finally:
        await server.stop()
        led.close()
