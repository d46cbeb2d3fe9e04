"""The competition server's intake with the build and the conformance check stood in for
(:class:`Gates`), so that a test controls when each one ends; shared by the intake's tests."""

from __future__ import annotations

import asyncio
import contextlib
import io
import tarfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from arena.bots.limits import Limits
from arena.competition import bundles, intake
from arena.competition.desk_port import SubmissionError
from arena.competition.server import CompetitionServer
from arena.competition.spec import parse
from arena.competition.submission_api import serve_submissions
from arena.ledger import Ledger
from arena.ledger import competitions as store

TIMEOUT = 20.0


def bundle(
    version: str, extra: bytes = b"", run: str = "{python} bot.py", name: str = "b"
) -> bytes:
    """A bundle of the bot ``name`` (its manifest, with ``extra`` appended, and a bot.py)."""
    manifest = f'name = "{name}"\nversion = "{version}"\nlanguage = "python"\nrun = "{run}"\n'
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in ((bundles.MANIFEST, manifest.encode() + extra), ("bot.py", b"pass\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Gates:
    """Stands in for the build: each version's build waits until the test opens its gate (all open
    unless closed). The conformance check passes at once."""

    def __init__(self) -> None:
        self.closed: dict[str, asyncio.Event] = {}
        self.started: list[str] = []
        self.errors: dict[str, Exception] = {}  # the build of these versions raises

    def close(self, version: str) -> None:
        self.closed[version] = asyncio.Event()

    def open(self, version: str) -> None:
        self.closed[version].set()

    async def build(
        self, manifest: bundles.Manifest, source: Path, into: Path, limits: Limits, seconds: int
    ) -> intake.IntakeResult:
        self.started.append(manifest.version)
        if manifest.version in self.closed:
            await self.closed[manifest.version].wait()
        if manifest.version in self.errors:
            raise self.errors[manifest.version]
        return intake.IntakeResult(True, "", f"built {manifest.version}")

    async def check(
        self,
        command: str,
        variant: str,
        limits: Limits,
        seconds: int,
        hide: object = (),
        shown: str | None = None,
        time_control: object = None,
    ) -> intake.IntakeResult:
        return intake.IntakeResult(True, "", "checked")


@contextlib.asynccontextmanager
async def running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gates: Gates, **submissions: int
) -> AsyncIterator[tuple[CompetitionServer, store.Competitions, store.Author]]:
    """A competition server whose build and check are ``gates``' (``submissions``: its settings of
    that name), with one author: ada."""
    monkeypatch.setattr(intake, "build", gates.build)
    monkeypatch.setattr(intake, "check", gates.check)
    led = Ledger(tmp_path / "ledger.sqlite")
    spec = parse(
        {
            "name": "Intake",
            "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
            "submissions": submissions,
        }
    )
    server = CompetitionServer(spec, led, tmp_path / "data", serve_submissions=serve_submissions)
    await server.start()
    try:
        comp = store.Competitions(led)
        # No games: the stood-in build makes no folder, so every game would fail at once and be
        # paired again, and server._tasks (the intakes, which the tests wait for) would never be
        # empty for long.
        comp.set_paused(server.cid, True)
        await server._refresh()
        comp.add_author(server.cid, "ada")
        yield server, comp, comp.authors(server.cid)[0]
    finally:
        await server.stop()
        led.close()


async def until(check: Callable[[], bool], state: Callable[[], object] = str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not check():
        assert time.monotonic() < deadline, f"timed out; last seen: {state()}"
        await asyncio.sleep(0.05)


def run(test: Callable[..., Any], *args: Any) -> None:
    asyncio.run(asyncio.wait_for(test(*args), 3 * TIMEOUT))


async def refused(call: Awaitable[object], why: str) -> None:
    """``call`` is refused with exactly ``why``."""
    with pytest.raises(SubmissionError) as info:
        await call
    assert str(info.value) == why
