"""arena start / matches / watch against a running referee, and replay --record (issue 4: a new user
starts the server, launches two bots, watches the match and reads its record). The admin address and
its token come from arena serve: the commands find the token in the file serve wrote."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a real arena serve, real bots dialling in, a wait past 10 s

ARENA = [sys.executable, "-m", "arena.cli.main"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


RUNTIME: dict[str, str] = {}  # XDG_RUNTIME_DIR of the running referee: where its token is


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A running arena serve: its admin address, and its records folder."""
    admin = f"127.0.0.1:{_free_port()}"
    records = tmp_path / "records"
    RUNTIME["XDG_RUNTIME_DIR"] = str(tmp_path)
    proc = subprocess.Popen(
        [
            *ARENA, "serve", "--address", "127.0.0.1:0", "--admin-address", admin,
            "--records", str(records),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **RUNTIME},
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "listening on" in line, line
    assert proc.stdout.readline().startswith(f"admin service on {admin}")
    yield admin, records
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "200", **RUNTIME},
    )


def saved_record(records: Path, match_id: str) -> Path:
    """The match's record file, once the server has written it (moments after the match ends)."""
    path = records / f"{match_id}.json"
    for _ in range(50):
        if path.exists():
            break
        time.sleep(0.1)
    return path


def test_start_watch_and_read_the_record(referee: tuple[str, Path]) -> None:
    address, records = referee
    started = arena(
        "start", "--server", address, "--bot", "{python} -m arena_bot.greedy_bot",
        "--bot", "{python} -m arena_bot.random_bot", "--seed", "4",
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    match_id = re.search(r"match (\S+) started", started.stdout)
    assert match_id is not None
    mid = match_id.group(1)
    watched = arena("watch", mid, "--server", address)
    assert watched.returncode == 0, watched.stderr
    assert "game 1 | deal 1:" in watched.stdout
    assert "game 1: normal" in watched.stdout
    listed = arena("matches", "--server", address)
    assert mid in listed.stdout and "finished" in listed.stdout
    path = saved_record(records, mid)
    full = arena("replay", "--record", str(path))
    assert full.returncode == 0, full.stderr
    assert "seat 0 hand:" in full.stdout and "seat 1 hand:" in full.stdout
    assert "game over after" in full.stdout
    seat = arena("replay", "--record", str(path), "--seat", "1")
    assert "seat 1 hand:" in seat.stdout and "seat 0 hand:" not in seat.stdout


def test_remote_players_get_tokens(referee: tuple[str, Path]) -> None:
    address, _ = referee
    started = arena("start", "--server", address, "--remote", "alice", "--remote", "bob")
    assert started.returncode == 0, started.stderr
    assert len(re.findall(r"seat \d \((alice|bob)\): token \S+", started.stdout)) == 2
    assert re.search(r"remote bots dial 127\.0\.0\.1:\d+ within 10 s", started.stdout)


def test_a_remote_bot_may_be_given_a_longer_connect_window(referee: tuple[str, Path]) -> None:
    """Issue 13.5: arena start takes arena match's options (connect timeout, policies, grace); a bot
    started by hand that dials in after the default 10 s still plays, under the policies asked for."""
    address, records = referee
    started = arena(
        "start", "--server", address, "--bot", "{python} -m arena_bot.random_bot",
        "--remote", "late", "--connect-timeout", "300", "--grace-ms", "2000",
        "--on-failure", "random-action", "--max-strikes", "5", "--variant", "rubicon",
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    match = re.search(r"match (\S+) started", started.stdout)
    token = re.search(r"\(late\): token (\S+)", started.stdout)
    dial = re.search(r"remote bots dial (\S+) within 300 s", started.stdout)
    assert match and token and dial, started.stdout
    time.sleep(11)  # past the default connect window
    bot = subprocess.run(
        [sys.executable, "-m", "arena_bot.first_bot"],
        env={**os.environ, "ARENA_ADDRESS": dial.group(1), "ARENA_TOKEN": token.group(1)},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert bot.returncode == 0, bot.stderr
    watched = arena("watch", match.group(1), "--server", address)
    assert "game 1: normal" in watched.stdout, watched.stdout + watched.stderr
    record = json.loads(saved_record(records, match.group(1)).read_text())
    assert record["policies"]["on_timeout"] == "random-action", record["policies"]
    assert record["policies"]["on_crash"] == "random-action"
    assert record["policies"]["max_strikes"] == 5
    assert record["time_control"]["grace_ms"] == 2000


def test_no_referee_at_the_address_is_said_so() -> None:
    """Not as gRPC's 'UNAVAILABLE: failed to connect to all addresses; last error: ...'."""
    nobody = f"127.0.0.1:{_free_port()}"
    for command in (["matches"], ["watch", "m1"], ["start", "--bot", "x", "--bot", "y"]):
        result = arena(*command, "--server", nobody, "--admin-token", "t")
        assert result.returncode == 1, result.stderr
        said = " ".join(result.stderr.split())
        assert f"error: no referee answers at {nobody}: is arena serve running" in said
        assert "UNAVAILABLE" not in said


def test_bad_requests_are_clear_errors(referee: tuple[str, Path]) -> None:
    address, _ = referee
    bad = arena("start", "--server", address, "--bot", "x", "--variant", "nope")
    assert bad.returncode == 2
    assert "unknown variant" in bad.stderr
    unknown = arena("watch", "m-none", "--server", address)
    assert unknown.returncode == 1 and "NOT_FOUND" in unknown.stderr
    missing = arena("replay", "--record", "/nonexistent/record.json")
    assert missing.returncode == 2 and "not a readable match record" in missing.stderr
