"""Fixtures of the web tests: a ledger built by a real tournament (the example bots through the
in-process referee), copies of it changed as a test needs, and the web app served on a free loopback
port."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena.ledger import Ledger
from arena.tournament.runner import TournamentRunner
from arena.tournament.spec import load
from arena.web.app import create_app

RUN_TIMEOUT = 300.0  # seconds, for the small tournament on a loaded machine

TOURNAMENT = """\
name = "Web <fixture> & co"
variant = "two-handed"
format = "round-robin"
deals_per_pairing = 1
duplicate = true
concurrency = 2
matches_per_process = 4
seed = 11

[time_control]
budget_ms = 10000
bank_ms = 120000
grace_ms = 2000

[[entrants]]
name = "random"
command = "{python} -m arena_bot.random_bot"
language = "python"
version = "1"

[[entrants]]
name = "first"
command = "{python} -m arena_bot.first_bot"
language = "python"
version = "1"

[[entrants]]
name = "greedy"
command = "{python} -m arena_bot.greedy_bot"
language = "python"
version = "2"
"""


@pytest.fixture(scope="session")
def built_ledger(build_once: Callable[[str, Callable[[Path], None]], Path]) -> Path:
    """A ledger holding one finished tournament: three example bots, round robin, one duplicate deal
    per pairing (six games), played for real (a bot process plays up to four of them), once for the
    whole run. Tests copy it before changing anything."""

    def play(folder: Path) -> None:
        toml = folder / "web.toml"
        toml.write_text(TOURNAMENT)
        led = Ledger(folder / "ledger.sqlite")
        try:
            runner = TournamentRunner(load(toml), led)
            asyncio.run(asyncio.wait_for(runner.run(), RUN_TIMEOUT))
        finally:
            led.close()

    return build_once("web-ledger", play) / "ledger.sqlite"


@pytest.fixture
def ledger(built_ledger: Path, tmp_path: Path) -> Path:
    """A copy of the built ledger, for this test alone."""
    copy = tmp_path / "ledger.sqlite"
    shutil.copy(built_ledger, copy)
    return copy


@pytest.fixture
def client(built_ledger: Path) -> Iterator[TestClient]:
    """The app over the built ledger (read-only: tests that change the ledger use ``ledger``)."""
    with TestClient(create_app(built_ledger)) as c:
        yield c
