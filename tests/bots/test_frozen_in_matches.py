"""The ``freeze`` option through real matches, with real bubblewrap and control groups: a bot runs
only on its own turns from its Welcome on, between games and while it waits in the pool, and one that
leaves its match alive, or never joins it, runs on none of its opponent's turns either. (Freezing and
thawing a single bot process: test_sandbox_processes.py.)

On CI these tests must not skip (.ci/run installs bubblewrap)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sandbox_helpers import bot_script, require_the_sandbox

from arena.bots.limits import Limits

pytestmark = pytest.mark.slow
require_the_sandbox()


# A bot whose forked child spins from its start, adding up the time it runs (the gaps in its own
# stream of clock readings are times it was stopped). The bot notes the child's running time at each
# of its replies and at each request; what ran in between ran off its turn. Its MatchOver has it print
# the most that ran in one such stretch since its first Welcome, and before which of the match's
# decisions.
WATCHED = """
import mmap, os, time

SHARED = memoryview(mmap.mmap(-1, 8)).cast("d")  # one 8-byte store or load an item (struct's tear)
if os.fork() == 0:  # before any thread starts
    parent, ran, last = os.getppid(), 0.0, time.monotonic()
    while os.getppid() == parent:
        for _ in range(10_000):
            now = time.monotonic()
            if now - last < 0.005:
                ran += now - last
            last = now
            SHARED[0] = ran
    os._exit(0)

from arena_bot.random_bot import RandomBot
from arena_bot.sdk import main_for


def running() -> float:
    return SHARED[0]


class Watched(RandomBot):
    name = "watched"
    mark = None
    most = (0.0, 0)
    decisions = 0

    def on_welcome(self, welcome):
        super().on_welcome(welcome)
        if self.mark is None:
            self.mark = running()

    def decide(self, view, legal, clock):
        off = running() - self.mark
        self.decisions += 1
        if off > self.most[0]:
            self.most = (off, self.decisions)
        choice = super().decide(view, legal, clock)
        self.mark = running()
        return choice

    def on_match_over(self, over):
        super().on_match_over(over)
        print(f"OFF-TURN {over.match_id} {self.most[0]:.3f} s before decision {self.most[1]}",
              flush=True)
        self.most, self.decisions = (0.0, 0), 0


main_for(Watched())
"""

# An opponent that thinks a second over the first decision of each game: the watched bot's
# wait for its first request of the game.
SLOW_STARTER = """
import time
from arena_bot.random_bot import RandomBot
from arena_bot.sdk import main_for


class SlowStarter(RandomBot):
    name = "slow"
    first = True

    def on_game_start(self, start):
        super().on_game_start(start)
        self.first = True

    def decide(self, view, legal, clock):
        if self.first:
            self.first = False
            time.sleep(1.0)
        return super().decide(view, legal, clock)


main_for(SlowStarter())
"""


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_a_frozen_bot_runs_on_none_of_its_opponents_turns(tmp_path: Path, mode: str) -> None:
    """With ``freeze``, a bot runs from its Welcome on only on its own turns: not while its opponent
    starts or plays the first turn of a game (the opponent leads every game here), nor while it
    waits in the pool for its next match. Each of those stretches let it run as long as it lasted
    (0.5 s before its first decision and before its first of the next game, 1.5 s before its first
    of the next match, with an opponent that thought half a second and a second in the pool); now
    at most what runs as its reply travels and its request does (8 ms here, 0.26 s on a machine
    loaded six times over: the bound is half the opponent's second)."""
    from arena.referee import MatchConfig, TimeControl
    from arena.service.match_manager import PlayerSpec
    from arena.service.server import create_server

    watched = bot_script(tmp_path / "watched", WATCHED)
    slow = bot_script(tmp_path / "slow", SLOW_STARTER)
    clock = TimeControl(budget_ms=5_000, bank_ms=20_000, grace_ms=1_000)
    limits = Limits(freeze=True, sandbox=mode)
    specs = [[PlayerSpec("watched", watched)], [PlayerSpec("slow", slow)]]

    async def go() -> list[str]:
        server, _, manager = await create_server("127.0.0.1:0", limits=limits)
        try:
            entries = []
            for seed in (1, 2):
                # Seat 0 deals every game: seat 1, the slow starter, leads each.
                config = MatchConfig(
                    seed=seed,
                    games=2,
                    time_control=clock,
                    game_seeds=(seed, seed + 10),
                    dealers=(0, 0),
                )
                entry = manager.create(config, specs, connect_timeout=120.0, matches_per_process=2)
                await manager.start(entry)
                await asyncio.wait_for(entry.done.wait(), 120)
                assert entry.record is not None, entry.error
                assert [g.outcome for g in entry.record.games] == ["normal"] * 2
                entries.append(entry)
                if seed == 1:
                    await asyncio.sleep(2.0)  # both wait in the pool
            assert entries[1].processes == []  # the second match was played by the pooled pair
            bot = next(p for p in entries[0].processes if p.name == "watched")
            await asyncio.wait_for(bot.wait(), 30)  # its quota played, it leaves
            await bot.output_done(5.0)
            return [line for line in bot.last_output(20) if line.startswith("OFF-TURN")]
        finally:
            await manager.close()
            await server.stop(None)

    lines = asyncio.run(go())
    assert len(lines) == 2, lines
    for line in lines:
        assert float(line.split()[2]) < 0.5, lines


# A bot that leaves its match without exiting: a forked child spins from its start, printing the
# monotonic clock's reading every 50 ms that it runs; the bot answers its first request and closes
# its stream at once ("close"), or never dials in at all ("absent"), and lives on.
LEAVER = """
import os, sys, time

if os.fork() == 0:  # before any thread starts
    parent, last = os.getppid(), 0.0
    while os.getppid() == parent:
        now = time.monotonic()
        if now - last >= 0.05:
            print(f"RAN {now:.3f}", flush=True)
            last = now
    os._exit(0)

if sys.argv[1] == "absent":
    time.sleep(600)

import queue

import grpc

from arena.wire.v1 import bot_pb2, bot_pb2_grpc

hello = bot_pb2.Hello(token=os.environ["ARENA_TOKEN"], name="leaver", protocol_version=1)
outgoing = queue.Queue()
outgoing.put(bot_pb2.BotMessage(hello=hello))


def send():
    while (message := outgoing.get()) is not None:
        yield message


with grpc.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
    call = bot_pb2_grpc.BotGatewayStub(channel).Play(send())  # held: a call let go is cancelled
    for message in call:
        if message.WhichOneof("body") == "request":
            req = message.request
            action = req.legal_actions[0].text
            reply = bot_pb2.Reply(request_id=req.request_id, match_id=req.match_id, action=action)
            outgoing.put(bot_pb2.BotMessage(reply=reply))
            outgoing.put(None)  # and the stream ends, right behind the reply
            break
    time.sleep(600)
"""

# An opponent that notes when each of its turns begins and ends, and takes a second and a half
# over each.
TIMED = """
import time
from arena_bot.random_bot import RandomBot
from arena_bot.sdk import main_for


class Timed(RandomBot):
    name = "timed"

    def decide(self, view, legal, clock):
        start = time.monotonic()
        time.sleep(1.5)
        print(f"TURN {start:.3f} {time.monotonic():.3f}", flush=True)
        return super().decide(view, legal, clock)


main_for(Timed())
"""


@pytest.mark.parametrize("how", ["close", "absent"])
def test_a_frozen_bot_that_leaves_its_match_runs_on_none_of_its_opponents_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """With ``freeze``, a bot that closes its stream right behind a reply (arriving once the bot is
    frozen), or that never dials in, is out of the match but alive: it was thawed (or never frozen)
    and ran on through its opponent's turns, to the end of the match. Now it stays frozen but on
    its own time (its next decision, which waits to learn whether it crashed)."""
    from arena.referee import MatchConfig, TimeControl
    from arena.service import stream_port as ports
    from arena.service.match_manager import PlayerSpec
    from arena.service.server import create_server

    monkeypatch.setattr(ports, "SETTLE_SECONDS", 2.0)
    leaver = bot_script(tmp_path / "leaver", LEAVER) + f" {how}"
    timed = bot_script(tmp_path / "timed", TIMED)
    clock = TimeControl(budget_ms=5_000, bank_ms=20_000, grace_ms=1_000)
    logs = tmp_path / "logs"

    async def go() -> None:
        server, _, manager = await create_server(
            "127.0.0.1:0", logs_dir=logs, limits=Limits(freeze=True)
        )
        try:
            # The timed bot plays first: it leads when the leaver is absent (seat 1 deals then,
            # seat 0 leads), and answers the lead of a leaver that closes its stream.
            dealer = 0 if how == "absent" else 1
            config = MatchConfig(seed=1, games=1, time_control=clock, dealers=(dealer,))
            specs = [[PlayerSpec("leaver", leaver)], [PlayerSpec("timed", timed)]]
            entry = manager.create(config, specs, connect_timeout=3.0 if how == "absent" else 60)
            await manager.start(entry)
            await asyncio.wait_for(entry.done.wait(), 120)
            assert entry.record is not None, entry.error
            assert entry.record.games[0].culprit == 0, entry.record.games[0].detail
        finally:
            await manager.close()
            await server.stop(None)

    asyncio.run(go())
    (leaver_log,) = logs.glob("*-leaver.log")
    (timed_log,) = logs.glob("*-timed.log")
    ran = [float(line.split()[1]) for line in leaver_log.read_text().splitlines() if "RAN" in line]
    turns = [
        (float(line.split()[1]), float(line.split()[2]))
        for line in timed_log.read_text().splitlines()
        if line.startswith("TURN")
    ]
    assert ran and turns
    # Inside a turn's second and a half, with a margin for the freezing and thawing at its ends.
    during = [t for t in ran for start, end in turns if start + 0.25 < t < end - 0.25]
    assert len(during) <= 2, (during, turns)
