"""The ``arena`` command: every command has help and is in the README; ``arena match`` end to end with
real bot processes, and its usage errors; ``arena serve`` until SIGTERM; ``arena play`` still works.

(``arena check-bot`` is tested in tests/play/test_conformance.py.)
"""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
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

from arena.cli.bots import name_of, unique_names
from arena.cli.main import app
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


def every_command() -> dict[str, Any]:
    """Every command and subcommand by its words ("compete author add"), the groups included."""
    found: dict[str, Any] = {}
    todo: list[tuple[str, Any]] = list(commands().items())
    while todo:
        name, command = todo.pop()
        found[name] = command
        todo.extend((f"{name} {sub}", c) for sub, c in getattr(command, "commands", {}).items())
    return found


@pytest.mark.parametrize("name", sorted(every_command()))
def test_help_is_written_in_paragraphs_for_the_terminal_to_wrap(name: str) -> None:
    # A docstring's own line breaks, kept by Typer, broke each line of help in two at 80 columns.
    command = every_command()[name]
    assert command.help, f"arena {name} has no description"
    for paragraph in command.help.split("\n\n"):
        assert "\n" not in paragraph, paragraph
    result = runner.invoke(app, [*name.split(), "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    prose = result.output.split("╭")[0].splitlines()
    # Every line of prose but a paragraph's last is filled to near the width.
    for line, after in itertools.pairwise(prose):
        if line.strip() and after.strip() and not line.lstrip().startswith("Usage:"):
            assert len(line.rstrip()) > 60, f"a ragged line in arena {name} --help: {line!r}"


def test_a_cell_never_passes_a_control_character_to_the_terminal() -> None:
    from arena.cli.common import plain

    # A name stored by an older arena, which did not refuse escape sequences in files.
    assert plain("a\x1b[31mRED\x07\x9b").plain == "a\ufffd[31mRED\ufffd\ufffd"
    assert plain("two\nlines\tand a tab").plain == "two\nlines\tand a tab"


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
    assert "predictable" in result.output  # --seed: reproducible, and said to be predictable
    data = json.loads(record.read_text())
    parsed = MatchRecord.from_dict(data)
    assert parsed.variant == "rubicon"
    assert parsed.players == [["alice"], ["bob"]]
    # A duplicate pair by default: the same deal twice, dealt by each seat in turn, so that each bot
    # holds the other's cards the second time.
    assert [g.outcome for g in parsed.games] == ["normal", "normal"]
    first, second = parsed.games
    assert first.decks == second.decks and first.dealer != second.dealer
    assert len(parsed.games[0].decisions) > 20
    for seat in (0, 1):
        view = json.loads((seats / f"seat{seat}.json").read_text())
        assert view["seat"] == seat
        assert view["games"][0]["decisions"]


def test_match_exit_code_1_when_a_bot_fails(tmp_path: Path) -> None:
    broken = ROOT / "tests" / "play" / "fixtures" / "broken_bot.py"
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


ATTACKER = ROOT / "tests" / "service" / "bots" / "attacker.py"


@pytest.mark.slow
def test_bot_text_is_printed_as_text_and_the_record_is_written(tmp_path: Path) -> None:
    """Issue 12.7: a reply holding console markup neither crashes arena match nor is rendered."""
    for reply in ("play [/x]", "play [bold red]QS[/]"):
        record = tmp_path / f"{len(reply)}.json"
        result = runner.invoke(
            app,
            [
                "match", "--bot", f"{PYTHON} {shlex.quote(str(ATTACKER))} reply {shlex.quote(reply)}",
                "--bot", FIRST, "--variant", "rubicon", "--no-duplicate", "--games", "1",
                "--budget-ms", "10000", "--record", str(record),
            ],
            env={"COLUMNS": "300"},
        )  # fmt: skip
        assert result.exit_code == 1, result.output
        assert f"{reply!r} is not" in result.output or f"{reply!r}:" in result.output
        assert record.exists()
        assert MatchRecord.from_dict(json.loads(record.read_text())).games[0].outcome == (
            "illegal-action"
        )


@pytest.mark.slow
def test_a_bot_that_dies_before_connecting_is_reported_at_once() -> None:
    """Issue 13.2 and 13.7: no wait for the connect timeout; the exit code and the last lines of the
    bot's output are shown."""
    crash = (
        f'{PYTHON} -c \'import sys; print("loading the model"); sys.exit("model file missing")\''
    )
    started = time.monotonic()
    result = runner.invoke(
        app,
        [
            "match", "--bot", crash, "--bot", FIRST, "--variant", "rubicon",
            "--connect-timeout", "3600",
        ],
    )  # fmt: skip
    assert time.monotonic() - started < 600  # not the hour of the connect timeout
    assert result.exit_code == 1, result.output
    assert "crash (seat 0 (python): bot process exited with code 1 before connecting)" in (
        result.output
    )
    assert "| loading the model" in result.output and "| model file missing" in result.output


@pytest.mark.slow
def test_deals_are_secret_without_a_seed_and_repeat_with_one(tmp_path: Path) -> None:
    def decks(*extra: str) -> list[list[str]]:
        record = tmp_path / f"r{secrets.token_hex(4)}.json"
        result = runner.invoke(
            app,
            [
                "match", "--bot", FIRST, "--bot", FIRST, "--variant", "rubicon",
                "--no-duplicate", "--record", str(record), *extra,
            ],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        return MatchRecord.from_dict(json.loads(record.read_text())).games[0].decks

    assert decks() != decks()  # a fresh secret each time
    assert decks("--seed", "4") == decks("--seed", "4")


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "auto"])
def test_an_escaped_child_holding_the_output_does_not_crash_the_arena(sandbox: str) -> None:
    """Issue 12.8: a grandchild in a session of its own, its environment cleared, holding the bot's
    output pipe: arena match ends normally and the grandchild is gone."""
    tag = f"escapee-{secrets.token_hex(6)}"
    result = runner.invoke(
        app,
        [
            "match", "--bot", f"{PYTHON} {shlex.quote(str(ATTACKER))} escape {tag}",
            "--bot", FIRST, "--variant", "rubicon", "--no-duplicate", "--sandbox", sandbox,
            "--budget-ms", "10000",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "CancelledError" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    deadline = time.monotonic() + 20
    while _tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _tagged(tag) == []


def _tagged(tag: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if tag.encode() in Path("/proc", pid, "cmdline").read_bytes():
                    found.append(int(pid))
            except OSError:
                continue
    return found


def test_a_token_placeholder_is_refused() -> None:
    result = runner.invoke(app, ["match", "--bot", "mybot --token {token}", "--bot", FIRST])
    assert result.exit_code == 2
    assert "ARENA_TOKEN" in flat(result.output)


@pytest.mark.parametrize(
    "args", [["match", "--bot", " ", "--bot", FIRST], ["check-bot", ""], ["start", "--bot", ""]]
)
def test_an_empty_bot_command_is_a_usage_error(args: list[str]) -> None:
    """Not a seat waiting a minute for a bot that nobody starts."""
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "the command is empty" in flat(result.output)


@pytest.mark.parametrize("command", ["match", "start", "sprt"])
@pytest.mark.parametrize("seed", ["-1", str(2**63), str(2**65)])
def test_a_seed_the_ledger_cannot_hold_is_a_usage_error(command: str, seed: str) -> None:
    """Seeds are 0 .. 2**63 - 1 everywhere (tournament files, deal suites): a larger one once reached
    the admin protocol's 64-bit field as a traceback."""
    result = runner.invoke(app, [command, "--bot", FIRST, "--bot", FIRST, "--seed", seed])
    assert result.exit_code == 2, result.output
    assert "--seed" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("secret", "expected"),
    [
        ("abc", "expected an even number of hex digits (two a byte), got 3"),
        ("0x" + "ab" * 16, "expected hexadecimal digits (0-9, a-f), got 'x'"),
        ("ab" * 8, "a deal secret is at least 16 bytes (32 hex digits)"),
    ],
)
def test_a_bad_deal_secret_is_said_in_its_own_terms(secret: str, expected: str) -> None:
    """Not as bytes.fromhex's 'non-hexadecimal number found in fromhex() arg at position 3'."""
    result = runner.invoke(
        app, ["sprt", "--bot", FIRST, "--bot", FIRST, "--games", "2", "--deal-secret", secret]
    )
    assert result.exit_code == 2, result.output
    assert expected in flat(result.output.replace("│", " "))  # the error box's edges
    assert "fromhex" not in result.output


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
    # A script an interpreter runs names the bot: two Node bots are not "node" and "node#2".
    assert name_of("node clients/javascript/bot.js") == "javascript"  # a script any bot may have
    assert name_of("python3 ./main.py") == "main" and name_of("node bot.js") == "bot"
    assert name_of("venv/bin/python ../rawbot/bot.py") == "rawbot"
    assert name_of("node mybots/tiny.js --quiet") == "tiny"
    assert name_of("node -e 'x'") == "node"
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


def _serve(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], str, str]:
    """An ``arena serve`` on free ports: the process, the bot address and the admin address."""
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "arena.cli.main", "serve", "--address", "127.0.0.1:0",
            "--admin-address", "127.0.0.1:0", *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)},
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("referee listening on 127.0.0.1:"), line
    admin = proc.stdout.readline()
    assert admin.startswith("admin service on 127.0.0.1:"), admin
    return proc, line.split()[-1], admin.split()[-1]


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_serve_until_sigterm_kills_local_bots(tmp_path: Path) -> None:
    tag = f"sleeper-{secrets.token_hex(6)}"
    sleeper = f"{PYTHON} -c 'import time; time.sleep(600)' {tag}"
    proc, address, admin_address = _serve(tmp_path)
    try:
        token = token_file(admin_address, tmp_path).read_text().strip()
        with grpc.insecure_channel(address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            status = health.Check(health_pb2.HealthCheckRequest(), timeout=WAIT_S)
            assert status.status == health_pb2.HealthCheckResponse.SERVING
        with grpc.insecure_channel(admin_address) as channel:
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
                metadata=(("authorization", f"Bearer {token}"),),
            )
            assert started.match_id and started.bot_address == address
        deadline = time.monotonic() + WAIT_S
        while not _tagged(tag):
            assert time.monotonic() < deadline, "the local bot never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT_S) == 0
        deadline = time.monotonic() + WAIT_S
        while _tagged(tag):
            assert time.monotonic() < deadline, "the local bot outlived the server"
            time.sleep(0.05)
        assert proc.stderr is not None
        err = proc.stderr.read()
        assert "stopped" in err and "sandbox:" in err
        assert not token_file(admin_address, tmp_path).exists()  # removed with the server
    finally:
        _stop(proc)


def token_file(admin_address: str, runtime_dir: Path) -> Path:
    port = admin_address.rsplit(":", 1)[1]
    return runtime_dir / "bezique-arena" / f"admin-loopback-{port}.token"


def test_serve_admin_needs_its_token_and_the_cli_finds_it(tmp_path: Path) -> None:
    proc, address, admin_address = _serve(tmp_path)
    try:
        path = token_file(admin_address, tmp_path)
        assert path.stat().st_mode & 0o077 == 0  # readable by its user only
        with grpc.insecure_channel(admin_address) as channel:
            with pytest.raises(grpc.RpcError) as caught:
                admin_pb2_grpc.AdminStub(channel).ListMatches(
                    admin_pb2.ListMatchesRequest(), timeout=WAIT_S
                )
            assert caught.value.code() is grpc.StatusCode.UNAUTHENTICATED  # loopback too
        with grpc.insecure_channel(address) as channel:  # the bots' address serves no admin
            with pytest.raises(grpc.RpcError) as caught:
                admin_pb2_grpc.AdminStub(channel).ListMatches(
                    admin_pb2.ListMatchesRequest(), timeout=WAIT_S
                )
            assert caught.value.code() is grpc.StatusCode.UNIMPLEMENTED
        env = {"XDG_RUNTIME_DIR": str(tmp_path), "ARENA_ADMIN_TOKEN": ""}
        listed = runner.invoke(app, ["matches", "--server", admin_address], env=env)
        assert listed.exit_code == 0, listed.output
        assert "no matches" in listed.output
        other = tmp_path / "elsewhere"
        other.mkdir()
        lost = runner.invoke(
            app, ["matches", "--server", admin_address], env={**env, "XDG_RUNTIME_DIR": str(other)}
        )
        assert lost.exit_code == 2 and "no admin token" in flat(lost.output)
    finally:
        _stop(proc)


def test_no_admin_token_asks_whether_the_referee_is_running(tmp_path: Path) -> None:
    """The usual reason a local command finds no token is that no arena serve is running."""
    env = {"XDG_RUNTIME_DIR": str(tmp_path), "ARENA_ADMIN_TOKEN": ""}
    for command in (["matches"], ["watch", "m1"]):
        result = runner.invoke(app, [*command, "--server", "127.0.0.1:1"], env=env)
        message = flat(result.output)
        assert result.exit_code == 2, message
        assert "no admin token for 127.0.0.1:1: is arena serve running there?" in message
        assert "give --admin-token (or ARENA_ADMIN_TOKEN)" in message


def test_a_second_serve_on_a_port_in_use_is_refused(tmp_path: Path) -> None:
    proc, address, _ = _serve(tmp_path)
    try:
        second = subprocess.run(
            [
                sys.executable, "-m", "arena.cli.main", "serve", "--address", address,
                "--admin-address", "127.0.0.1:0",
            ],
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            env={**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)},
        )  # fmt: skip
        assert second.returncode == 1
        assert "in use" in second.stderr and address in second.stderr
        # The arena's error alone: not gRPC's log line before it, nor its advice on its verbosity.
        assert second.stderr.strip().count("\n") == 0, second.stderr
        assert "GRPC_VERBOSITY" not in second.stderr
        assert proc.poll() is None  # the first one serves on
    finally:
        _stop(proc)


def test_serve_takes_a_limits_file(tmp_path: Path) -> None:
    from arena.cli.serve import load_limits

    good = tmp_path / "limits.toml"
    good.write_text('[limits]\nmemory_mb = 512\nsandbox = "required"\n')
    limits = load_limits(good)
    assert (limits.memory_mb, limits.sandbox) == (512, "required")
    bad = tmp_path / "bad.toml"
    bad.write_text("memory = 1\n")
    with pytest.raises(typer.BadParameter, match=r"limits\.memory: unknown field"):
        load_limits(bad)


# ---------------------------------------------------------------------------------------- play


def test_play_still_works() -> None:
    result = runner.invoke(app, ["play", "--variant", "two-handed", "--seed", "2"])
    assert result.exit_code == 0, result.output
    assert "deal 1" in result.output.lower()
    assert len(result.output.splitlines()) > 50
    assert re.search(r"^game over after \d+ deal\(s\): seat [01] wins \(", result.output, re.M)
    # Partners win together, and the verdict says so in the plural.
    partners = runner.invoke(app, ["play", "--variant", "four-handed-partners", "--seed", "1"])
    assert partners.exit_code == 0, partners.output
    assert re.search(
        r"^game over after \d+ deal\(s\): seats [01] and [23] win \(", partners.output, re.M
    )
