"""Bot processes that play several matches over one stream (``matches_per_process``): a waiting
process is given the next match of its kind, never a deal it has seen, only up to its quota; it is
retired when the pool is full, when its match did not end normally, and when the server closes."""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from arena.bots.limits import Limits
from arena.referee import MatchConfig, TimeControl
from arena.service.match_manager import ManagerOptions, MatchEntry, MatchManager, PlayerSpec
from arena.service.server import create_server
from arena.service.sessions import BotSession, SessionKey
from arena.service.stream_port import SETTLE_SECONDS, StreamPort

PY = shlex.quote(sys.executable)
RANDOM = f"{PY} -m arena_bot.random_bot"
GREEDY = f"{PY} -m arena_bot.greedy_bot"
CLOCK = TimeControl(budget_ms=5_000, bank_ms=20_000, grace_ms=1_000)
TIMEOUT = 300.0
LIMITS = Limits()  # the server's own (create_server's default): a match that names none gets it

pytestmark = pytest.mark.slow


def run(
    body: Callable[[MatchManager], Awaitable[Any]], options: ManagerOptions | None = None
) -> Any:
    async def go() -> Any:
        server, _, manager = await create_server("127.0.0.1:0", options=options)
        try:
            return await asyncio.wait_for(body(manager), TIMEOUT)
        finally:
            await manager.close()
            await server.stop(None)

    return asyncio.run(go())


async def play(
    manager: MatchManager,
    seed: int,
    quota: int,
    players: tuple[tuple[str, str], ...] = (("random", RANDOM), ("greedy", GREEDY)),
) -> MatchEntry:
    config = MatchConfig(seed=seed, games=1, time_control=CLOCK, game_seeds=(seed,))
    specs = [[PlayerSpec(name, command)] for name, command in players]
    entry = manager.create(config, specs, connect_timeout=120.0, matches_per_process=quota)
    await manager.start(entry)
    await entry.done.wait()
    assert entry.record is not None, entry.error
    assert [g.outcome for g in entry.record.games] == ["normal"], entry.record.games[0].detail
    return entry


def pids(entry: MatchEntry) -> set[int]:
    return {s.process.proc.pid for s in entry.sessions if s.process is not None}


def test_a_waiting_process_plays_the_next_match_over_the_same_stream() -> None:
    async def body(manager: MatchManager) -> None:
        first = await play(manager, seed=1, quota=3)
        second = await play(manager, seed=2, quota=3)
        assert len(first.processes) == 2
        assert second.processes == []  # nothing launched: both players came from the pool
        assert pids(second) == pids(first)
        for session in second.sessions:
            assert session.played == 2
            assert session.seen == {1, 2}
            assert session.process is not None and session.process.returncode is None
        # The bots were told both matches: the second Welcome came over the same stream.
        assert {p.bot_name for seat in second.players for p in seat} == {"random", "greedy"}

    run(body)


def test_a_process_never_meets_a_deal_twice() -> None:
    async def body(manager: MatchManager) -> None:
        first = await play(manager, seed=7, quota=5)
        # The same deal with the seats swapped (duplicate deals): new processes, or each bot would
        # know its opponent's hand.
        swapped = await play(
            manager, seed=7, quota=5, players=(("greedy", GREEDY), ("random", RANDOM))
        )
        assert len(swapped.processes) == 2
        assert not pids(swapped) & pids(first)
        # Another deal may use either pair again.
        third = await play(manager, seed=8, quota=5)
        assert third.processes == []

    run(body)


def test_the_quota_retires_a_process_after_its_last_match() -> None:
    async def body(manager: MatchManager) -> None:
        first = await play(manager, seed=1, quota=2)
        second = await play(manager, seed=2, quota=2)
        assert second.processes == []
        third = await play(manager, seed=3, quota=2)
        assert len(third.processes) == 2
        for proc in first.processes:  # stopped after its second match, not left waiting
            assert proc.returncode is not None

    run(body)


def test_a_checked_bot_plays_the_first_matches_of_its_quota() -> None:
    """A tournament checks each entrant before its first game (preflight). When its matches may
    share a process, the checked process waits in the pool and plays, up to the tournament's quota
    of matches, instead of being stopped and another started; one that no match needs is stopped
    with the server."""

    async def body(manager: MatchManager) -> None:
        config = MatchConfig(time_control=CLOCK)
        for name, command in (("random", RANDOM), ("greedy", GREEDY)):
            assert (
                await manager.preflight(PlayerSpec(name, command), config, LIMITS, 120.0, 2) == ""
            )
        checked = {
            s.process.proc.pid: s for idle in manager.pool._idle.values() for s in idle if s.process
        }
        assert len(checked) == 2 and all(s.idle for s in checked.values())
        first = await play(manager, seed=1, quota=2)
        second = await play(manager, seed=2, quota=2)
        assert first.processes == second.processes == []  # both played by the checked processes
        assert pids(first) == pids(second) == set(checked)
        # The quota spent: two matches, the check aside.
        third = await play(manager, seed=3, quota=2)
        assert len(third.processes) == 2 and not pids(third) & set(checked)
        for session in checked.values():
            assert session.process is not None and session.process.returncode is not None
        # One process per match: the checked process is stopped at once.
        assert await manager.preflight(PlayerSpec("r", RANDOM), config, LIMITS, 120.0, 1) == ""
        assert not manager.pool._idle.get(SessionKey("r", RANDOM, LIMITS))
        # A checked process that no match takes is stopped when the server closes.
        assert await manager.preflight(PlayerSpec("g", GREEDY), config, LIMITS, 120.0, 3) == ""
        (waiting,) = manager.pool._idle[SessionKey("g", GREEDY, LIMITS)]
        leftover.append(waiting)

    leftover: list[BotSession] = []
    run(body)
    (session,) = leftover
    assert session.ended and session.process is not None and session.process.returncode is not None


def test_the_waiting_processes_of_other_commands_are_ended_on_demand() -> None:
    """Entrants that leave play (a competition's withdrawn or replaced bundle): their processes
    waiting in the pool are stopped, and one playing is stopped after its match; those of the
    commands kept wait on."""

    async def body(manager: MatchManager) -> None:
        first = await play(manager, seed=1, quota=3)
        assert manager.pool.pooled("random") == manager.pool.pooled("greedy") == 1
        assert manager.pool.end_waiting({GREEDY}) == 1
        assert manager.pool.pooled("random") == 0 and manager.pool.pooled("greedy") == 1
        (random_bot,) = [s.process for s in first.sessions if s.key and s.key.name == "random"]
        assert random_bot is not None
        await asyncio.wait_for(random_bot.wait(), 30)
        assert manager.pool.end_waiting({GREEDY}) == 0
        second = await play(manager, seed=2, quota=3)
        assert len(second.processes) == 1, "a new random process; the waiting greedy one plays"
        # A command out of play is not kept after its match either (a game that was under way when
        # its entrant left); the kept one waits again.
        assert manager.pool.pooled("random") == 0 and manager.pool.pooled("greedy") == 1
        (new_random,) = [s.process for s in second.sessions if s.key and s.key.name == "random"]
        assert new_random is not None
        await asyncio.wait_for(new_random.wait(), 30)
        # Named again, it is kept again (the greedy process has spent its quota of three).
        assert manager.pool.end_waiting({GREEDY, RANDOM}) == 0
        await play(manager, seed=3, quota=3)
        assert manager.pool.pooled("random") == 1 and manager.pool.pooled("greedy") == 0

    run(body)


@pytest.mark.parametrize("quota", [1, 4])
def test_closing_with_matches_in_play_stops_them_at_once(quota: int) -> None:
    """Matches cut short by the server's close: their bots are stopped with them, none is charged a
    game for it, and the close does not wait out the seconds that tell a crash from a disconnect
    (which it did for every match in play; with processes reused, a cut-short bot was also parked
    first, and stopped only after a drain)."""

    async def go() -> tuple[float, list[MatchEntry]]:
        server, _, manager = await create_server("127.0.0.1:0")
        try:
            entries = []
            for seed in (1, 2, 3):
                # Games enough that no match can end before the close, however fast the machine.
                config = MatchConfig(seed=seed, games=1_000, time_control=CLOCK)
                specs = [[PlayerSpec(n, c)] for n, c in (("random", RANDOM), ("greedy", GREEDY))]
                entry = manager.create(config, specs, 120.0, matches_per_process=quota)
                await manager.start(entry)
                entries.append(entry)
            while not all(e.status == "running" for e in entries):
                assert not any(e.done.is_set() for e in entries), [e.error for e in entries]
                await asyncio.sleep(0.05)
            began = time.monotonic()
            await manager.close()
            return time.monotonic() - began, entries
        finally:
            await server.stop(None)

    took, entries = asyncio.run(asyncio.wait_for(go(), TIMEOUT))
    assert took < SETTLE_SECONDS, f"close took {took:.1f} s"
    for entry in entries:
        assert entry.done.is_set() and entry.record is None, "cut short: no match record"
        assert all(end.outcome.name == "NORMAL" for end in entry.ends), entry.ends
        for session in entry.sessions:
            assert session.process is not None and session.process.returncode is not None


def test_one_process_per_match_by_default() -> None:
    async def body(manager: MatchManager) -> None:
        first = await play(manager, seed=1, quota=1)
        second = await play(manager, seed=2, quota=1)
        assert len(second.processes) == 2
        for proc in first.processes:
            assert proc.returncode is not None

    run(body)


def test_a_full_pool_retires_the_longest_waiting_process() -> None:
    async def body(manager: MatchManager) -> None:
        pair = (("random-a", RANDOM), ("random-b", RANDOM))
        # Two matches at once: two sessions of each kind wait afterwards, but the pool keeps one.
        first, second = await asyncio.gather(
            play(manager, seed=1, quota=5, players=pair),
            play(manager, seed=2, quota=5, players=pair),
        )
        procs = first.processes + second.processes
        await asyncio.sleep(0)
        waiting = [p for p in procs if p.returncode is None]
        for _ in range(100):  # the retired ones are told to leave and stopped within seconds
            if len(waiting) == 2:
                break
            await asyncio.sleep(0.1)
            waiting = [p for p in procs if p.returncode is None]
        assert len(waiting) == 2  # one per kind
        third = await play(manager, seed=3, quota=5, players=pair)
        assert third.processes == []
        assert pids(third) == {p.proc.pid for p in waiting}

    run(body, ManagerOptions(idle_per_kind=1))


def test_closing_the_server_stops_waiting_processes() -> None:
    async def body(manager: MatchManager) -> list[Any]:
        entry = await play(manager, seed=1, quota=5)
        assert all(p.returncode is None for p in entry.processes)  # waiting in the pool
        return entry.processes

    procs = run(body)
    assert all(p.returncode is not None for p in procs)


MISBEHAVING = f"{PY} {shlex.quote(str(Path(__file__).parent / 'bots' / 'misbehaving.py'))}"


def test_a_bot_that_speaks_between_matches_is_retired() -> None:
    async def body(manager: MatchManager) -> None:
        pair = (("chatter", f"{MISBEHAVING} chatter-between"), ("random", RANDOM))
        first = await play(manager, seed=1, quota=5, players=pair)
        chatter = first.processes[0]
        for _ in range(100):  # its stream is ended and its process stopped within seconds
            if chatter.returncode is not None:
                break
            await asyncio.sleep(0.1)
        assert chatter.returncode is not None
        assert chatter.workdir is None or not chatter.workdir.exists()  # cleaned up like any other
        second = await play(manager, seed=2, quota=5, players=pair)
        assert len(second.processes) == 1  # a new chatter; the random bot came from the pool
        assert second.processes[0] is not chatter

    run(body)


def test_a_bot_that_crashed_is_not_given_another_match() -> None:
    async def body(manager: MatchManager) -> None:
        pair = (("quitter", f"{MISBEHAVING} exit-mid --after 3"), ("random", RANDOM))
        config = MatchConfig(seed=1, games=1, time_control=CLOCK, game_seeds=(1,))
        specs = [[PlayerSpec(name, command)] for name, command in pair]
        entry = manager.create(config, specs, connect_timeout=120.0, matches_per_process=5)
        await manager.start(entry)
        await entry.done.wait()
        assert entry.record is not None
        assert [g.outcome for g in entry.record.games] == ["crash"]
        second = await play(manager, seed=2, quota=5)
        # The random bot finished its match normally and waits; the quitter is gone.
        assert len(second.processes) == 1
        assert second.processes[0].name == "greedy"

    run(body)


def test_a_message_sent_on_reading_match_over_is_between_matches() -> None:
    """The bot may read its MatchOver and speak before the referee's write returns: what it says
    then ends the session (the race a loaded machine showed), not a match already over."""

    async def go() -> BotSession:
        port = StreamPort("chatter", "m1", 0, 0, "token")
        session = BotSession(None, None, 5, "m1")
        session.begin(port, [1])

        async def write(message: Any) -> None:
            if message.HasField("match_over"):
                session.violation("unexpected message hello mid-match")  # before the write returns

        port.attach(write)
        await port.match_over("m1", [])
        return session

    assert asyncio.run(go()).ended


def test_the_log_of_a_waiting_process_is_complete_only_once_it_is_stopped(tmp_path: Path) -> None:
    """A process waiting for its next match belongs to no match, but writes on into its log: the log
    is among those still being written (which a cluster's node never takes away, cut short) until
    the process is stopped."""

    async def go() -> None:
        server, _, manager = await create_server("127.0.0.1:0", logs_dir=tmp_path)
        try:
            entry = await asyncio.wait_for(play(manager, seed=1, quota=3), TIMEOUT)
            logs = {proc.log_path for proc in entry.processes}
            assert len(logs) == 2 and all(path is not None and path.exists() for path in logs)
            assert all(s.idle for s in entry.sessions), "over: the processes wait in the pool"
            assert manager.logs_in_writing() == logs
            await manager.close()
            assert manager.logs_in_writing() == set()
        finally:
            await manager.close()
            await server.stop(None)

    asyncio.run(go())


def test_finished_matches_are_let_go_beyond_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A standing server kept every match it had played (record, events, players: some 0.5 MB
    each), for ever. Past KEEP_FINISHED the oldest finished ones are let go, unless a process they
    launched still waits in the pool (a closing manager finds it through its first match)."""
    from arena.service import match_manager as manager_module

    monkeypatch.setattr(manager_module, "KEEP_FINISHED", 2)

    async def body(manager: MatchManager) -> None:
        played = [await play(manager, seed=s, quota=1) for s in range(1, 5)]
        assert list(manager.matches) == [e.match_id for e in played[2:]]
        pooled = await play(manager, seed=5, quota=3)  # its processes wait in the pool
        later = [await play(manager, seed=s, quota=1, players=(("a", RANDOM), ("b", GREEDY)))
                 for s in (6, 7, 8)]  # fmt: skip
        assert list(manager.matches) == [pooled.match_id, *(e.match_id for e in later[1:])]

    run(body)
