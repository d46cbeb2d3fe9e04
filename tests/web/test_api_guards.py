"""What the web over a ledger never does: serve the deal secret or a deal still in play, let bot text
act as markup, load from other hosts, leave a bad request unnamed, write the ledger, or read a file
that is no ledger (or one left mid-write) without saying so."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TOURNAMENT
from starlette.testclient import TestClient
from typer.testing import CliRunner
from web_helpers import execute, query, unplay

from arena.cli.main import app as cli
from arena.tournament.schedule import full_schedule
from arena.tournament.spec import load
from arena.web import queries
from arena.web.app import create_app
from arena.web.reader import LedgerUnavailable, Reader


def every_url(client: TestClient) -> list[str]:
    """Every page and API address of the ledger's data."""
    events = client.get("/api/events").json()["events"]
    boards = client.get("/api/boards").json()["boards"]
    games = client.get("/api/games?limit=500").json()["games"]
    entrants = {s["entrant_id"] for g in games for s in g["seats"]}
    urls = ["/", "/games", "/api", "/api/events", "/api/boards", "/api/games", "/live"]
    for e in events:
        urls += [f"/events/{e['id']}", f"/api/events/{e['id']}", f"/games?event={e['id']}"]
    for b in boards:
        urls += [f"/boards/{b['id']}", f"/api/boards/{b['id']}"]
    for i in entrants:
        urls += [f"/entrants/{i}", f"/api/entrants/{i}", f"/api/entrants/{i}/history"]
        urls += [f"/games?entrant={i}"]
    for g in games:
        urls += [f"/games/{g['id']}", f"/api/games/{g['id']}", f"/api/games/{g['id']}/replay"]
        urls += [f"/api/games/{g['id']}/replay?view={s}" for s in range(len(g["seats"]))]
    return urls


# ---------------------------------------------------------------- secrets


def test_the_deal_secret_is_never_served(client: TestClient, built_ledger: Path) -> None:
    [(key,)] = query(built_ledger, "SELECT deal_key FROM tournaments")
    assert key and len(key) == 64
    urls = every_url(client)
    assert len(urls) > 40
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert key not in response.text and key.upper() not in response.text, url
        assert "deal_key" not in response.text, url


def test_a_deal_still_in_play_stays_sealed(ledger: Path) -> None:
    """Duplicate deals: game s0 of a deal is finished, s1 (the same cards, seats swapped) is not yet:
    s0's record would tell s1's players the cards, so it stays closed until s1 is played."""
    [(first, second)] = query(
        ledger,
        "SELECT a.id, b.id FROM games a JOIN games b ON a.tournament_id = b.tournament_id "
        "AND a.pairing = b.pairing AND a.deal = b.deal AND a.rotation = 0 AND b.rotation = 1 "
        "WHERE a.pairing = 0",
    )
    unplay(ledger, second)
    with TestClient(create_app(ledger)) as client:
        game = client.get(f"/api/games/{first}").json()
        assert game["sealed"] is True and game["record"] is None
        response = client.get(f"/api/games/{first}/replay")
        assert response.status_code == 403
        assert "still to be played in another seat rotation" in response.json()["error"]
        page = client.get(f"/games/{first}")
        assert page.status_code == 200 and 'id="sealed"' in page.text
        assert 'id="player"' not in page.text
        # the other deals are complete: open
        others = [g["id"] for g in client.get("/api/games").json()["games"] if g["id"] != first]
        for game_id in others:
            assert client.get(f"/api/games/{game_id}/replay").status_code == 200
        assert client.get("/api/events").json()["events"][0]["status"] == "stopped"


def test_a_sealed_games_detail_names_no_hand(ledger: Path) -> None:
    """An illegal action's detail lists the legal actions: in a trick, the culprit's hand, which a
    player of the game still to come holds. While the deal is sealed the detail stops before them,
    in the game list, the game and its page; once the deal is played, it is whole."""
    [(first, second)] = query(
        ledger,
        "SELECT a.id, b.id FROM games a JOIN games b ON a.tournament_id = b.tournament_id "
        "AND a.pairing = b.pairing AND a.deal = b.deal AND a.rotation = 0 AND b.rotation = 1 "
        "WHERE a.pairing = 0",
    )
    detail = "seat 0 (a): 'play 7S.1' is not legal here (legal: play 7S, play TH, play AC)"
    execute(ledger, ("UPDATE games SET detail = ? WHERE id = ?", (detail, first)))
    unplay(ledger, second)
    with TestClient(create_app(ledger)) as client:
        listed = [g for g in client.get("/api/games").json()["games"] if g["id"] == first]
        shown = [listed[0]["detail"], client.get(f"/api/games/{first}").json()["detail"]]
        assert shown == ["seat 0 (a): 'play 7S.1' is not legal here"] * 2
        for url in (f"/games/{first}", "/games", f"/api/games/{first}", "/api/games"):
            assert "play TH" not in client.get(url).text, url
    execute(ledger, ("DELETE FROM planned_games WHERE tournament_id IS NOT NULL", ()))
    with TestClient(create_app(ledger)) as client:
        assert client.get(f"/api/games/{first}").json()["detail"] == detail


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:8000", 200),
        ("localhost", 200),
        ("LOCALHOST:80", 200),
        ("[::1]:8000", 200),
        ("evil.example", 421),
        ("evil.example:8000", 421),
        ("127.0.0.1.evil.example", 421),
        ("", 421),
    ],
)
def test_a_loopback_server_answers_only_for_this_machine(
    ledger: Path, host: str, status: int
) -> None:
    with TestClient(create_app(ledger, loopback_only=True)) as client:
        response = client.get("/api/events", headers={"host": host})
        assert response.status_code == status, response.text
    with TestClient(create_app(ledger)) as client:  # listening beyond this machine: any name
        assert client.get("/api/events", headers={"host": host}).status_code == 200


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"sec-fetch-site": "same-origin", "sec-fetch-mode": "cors"}, 200),
        ({"sec-fetch-site": "none", "sec-fetch-mode": "navigate"}, 200),
        ({"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate"}, 200),  # a link
        ({"origin": "http://127.0.0.1:8000"}, 200),
        ({"sec-fetch-site": "cross-site", "sec-fetch-mode": "cors"}, 403),  # an event stream
        ({"sec-fetch-site": "same-site", "sec-fetch-mode": "no-cors"}, 403),  # another port's
        ({"origin": "http://evil.example"}, 403),
        ({"origin": "null"}, 403),
    ],
)
def test_a_loopback_server_answers_no_other_sites_pages(
    ledger: Path, headers: dict[str, str], status: int
) -> None:
    """A page of another site could make the browser hold every Live watcher slot with event
    streams to 127.0.0.1; a link from it still opens the pages."""
    with TestClient(create_app(ledger, loopback_only=True)) as client:
        response = client.get("/api/events", headers={"host": "127.0.0.1:8000", **headers})
        assert response.status_code == status, response.text


def suite_schedule(ledger: Path, folder: Path, **spec: object) -> dict[str, int]:
    """Make the ledger's tournament one played on a deal suite of one deal, as ``arena run`` would
    have recorded it: the fixture's file with ``deals = "suite.txt"``, its schedule's seeds (deal 0 of
    every pairing is the suite's deal 0) and its spec (updated with ``spec``). Returns the seeds by
    game key."""
    (folder / "suite.txt").write_text("bezique-arena-deals 1\nvariant two-handed\ndeal 4242\n")
    toml = folder / "suite.toml"
    toml.write_text(TOURNAMENT.replace("seed = 11\n", 'seed = 11\ndeals = "suite.txt"\n'))
    tournament = load(toml)
    seeds = {g.key: g.seed for g in full_schedule(tournament)}
    stored = json.dumps(tournament.to_dict() | spec, sort_keys=True)
    reseed = [
        (f"UPDATE {table} SET seed = ? WHERE key = ?", (seed, key))
        for table in ("games", "planned_games")
        for key, seed in seeds.items()
    ]
    execute(ledger, *reseed, ("UPDATE tournaments SET spec = ?", (stored,)))
    return seeds


def test_a_suites_deal_stays_sealed_until_every_pairing_played_it(
    ledger: Path, tmp_path: Path
) -> None:
    """With a deal suite every pairing plays the same cards: a finished pairing's games would show
    them to the players of a pairing still to play, so they stay closed until it has."""
    seeds = suite_schedule(ledger, tmp_path)
    assert len(set(seeds.values())) == 1, "every pairing meets the suite's one deal"
    [(last,)] = query(ledger, "SELECT id FROM games WHERE key = 'r000-p000002-d0000-s1'")
    unplay(ledger, last)
    with TestClient(create_app(ledger)) as client:
        for g in client.get("/api/games").json()["games"]:
            game = client.get(f"/api/games/{g['id']}").json()
            assert game["sealed"] is True and game["record"] is None, g["id"]
            assert client.get(f"/api/games/{g['id']}/replay").status_code == 403
            assert client.get(f"/api/games/{g['id']}/replay?view=0").status_code == 403
            page = client.get(f"/games/{g['id']}")
            assert 'id="sealed"' in page.text and 'id="player"' not in page.text


def test_a_swiss_suites_deal_stays_sealed_until_the_last_round(
    ledger: Path, tmp_path: Path
) -> None:
    """A Swiss tournament on a deal suite plays the suite's deals again every round, and plans a
    round when the one before is done: a finished round stays closed until the last round is played."""
    suite_schedule(ledger, tmp_path, format="swiss", rounds=2)
    execute(ledger, ("UPDATE tournaments SET finished_at = NULL", ()))
    with TestClient(create_app(ledger)) as client:
        games = [g["id"] for g in client.get("/api/games").json()["games"]]
        assert len(games) == 6
        for game_id in games:
            assert client.get(f"/api/games/{game_id}").json()["sealed"] is True, game_id
            assert client.get(f"/api/games/{game_id}/replay").status_code == 403
    # the last round planned and played: every game of the deal is finished
    execute(
        ledger,
        (
            "INSERT INTO planned_games SELECT tournament_id, 'r001' || substr(key, 5), ord + 100, "
            "1, pairing, deal, rotation, seed, seats, grp FROM planned_games",
            (),
        ),
        (
            "INSERT INTO games (tournament_id, key, ord, round, pairing, deal, rotation, variant, "
            "seed, outcome, finished_at) SELECT tournament_id, 'r001' || substr(key, 5), ord + 100, "
            "1, pairing, deal, rotation, variant, seed, outcome, finished_at FROM games",
            (),
        ),
    )
    with TestClient(create_app(ledger)) as client:
        for game_id in games:
            assert client.get(f"/api/games/{game_id}").json()["sealed"] is False, game_id
            assert client.get(f"/api/games/{game_id}/replay").status_code == 200


# ---------------------------------------------------------------- bot text is data


HOSTILE_NAME = '<script>alert("name")</script>'
HOSTILE_VERSION = '"><img src=x onerror=alert(1)>'
HOSTILE_DETAIL = "</script><script>alert('detail')</script>"


def test_bot_text_is_escaped_and_capped_everywhere(ledger: Path) -> None:
    long_name = "x" * 10_000
    execute(
        ledger,
        (
            "UPDATE entrants SET name = ?, version = ? WHERE name = 'random'",
            (HOSTILE_NAME, HOSTILE_VERSION),
        ),
        ("UPDATE entrants SET name = ? WHERE name = 'first'", (long_name,)),
        ("UPDATE games SET detail = ?, outcome = 'crash' WHERE id = 1", (HOSTILE_DETAIL,)),
    )
    with TestClient(create_app(ledger)) as client:
        pages = [u for u in every_url(client) if not u.startswith("/api")]
        assert len(pages) > 15
        for url in pages:
            text = client.get(url).text
            assert "<script>alert" not in text, url
            assert "<img src=x" not in text, url
            assert "x" * (queries.MAX_TEXT + 1) not in text, url
        board = client.get("/events/1").text
        assert "&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;" in board
        assert "&#34;&gt;&lt;img src=x onerror" in board  # capped to the column
        # JSON carries the text as it is (JSON-encoded), capped
        rows = client.get("/api/events/1").json()["leaderboard"]
        names = {r["entrant"] for r in rows}
        assert HOSTILE_NAME in names
        assert "x" * (queries.MAX_TEXT - 1) + "…" in names
        game = client.get("/games/1").text
        assert "&lt;/script&gt;&lt;script&gt;alert(&#39;detail&#39;)" in game
        # the entrant page's chart data sits in a JSON block that no text can close
        [(eid,)] = query(ledger, "SELECT id FROM entrants WHERE name = ?", HOSTILE_NAME)
        page = client.get(f"/entrants/{eid}").text
        block = re.search(
            r'<script type="application/json" id="history-data">(.*?)</script>', page, re.S
        )
        assert block is not None and json.loads(block.group(1))


def test_every_response_forbids_loading_from_other_hosts(client: TestClient) -> None:
    for url in ["/", "/events/1", "/games/1", "/api/events", "/static/app.js"]:
        policy = client.get(url).headers["content-security-policy"]
        assert "default-src 'self'" in policy and "script-src 'self'" in policy
    for url in ["/", "/events/1", "/entrants/1", "/games", "/games/1", "/live"]:
        text = client.get(url).text
        assert not re.search(r'(src|href)="(https?:)?//', text), url


def test_the_static_assets_ship_with_the_package(client: TestClient) -> None:
    for asset in ["app.css", "app.js", "cards.js", "chart.js", "replay.js", "live.js"]:
        assert client.get(f"/static/{asset}").status_code == 200, asset
    chart = client.get("/static/vendor/uPlot.iife.min.js")
    assert chart.status_code == 200 and "uPlot" in chart.text


# ---------------------------------------------------------------- bad requests


@pytest.mark.parametrize(
    ("url", "status", "words"),
    [
        ("/api/games?event=abc", 400, "event must be a whole number"),
        ("/api/games?entrant=-1", 400, "entrant must be a whole number"),
        ("/api/games?outcome=won", 400, "outcome must be one of normal, timeout"),
        ("/api/games?limit=0", 400, "limit must be a whole number of at least 1"),
        # digits that str.isdigit takes: a superscript (which int refuses), another script's
        ("/api/games?limit=%C2%B2", 400, "limit must be a whole number of at least 1"),
        ("/api/games?event=%D9%A3", 400, "event must be a whole number"),
        ("/api/games?before=" + "9" * 5000, 400, "before must be a whole number"),
        ("/api/entrants/1/history?board=%C2%B2", 400, "board must be a whole number"),
        ("/api/games/1/replay?view=%C2%B2", 400, "view must be full or a seat number"),
        ("/api/games/1/replay?view=%D9%A1", 400, "view must be full or a seat number"),
        ("/api/games/999", 404, "no game 999"),
        ("/api/events/999", 404, "no tournament or competition 999"),
        ("/api/boards/999", 404, "no leaderboard 999"),
        ("/api/entrants/999", 404, "no entrant 999"),
        ("/api/games/99999999999999999999999", 404, "nothing at /api/games/9999"),
        ("/api/live/matches", 404, "start arena web with --server"),
    ],
)
def test_bad_requests_are_named(client: TestClient, url: str, status: int, words: str) -> None:
    response = client.get(url)
    assert response.status_code == status
    assert words in response.json()["error"]


@pytest.mark.parametrize(
    ("url", "status", "words"),
    [
        ("/games?event=abc", 400, "event must be a whole number"),
        ("/games?limit=%C2%B2", 400, "limit must be a whole number"),
        ("/entrants/1?board=%C2%B2", 400, "board must be a whole number"),
        ("/games?outcome=won", 400, "outcome must be one of normal, timeout"),
        ("/games/999", 404, "no game 999"),
        ("/entrants/999", 404, "no entrant 999"),
        ("/entrants/1?board=999", 404, "not rated on board 999"),
    ],
)
def test_bad_pages_say_why(client: TestClient, url: str, status: int, words: str) -> None:
    response = client.get(url)
    assert response.status_code == status
    assert "text/html" in response.headers["content-type"]
    assert words in response.text


def test_an_unknown_page_is_a_404_page(client: TestClient) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404
    assert "nothing at /nowhere" in response.text


# ---------------------------------------------------------------- the ledger file


def test_the_app_never_writes_to_the_ledger(ledger: Path) -> None:
    before = ledger.read_bytes()
    with TestClient(create_app(ledger)) as client:
        for url in every_url(client):
            client.get(url)
    assert ledger.read_bytes() == before
    reader = Reader(ledger)
    with pytest.raises(LedgerUnavailable, match=r"readonly|read-only"), reader.read() as conn:
        conn.execute("CREATE TABLE sneaky (x)")


def test_a_missing_or_foreign_or_old_file_is_refused_clearly(tmp_path: Path, ledger: Path) -> None:
    with pytest.raises(LedgerUnavailable, match="no ledger at"):
        create_app(tmp_path / "missing.sqlite")
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (x)")
    conn.close()
    with pytest.raises(LedgerUnavailable, match="not an arena ledger"):
        create_app(other)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(LedgerUnavailable, match=r"not a SQLite ledger|cannot read"):
        create_app(junk)
    execute(
        ledger,
        ("DELETE FROM _migrations WHERE version = (SELECT max(version) FROM _migrations)", ()),
    )
    with pytest.raises(LedgerUnavailable, match="arena tournaments --ledger"):
        create_app(ledger)


# A writer killed in the middle of a write: it has changed pages of the file (its cache holds one
# page) and their old contents wait in the journal, to be put back before the ledger is read again.
KILLED_WRITER = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size = 1")
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE entrants SET name = name || ' (half written)'")
conn.execute("CREATE TABLE junk (x)")
conn.execute("INSERT INTO junk SELECT randomblob(4000) FROM game_records a, game_records b")
os._exit(0)
"""


def kill_a_writer_mid_write(ledger: Path) -> None:
    subprocess.run([sys.executable, "-c", KILLED_WRITER, str(ledger)], check=True, timeout=60)
    journal = ledger.with_name(ledger.name + "-journal")
    assert journal.is_file() and journal.stat().st_size > 0


def test_a_ledger_left_mid_write_is_named_with_its_remedy(ledger: Path) -> None:
    """A read-only reader cannot roll back a killed writer's journal: the app says what happened and
    that opening the ledger once for writing (arena tournaments) puts it right, which it does."""
    with TestClient(create_app(ledger)) as client:
        assert client.get("/api/events").status_code == 200
        kill_a_writer_mid_write(ledger)
        response = client.get("/api/events")
        assert response.status_code == 503
        assert "left its journal" in response.json()["error"]
        assert f"arena tournaments --ledger {ledger}" in response.json()["error"]
    with pytest.raises(LedgerUnavailable, match="left its journal") as refused:
        create_app(ledger)
    assert "not a SQLite ledger" not in str(refused.value)
    result = CliRunner().invoke(cli, ["tournaments", "--ledger", str(ledger)])
    assert result.exit_code == 0, result.output
    assert not ledger.with_name(ledger.name + "-journal").exists()
    with TestClient(create_app(ledger)) as client:
        rows = client.get("/api/events/1").json()["leaderboard"]
        assert sorted(r["entrant"] for r in rows) == ["first", "greedy", "random"]
