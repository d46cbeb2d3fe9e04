"""A standing competition end to end over real gRPC (issue 15): authors and tokens, submissions that
pass or fail (build, check, a path-traversal archive, a bundle over the size cap), a wrong token, games
played and rated on the competition's board, and a server killed with SIGKILL mid-game that restarts
with nothing lost or doubled and ratings exact on rebuild."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.competition import bundles
from arena.competition.server import CompetitionServer
from arena.competition.spec import parse
from arena.competition.submission_api import serve_submissions
from arena.ledger import Ledger
from arena.ledger import competitions as store
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

# Each test bounds its own waits (TIMEOUT each) and says what it was waiting for; pytest-timeout's
# limit is set above the longest of them, so that the test's own message is the one shown.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "competitions" / "examples" / "python-bot"
TIMEOUT = 240.0


def spec_data(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "Test Ladder",
        "seed": 3,
        "variant": "rubicon",  # one deal a game: a quarter of a two-handed game's decisions
        "time_control": {"budget_ms": 5000, "bank_ms": 60000, "grace_ms": 500},
        "matchmaking": {"games_at_once": 2, "pause_seconds": 0.2},
        "submissions": {"build_seconds": 60, "check_seconds": 200, "max_bundle_mb": 1},
        "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
    }
    for key, value in over.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return data


def bot_folder(tmp: Path, name: str, **manifest: str) -> Path:
    """A copy of the example Python submission under another bot name (and manifest changes)."""
    folder = tmp / name
    shutil.copytree(EXAMPLE, folder)
    text = (folder / bundles.MANIFEST).read_text().replace('"py-trickster"', f'"{name}"')
    for key, value in manifest.items():
        lines = [line for line in text.splitlines() if not line.startswith(f"{key} =")]
        text = "\n".join([*lines, f"{key} = {json.dumps(value)}"]) + "\n"
    (folder / bundles.MANIFEST).write_text(text)
    return folder


class Author:
    def __init__(self, address: str, token: str) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.stub = competition_pb2_grpc.CompetitionStub(self.channel)
        self.md = (("authorization", f"Bearer {token}"),)

    async def submit(self, data: bytes) -> pb.SubmitResponse:
        return await self.stub.Submit(pb.SubmitRequest(bundle=data), metadata=self.md)

    async def wait(self, sid: int, timeout: float = TIMEOUT) -> pb.SubmissionInfo:
        deadline = time.monotonic() + timeout
        while True:
            listed = await self.stub.ListSubmissions(pb.ListSubmissionsRequest(), metadata=self.md)
            mine = next(s for s in listed.submissions if s.submission_id == sid)
            if mine.status in ("active", "failed"):
                return mine
            assert time.monotonic() < deadline, f"submission {sid} still {mine.status}"
            await asyncio.sleep(0.3)


@contextlib.asynccontextmanager
async def running(tmp_path: Path, **over: Any) -> AsyncIterator[tuple[CompetitionServer, Ledger]]:
    led = Ledger(tmp_path / "ledger.sqlite")
    server = CompetitionServer(
        parse(spec_data(**over)), led, tmp_path / "data", serve_submissions=serve_submissions
    )
    await server.start()
    try:
        yield server, led
    finally:
        await server.stop()
        led.close()


def ada_and_bob(
    server: CompetitionServer, led: Ledger
) -> tuple[store.Competitions, Author, Author]:
    """The competition's records, and two authors with their tokens: ada and bob."""
    comp = store.Competitions(led)
    ada, bob = (
        Author(server.submissions_address, comp.add_author(server.cid, name))
        for name in ("ada", "bob")
    )
    return comp, ada, bob


async def until(
    check: Callable[[], bool], timeout: float = TIMEOUT, state: Callable[[], object] = str
) -> None:
    """Wait for ``check``; on timeout the assertion shows ``state()`` (what the test saw last)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out; last seen: {state()}"
        await asyncio.sleep(0.3)


def test_authors_submit_and_the_board_moves(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(authors_submit_and_the_board_moves(tmp_path), 2 * TIMEOUT))


async def authors_submit_and_the_board_moves(tmp_path: Path) -> None:
    # A bundle's process may play several games (the matchmaking of spec_data plus this).
    reuse = {"games_at_once": 2, "pause_seconds": 0.2, "matches_per_process": 4}
    async with running(tmp_path, matchmaking=reuse) as (server, led):
        comp, ada, bob = ada_and_bob(server, led)
        one = await ada.submit(bundles.pack(bot_folder(tmp_path, "ada-bot"), 2**20))
        two = await bob.submit(bundles.pack(bot_folder(tmp_path, "bob-bot"), 2**20))
        assert (one.bot, one.version) == ("ada-bot", "1")
        assert (await ada.wait(one.submission_id)).status == "active"
        assert (await bob.wait(two.submission_id)).status == "active"
        await until(
            lambda: comp.board(server.cid) and min(r.games for r in comp.board(server.cid)) >= 2
        )
        board = await ada.stub.Leaderboard(pb.LeaderboardRequest(), metadata=ada.md)
        assert {(r.bot, r.author) for r in board.rows} == {("ada-bot", "ada"), ("bob-bot", "bob")}
        assert all(r.games >= 2 and r.status == "active" for r in board.rows)
        # Another author cannot read ada's log, nor withdraw ada's bot.
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await bob.stub.GetLog(
                pb.GetLogRequest(submission_id=one.submission_id), metadata=bob.md
            )
        assert info.value.code() is grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.aio.AioRpcError):
            await bob.stub.Withdraw(pb.WithdrawRequest(bot="ada-bot"), metadata=bob.md)
        # A new version replaces the old one in play; the old one's games stay.
        three = await ada.submit(
            bundles.pack(bot_folder(tmp_path, "ada-bot-2", version="2"), 2**20)
        )
        assert three.bot == "ada-bot-2"  # (another name in this copy; same author)
        withdrawn = await ada.stub.Withdraw(pb.WithdrawRequest(bot="ada-bot"), metadata=ada.md)
        assert withdrawn.withdrawn == 1
        await ada.wait(three.submission_id)
        statuses = {(s.bot, s.status) for s in comp.submissions(server.cid)}
        assert ("ada-bot", "withdrawn") in statuses and ("ada-bot-2", "active") in statuses
        # Out of play, the withdrawn bot's processes no longer wait for games.
        await until(lambda: "ada-bot" not in {e.submission.bot for e in server.entries.values()})
        assert server.manager.pool.pooled("ada-bot") == 0
        games = led.conn.execute(
            "SELECT count(*), count(DISTINCT key) FROM games WHERE tournament_id = ?", (server.cid,)
        ).fetchone()
        assert games[0] == games[1] >= 2
        await ada.channel.close()
        await bob.channel.close()


def test_refused_and_failing_submissions(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(refused_and_failing_submissions(tmp_path), 2 * TIMEOUT))


async def refused_and_failing_submissions(tmp_path: Path) -> None:
    async with running(tmp_path) as (server, led):
        comp = store.Competitions(led)
        ada = Author(server.submissions_address, comp.add_author(server.cid, "ada"))
        # A wrong token.
        stranger = Author(server.submissions_address, "not-a-token")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stranger.submit(bundles.pack(bot_folder(tmp_path, "x"), 2**20))
        assert info.value.code() is grpc.StatusCode.UNAUTHENTICATED
        assert "the token given is no author's of this competition" in str(info.value.details())
        anonymous = Author(server.submissions_address, "")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await anonymous.submit(b"")
        assert "an author's token is needed" in str(info.value.details())
        await anonymous.channel.close()
        # A path-traversal archive: refused at once, nothing written outside.
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for name, data in ((bundles.MANIFEST, b'name="t"\nversion="1"\nlanguage="python"\nrun="x"\n'),
                               ("../../escaped.py", b"print(1)")):  # fmt: skip
                entry = tarfile.TarInfo(name)
                entry.size = len(data)
                tar.addfile(entry, io.BytesIO(data))
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await ada.submit(buf.getvalue())
        assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "a path outside the bundle" in (info.value.details() or "")
        assert (
            not (tmp_path / "escaped.py").exists()
            and not (tmp_path / "data" / "escaped.py").exists()
        )
        # Over the size cap (1 MB here): a little over is refused by name; far over, by the transport
        # (the server receives a bundle's cap and a little framing, no more).
        big = bot_folder(tmp_path, "big")
        (big / "noise.bin").write_bytes(os.urandom(2**20))
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await ada.submit(bundles.pack(big, 2**23))
        assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "over the limit of 1 MB" in (info.value.details() or "")
        (big / "noise.bin").write_bytes(os.urandom(2 * 2**20))
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await ada.submit(bundles.pack(big, 2**23))
        assert info.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        # A bundle whose build fails: its log says why.
        broken = bot_folder(
            tmp_path,
            "broken",
            build="{python} -c 'import sys; print(\"no compiler\"); sys.exit(3)'",
        )
        sub = await ada.submit(bundles.pack(broken, 2**20))
        done = await ada.wait(sub.submission_id)
        assert done.status == "failed"
        log = await ada.stub.GetLog(
            pb.GetLogRequest(submission_id=sub.submission_id), metadata=ada.md
        )
        assert "no compiler" in log.log and "exited with code 3" in log.log
        # A bundle that builds but fails the conformance check (it answers an action that is never legal).
        rude = bot_folder(tmp_path, "rude")
        (rude / "bot.py").write_text(
            "from arena_bot.sdk import Bot, main_for\n"
            "class Rude(Bot):\n"
            "    name = 'rude'\n"
            "    def decide(self, view, legal, clock):\n"
            "        return 'play XX'\n"
            "main_for(Rude())\n"
        )
        sub = await ada.submit(bundles.pack(rude, 2**20))
        done = await ada.wait(sub.submission_id)
        assert done.status == "failed" and "conformance check" in done.reason
        log = await ada.stub.GetLog(
            pb.GetLogRequest(submission_id=sub.submission_id), metadata=ada.md
        )
        assert "illegal" in log.log
        assert comp.board(server.cid) == [], "nothing failing entered play"
        await ada.channel.close()
        await stranger.channel.close()


def test_a_bot_that_fails_its_games_is_suspended_with_the_reason(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(a_bot_that_fails_is_suspended(tmp_path), 2 * TIMEOUT))


async def a_bot_that_fails_is_suspended(tmp_path: Path) -> None:
    """A bot that passes its check and then crashes in its games (it exits once it sees ada's bot
    among the seats) is suspended, and its author reads why: the rate and its last failure."""
    rules = {"pause_seconds": 0.2, "max_error_rate": 0.5, "error_window": 4}
    async with running(tmp_path, matchmaking=rules) as (server, led):
        _, ada, bob = ada_and_bob(server, led)
        good = await ada.submit(bundles.pack(bot_folder(tmp_path, "ada-bot"), 2**20))
        assert (await ada.wait(good.submission_id)).status == "active"
        folder = bot_folder(tmp_path, "quitter")
        source = (folder / "bot.py").read_text()
        hook = (
            "    def on_welcome(self, welcome):\n"
            "        if 'ada-bot' in welcome.seat_names:\n"
            "            import os, sys\n"
            "            print(f'quitting in {__file__}', file=sys.stderr, flush=True)\n"
            "            os._exit(3)\n\n"
            "    def decide("
        )
        (folder / "bot.py").write_text(source.replace("    def decide(", hook, 1))
        bad = await bob.submit(bundles.pack(folder, 2**20))
        assert (await bob.wait(bad.submission_id)).status == "active"

        async def status() -> pb.SubmissionInfo:
            listed = await bob.stub.ListSubmissions(pb.ListSubmissionsRequest(), metadata=bob.md)
            return next(s for s in listed.submissions if s.submission_id == bad.submission_id)

        deadline = time.monotonic() + TIMEOUT
        while (mine := await status()).status != "suspended":
            assert time.monotonic() < deadline, mine
            await asyncio.sleep(0.3)
        # Every game it played failed: 3, the fewest judged, or one more that ended meanwhile.
        assert re.match(r"suspended: it caused (\d) of its last \1 games to fail", mine.reason)
        assert "(the limit is 50%); the last: crash: " in mine.reason
        assert "exited with code 3" in mine.reason
        # What the author is shown names no path of the server's; the bot's own file is named as
        # the bundle names it.
        server_paths = str(tmp_path.resolve())
        assert server_paths not in mine.reason
        logged = await bob.stub.GetLog(
            pb.GetLogRequest(submission_id=bad.submission_id), metadata=bob.md
        )
        assert logged.failures and all(f.outcome == "crash" for f in logged.failures)
        assert all(server_paths not in f.detail for f in logged.failures)
        assert [c.status for c in logged.history][-1] == "suspended"
        assert logged.history[-1].reason == mine.reason
        assert logged.time_use.failures["crash"] == len(logged.failures)
        # Each failed game's output is kept per seat: bob reads his bot's, never ada's.
        game_id = logged.failures[0].game_id
        own = await bob.stub.GetGameLog(pb.GetGameLogRequest(game_id=game_id), metadata=bob.md)
        assert [s.bot for s in own.seats] == ["quitter"]
        assert "quitting in bot.py" in own.seats[0].output, own.seats[0].output
        assert server_paths not in own.seats[0].output
        hers = await ada.stub.GetGameLog(pb.GetGameLogRequest(game_id=game_id), metadata=ada.md)
        assert [s.bot for s in hers.seats] == ["ada-bot"]
        await ada.channel.close()
        await bob.channel.close()


def test_a_server_killed_mid_game_resumes_with_nothing_lost(tmp_path: Path) -> None:
    """SIGKILL while games are in play, then a restart: every recorded game stays once, the games
    planned but never played are forgotten but for the rest of a pairing begun (a deal played in
    one seat rotation), which is played first, play goes on, and a rebuild gives the same
    ratings."""
    ledger = tmp_path / "ledger.sqlite"
    toml = tmp_path / "comp.toml"
    sub_port, bot_port = free_port(), free_port()
    toml.write_text(
        'name = "Crashy"\nseed = 3\nvariant = "rubicon"\n[time_control]\nbudget_ms = 5000\nbank_ms = 60000\n'
        "[matchmaking]\ngames_at_once = 2\npause_seconds = 0.2\nmatches_per_process = 4\n"
        f'[server]\nsubmissions = "127.0.0.1:{sub_port}"\nbots = "127.0.0.1:{bot_port}"\n'
    )
    serve = [sys.executable, "-m", "arena.cli.main", "compete", "serve", str(toml),
             "--ledger", str(ledger)]  # fmt: skip
    first = subprocess.Popen(serve, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_listening(sub_port, first)
        led = Ledger(ledger)
        comp = store.Competitions(led)
        cid = next(t.id for t in led.tournaments() if t.name == "Crashy")
        for author in ("ada", "bob"):
            token = comp.add_author(cid, author)
            folder = bot_folder(tmp_path, f"{author}-bot")
            done = subprocess.run(
                [sys.executable, "-m", "arena.cli.main", "compete", "submit", str(folder),
                 "--server", f"127.0.0.1:{sub_port}", "--token", token],
                capture_output=True, text=True, timeout=TIMEOUT,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            assert "active" in done.stdout
        deadline = time.monotonic() + TIMEOUT
        while count(ledger, "SELECT count(*) FROM games") < 3:
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.2)
        led.close()
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
    recorded = count(ledger, "SELECT count(*) FROM games")
    planned = count(ledger, "SELECT count(*) FROM planned_games")
    assert planned >= recorded >= 3
    begun = keys(ledger, UNPLAYED + BEGUN)  # their pairing's other rotation was recorded
    second = subprocess.Popen(serve, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_listening(sub_port, second)
        deadline = time.monotonic() + TIMEOUT
        while count(ledger, "SELECT count(*) FROM games") < recorded + 2 or begun - keys(
            ledger, "SELECT key FROM games"
        ):
            assert time.monotonic() < deadline and second.poll() is None
            time.sleep(0.2)
    finally:
        second.send_signal(signal.SIGTERM)
        out, _ = second.communicate(timeout=60)
    assert second.returncode == 0, out
    assert count(ledger, "SELECT count(*) - count(DISTINCT key) FROM games") == 0
    assert keys(ledger, UNPLAYED) == keys(ledger, UNPLAYED + BEGUN), (
        "a clean stop leaves unplayed only the rest of a pairing begun"
    )
    # Every pairing is whole (both seat rotations of its deal recorded) or left to be finished.
    halves = count(
        ledger,
        "SELECT count(*) FROM (SELECT pairing FROM games GROUP BY pairing HAVING count(*) < 2) h "
        "WHERE NOT EXISTS (SELECT 1 FROM planned_games p WHERE p.pairing = h.pairing AND NOT "
        "EXISTS (SELECT 1 FROM games g WHERE g.key = p.key))",
    )
    assert halves == 0
    led = Ledger(ledger)
    assert led.rebuild_ratings() == 0.0
    led.close()


UNPLAYED = (
    "SELECT p.key FROM planned_games p WHERE NOT EXISTS (SELECT 1 FROM games g "
    "WHERE g.tournament_id = p.tournament_id AND g.key = p.key)"
)
BEGUN = (
    " AND EXISTS (SELECT 1 FROM games g WHERE g.tournament_id = p.tournament_id "
    "AND g.pairing = p.pairing)"
)


def keys(path: Path, sql: str) -> set[str]:
    conn = sqlite3.connect(path, timeout=30)
    try:
        return {str(row[0]) for row in conn.execute(sql)}
    finally:
        conn.close()


def count(path: Path, sql: str) -> int:
    conn = sqlite3.connect(path, timeout=30)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, proc: subprocess.Popen[str]) -> None:
    import socket

    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, proc.communicate()[0]
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert time.monotonic() < deadline, "the competition never listened"
        time.sleep(0.2)


def test_a_remote_entrant_plays_while_connected(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(remote_entrant(tmp_path), 2 * TIMEOUT))


async def remote_entrant(tmp_path: Path) -> None:
    """A bot on the author's own machine dials in with its entrant token and waits in the lobby; it is
    given games while connected (single deals: it keeps its memory between games), and skipped, not
    forfeited, once it has gone."""
    async with running(tmp_path) as (server, led):
        _, ada, bob = ada_and_bob(server, led)
        bundle = await bob.submit(bundles.pack(bot_folder(tmp_path, "bob-bot"), 2**20))
        assert (await bob.wait(bundle.submission_id)).status == "active"
        reg = await ada.stub.RegisterRemote(
            pb.RegisterRemoteRequest(bot="far-away", version="1", language="python"),
            metadata=ada.md,
        )
        assert reg.token and reg.address == server.bots_address
        assert count(led_path(led), "SELECT count(*) FROM games") == 0, "nobody to play yet"
        env = {**os.environ, "ARENA_ADDRESS": reg.address, "ARENA_TOKEN": reg.token}
        bot = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "arena_bot.first_bot", env=env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        try:
            await until(lambda: remote_games(led) >= 2)
        finally:
            bot.kill()
            await bot.wait()
        await asyncio.sleep(3)  # the lobby hears the stream close
        before = remote_games(led)
        await asyncio.sleep(5)
        assert remote_games(led) <= before + 1, "gone, it is no longer paired"
        outcomes = {
            r[0]
            for r in led.conn.execute(
                "SELECT g.outcome FROM games g JOIN game_seats s ON s.game_id = g.id "
                "JOIN entrants e ON e.id = s.entrant_id WHERE e.name = 'far-away'"
            )
        }
        assert "normal" in outcomes
        keys = [r[0] for r in led.conn.execute("SELECT key FROM games")]
        assert all(k.endswith("-s0") for k in keys), "single deals, no rotation replayed"
        await ada.channel.close()
        await bob.channel.close()


def led_path(led: Ledger) -> Path:
    return Path(led.path)


def remote_games(led: Ledger) -> int:
    return int(
        led.conn.execute(
            "SELECT count(*) FROM game_seats s JOIN entrants e ON e.id = s.entrant_id "
            "WHERE e.name = 'far-away'"
        ).fetchone()[0]
    )


def test_the_example_submissions_play_each_other(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(examples_play(tmp_path), 4 * TIMEOUT))


async def examples_play(tmp_path: Path) -> None:
    """The README's walk-through: the Python and the JavaScript example bundles, as shipped, from two
    authors, built, checked and paired against each other; their processes play several games (both
    SDKs read on after MatchOver)."""
    reuse = {"games_at_once": 2, "pause_seconds": 0.2, "matches_per_process": 4}
    async with running(tmp_path, matchmaking=reuse) as (server, led):
        comp, ada, bob = ada_and_bob(server, led)
        examples = ROOT / "competitions" / "examples"
        py = await ada.submit(bundles.pack(examples / "python-bot", 2**20))
        js = await bob.submit(bundles.pack(examples / "js-bot", 2**20))
        for author, sid in ((ada, py.submission_id), (bob, js.submission_id)):
            info = await author.wait(sid)
            assert info.status == "active", (info.status, info.reason)
        await until(
            lambda: (
                len(comp.board(server.cid)) == 2
                and all(r.games >= 2 for r in comp.board(server.cid))
            ),
            state=lambda: (
                [(r.bot, r.games) for r in comp.board(server.cid)],
                led.conn.execute("SELECT outcome, detail FROM games").fetchall()[-4:],
            ),
        )
        board = {r.bot: r for r in comp.board(server.cid)}
        assert set(board) == {"py-trickster", "js-lowball"}
        outcomes = {r[0] for r in led.conn.execute("SELECT outcome FROM games")}
        assert outcomes == {"normal"}
        await ada.channel.close()
        await bob.channel.close()
