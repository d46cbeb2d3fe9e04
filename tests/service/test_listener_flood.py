"""Red team, issue 47 items 3 and 6: an anonymous client's idle connections (1,100, with or without
HTTP/2's preface) held ``arena serve``'s bots' listener at its cap, and a registered remote entrant
then could not connect and lost as "the bot never connected"; idle connections to the admin port
made StartMatch fail while they were held. Every listener is now a guard's
(arena.service.listener_caps): at most a few anonymous connections per client, the preface and a
token within deadlines, and room kept for clients that showed a token.

The attacker connects from 127.0.0.2, the entrants and the organiser from 127.0.0.1: two machines."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from raw_connections import PREFACE, kept

from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2
from arena_bot.random_bot import RandomBot
from arena_bot.sdk import play

pytestmark = pytest.mark.slow

TOKEN = "listener-flood-admin-token"
ATTACKER = "127.0.0.2"
FLOOD = 1100
PER_CLIENT = 16  # bot_caps and admin_caps: anonymous connections of one client


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``arena serve`` on free ports: (bots' address, admin address)."""
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "arena.cli.main", "serve", "--address", "127.0.0.1:0",
            "--admin-address", "127.0.0.1:0", "--admin-token", TOKEN, "--sandbox", "none",
        ],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path,
        env={**os.environ, "ARENA_ADMIN_TOKEN": ""},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        bots = re.findall(r"on (\S+)", proc.stdout.readline())[0]
        admin = re.findall(r"on (\S+)", proc.stdout.readline())[0]
        yield bots, admin
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def flood(address: str, count: int, preface_every: int = 2) -> list[socket.socket]:
    """``count`` idle connections to ``address`` from the attacker's address, every
    ``preface_every``-th saying HTTP/2's preface and nothing more."""
    host, port = address.rsplit(":", 1)
    conns = []
    for i in range(count):
        conn = socket.socket(socket.AF_INET)
        conn.bind((ATTACKER, 0))
        conn.settimeout(10)
        try:
            conn.connect((host, int(port)))
            if i % preface_every == 0:
                conn.sendall(PREFACE)
        except OSError:
            conn.close()
            continue
        conns.append(conn)
    return conns


def start_match(admin: str) -> admin_pb2.StartMatchResponse:
    with grpc.insecure_channel(admin) as channel:
        return admin_pb2_grpc.AdminStub(channel).StartMatch(
            admin_pb2.StartMatchRequest(
                variant="two-handed",
                seats=[admin_pb2.SeatSpec(name="left"), admin_pb2.SeatSpec(name="right")],
                seed=3,
                time_control=bot_pb2.TimeControl(budget_ms=5000, bank_ms=60000, grace_ms=1000),
                connect_timeout_ms=60_000,
            ),
            metadata=(("authorization", f"Bearer {TOKEN}"),),
            timeout=30,
        )


def finished(admin: str, match_id: str) -> admin_pb2.MatchInfo:
    with grpc.insecure_channel(admin) as channel:
        stub = admin_pb2_grpc.AdminStub(channel)
        deadline = time.monotonic() + 120
        while True:
            info = stub.GetMatch(
                admin_pb2.GetMatchRequest(match_id=match_id),
                metadata=(("authorization", f"Bearer {TOKEN}"),),
                timeout=30,
            )
            if info.summary.status == "finished" or time.monotonic() > deadline:
                return info
            time.sleep(0.2)


def test_an_idle_flood_keeps_no_registered_entrant_out(serve: tuple[str, str]) -> None:
    bots, admin = serve
    conns = flood(bots, FLOOD) + flood(admin, FLOOD)
    try:
        time.sleep(1.0)
        held = sum(map(kept, conns))
        # 16 anonymous connections of one client on each listener (refused past them, at once)
        assert held <= 2 * PER_CLIENT, f"the attacker still holds {held} connections"
        started = start_match(admin)  # through the flooded admin port
        errors: list[BaseException] = []

        def seat(i: int, token: str) -> None:
            try:
                play(RandomBot(i), started.bot_address, token)
            except BaseException as exc:
                errors.append(exc)

        seats = [
            threading.Thread(target=seat, args=(i, t.token)) for i, t in enumerate(started.tokens)
        ]
        for t in seats:
            t.start()
        for t in seats:
            t.join(180)
        assert not errors, errors
        info = finished(admin, started.match_id)
        assert info.summary.status == "finished"
        assert [g.outcome for g in info.games] == [1], info  # OUTCOME_NORMAL: nobody forfeited
    finally:
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.close()
