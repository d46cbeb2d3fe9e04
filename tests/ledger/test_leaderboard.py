"""One leaderboard query (issue 44): ``arena leaderboard``, a competition's board and the web pages read a
board through :func:`arena.ledger.leaderboard.placings`, and list the same entrants in the same order."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena.competition.spec import parse
from arena.ledger import Ledger
from arena.ledger.competitions import ACTIVE, REPLACED, Competitions
from arena.ledger.leaderboard import competition_board, placings, placings_page, rank_of
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.rating import initial
from arena.web.app import create_app


def _game(ord_: int, a: str, b: str) -> ScheduledGame:
    return ScheduledGame(f"c{ord_:09d}", ord_, 0, ord_, 0, 0, ord_, ((a,), (b,)), (a, b))


def _won_by_first() -> dict[str, object]:
    return {
        "games": [
            {
                "outcome": "normal",
                "detail": "",
                "culprit": -1,
                "result": {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 500]},
            }
        ]
    }


@pytest.fixture
def ladder(tmp_path: Path) -> tuple[Ledger, Competitions, int]:
    """A competition: ada's bot a (version 1 played, then replaced by version 2, not played yet), bob's
    b (played, lost), carl's c (in play, no game yet)."""
    led = Ledger(tmp_path / "l.sqlite")
    cid = led.register(parse({"name": "Ladder"}, "c.toml"), kind="competition").id
    store = Competitions(led)
    ada, bob, carl = (
        store.author_of(cid, store.add_author(cid, n)) for n in ("ada", "bob", "carl")
    )
    assert ada and bob and carl
    a1, _ = store.submit(cid, ada.id, "a", "1", "python", bundle="a" * 64, run="r")
    b1, _ = store.submit(cid, bob.id, "b", "1", "python", bundle="b" * 64, run="r")
    ids = {"a": store.activate(a1, "bundle:a1"), "b": store.activate(b1, "bundle:b1")}
    assert placings(led.conn, None, competition_id=cid)[0].games == 0, "no board before a game"
    game = _game(0, "a", "b")
    led.plan(cid, [game])
    led.record_game(cid, "two-handed", game, ids, FinishedGame.from_data(_won_by_first()))
    a2, _ = store.submit(cid, ada.id, "a", "2", "go", bundle="c" * 64, run="r")
    c1, _ = store.submit(cid, carl.id, "c", "1", "python", bundle="d" * 64, run="r")
    store.activate(a2, "bundle:a2")
    store.activate(c1, "bundle:c1")
    return led, store, cid


def test_a_competitions_board_lists_its_versions_in_play_at_the_initial_rating(
    ladder: tuple[Ledger, Competitions, int],
) -> None:
    led, _, cid = ladder
    board = competition_board(led.conn, cid)
    assert board is not None
    got = placings(led.conn, board, competition_id=cid)
    start = initial()
    assert [(p.rank, p.name, p.version, p.author, p.status, p.games) for p in got] == [
        (1, "a", "2", "ada", ACTIVE, 0),  # a tie at the initial rating: by name, then version
        (2, "c", "1", "carl", ACTIVE, 0),
        (3, "b", "1", "bob", ACTIVE, 1),
        (0, "a", "1", "ada", REPLACED, 1),  # out of play: after those in play, unranked
    ]
    assert got[0].language == "go"
    assert (got[1].mu, got[1].sigma, got[1].exposed) == (start.mu, start.sigma, start.exposed)
    assert got[3].exposed > start.exposed > got[2].exposed
    # Without the competition named, only the board's rated entrants, all ranked.
    assert [(p.rank, p.name, p.version) for p in placings(led.conn, board)] == [
        (1, "a", "1"),
        (2, "b", "1"),
    ]


def test_the_cli_the_competition_and_the_web_read_one_board_alike(
    ladder: tuple[Ledger, Competitions, int],
) -> None:
    led, store, cid = ladder
    board = competition_board(led.conn, cid)
    assert board is not None
    everyone = placings(led.conn, board, competition_id=cid)
    rated = placings(led.conn, board)
    # arena compete leaderboard and the submission service
    assert [
        (r.rank, r.bot, r.version, r.author, r.exposed, r.mu, r.sigma, r.games, r.status)
        for r in store.board(cid)
    ] == [
        (p.rank, p.name, p.version, p.author, p.exposed, p.mu, p.sigma, p.games, p.status)
        for p in everyone
    ]
    # arena leaderboard --tournament NAME: the rated entrants
    assert [
        (r.entrant, r.version, r.variant, r.mu, r.sigma, r.exposed, r.games, r.entrant_id)
        for r in led.leaderboard(tournament="Ladder")
    ] == [
        (p.name, p.version, "two-handed", p.mu, p.sigma, p.exposed, p.games, p.entrant_id)
        for p in rated
    ]
    # the web's event page
    with TestClient(create_app(led.path)) as client:
        rows = client.get(f"/api/events/{cid}").json()["leaderboard"]
    assert [
        (r["rank"], r["entrant_id"], r["entrant"], r["version"], r["author"], r["status"])
        for r in rows
    ] == [(p.rank or None, p.entrant_id, p.name, p.version, p.author, p.status) for p in everyone]
    assert [r["played"] for r in rows] == [0, 0, 1, 1]


def test_an_unknown_board_has_no_lines(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    assert placings(led.conn, 99) == []
    assert led.leaderboard("two-handed") == []
    assert led.leaderboard(tournament="nothing") == []


def test_a_page_of_a_competitions_board_is_a_slice_of_the_whole(
    ladder: tuple[Ledger, Competitions, int],
) -> None:
    """Pages, a search and an entrant's rank agree with the whole board, the versions in play not yet
    rated included, each with its author and status."""
    led, _, cid = ladder
    board = competition_board(led.conn, cid)
    whole = placings(led.conn, board, competition_id=cid)
    assert len(whole) == 4
    for size in (1, 2, 3, 4):
        pages = [
            placings_page(led.conn, board, competition_id=cid, offset=o, limit=size)
            for o in range(0, 4, size)
        ]
        assert [p for page, _ in pages for p in page] == whole
        assert {total for _, total in pages} == {4}
    found, total = placings_page(led.conn, board, competition_id=cid, name="A")
    assert found == [p for p in whole if p.name == "a"] and total == 2
    for p in whole:
        found = rank_of(led.conn, board, p.entrant_id, competition_id=cid)
        assert found is not None and found[0] == p.rank
        assert whole[found[1] - 1] == p  # the line's place on the whole board
    assert rank_of(led.conn, board, 10_000, competition_id=cid) is None
    assert placings_page(led.conn, board, competition_id=cid, name="%") == ([], 0)


@pytest.fixture
def crowd(tmp_path: Path) -> Ledger:
    """A tournament's board of 23 entrants, in fives alike in mu - 3 sigma (ordered by name, then
    version: two share a name), and one entrant of no board."""
    led = Ledger(tmp_path / "crowd.sqlite")
    now = "2026-01-01T00:00:00+00:00"
    with led.transaction():
        led.conn.executemany(
            "INSERT INTO entrants (id, name, command, command_hash, language, version, created_at) "
            "VALUES (?, ?, 'bot', ?, 'python', ?, ?)",
            [(i, f"bot{(i * 7) % 23:02d}", f"{i:064x}", str(i % 2), now) for i in range(1, 24)]
            + [(24, "bot03", f"{24:064x}", "9", now), (25, "lonely", f"{25:064x}", "1", now)],
        )
        led.conn.execute(
            "INSERT INTO tournaments (id, name, spec_hash, spec, variant, created_at) "
            "VALUES (1, 'Crowd', 'h', '{}', 'two-handed', ?)",
            (now,),
        )
        led.conn.execute(
            "INSERT INTO boards (id, kind, name, variant, tournament_id) "
            "VALUES (1, 'tournament', 'Crowd', 'two-handed', 1)"
        )
        led.conn.executemany(
            "INSERT INTO ratings VALUES (1, ?, ?, 1.0, ?, 1)",
            [(i, 30.0 - i // 5, 27.0 - i // 5) for i in range(1, 25)],
        )
    return led


def test_a_tournaments_pages_search_and_ranks_agree_with_the_whole_board(crowd: Ledger) -> None:
    whole = placings(crowd.conn, 1)
    assert len(whole) == 24 and [p.rank for p in whole] == list(range(1, 25))
    for size in (1, 5, 7, 24, 30):
        pages = [placings_page(crowd.conn, 1, offset=o, limit=size) for o in range(0, 24, size)]
        assert [p for page, _ in pages for p in page] == whole
        assert {total for _, total in pages} == {24}
    found, total = placings_page(crowd.conn, 1, name="BOT0", limit=3, offset=2)
    matching = [p for p in whole if p.name.startswith("bot0")]
    assert found == matching[2:5] and total == len(matching)
    for p in whole:
        assert rank_of(crowd.conn, 1, p.entrant_id) == (p.rank, p.rank)
    assert rank_of(crowd.conn, 1, 25) is None  # on no board


def test_a_page_and_an_entrants_rank_rank_the_board_once_at_most(crowd: Ledger) -> None:
    """A page of 5,000 lines took two rankings of the whole board (one for the lines, one for their
    count) and an entrant's rank another: a tournament's page reads its lines in order and an
    entrant's rank counts the lines before it, with no ranking; a search ranks once."""
    statements: list[str] = []
    crowd.conn.set_trace_callback(statements.append)

    def rankings() -> int:
        found = sum(" OVER " in s for s in statements)
        statements.clear()
        return found

    try:
        placings_page(crowd.conn, 1, offset=5, limit=5)
        assert rankings() == 0
        rank_of(crowd.conn, 1, 7)
        assert rankings() == 0
        placings_page(crowd.conn, 1, name="bot1")
        assert rankings() == 1
    finally:
        crowd.conn.set_trace_callback(None)
