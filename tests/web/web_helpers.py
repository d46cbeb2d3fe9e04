"""Helpers of the web tests: reading and changing a ledger copy, the web app served on a free
loopback port, and ``arena web`` as a process of its own."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import uvicorn

from arena.cli.web import bind, url_of
from arena.ledger import Ledger
from arena.referee.record import MatchRecord
from arena.service.match_manager import MatchManager
from arena.service.server import ArenaServer, create_server
from arena.web.app import create_app


@contextlib.contextmanager
def arena_web(
    *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``arena web ARGS --port 0`` running, with the first line it printed (which names its URL);
    stopped with Ctrl-C (SIGINT) at the end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli.main", "web", *args, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        yield process, process.stdout.readline()
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        finally:
            if process.poll() is None:
                process.kill()


def query(path: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return [tuple(r) for r in conn.execute(sql, args).fetchall()]
    finally:
        conn.close()


def stored_record(path: Path, game_id: int) -> MatchRecord:
    """The match record the ledger keeps for a game."""
    led = Ledger(path)
    try:
        return MatchRecord.from_dict(led.game_record(game_id))
    finally:
        led.close()


def execute(path: Path, *statements: tuple[str, tuple[Any, ...]]) -> None:
    conn = sqlite3.connect(path)
    try:
        with conn:
            for sql, args in statements:
                conn.execute(sql, args)
    finally:
        conn.close()


def unplay(path: Path, game_id: int) -> None:
    """Take a game out of the ledger as if it had not been played yet (a tournament still running)."""
    execute(
        path,
        *[
            (f"DELETE FROM {t} WHERE game_id = ?", (game_id,))
            for t in ("rating_history", "game_records", "game_seats")
        ],
        ("DELETE FROM games WHERE id = ?", (game_id,)),
        ("UPDATE tournaments SET finished_at = NULL", ()),
    )


class WebServer:
    """The app served by uvicorn on a free loopback port, in a thread."""

    def __init__(
        self,
        ledger: Path,
        server: str | None = None,
        admin_token: str | None = None,
        submissions: str | None = None,
        secure_cookies: bool = False,
    ) -> None:
        self.sock = bind("127.0.0.1", 0)
        self.url = url_of(self.sock)
        config = uvicorn.Config(
            create_app(
                ledger,
                server=server,
                admin_token=admin_token,
                submissions=submissions,
                secure_cookies=secure_cookies,
            ),
            loop="asyncio",
            http="h11",
            lifespan="on",
            log_level="warning",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> WebServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the web server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)
        self.sock.close()


class Referee:
    """The referee's server on a loop of its own, in a thread; ``address`` is its admin listener's
    (whose calls carry ``token``), where the web app follows matches."""

    def __init__(self, admin_token: str | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        started: Future[tuple[ArenaServer, int, MatchManager]] = asyncio.run_coroutine_threadsafe(
            create_server("127.0.0.1:0", admin_address="127.0.0.1:0", admin_token=admin_token),
            self.loop,
        )
        self.server, _, self.manager = started.result(30)
        self.address = self.server.admin_address
        self.token = self.server.admin_token
        self.metadata = (("authorization", f"Bearer {self.token}"),)

    def finished(self, match_id: str, timeout: float = 120.0) -> Any:
        """The match's entry once the referee is done with it (its record written)."""
        entry = self.manager.matches[match_id]
        asyncio.run_coroutine_threadsafe(entry.done.wait(), self.loop).result(timeout)
        return entry

    def close(self) -> None:
        async def stop() -> None:
            await self.manager.close()
            await self.server.stop(None)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()


CROWD = 250  # entrants of crowd_ledger: three pages of a board


def crowd_ledger(path: Path, entrants: int = CROWD) -> int:
    """A ledger of one tournament whose board rates ``entrants`` entrants (bot001, bot002, ...; ten of
    them alike in mu - 3 sigma, ordered by name), with one game between each two neighbours by
    number; returns the tournament's id."""
    Ledger(path).close()
    conn = sqlite3.connect(path)
    now = "2026-01-01T00:00:00+00:00"
    with conn:
        conn.executemany(
            "INSERT INTO entrants (id, name, command, command_hash, language, version, created_at) "
            "VALUES (?, ?, 'bot', ?, 'python', '1', ?)",
            [(i, f"bot{i:03d}", f"{i:064x}", now) for i in range(1, entrants + 1)],
        )
        conn.execute(
            "INSERT INTO tournaments (id, name, spec_hash, spec, variant, created_at) "
            "VALUES (1, 'Crowd', 'h', '{}', 'two-handed', ?)",
            (now,),
        )
        conn.execute(
            "INSERT INTO boards (id, kind, name, variant, tournament_id) "
            "VALUES (1, 'tournament', 'Crowd', 'two-handed', 1)"
        )
        conn.executemany(
            "INSERT INTO ratings VALUES (1, ?, ?, 2.0, ?, 1)",
            [(i, 30.0 - (i // 10) * 0.1, 24.0 - (i // 10) * 0.1) for i in range(1, entrants + 1)],
        )
        for g in range(1, entrants):
            conn.execute(
                "INSERT INTO games (id, tournament_id, key, ord, round, pairing, deal, rotation, "
                "variant, seed, outcome, finished_at, rating_seq) "
                "VALUES (?, 1, ?, ?, 0, ?, 0, 0, 'two-handed', ?, 'normal', ?, ?)",
                (g, f"g{g}", g, g, g, now, g),
            )
            conn.executemany(
                "INSERT INTO game_seats VALUES (?, ?, 0, ?, ?, ?, 100)",
                [(g, 0, g, 0, 0), (g, 1, g + 1, 1, 1)],
            )
    conn.close()
    return 1
