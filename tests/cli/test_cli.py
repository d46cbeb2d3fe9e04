"""The ``arena`` command: every command has help and is in the README; ``arena match`` end to end with
real bot processes, and its usage errors; ``arena serve`` until SIGTERM; ``arena play`` still works.

(``arena check-bot`` is tested in tests/bots/test_conformance.py.)
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
import typer
from grpc_health.v1 import health_pb2, health_pb2_grpc
from typer.testing import CliRunner

from arena.cli.main import app
from arena.cli.match import name_of, unique_names
from arena.referee import MatchRecord
from arena.wire.v1 import admin_pb2, admin_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
PYTHON = shlex.quote(sys.executable)
FIRST = "{python} -m arena_bot.first_bot"  # {python}: the interpreter running the arena
RANDOM = f"{PYTHON} -m arena_bot.random_bot"
WAIT_S = 120.0  # for anything a loaded 2-core machine may be slow at

runner = CliRunner()


def commands() -> dict[str, Any]:
    """The arena command's subcommands by name (typer's own click objects)."""
    group = typer.main.get_command(app)
    subcommands = getattr(group, "commands", None)
    assert isinstance(subcommands, dict)
    return dict(subcommands)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_commands_of_this_issue_are_registered() -> None:
    assert {"play", "serve", "match", "check-bot"} <= set(commands())


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_has_help(name: str) -> None:
    command = commands()[name]
    assert command.help, f"arena {name} has no description"
    result = runner.invoke(app, [name, "--help"])
    assert result.exit_code == 0, result.output
    first_line = command.help.strip().splitlines()[0]
    assert flat(first_line) in flat(result.output)


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_is_in_the_readme(name: str) -> None:
    # Fails until README.md documents the command (the lead engineer writes the README).
    assert f"arena {name}" in (ROOT / "README.md").read_text()


# ---------------------------------------------------------------------------------------- match


def test_match_end_to_end(tmp_path: Path) -> None:
    record = tmp_path / "out" / "match.json"
    seats = tmp_path / "seats"
    result = runner.invoke(
        app,
        [
            "match",
            "--bot",
            FIRST,
            "--bot",
            RANDOM,
            "--name",
            "alice",
            "--name",
            "bob",
            "--variant",
            "rubicon",  # one deal: the shortest game
            "--seed",
            "3",
            "--budget-ms",
            "10000",
            "--bank-ms",
            "60000",
            "--record",
            str(record),
            "--seat-record",
            str(seats),
        ],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    (game,) = [line for line in lines if line.startswith("game 1: ")]
    assert game.startswith("game 1: normal | alice ")
    assert ", bob " in game
    assert any("alice" in line and "bob" not in line for line in lines)  # the summary table
    data = json.loads(record.read_text())
    parsed = MatchRecord.from_dict(data)
    assert parsed.variant == "rubicon"
    assert parsed.players == [["alice"], ["bob"]]
    assert [g.outcome for g in parsed.games] == ["normal"]
    assert len(parsed.games[0].decisions) > 20
    for seat in (0, 1):
        view = json.loads((seats / f"seat{seat}.json").read_text())
        assert view["seat"] == seat
        assert view["games"][0]["decisions"]


def test_match_exit_code_1_when_a_bot_fails(tmp_path: Path) -> None:
    broken = ROOT / "tests" / "bots" / "fixtures" / "broken_bot.py"
    result = runner.invoke(
        app,
        [
            "match",
            "--bot",
            f"{PYTHON} {shlex.quote(str(broken))} play-7h",
            "--bot",
            FIRST,
            "--variant",
            "rubicon",
            "--budget-ms",
            "10000",
        ],
    )
    assert result.exit_code == 1, result.output
    assert "game 1: illegal-action (seat 0 (broken_bot): " in result.output
    assert "'play 7H' is not legal here" in result.output


def test_match_rejects_an_unknown_variant() -> None:
    result = runner.invoke(app, ["match", "--bot", FIRST, "--bot", FIRST, "-v", "five-handed"])
    assert result.exit_code == 2
    assert "five-handed" in result.output
    assert "--variant" in result.output


@pytest.mark.parametrize(
    ("option", "named"),
    [
        ("declarations_per_trick=seven", "declarations_per_trick"),
        ("colour=red", "colour"),
        ("game_end", "NAME=VALUE"),
    ],
)
def test_match_rejects_a_bad_option(option: str, named: str) -> None:
    result = runner.invoke(app, ["match", "--bot", FIRST, "--bot", FIRST, "-o", option])
    assert result.exit_code == 2
    assert named in result.output


@pytest.mark.parametrize(
    ("variant", "bots", "expected"),
    [
        ("two-handed", 3, "two-handed takes 2 bots"),
        ("two-handed", 1, "two-handed takes 2 bots"),
        ("three-handed-consultation", 2, "three-handed-consultation takes 3 bots"),
        ("four-handed", 2, "four-handed takes 4 bots"),
    ],
)
def test_match_rejects_the_wrong_number_of_bots(variant: str, bots: int, expected: str) -> None:
    args = ["match", "--variant", variant]
    for _ in range(bots):
        args += ["--bot", FIRST]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert expected in flat(result.output)


def test_match_rejects_names_that_do_not_match_the_bots() -> None:
    result = runner.invoke(app, ["match", "--bot", FIRST, "--bot", FIRST, "--name", "solo"])
    assert result.exit_code == 2
    assert "--name" in result.output


def test_match_needs_a_bot() -> None:
    result = runner.invoke(app, ["match"])
    assert result.exit_code == 2
    assert "--bot" in result.output


def test_match_rejects_a_bad_failure_policy() -> None:
    result = runner.invoke(app, ["match", "--bot", FIRST, "--bot", FIRST, "--on-failure", "shrug"])
    assert result.exit_code == 2
    assert "shrug" in result.output


def test_bot_names_from_commands() -> None:
    assert name_of("python -m arena_bot.random_bot") == "random_bot"
    assert name_of("/usr/bin/python3 bots/my_bot.py --fast") == "my_bot"
    assert name_of("node clients/javascript/bot.js") == "node"
    assert name_of("./target/release/bezique-bot") == "bezique-bot"
    assert name_of("python -c 'print(1)'") == "python"
    assert name_of("{python} -m arena_bot.greedy_bot") == "greedy_bot"
    assert name_of("{python} bots/mine.py") == "mine"
    assert unique_names(["first", "first", "random", "first"]) == [
        "first",
        "first#2",
        "random",
        "first#3",
    ]


# ---------------------------------------------------------------------------------------- serve


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_serve_until_sigterm_kills_local_bots(tmp_path: Path) -> None:
    pid_file = tmp_path / "bot.pid"
    sleeper = (
        f"{PYTHON} -c 'import os, sys, time; "
        f'open(sys.argv[1], "w").write(str(os.getpid())); time.sleep(600)\' {pid_file}'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli.main", "serve", "--address", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("referee listening on 127.0.0.1:"), line
        address = line.split()[-1]
        with grpc.insecure_channel(address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            status = health.Check(health_pb2.HealthCheckRequest(), timeout=WAIT_S)
            assert status.status == health_pb2.HealthCheckResponse.SERVING
            admin = admin_pb2_grpc.AdminStub(channel)
            started = admin.StartMatch(
                admin_pb2.StartMatchRequest(
                    variant="two-handed",
                    seats=[
                        admin_pb2.SeatSpec(name="sleeper", command=sleeper),
                        admin_pb2.SeatSpec(name="remote"),
                    ],
                    connect_timeout_ms=600_000,
                ),
                timeout=WAIT_S,
            )
            assert started.match_id
        deadline = time.monotonic() + WAIT_S
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the local bot never started"
            time.sleep(0.05)
        bot_pid = int(pid_file.read_text())
        assert _alive(bot_pid)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT_S) == 0
        deadline = time.monotonic() + WAIT_S
        while _alive(bot_pid):
            assert time.monotonic() < deadline, "the local bot outlived the server"
            time.sleep(0.05)
        assert proc.stderr is not None
        assert "stopped" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_beyond_loopback_needs_an_admin_token() -> None:
    result = runner.invoke(app, ["serve", "--address", "0.0.0.0:0"], env={"ARENA_ADMIN_TOKEN": ""})
    assert result.exit_code == 2
    assert "admin token" in flat(result.output)


# ---------------------------------------------------------------------------------------- play


def test_play_still_works() -> None:
    result = runner.invoke(app, ["play", "--variant", "two-handed", "--seed", "2"])
    assert result.exit_code == 0, result.output
    assert "deal 1" in result.output.lower()
    assert len(result.output.splitlines()) > 50
