"""The Live pages' server side: a referee's matches through its admin service (with its token when it
has one), and a match's public events as server-sent events, picked up again where a reconnecting
browser left off."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import grpc
import pytest
from starlette.testclient import TestClient
from web_helpers import Referee, arena_web

from arena.cli.serve import token_file
from arena.web import live
from arena.web.app import create_app
from arena.web.live import parse_last_id
from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2
from arena_bot import run
from arena_bot.random_bot import RandomBot

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("live")]  # one module fixture

TOKEN = "web-test-admin-token"


@pytest.fixture(scope="module")
def played() -> Iterator[tuple[Referee, str]]:
    """A referee with an admin token, and a finished match of two remote random bots on it."""
    referee = Referee(admin_token=TOKEN)
    try:
        metadata = (("authorization", f"Bearer {TOKEN}"),)
        with grpc.insecure_channel(referee.address) as channel:
            started = admin_pb2_grpc.AdminStub(channel).StartMatch(
                admin_pb2.StartMatchRequest(
                    variant="two-handed",
                    seats=[admin_pb2.SeatSpec(name="left"), admin_pb2.SeatSpec(name="right")],
                    seed=9,
                    time_control=bot_pb2.TimeControl(budget_ms=5000, bank_ms=60000, grace_ms=1000),
                    connect_timeout_ms=60_000,
                ),
                metadata=metadata,
            )
        bots = [
            threading.Thread(target=run, args=(RandomBot(i), started.bot_address, t.token))
            for i, t in enumerate(started.tokens)
        ]
        for t in bots:
            t.start()
        for t in bots:
            t.join(120)
        entry = referee.finished(started.match_id)
        assert entry.record is not None, entry.error
        yield referee, started.match_id
    finally:
        referee.close()


def events_of(text: str) -> list[tuple[str, str | None, Any]]:
    """(event, id, data) of each server-sent event in a stream's text."""
    out = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line.startswith(":"):
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        if "event" in fields:
            out.append((fields["event"], fields.get("id"), json.loads(fields["data"])))
    return out


def test_the_referees_matches_need_its_token(
    played: tuple[Referee, str], built_ledger: Path
) -> None:
    referee, match_id = played
    with TestClient(create_app(built_ledger, server=referee.address)) as client:
        response = client.get("/api/live/matches")
        assert response.status_code == 502
        assert "wants its admin token (arena web --admin-token)" in response.json()["error"]
        assert "wants its admin token" in client.get("/live").text
    with TestClient(create_app(built_ledger, server=referee.address, admin_token=TOKEN)) as client:
        [m] = client.get("/api/live/matches").json()["matches"]
        assert (m["match_id"], m["status"], m["seat_names"]) == (
            match_id,
            "finished",
            ["left", "right"],
        )
        page = client.get("/live").text
        assert f'data-match="{match_id}"' in page
        # The referee's figures, not the ledger's: the footer of the ledger's pages says otherwise.
        live_footer = "Live view of a running referee's matches: their public events as it sends"
        for html in (page, client.get(f"/live/{match_id}").text):
            assert live_footer in html and "Every figure comes from the ledger file" not in html
        assert "Every figure comes from the ledger file" in client.get("/").text
        info = client.get(f"/api/live/matches/{match_id}").json()
        [result] = info["results"]
        assert result["outcome"] == "normal" and len(result["scores"]) == 2
        missing = client.get("/api/live/matches/nope")
        assert missing.status_code == 404 and "no match 'nope'" in missing.json()["error"]
        assert client.get("/live/nope").status_code == 404


def test_the_bots_address_is_no_admin_address(
    played: tuple[Referee, str], built_ledger: Path
) -> None:
    referee, _ = played
    with TestClient(create_app(built_ledger, server=referee.manager.address)) as client:
        response = client.get("/api/live/matches")
        assert response.status_code == 502
        assert "serves no referee's admin service" in response.json()["error"]
        assert "(arena serve's --admin-address, 127.0.0.1:50052" in response.json()["error"]


def test_arena_web_finds_a_local_referees_token(
    played: tuple[Referee, str], built_ledger: Path, tmp_path: Path
) -> None:
    """As arena start does: the token a local arena serve wrote for the admin address."""
    referee, match_id = played
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)}
    with mock.patch.dict(os.environ, env):
        written = token_file(referee.address)
    written.parent.mkdir(mode=0o700)
    written.write_text(TOKEN)
    with arena_web("--ledger", str(built_ledger), "--server", referee.address, env=env) as (
        _,
        line,
    ):
        url = line.split(" at ", 1)[1].strip()
        with urllib.request.urlopen(url + "api/live/matches", timeout=60) as response:
            matches = json.load(response)["matches"]
        assert [m["match_id"] for m in matches] == [match_id]


def test_a_match_streams_its_public_events_then_its_result(
    played: tuple[Referee, str], built_ledger: Path
) -> None:
    referee, match_id = played
    record = referee.manager.matches[match_id].record
    assert record is not None
    public = record.games[0].events
    with TestClient(create_app(built_ledger, server=referee.address, admin_token=TOKEN)) as client:
        response = client.get(f"/live/{match_id}/events")
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = events_of(response.text)
        assert [e for e, _, _ in stream] == ["public"] * len(public) + ["end"]
        assert [d["text"] for _, _, d in stream[:-1]] == public
        assert [i for _, i, _ in stream[:-1]] == [f"0:{n}" for n in range(len(public))]
        end = stream[-1][2]
        assert end["status"] == "finished"
        assert end["results"][0]["scores"] == record.games[0].result["scores"]
        # a browser that reconnects says where it was: the stream goes on from there
        again = events_of(
            client.get(f"/live/{match_id}/events", headers={"last-event-id": "0:9"}).text
        )
        assert [d["text"] for e, _, d in again if e == "public"] == public[10:]
        lost = events_of(client.get("/live/nope/events").text)
        assert lost == [("failure", None, {"message": "no match 'nope'"})]


def test_live_streams_are_capped(
    played: tuple[Referee, str], built_ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each stream holds one of the referee's admin streams, and anyone may open one: past the cap a
    stream says so at once and ends, holding nothing."""
    referee, match_id = played
    monkeypatch.setattr(live, "MAX_WATCHERS", 0)
    with TestClient(create_app(built_ledger, server=referee.address, admin_token=TOKEN)) as client:
        stream = events_of(client.get(f"/live/{match_id}/events").text)
    assert [e for e, _, _ in stream] == ["failure"]
    assert "0 live streams at most" in stream[0][2]["message"]


def test_last_event_ids_are_read_strictly() -> None:
    assert parse_last_id("2:15") == (2, 15)
    for bad in (None, "", "2", "a:1", "1:-1", "1:2:3", "\xb2:1", "1:\u0663", "9" * 5000 + ":1"):
        assert parse_last_id(bad) is None


def test_a_last_event_id_in_other_digits_is_no_server_error(built_ledger: Path) -> None:
    """A header's bytes are Latin-1: b'\\xb2' is '²', which passes str.isdigit but not int. The header
    goes to the app as the bytes a browser sends (the test client would re-encode it), and is read
    before the app finds it has no referee to follow."""
    app = create_app(built_ledger)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/live/m1/events",
        "raw_path": b"/live/m1/events",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"last-event-id", b"\xb2:1")],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 404
    assert b"start arena web with --server" in sent[1]["body"]
