"""The JSON API and the pages over a ledger built by a real tournament: every figure is the ledger's
(events, boards, histories, win rates, head to head, a competition's authors and statuses). What they
never serve or do is test_api_guards.py's."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from web_helpers import execute, query

from arena.ledger import Ledger
from arena.ledger.rows import FinishedGame
from arena.stats.elo import elo_from_score
from arena.tournament.summary import pairing_lines, wilson
from arena.web import head_to_head, queries
from arena.web.app import create_app
from arena.web.game_counts import Tally
from arena.web.handlers.common import WebState
from arena.web.reader import Reader

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


def test_two_apps_serve_their_own_ledgers(built_ledger: Path, ledger: Path) -> None:
    """The handlers are module-level functions: each app's state (its ledger, counts, referee,
    replays) is its own, on ``app.state``, so two apps in one process never mix their ledgers."""
    execute(ledger, ("UPDATE tournaments SET name = ?", ("the copy",)))
    first, second = create_app(built_ledger), create_app(ledger)
    assert isinstance(first.state.web, WebState) and first.state.web is not second.state.web
    assert first.state.web.tally.reader is first.state.web.reader
    with TestClient(first) as a, TestClient(second) as b:
        names = [c.get("/api/events").json()["events"][0]["name"] for c in (a, b, a)]
        assert names == ["Web <fixture> & co", "the copy", "Web <fixture> & co"]
        assert "the copy" in b.get("/").text and "the copy" not in a.get("/").text


def test_a_tally_counts_through_the_reader_it_is_given(built_ledger: Path) -> None:
    """The counts are the ledger's, read only through the Reader the Tally was given (no Reader owns a
    Tally: the web's read-only connection knows nothing of the counts)."""
    reads = 0

    class CountingReader(Reader):
        def read(self) -> Any:
            nonlocal reads
            reads += 1
            return super().read()

    tally = Tally(CountingReader(built_ledger))
    reads = 0
    [(tid,)] = query(built_ledger, "SELECT id FROM tournaments")
    found = queries.event(tally, tid)
    assert reads > 0
    assert (found["played"], found["planned"], found["failures"]) == (6, 6, 0)
    [(board_id, kind, variant)] = query(
        built_ledger, "SELECT id, kind, variant FROM boards WHERE tournament_id = ?", tid
    )
    games, firsts = tally.board({"id": board_id, "kind": kind, "variant": variant, "event_id": tid})
    assert sum(games.values()) == 12  # six games, two entrants each
    assert sum(firsts.values()) == pytest.approx(6.0)  # one first place a game, shared on a draw
    assert not hasattr(Reader(built_ledger), "tally")


def test_win_counts_follow_new_and_voided_games(
    ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counts behind win rates and game totals are brought up to date from the games added since
    (here two games at a time), and counted again after a game is voided."""
    monkeypatch.setattr(Tally, "CHUNK", 2)
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
            led.record_game(1, "two-handed", planned, ids, FinishedGame.from_data(record))
            played, again = counts()
            assert played == 6 and again == before
            assert client.get("/api/events").json()["events"][0]["voided"] == 1
    finally:
        led.close()


def test_a_competitions_board_names_each_bots_author(tmp_path: Path) -> None:
    """A competition's leaderboard on the web: its own board, each entrant with its author, those in
    play with no game yet included."""
    from arena.competition.spec import parse as parse_competition
    from arena.ledger.competitions import Competitions
    from arena.ledger.rows import ScheduledGame

    led = Ledger(tmp_path / "comp.sqlite")
    cid = led.register(parse_competition({"name": "Ladder"}), kind="competition").id
    comp = Competitions(led)
    ids = {}
    for author, bot in (("ada", "smart"), ("bob", "bold"), ("cy", "new")):
        who = comp.author_of(cid, comp.add_author(cid, author))
        assert who is not None
        sid, _ = comp.submit(cid, who.id, bot, "1", "python", bundle=bot * 8, run="r")
        ids[bot] = comp.activate(sid, f"bundle:{bot}")
    del ids["new"]  # in play, no game yet
    game = ScheduledGame(
        "c000000000-s0", 0, 0, 0, 0, 0, 1, (("smart",), ("bold",)), ("smart", "bold")
    )
    led.plan(cid, [game])
    result = {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 600]}
    led.record_game(
        cid, "two-handed", game, ids,
        FinishedGame.from_data({"games": [{"outcome": "normal", "detail": "", "culprit": -1, "result": result}]}),
    )  # fmt: skip
    led.close()
    with TestClient(create_app(tmp_path / "comp.sqlite")) as client:
        [event] = client.get("/api/events").json()["events"]
        assert event["kind"] == "competition"
        rows = client.get(f"/api/events/{event['id']}").json()["leaderboard"]
        assert {(r["entrant"], r["author"]) for r in rows} == {
            ("smart", "ada"),
            ("bold", "bob"),
            ("new", "cy"),  # a version in play with no game yet is on it too, as on the CLI's
        }
        new = next(r for r in rows if r["entrant"] == "new")
        assert (new["games"], new["status"], new["played"]) == (0, "active", 0)
        assert [r["rank"] for r in rows] == [1, 2, 3]
        assert rows[1]["entrant"] == "new"  # the initial rating: between the winner and the loser
        assert "ada" in client.get(f"/events/{event['id']}").text


def test_a_competitions_board_ranks_only_the_versions_in_play(tmp_path: Path) -> None:
    """A withdrawn bot stayed #1 on the web's board with a frozen rating: now the versions in play
    are ranked and the others follow, unranked and greyed, with their last rating. An entrant's page
    shows its public status history (no reason that quotes the bot) and its time use."""
    from arena.competition.spec import parse as parse_competition
    from arena.ledger import seat_reports
    from arena.ledger.competitions import SUSPENDED, WITHDRAWN, Competitions
    from arena.ledger.rows import ScheduledGame

    led = Ledger(tmp_path / "comp.sqlite")
    cid = led.register(parse_competition({"name": "Ladder"}), kind="competition").id
    comp = Competitions(led)
    ids, subs = {}, {}
    for author, bot in (("ada", "smart"), ("bob", "bold"), ("cy", "calm")):
        who = comp.author_of(cid, comp.add_author(cid, author))
        assert who is not None
        subs[bot], _ = comp.submit(cid, who.id, bot, "1", "python", bundle=bot * 8, run="r")
        ids[bot] = comp.activate(subs[bot], f"bundle:{bot}")
    result = {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 600]}
    decisions = [{"seat": 0, "member": 0, "elapsed_ms": 7.0, "bank_ms": 500.0}]
    for order, loser in enumerate(("bold", "calm")):
        game = ScheduledGame(
            f"c{order:09d}-s0", order, 0, order, 0, 0, order + 1, (("smart",), (loser,)),
            ("smart", loser),
        )  # fmt: skip
        led.plan(cid, [game])
        rec = {"games": [{"outcome": "normal", "detail": "", "culprit": -1, "result": result,
                          "decisions": decisions}]}  # fmt: skip
        game_id = led.record_game(
            cid,
            "two-handed",
            game,
            {"smart": ids["smart"], loser: ids[loser]},
            FinishedGame.from_data(rec),
        )
        comp.record_reports(
            game_id,
            seat_reports.from_game(FinishedGame.from_data(rec), [[ids["smart"]], [ids[loser]]], []),
        )
    comp.set_status(subs["smart"], WITHDRAWN, "withdrawn by its author")
    comp.set_status(subs["calm"], SUSPENDED, "suspended: crash: SECRET-OUTPUT")
    led.close()
    with TestClient(create_app(tmp_path / "comp.sqlite")) as client:
        rows = client.get(f"/api/events/{cid}").json()["leaderboard"]
        assert [(r["entrant"], r["rank"]) for r in rows] == [
            ("bold", 1),
            ("smart", None),
            ("calm", None),
        ]
        page = client.get(f"/events/{cid}").text
        assert page.count('class="out-of-play"') == 2
        entrant = client.get(f"/entrants/{ids['calm']}").text
        assert 'id="status-history"' in entrant and "SECRET-OUTPUT" not in entrant
        assert "status-suspended" in entrant
        smart = client.get(f"/api/entrants/{ids['smart']}").json()["competition"]
        assert [c["status"] for c in smart["status_history"]] == ["checking", "active", "withdrawn"]
        assert smart["time_use"]["median_ms"] == 7.0 and smart["time_use"]["games"] == 2


def test_head_to_head_tells_a_bots_versions_apart(tmp_path: Path) -> None:
    """A competition's versions of a bot are entrants of one name: each has a line of head to head of
    its own, as it has a row on the leaderboard, named with its version. Here version 1 loses both
    games of its duplicate pair against bold and version 2 wins both of its own."""
    from arena.competition.spec import parse as parse_competition
    from arena.ledger.competitions import Competitions
    from arena.ledger.rows import ScheduledGame

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
                FinishedGame.from_data({"games": [{"outcome": "normal", "detail": "", "culprit": -1, "result": result}]}),
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
        # The competition's crosstable: its entrants in the board's order, those out of play last.
        cross = data["crosstable"]
        assert [e["name"] for e in cross["entrants"]] == [
            r["entrant"] if r["entrant"] == "bold" else f"smart ({r['version']})"
            for r in data["leaderboard"]
        ]
        assert cross["entrants"][-1]["id"] == smart["1"]  # replaced: after those in play
        at = {e["id"]: k for k, e in enumerate(cross["entrants"])}
        assert cross["cells"][at[bold]][at[smart["1"]]]["points"] == 2.0
        assert cross["cells"][at[smart["2"]]][at[bold]]["points"] == 2.0
        assert cross["cells"][at[smart["1"]]][at[smart["2"]]] is None  # never met
        assert 'id="crosstable"' in page


def test_entrants_of_one_name_and_version_are_told_apart_by_id() -> None:
    labels = head_to_head.entrant_labels(
        {1: ("a", "1"), 2: ("b", "1"), 3: ("b", "2"), 4: ("b", "2")}
    )
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
        assert h["elo"]["regularized"] is True  # one pair has no spread...
        # ... so no estimate is given (it would be the regularization's: +1041, LOS 100%); a pair
        # won outright is a clean sweep, with its one-sided bound: one pair of 1 shows little.
        assert h["elo"]["elo"] is None
        values = h["counts"]["values"]
        if values[4]:
            assert h["elo"]["sweep"] == "won" and h["elo"]["los"] == 1.0
            assert h["elo"]["elo_low"] == pytest.approx(elo_from_score(0.05))
        elif values[0]:
            assert h["elo"]["sweep"] == "lost" and h["elo"]["los"] == 0.0
            assert h["elo"]["elo_high"] == pytest.approx(-elo_from_score(0.05))
        else:
            assert h["elo"]["sweep"] is None and h["elo"]["los"] is None
    sweeps = sum(1 for h in heads if h["elo"]["sweep"])
    page = client.get("/events/1").text
    table = page[page.index('id="pairings"') :]
    assert "Head to head" in page and "1 pair" in table and "1 pairs" not in table
    # Duplicate deals: the sets have a column (without them each game would be a set of its own).
    assert "duplicate sets W-L-T" in table.split("</thead>")[0]
    rows = table.split("</table>")[0].split("<tbody>")[1]
    assert rows.count("(95%, a clean sweep)") == sweeps
    assert rows.count("(all alike)") == 3 - sweeps
    assert rows.count('<td class="num">-</td></tr>') == 3 - sweeps


def test_head_to_head_is_left_out_for_a_large_field(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every two entrants of a competition of hundreds would be a table of many thousand lines (and
    seconds of work on each request): above the cap the event says so instead."""

    assert client.get("/api/events/1").json()["pairings_omitted"] == ""
    monkeypatch.setattr(head_to_head, "MAX_PAIRING_ENTRANTS", 2)
    data = client.get("/api/events/1").json()
    assert data["pairings"] is None
    assert "up to 2 entrants; this one has 3: " in data["pairings_omitted"]
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
