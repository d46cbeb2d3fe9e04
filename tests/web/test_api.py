"""The JSON API and the pages over a ledger built by a real tournament: every figure is the ledger's,
the deal secret is never served, a deal still in play stays sealed, bad requests are named, and bot
text is escaped and capped."""

from __future__ import annotations

import itertools
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
from arena.ledger import Ledger
from arena.tournament.schedule import full_schedule
from arena.tournament.spec import load
from arena.tournament.summary import pairing_lines, wilson
from arena.web import queries
from arena.web.app import create_app
from arena.web.queries import LedgerUnavailable, Reader


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


# ---------------------------------------------------------------- the figures are the ledger's


def test_events_are_the_ledgers_tournaments(client: TestClient, built_ledger: Path) -> None:
    events = client.get("/api/events").json()["events"]
    [(tid, name, variant)] = query(built_ledger, "SELECT id, name, variant FROM tournaments")
    assert [(e["id"], e["name"], e["variant"], e["kind"]) for e in events] == [
        (tid, name, variant, "tournament")
    ]
    [e] = events
    assert (e["planned"], e["played"], e["failures"], e["voided"]) == (6, 6, 0, 0)
    assert e["status"] == "finished"
    assert e["settings"]["format"] == "round-robin"
    assert "entrants" not in e["settings"], "the bots' command lines are not served"


def test_the_leaderboard_is_the_ledgers_board(client: TestClient, built_ledger: Path) -> None:
    [(tid,)] = query(built_ledger, "SELECT id FROM tournaments")
    data = client.get(f"/api/events/{tid}").json()
    rows = data["leaderboard"]
    led = Ledger(built_ledger)
    try:
        expected = led.leaderboard(tournament=data["event"]["name"])
    finally:
        led.close()
    assert [(r["entrant"], r["version"], r["games"]) for r in rows] == [
        (b.entrant, b.version, b.games) for b in expected
    ]
    for r, b in zip(rows, expected, strict=True):
        assert (r["mu"], r["sigma"], r["exposed"]) == pytest.approx((b.mu, b.sigma, b.exposed))
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert [r["exposed"] for r in rows] == sorted((r["exposed"] for r in rows), reverse=True)
    assert all(r["author"] == "" for r in rows), "no authors until competitions add them"


def test_win_rates_count_first_places_with_wilson_intervals(
    client: TestClient, built_ledger: Path
) -> None:
    seats = query(
        built_ledger,
        "SELECT s.game_id, e.name, s.side, s.place FROM game_seats s "
        "JOIN entrants e ON e.id = s.entrant_id",
    )
    firsts: dict[str, float] = {}
    played: dict[str, int] = {}
    for game_id, name, _, place in seats:
        played[name] = played.get(name, 0) + 1
        at_first = {side for g, _, side, p in seats if g == game_id and p == 0}
        if place == 0:
            firsts[name] = firsts.get(name, 0.0) + 1 / len(at_first)
    rows = client.get("/api/events/1").json()["leaderboard"]
    for r in rows:
        name = r["entrant"]
        assert r["played"] == played[name] == 4
        assert r["firsts"] == pytest.approx(firsts.get(name, 0.0))
        assert r["win_rate"] == pytest.approx(firsts.get(name, 0.0) / 4)
        assert (r["win_low"], r["win_high"]) == pytest.approx(wilson(firsts.get(name, 0.0), 4))
    assert sum(r["firsts"] for r in rows) == pytest.approx(6), "one first place per game"


def test_an_ab_tests_board_is_found_like_a_tournaments(ledger: Path) -> None:
    """An arena sprt event is of kind sprt and its games count on a board of kind tournament (the
    ledger makes it so when it rates them): the event list gives that board, as the event does."""
    execute(
        ledger,
        ("UPDATE tournaments SET kind = 'sprt'", ()),
        ("DELETE FROM rating_history", ()),
        ("DELETE FROM ratings", ()),
        ("DELETE FROM boards", ()),
    )
    led = Ledger(ledger)
    try:
        led.rebuild_ratings()
    finally:
        led.close()
    [(board_id,)] = query(ledger, "SELECT id FROM boards WHERE tournament_id IS NOT NULL")
    with TestClient(create_app(ledger)) as client:
        [event] = client.get("/api/events").json()["events"]
        assert event["kind"] == "sprt"
        assert event["board_id"] == board_id
        data = client.get(f"/api/events/{event['id']}").json()
        assert data["event"]["board_id"] == data["board"]["id"] == board_id
        assert len(data["leaderboard"]) == 3


def test_an_event_with_no_game_yet_has_an_empty_board(ledger: Path) -> None:
    execute(
        ledger,
        (
            "INSERT INTO tournaments (name, spec_hash, spec, variant, created_at, kind) "
            "VALUES ('Later', 'h2', '{}', 'polish', '2026-01-01', 'competition')",
            (),
        ),
    )
    with TestClient(create_app(ledger)) as client:
        [later, _] = client.get("/api/events").json()["events"]
        assert (later["name"], later["kind"], later["played"], later["board_id"]) == (
            "Later",
            "competition",
            0,
            None,
        )
        assert client.get(f"/api/events/{later['id']}").json()["leaderboard"] == []
        page = client.get(f"/events/{later['id']}")
        assert page.status_code == 200 and "No rated game yet" in page.text
        assert "competition" in client.get("/").text


def test_the_pooled_board_has_the_same_games(client: TestClient) -> None:
    boards = client.get("/api/boards").json()["boards"]
    assert sorted(b["kind"] for b in boards) == ["pooled", "tournament"]
    pooled = next(b for b in boards if b["kind"] == "pooled")
    assert pooled["event_id"] is None and pooled["variant"] == "two-handed"
    rows = client.get(f"/api/boards/{pooled['id']}").json()["leaderboard"]
    event_rows = client.get("/api/events/1").json()["leaderboard"]
    assert [(r["entrant"], r["played"], r["firsts"]) for r in rows] == [
        (r["entrant"], r["played"], r["firsts"]) for r in event_rows
    ]
    # the pooled board's page is its own; an event's board's page is the event's
    assert client.get(f"/boards/{pooled['id']}").status_code == 200
    tournament = next(b for b in boards if b["kind"] == "tournament")
    moved = client.get(f"/boards/{tournament['id']}", follow_redirects=False)
    assert moved.status_code == 307 and moved.headers["location"] == "/events/1"


def test_an_entrants_history_follows_its_ratings_game_by_game(
    client: TestClient, built_ledger: Path
) -> None:
    [(eid,)] = query(built_ledger, "SELECT id FROM entrants WHERE name = 'greedy'")
    data = client.get(f"/api/entrants/{eid}").json()
    assert data["entrant"]["name"] == "greedy" and data["entrant"]["version"] == "2"
    on = {b["board"]["kind"]: b for b in data["boards"]}
    assert set(on) == {"tournament", "pooled"}
    for kind, b in on.items():
        history = client.get(f"/api/entrants/{eid}/history?board={b['board']['id']}").json()
        stored = query(
            built_ledger,
            "SELECT h.game_id, h.mu_after, h.sigma_after FROM rating_history h "
            "JOIN games g ON g.id = h.game_id WHERE h.entrant_id = ? AND h.board_id = ? "
            "ORDER BY g.rating_seq",
            eid,
            b["board"]["id"],
        )
        got = [(h["game_id"], h["mu"], h["sigma"]) for h in history["history"]]
        assert got == stored, kind
        assert got[-1][1:] == pytest.approx((b["mu"], b["sigma"]))
        assert len(got) == b["games"] == 4
        assert history["history"][0]["mu_before"] == pytest.approx(25.0)
    assert {g["id"] for g in data["recent"]} == {
        r[0]
        for r in query(built_ledger, "SELECT game_id FROM game_seats WHERE entrant_id = ?", eid)
    }


def test_a_long_history_is_charted_from_evenly_spread_points() -> None:
    points = [{"n": n} for n in range(1, 10_002)]
    kept = queries.thinned(points, 2000)
    assert len(kept) <= 2001
    assert kept[0]["n"] == 1 and kept[-1]["n"] == 10_001
    steps = {b["n"] - a["n"] for a, b in itertools.pairwise(kept[:-1])}
    assert steps == {6}
    assert queries.thinned(points[:50], 2000) == points[:50]


def test_an_entrant_not_on_a_board_has_no_history_there(client: TestClient) -> None:
    response = client.get("/api/entrants/1/history?board=999")
    assert response.status_code == 404
    assert "not rated on board 999" in response.json()["error"]


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


def test_win_counts_follow_new_and_voided_games(
    ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counts behind win rates and game totals are brought up to date from the games added since
    (here two games at a time), and counted again after a game is voided."""
    monkeypatch.setattr(queries.Tally, "CHUNK", 2)
    led = Ledger(ledger)
    try:
        record = led.game_record(6)
        [planned] = [
            g
            for g in led.planned(1, 0)
            if g.key == query(ledger, "SELECT key FROM games WHERE id = 6")[0][0]
        ]
        ids = dict(query(ledger, "SELECT name, id FROM entrants"))
        winners = [
            name
            for (name,) in query(
                ledger,
                "SELECT e.name FROM game_seats s JOIN entrants e ON e.id = s.entrant_id "
                "WHERE s.game_id = 6 AND s.place = 0",
            )
        ]
        with TestClient(create_app(ledger)) as client:

            def counts() -> tuple[int, dict[str, tuple[int, float]]]:
                data = client.get("/api/events/1").json()
                rows = {r["entrant"]: (r["played"], r["firsts"]) for r in data["leaderboard"]}
                return data["event"]["played"], rows

            played, before = counts()
            assert played == 6 and sum(p for p, _ in before.values()) == 12
            led.void_games(1, "a test", [6])
            played, after = counts()
            assert played == 5 and sum(p for p, _ in after.values()) == 10
            for name in winners:
                assert after[name][1] == pytest.approx(before[name][1] - 1 / len(winners))
            # played again (a new game id): counted from where the count stood
            led.record_game(1, "two-handed", planned, ids, record)
            played, again = counts()
            assert played == 6 and again == before
            assert client.get("/api/events").json()["events"][0]["voided"] == 1
    finally:
        led.close()


def test_a_competitions_board_names_each_bots_author(tmp_path: Path) -> None:
    """A competition's leaderboard on the web: its own board, each entrant with its author."""
    from arena.competition.spec import parse as parse_competition
    from arena.ledger.competitions import Competitions
    from arena.tournament.schedule import ScheduledGame

    led = Ledger(tmp_path / "comp.sqlite")
    cid = led.register(parse_competition({"name": "Ladder"}), kind="competition").id
    comp = Competitions(led)
    ids = {}
    for author, bot in (("ada", "smart"), ("bob", "bold")):
        who = comp.author_of(cid, comp.add_author(cid, author))
        assert who is not None
        sid, _ = comp.submit(cid, who.id, bot, "1", "python", bundle=bot * 8, run="r")
        ids[bot] = comp.activate(sid, f"bundle:{bot}")
    game = ScheduledGame(
        "c000000000-s0", 0, 0, 0, 0, 0, 1, (("smart",), ("bold",)), ("smart", "bold")
    )
    led.plan(cid, [game])
    result = {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 600]}
    led.record_game(
        cid, "two-handed", game, ids,
        {"games": [{"outcome": "normal", "detail": "", "culprit": -1, "result": result}]},
    )  # fmt: skip
    led.close()
    with TestClient(create_app(tmp_path / "comp.sqlite")) as client:
        [event] = client.get("/api/events").json()["events"]
        assert event["kind"] == "competition"
        rows = client.get(f"/api/events/{event['id']}").json()["leaderboard"]
        assert {(r["entrant"], r["author"]) for r in rows} == {("smart", "ada"), ("bold", "bob")}
        assert "ada" in client.get(f"/events/{event['id']}").text


def test_head_to_head_tells_a_bots_versions_apart(tmp_path: Path) -> None:
    """A competition's versions of a bot are entrants of one name: each has a line of head to head of
    its own, as it has a row on the leaderboard, named with its version. Here version 1 loses both
    games of its duplicate pair against bold and version 2 wins both of its own."""
    from arena.competition.spec import parse as parse_competition
    from arena.ledger.competitions import Competitions
    from arena.tournament.schedule import ScheduledGame

    led = Ledger(tmp_path / "comp.sqlite")
    cid = led.register(parse_competition({"name": "Ladder"}), kind="competition").id
    comp = Competitions(led)

    authors = {}
    for name in ("ada", "bob"):
        who = comp.author_of(cid, comp.add_author(cid, name))
        assert who is not None
        authors[name] = who.id

    def entrant(author: str, bot: str, version: str) -> int:
        bundle = bot[0] + version * 7
        sid, _ = comp.submit(cid, authors[author], bot, version, "python", bundle=bundle, run="r")
        entrant_id = comp.activate(sid, f"bundle:{bot}{version}")
        assert entrant_id is not None
        return entrant_id

    bold = entrant("bob", "bold", "1")
    smart = {v: entrant("ada", "smart", v) for v in ("1", "2")}
    order = 0
    for version, smart_wins in (("1", False), ("2", True)):
        ids = {"smart": smart[version], "bold": bold}
        for rot, seats in enumerate(((("smart",), ("bold",)), (("bold",), ("smart",)))):
            game = ScheduledGame(
                f"c{order:09d}-s{rot}", order, 0, order, 0, rot, order + 1, seats, ("smart", "bold")
            )
            led.plan(cid, [game])
            smart_seat = seats.index(("smart",))
            win = smart_seat if smart_wins else 1 - smart_seat
            scores = [1000, 600] if win == 0 else [600, 1000]
            result = {"sides": [[0], [1]], "ranking": [win, 1 - win], "scores": scores}
            led.record_game(
                cid, "two-handed", game, ids,
                {"games": [{"outcome": "normal", "detail": "", "culprit": -1, "result": result}]},
            )  # fmt: skip
            order += 1
    led.close()
    with TestClient(create_app(tmp_path / "comp.sqlite")) as client:
        data = client.get(f"/api/events/{cid}").json()
        assert len(data["leaderboard"]) == 3
        # The board says which version is in play: version 2 replaced version 1.
        statuses = {(r["entrant"], r["version"]): r["status"] for r in data["leaderboard"]}
        assert statuses == {
            ("smart", "1"): "replaced",
            ("smart", "2"): "active",
            ("bold", "1"): "active",
        }
        board = client.get(f"/events/{cid}").text
        board = board[
            board.index('id="leaderboard"') : board.index(
                "</table>", board.index('id="leaderboard"')
            )
        ]
        assert '<th data-key="status"' in board and board.count("status-active") == 2
        assert board.count("status-replaced") == 1
        keys = ("entrant_id", "entrant", "opponent_id", "opponent", "games", "wins", "losses")
        lines = [tuple(h[k] for k in keys) for h in data["pairings"]]
        assert lines == [
            (bold, "bold", smart["1"], "smart (1)", 2, 2, 0),
            (bold, "bold", smart["2"], "smart (2)", 2, 0, 2),
        ]
        page = client.get(f"/events/{cid}").text
        table = page[page.index('id="pairings"') :]
        assert "smart (1)" in table and "smart (2)" in table
        assert f'href="/entrants/{smart["2"]}"' in table


def test_entrants_of_one_name_and_version_are_told_apart_by_id() -> None:
    labels = queries.entrant_labels({1: ("a", "1"), 2: ("b", "1"), 3: ("b", "2"), 4: ("b", "2")})
    assert labels == {1: "a", 2: "b (1)", 3: "b (2) #3", 4: "b (2) #4"}


def test_an_events_pairings_carry_the_elo_of_their_duplicate_pairs(
    client: TestClient, built_ledger: Path
) -> None:
    """Each pairing of the round robin played one deal twice with the seats swapped: its Elo is that
    of one pair (pentanomial), as arena run's pairings table and arena sprt compute it."""
    led = Ledger(built_ledger)
    try:
        expected = pairing_lines(led.seat_rows(1))
    finally:
        led.close()
    heads = client.get("/api/events/1").json()["pairings"]
    assert len(heads) == len(expected) == 3
    for h, line in zip(heads, expected, strict=True):
        assert (h["entrant"], h["opponent"], h["games"]) == (line.a, line.b, 2)
        assert (h["wins"], h["losses"], h["draws"]) == (line.wins, line.losses, line.draws)
        assert h["counts"]["model"] == "pentanomial" and sum(h["counts"]["values"]) == 1
        assert line.elo is not None and h["elo"]["pairs"] == 1
        assert (h["elo"]["elo"], h["elo"]["elo_low"], h["elo"]["los"]) == pytest.approx(
            (line.elo.elo, line.elo.elo_low, line.elo.los)
        )
        assert h["elo"]["regularized"] is True  # one pair has no spread
    page = client.get("/events/1").text
    table = page[page.index('id="pairings"') :]
    assert "Head to head" in page and "1 pairs" in table
    # With one pair each, no interval or LOS is shown: they would be the regularization's.
    rows = table.split("</table>")[0].split("<tbody>")[1]
    assert rows.count("(all alike)") == 3 and rows.count('<td class="num">-</td></tr>') == 3


def test_head_to_head_is_left_out_for_a_large_field(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every two entrants of a competition of hundreds would be a table of many thousand lines (and
    seconds of work on each request): above the cap the event says so instead."""
    import arena.web.queries as queries

    assert client.get("/api/events/1").json()["pairings_omitted"] == ""
    monkeypatch.setattr(queries, "MAX_PAIRING_ENTRANTS", 2)
    data = client.get("/api/events/1").json()
    assert data["pairings"] is None
    assert data["pairings_omitted"].endswith("up to 2 entrants; this one has 3")
    assert data["leaderboard"], "the leaderboard itself is still there"
    page = client.get("/events/1").text
    assert 'id="pairings-omitted"' in page and 'id="pairings"' not in page


def test_a_paused_competition_is_shown_paused(tmp_path: Path) -> None:
    """The organiser's pause (arena compete pause) shows on the web as it does in compete status."""
    from arena.competition.spec import parse as parse_competition
    from arena.ledger.competitions import Competitions

    led = Ledger(tmp_path / "c.sqlite")
    try:
        cid = led.register(parse_competition({"name": "Ladder"}), kind="competition").id
        led.take_lease(cid)  # served, as compete serve holds it
        comp = Competitions(led)
        with TestClient(create_app(tmp_path / "c.sqlite")) as client:
            for paused, status in ((True, "paused"), (False, "running")):
                comp.set_paused(cid, paused)
                assert client.get(f"/api/events/{cid}").json()["event"]["status"] == status
                assert client.get("/api/events").json()["events"][0]["status"] == status
                assert f"status-{status}" in client.get(f"/events/{cid}").text
    finally:
        led.close()
