"""Bots that attack the referee's resources (issue 6): each ends in the right typed outcome, the match
beside it finishes normally, the server goes on, and no bot process is left."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from arena.bots.limits import Limits
from arena.referee import FailurePolicy, MatchConfig, Policies, TimeControl
from arena.service.match_manager import MatchEntry, PlayerSpec
from arena.service.server import create_server

pytestmark = pytest.mark.slow

BOT = Path(__file__).resolve().parent / "bots" / "hostile.py"
PY = shlex.quote(sys.executable)
FIRST = f"{PY} -m arena_bot.first_bot"
TC = TimeControl(budget_ms=3_000, bank_ms=3_000, grace_ms=500)


def hostile(mode: str, *args: str) -> str:
    return shlex.join([sys.executable, str(BOT), mode, *args])


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _processes_with(markers: set[str]) -> list[int]:
    """Processes still carrying one of these bots' markers in their environment."""
    wanted = {f"ARENA_BOT_MARKER={m}".encode() for m in markers}
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                env = set(Path("/proc", entry, "environ").read_bytes().split(b"\0"))
            except OSError:
                continue
            if env & wanted and _alive(int(entry)):
                found.append(int(entry))
    return found


def run(
    command: str, logs: Path, limits: Limits | None = None, policies: Policies | None = None
) -> tuple[MatchEntry, MatchEntry]:
    async def go() -> tuple[MatchEntry, MatchEntry]:
        server, _, manager = await create_server(logs_dir=logs)
        try:
            bad = manager.create(
                MatchConfig(seed=5, time_control=TC, dealers=(1,), policies=policies or Policies()),
                [[PlayerSpec("bad", command)], [PlayerSpec("first", FIRST)]],
                20.0,
                limits,
            )
            beside = manager.create(
                MatchConfig(seed=6, time_control=TC),
                [[PlayerSpec("a", FIRST)], [PlayerSpec("b", FIRST)]],
                20.0,
            )
            await manager.start(bad)
            await manager.start(beside)
            await asyncio.wait_for(asyncio.gather(bad.done.wait(), beside.done.wait()), 120)
            return bad, beside
        finally:
            await manager.close()
            await server.stop(None)

    return asyncio.run(go())


def outcome(entry: MatchEntry) -> tuple[str, str]:
    assert entry.record is not None, entry.error
    game = entry.record.games[0]
    return game.outcome, game.detail


def settle(*entries: MatchEntry) -> None:
    """No process of these matches' bots, or of anything they started, is left."""
    markers = {p.marker for e in entries for p in e.processes}
    assert markers
    deadline = time.monotonic() + 10
    while _processes_with(markers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(markers) == []


def test_an_oversized_message_is_a_protocol_error(tmp_path: Path) -> None:
    bad, beside = run(hostile("oversized"), tmp_path)
    assert outcome(bad)[0] == "protocol-error", outcome(bad)
    assert outcome(beside)[0] == "normal"
    settle(bad, beside)


def test_a_flood_of_messages_is_a_protocol_error(tmp_path: Path) -> None:
    bad, beside = run(hostile("flood"), tmp_path)
    result, detail = outcome(bad)
    assert result == "protocol-error" and "never asked" in detail
    assert outcome(beside)[0] == "normal"
    settle(bad, beside)


def test_a_flood_between_turns_cuts_the_stream(tmp_path: Path) -> None:
    """Thousands of replies to requests never asked, sent after a good reply: under a policy that
    plays on (a random action for each failure, no strike limit) every one of them cost the referee's
    event loop, shared by every match, and all but 16 were dropped unheard. The stream is cut at the
    17th, and the seat's decisions fail from then on, saying why."""
    lenient = Policies(on_protocol_error=FailurePolicy.RANDOM_ACTION, max_strikes=0)
    bad, beside = run(hostile("flood-after"), tmp_path, policies=lenient)
    assert bad.record is not None, bad.error
    failures = [d.detail for d in bad.record.games[0].decisions if d.seat == 0 and d.failure]
    assert failures, bad.record.games[0].decisions[:4]
    assert any("its stream was cut: a flood of protocol errors" in f for f in failures), failures[
        :3
    ]
    assert outcome(beside)[0] == "normal"
    settle(bad, beside)


def test_unbounded_memory_ends_in_a_crash(tmp_path: Path) -> None:
    bad, beside = run(hostile("memory"), tmp_path, Limits(memory_mb=512))
    assert outcome(bad)[0] == "crash", outcome(bad)
    assert outcome(beside)[0] == "normal"
    settle(bad, beside)


def test_unbounded_stderr_is_truncated_and_the_game_goes_on(tmp_path: Path) -> None:
    bad, beside = run(hostile("stderr"), tmp_path, Limits(log_bytes=100_000))
    assert outcome(bad)[0] == "normal"
    logs = list(tmp_path.glob(f"{bad.match_id}-seat0-*.log"))
    assert len(logs) == 1
    text = logs[0].read_text(errors="replace")
    assert len(text) < 101_000 and text.endswith("[log truncated]\n")
    settle(bad, beside)


def test_children_that_outlive_the_bot_are_killed(tmp_path: Path) -> None:
    bad, beside = run(hostile("fork"), tmp_path)
    assert outcome(bad)[0] == "timeout"
    assert outcome(beside)[0] == "normal"
    settle(bad, beside)


def test_another_seats_token_is_refused_once_that_seat_is_connected(tmp_path: Path) -> None:
    async def go() -> tuple[str, str]:
        server, _, manager = await create_server(logs_dir=tmp_path)
        try:
            # Seat 0 never connects: the match waits out its connect window, long enough for the
            # impostor to be refused first (its start takes a second or two on a loaded machine).
            entry = manager.create(
                MatchConfig(seed=5, time_control=TC),
                [[PlayerSpec("bad")], [PlayerSpec("first", FIRST)]],
                8.0,
            )
            await manager.start(entry)
            other = entry.players[1][0]
            await asyncio.wait_for(other.attached.wait(), 30)
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(BOT),
                "token",
                "--token",
                other.token,
                env={**os.environ, "ARENA_ADDRESS": manager.address},
                stderr=asyncio.subprocess.PIPE,
            )
            _, err = await asyncio.wait_for(proc.communicate(), 60)
            assert entry.status == "waiting", "the impostor came after the connect window"
            await asyncio.wait_for(entry.done.wait(), 60)
            assert entry.record is not None
            return err.decode(), entry.record.games[0].outcome
        finally:
            await manager.close()
            await server.stop(None)

    err, result = asyncio.run(go())
    # The impostor's stream is refused (its client sees the stream end), seat 1 keeps its own bot,
    # and seat 0, never connected, is the one that fails.
    assert result == "crash"
    assert "Traceback" not in err
