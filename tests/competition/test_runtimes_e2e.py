"""One bundle per language (python, node, cpp, go, java, binary) submitted to a competition over real
gRPC, built in the real sandbox with the real toolchains, checked, and each rated in at least one game;
the board names each one's language. The binary bundle's executable is built first, outside the arena,
as its author would (``make -C competitions/examples/binary-bot``).

Slow (cold builds of gRPC C++, Go and Java code take minutes on a busy machine); every wait is bounded
and says what it waited for."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from arena.competition import bundles, runtimes
from arena.competition.server import CompetitionServer
from arena.competition.spec import parse
from arena.competition.submission_api import serve_submissions
from arena.ledger import Ledger
from arena.ledger import competitions as store
from arena.sandbox import probe
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

BUILD_SECONDS = 1500  # a cold Go build of gRPC took 3 min 40 s on a 2-core machine at load 17
INTAKE_TIMEOUT = 3000.0  # six intakes, two at a time
PLAY_TIMEOUT = 1200.0
pytestmark = [pytest.mark.slow, pytest.mark.timeout(int(INTAKE_TIMEOUT + PLAY_TIMEOUT + 900))]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "competitions" / "examples"
FOLDERS = {
    "python": "python-bot",
    "node": "js-bot",
    "cpp": "cpp-bot",
    "go": "go-bot",
    "java": "java-bot",
    "binary": "binary-bot",
}


def lacking() -> str:
    """The toolchains this machine lacks, with the packages to install ("" when it has them all):
    the test fails then, as the kits' tests do (CI installs them, .ci/run)."""
    return "; ".join(why for lang in runtimes.LANGUAGES if (why := runtimes.refusal(lang)))


def binary_bundle(tmp: Path) -> Path:
    """The binary example with its executable built as its author would, outside the arena."""
    folder = tmp / "binary-bot"
    shutil.copytree(EXAMPLES / "binary-bot", folder, ignore=shutil.ignore_patterns("bot", "build"))
    done = subprocess.run(
        ["make", "-C", str(folder), f"ROOT={ROOT}", f"GO_BOT={EXAMPLES / 'go-bot'}"],
        capture_output=True,
        text=True,
        timeout=BUILD_SECONDS,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (folder / "Makefile").unlink()  # the bundle: its manifest and its executable
    (folder / ".gitignore").unlink()
    return folder


class Author:
    def __init__(self, address: str, token: str) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.stub = competition_pb2_grpc.CompetitionStub(self.channel)
        self.md = (("authorization", f"Bearer {token}"),)


@contextlib.asynccontextmanager
async def running(tmp_path: Path) -> AsyncIterator[tuple[CompetitionServer, Ledger]]:
    spec = parse(
        {
            "name": "Every language",
            "seed": 5,
            "variant": "rubicon",  # one deal a game: short games
            "time_control": {"budget_ms": 5000, "bank_ms": 60000, "grace_ms": 1000},
            "limits": {"sandbox": "required", "memory_mb": 4096, "disk_mb": 256},
            "matchmaking": {
                "games_at_once": 2,
                "duplicate": False,
                "opponent_window": 6,
                "pause_seconds": 0.2,
            },
            "submissions": {
                "build_seconds": BUILD_SECONDS,
                "check_seconds": 900,
                "max_bundle_mb": 20,
            },
            "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
        }
    )
    led = Ledger(tmp_path / "ledger.sqlite")
    server = CompetitionServer(spec, led, tmp_path / "data", serve_submissions=serve_submissions)
    await server.start()
    try:
        yield server, led
    finally:
        await server.stop()
        led.close()


def test_a_bundle_in_each_language_is_built_checked_and_rated(tmp_path: Path) -> None:
    if not probe("required").isolated:
        pytest.skip("bubblewrap isolation is unavailable here")
    assert not lacking(), lacking()
    folders = {lang: EXAMPLES / name for lang, name in FOLDERS.items()}
    folders["binary"] = binary_bundle(tmp_path)
    asyncio.run(every_language(tmp_path, folders))


async def every_language(tmp_path: Path, folders: dict[str, Path]) -> None:
    async with running(tmp_path) as (server, led):
        # The test's own reads and writes go through a connection of their own: the server's is
        # used by its ledger thread, and a write through it from here would meet that thread's
        # transaction.
        own = Ledger(led.path)
        comp = store.Competitions(own)
        authors: dict[str, Author] = {}
        sids: dict[str, int] = {}
        for language, folder in folders.items():
            # One author each: the matchmaker never pairs two bots of one author.
            author = Author(server.submissions_address, comp.add_author(server.cid, language))
            authors[language] = author
            answer = await author.stub.Submit(
                pb.SubmitRequest(bundle=bundles.pack(folder, 20 << 20)), metadata=author.md
            )
            sids[language] = answer.submission_id

        deadline = time.monotonic() + INTAKE_TIMEOUT
        for language, sid in sids.items():
            while (sub := comp.submission(sid)).status not in (store.ACTIVE, store.FAILED):
                assert time.monotonic() < deadline, f"{language}: still {sub.status}"
                await asyncio.sleep(1.0)
            assert sub.status == store.ACTIVE, f"{language}: {sub.reason}\n{comp.log(sid)[-3000:]}"
            assert sub.language == language

        def rated() -> dict[str, int]:
            return {line.language: line.games for line in comp.board(server.cid)}

        deadline = time.monotonic() + PLAY_TIMEOUT
        while not (len(rated()) == len(sids) and all(n >= 1 for n in rated().values())):
            assert time.monotonic() < deadline, f"games rated per language: {rated()}"
            await asyncio.sleep(1.0)

        author = authors["python"]
        board = await author.stub.Leaderboard(pb.LeaderboardRequest(), metadata=author.md)
        shown = {row.bot: row.language for row in board.rows}
        assert shown == {
            "py-trickster": "python",
            "js-lowball": "node",
            "cpp-trickster": "cpp",
            "go-trickster": "go",
            "java-trickster": "java",
            "binary-trickster": "binary",
        }
        for each in authors.values():
            await each.channel.close()
        own.close()
