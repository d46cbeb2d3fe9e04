"""The game list, a game's page and its replays over a ledger built by a real tournament: filters and
pages, the full record, and a seat's replay showing what that seat saw and nothing more."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from web_helpers import execute, query, stored_record

from arena.ledger import Ledger
from arena.referee.record import seat_view
from arena.web.app import create_app


def test_games_filter_by_event_entrant_and_outcome(ledger: Path) -> None:
    [(eid,)] = query(ledger, "SELECT id FROM entrants WHERE name = 'first'")
    # Games are numbered as they end, two at a time: which of them "first" played is not fixed.
    [(gid,)] = query(ledger, "SELECT MIN(game_id) FROM game_seats WHERE entrant_id = ?", eid)
    # one game of "first"'s ended by a bot's failure, as the referee records it
    execute(ledger, ("UPDATE games SET outcome = 'timeout', culprit = 1 WHERE id = ?", (gid,)))
    with TestClient(create_app(ledger)) as client:
        everything = client.get("/api/games").json()["games"]
        assert [g["id"] for g in everything] == [6, 5, 4, 3, 2, 1], "newest first"
        assert client.get("/api/games?event=1").json()["games"] == everything
        assert client.get("/api/games?event=2").json()["games"] == []
        timeouts = client.get("/api/games?outcome=timeout").json()["games"]
        assert [(g["id"], g["outcome"], g["culprit"]) for g in timeouts] == [(gid, "timeout", 1)]
        mine = client.get(f"/api/games?entrant={eid}").json()["games"]
        assert len(mine) == 4
        assert all(eid in {s["entrant_id"] for s in g["seats"]} for g in mine)
        page = client.get(f"/games?entrant={eid}&outcome=timeout")
        assert page.status_code == 200
        assert re.findall(r'data-game="(\d+)"', page.text) == [str(gid)]


def test_game_pages_continue_from_the_last_one(client: TestClient) -> None:
    seen: list[int] = []
    url = "/api/games?limit=4"
    while True:
        data = client.get(url).json()
        seen += [g["id"] for g in data["games"]]
        if data["next_before"] is None:
            break
        url = f"/api/games?limit=4&before={data['next_before']}"
    assert seen == [6, 5, 4, 3, 2, 1]
    page = client.get("/games?limit=4")
    assert 'id="older"' in page.text and "before=3" in page.text


def test_a_game_is_served_with_its_seats_and_full_record(
    client: TestClient, built_ledger: Path
) -> None:
    data = client.get("/api/games/3").json()
    led = Ledger(built_ledger)
    try:
        assert data["record"] == led.game_record(3)
    finally:
        led.close()
    seats = query(
        built_ledger, "SELECT seat, place, score FROM game_seats WHERE game_id = 3 ORDER BY seat"
    )
    assert [(s["seat"], s["place"], s["score"]) for s in data["seats"]] == seats
    assert data["sealed"] is False


def test_the_replay_steps_through_every_decision_to_the_result(
    client: TestClient, built_ledger: Path
) -> None:
    record = stored_record(built_ledger, 1)
    game = record.games[0]
    data = client.get("/api/games/1/replay").json()
    frames = data["frames"]
    assert len(frames) == len(game.decisions) + 1
    assert [f["action"] for f in frames[1:]] == [d.action for d in game.decisions]
    assert [f["seats"][s]["total"] for s in range(2) for f in frames[-1:]] == game.result["scores"]
    totals = [tuple(s["total"] for s in f["seats"]) for f in frames]
    assert len(set(totals)) > 3, "the scores change as the game goes"
    # the deal: eight cards each, the rest (the turn-up included) in the stock; every hand shown
    assert [len(s["hand"]) for s in frames[0]["seats"]] == [8, 8]
    assert frames[0]["stock"] == 64 - 16
    assert all(s["hand"] is not None for f in frames for s in f["seats"])
    assert any("declares" in line for f in frames for line in f["lines"])
    assert frames[-1]["lines"][-1].startswith("game over")


@pytest.mark.parametrize("seat", [0, 1])
def test_a_seats_replay_shows_what_that_seat_saw_and_nothing_more(
    client: TestClient, built_ledger: Path, seat: int
) -> None:
    record = stored_record(built_ledger, 1)
    data = client.get(f"/api/games/1/replay?view={seat}").json()
    frames = data["frames"]
    other = 1 - seat
    for f in frames:
        assert f["seats"][other]["hand"] is None, "another seat's hand is never sent"
        assert isinstance(f["seats"][seat]["hand"], list)
    # before each of its decisions, the seat's hand is the observation it was sent
    sent = seat_view(record, seat)["games"][0]["decisions"]
    at = {d.request_id: i for i, d in enumerate(record.games[0].decisions)}
    for d in sent:
        frame = frames[at[d["request_id"]]]
        obs = d["observation"]
        table = {c for s in obs["seats"] if s["seat"] == seat for c in s["table"]}
        assert sorted(frame["seats"][seat]["hand"]) == sorted(
            c for c in obs["hand"] if c not in table
        )
    # the other seat's moves reach this view through the public log alone
    assert all(f["action"] is None for f in frames[1:] if f["actor"] == other)
    # the commentary gives this seat's hand as dealt, never the other's
    lines = [line for f in frames for line in f["lines"]]
    assert any(line.startswith(f"  seat {seat} hand:") for line in lines)
    assert not any(line.startswith(f"  seat {other} hand:") for line in lines)


def test_a_seat_that_is_not_there_is_refused(client: TestClient) -> None:
    response = client.get("/api/games/1/replay?view=5")
    assert response.status_code == 400
    assert "seat must be 0..1" in response.json()["error"]
    bad = client.get("/api/games/1/replay?view=north")
    assert bad.status_code == 400 and "view must be full or a seat number" in bad.json()["error"]
