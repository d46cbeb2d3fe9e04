"""Head to head at any size of field: the event's crosstable (entrant x entrant, score and games) for
boards of up to 40 entrants, read from the head to head the ledger keeps (never from the games); above
that a line saying so and, on each board line, a link to the entrant's opponents, which its page shows
a page at a time; and a clean sweep's one-sided Elo bound and LOS."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena.ledger import Ledger
from arena.ledger import head_to_head as stored
from arena.stats.elo import elo_from_score, score_from_elo
from arena.tournament.summary import pairing_lines, sweep_bound
from arena.web import head_to_head
from arena.web.app import create_app

NOW = "2026-01-01T00:00:00+00:00"
FIELD = 6
# (a, b, place of a: 0 won, 1 lost, None a draw), each a game of a against b, a in seat 0. Entrant 6
# meets no one; 1 sweeps 2 (three games), 3 and 4 draw once and split two, 5 loses both to 1.
GAMES = [
    (1, 2, 0), (2, 1, 1), (1, 2, 0),
    (3, 4, None), (3, 4, 0), (4, 3, 0),
    (1, 5, 0), (5, 1, 1),
    (2, 3, 1),
]  # fmt: skip


def small_event(path: Path) -> int:
    """A tournament of :data:`FIELD` entrants rated on its board (entrant i's mu - 3 sigma falls with
    i: the board's order is by id), with :data:`GAMES`; head to head counted from them as the
    ledger counts it. Returns the tournament's id."""
    Ledger(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT INTO entrants (id, name, command, command_hash, language, version, created_at) "
            "VALUES (?, ?, 'bot', ?, 'python', '1', ?)",
            [(i, f"bot{i}", f"{i:064x}", NOW) for i in range(1, FIELD + 1)],
        )
        conn.execute(
            "INSERT INTO tournaments (id, name, spec_hash, spec, variant, created_at) "
            "VALUES (1, 'Small', 'h', '{}', 'two-handed', ?)",
            (NOW,),
        )
        conn.execute(
            "INSERT INTO boards (id, kind, name, variant, tournament_id) "
            "VALUES (1, 'tournament', 'Small', 'two-handed', 1)"
        )
        conn.executemany(
            "INSERT INTO ratings VALUES (1, ?, ?, 1.0, ?, 1)",
            [(i, 40.0 - i, 37.0 - i) for i in range(1, FIELD + 1)],
        )
        for g, (a, b, place) in enumerate(GAMES, start=1):
            conn.execute(
                "INSERT INTO games (id, tournament_id, key, ord, round, pairing, deal, rotation, "
                "variant, seed, outcome, finished_at, rating_seq) "
                "VALUES (?, 1, ?, ?, 0, ?, 0, 0, 'two-handed', ?, 'normal', ?, ?)",
                (g, f"g{g}", g, g, g, NOW, g),
            )
            places = (0, 0) if place is None else (place, 1 - place)
            conn.executemany(
                "INSERT INTO game_seats VALUES (?, ?, 0, ?, ?, ?, 100)",
                [(g, 0, a, 0, places[0]), (g, 1, b, 1, places[1])],
            )
        stored.rebuild(conn)
    conn.close()
    return 1


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("small") / "ledger.sqlite"
    small_event(path)
    return path


@pytest.fixture(scope="module")
def client(small: Path) -> Iterator[TestClient]:
    with TestClient(create_app(small)) as c:
        yield c


def expected_cells(path: Path) -> dict[tuple[str, str], tuple[float, int]]:
    """Each two entrants' (points, games) from each side, by the summary's pairing lines computed
    from every game (head to head's definition)."""
    led = Ledger(path)
    try:
        lines = pairing_lines(led.seat_rows(1))
    finally:
        led.close()
    out = {}
    for line in lines:
        out[(line.a, line.b)] = (line.wins + line.draws / 2, line.games)
        out[(line.b, line.a)] = (line.losses + line.draws / 2, line.games)
    return out


def test_the_crosstable_gives_each_two_entrants_score_and_games(
    client: TestClient, small: Path
) -> None:
    data = client.get("/api/events/1").json()
    cross = data["crosstable"]
    assert data["crosstable_omitted"] == ""
    names = [e["name"] for e in cross["entrants"]]
    assert names == ["bot1", "bot2", "bot3", "bot4", "bot5"]  # the board's order; bot6 met no one
    expected = expected_cells(small)
    got = {
        (names[i], names[j]): (cell["points"], cell["games"])
        for i, row in enumerate(cross["cells"])
        for j, cell in enumerate(row)
        if cell is not None
    }
    assert got == expected
    assert got[("bot1", "bot2")] == (3.0, 3) and got[("bot3", "bot4")] == (1.5, 3)
    totals = {e["name"]: (e["points"], e["games"]) for e in cross["entrants"]}
    assert totals["bot1"] == (5.0, 5) and totals["bot5"] == (0.0, 2)
    assert totals["bot2"] == (0.0, 4) and totals["bot3"] == (2.5, 4)
    html = client.get("/events/1").text
    table = html[html.index('id="crosstable"') :].split("</table>")[0]
    row4 = table.split("<tr>")[5]  # the header's, then bot1's .. bot4's
    assert ">bot4</a>" in row4
    # bot4 against bot1, bot2 (never met), bot3 (a draw, a win, a loss: 1½ of 3), itself.
    cells = re.findall(r"<td class=\"num[^\"]*\"[^>]*>([^<]*)</td>", row4)
    assert cells[:2] == ["4", "1½/3"]  # its number, its score over all its games
    assert cells[2:7] == ["", "", "1½/3", "\u00d7", ""]  # the diagonal marked


def test_the_crosstable_reads_the_stored_head_to_head_never_the_games(small: Path) -> None:
    conn = sqlite3.connect(f"file:{small}?mode=ro", uri=True)

    def no_games(action: int, table: str | None, *_: object) -> int:
        if action == sqlite3.SQLITE_READ and table in ("games", "game_seats"):
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    conn.set_authorizer(no_games)
    try:
        cross = head_to_head.crosstable(conn, 1, [5, 4, 3, 2, 1])
    finally:
        conn.close()
    assert cross is not None
    assert [e["id"] for e in cross["entrants"]] == [5, 4, 3, 2, 1]


def test_above_the_cap_the_board_links_each_entrants_opponents(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(head_to_head, "MAX_CROSSTABLE_ENTRANTS", 4)
    data = client.get("/api/events/1").json()
    assert data["crosstable"] is None
    assert data["crosstable_omitted"] == (
        "the crosstable is shown for 4 entrants at most; this one has 6: each entrant's opponents "
        "are on its page"
    )
    html = client.get("/events/1").text
    assert 'id="crosstable-omitted"' in html and 'id="crosstable"' not in html
    board = html[html.index('id="leaderboard"') :].split("</table>")[0]
    for i in range(1, FIELD + 1):
        assert f'href="/entrants/{i}?board=1#opponents">opponents</a>' in board
    # Under the cap there is no such column.
    monkeypatch.undo()
    assert "#opponents" not in client.get("/events/1").text


def test_an_entrants_page_shows_its_opponents_a_page_at_a_time(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = client.get("/api/entrants/1").json()["opponents"]
    assert (data["event_id"], data["total"], data["pages"]) == (1, 2, 1)
    lines = [(o["opponent"], o["games"], o["wins"], o["losses"]) for o in data["lines"]]
    assert lines == [("bot2", 3, 3, 0), ("bot5", 2, 2, 0)]  # most games first
    monkeypatch.setattr(head_to_head, "OPPONENTS_PAGE", 1)
    second = client.get("/entrants/1?opponents=2").text
    table = second[second.index('id="opponents-table"') :].split("</table>")[0]
    assert ">bot5</a>" in table and ">bot2</a>" not in table
    assert "page 2 of 2" in second and 'id="opponents-previous"' in second
    assert 'id="opponents-next"' not in second
    refused = client.get("/entrants/1?opponents=3")
    assert refused.status_code == 400 and "opponents must be at most 2" in refused.text
    lonely = client.get("/entrants/6").text
    assert "No two-player game against another entrant" in lonely


@pytest.mark.parametrize("units", [1, 2, 5, 30])
def test_a_clean_sweeps_bound_is_the_score_whose_sweep_would_be_rarer_than_5_percent(
    units: int,
) -> None:
    bound = sweep_bound(units)
    assert score_from_elo(bound) ** units == pytest.approx(0.05)
    assert bound < sweep_bound(units + 1)  # more units won, a higher bound


def pair_line(pairs: tuple[int, int, int, int, int], games: int = 0) -> stored.Pair:
    """A stored line of duplicate pairs (a's pairs by its points x 2), or of games when no pair."""
    wins = pairs[4] * 2 + pairs[3]
    losses = pairs[0] * 2 + pairs[1]
    draws = pairs[2] * 2
    n = games or 2 * sum(pairs)
    return stored.Pair(1, 2, n, wins, losses, draws, 0, 0, n, 0, 0, 0, 0, 0, pairs)


def shown(p: stored.Pair) -> dict[str, object]:
    return dict(head_to_head._pairing(head_to_head.line(p, "a", "b"), p.a, p.b)["elo"])


def test_a_clean_sweep_gets_a_one_sided_bound_and_a_los_of_0_or_100_percent() -> None:
    won = shown(pair_line((0, 0, 0, 0, 5)))
    assert won["sweep"] == "won" and won["los"] == 1.0 and won["elo"] is None
    assert won["elo_low"] == pytest.approx(elo_from_score(0.05 ** (1 / 5)))
    assert won["elo_high"] is None
    lost = shown(pair_line((0, 0, 0, 0, 5)).turned())
    assert lost["sweep"] == "lost" and lost["los"] == 0.0
    assert lost["elo_high"] == pytest.approx(-elo_from_score(0.05 ** (1 / 5)))
    # Games, no pairs (trinomial): four games won.
    games = shown(stored.Pair(1, 2, 4, 4, 0, 0, 0, 0, 4, 0, 0, 4, 0, 0, (0, 0, 0, 0, 0)))
    assert games["sweep"] == "won" and games["pairs"] == 0
    assert games["elo_low"] == pytest.approx(elo_from_score(0.05 ** (1 / 4)))
    # Every pair split (a win each side): all alike, no sweep, no figure.
    split = shown(pair_line((0, 0, 5, 0, 0)))
    assert split["regularized"] is True and split["sweep"] is None
    assert (split["elo"], split["elo_low"], split["los"]) == (None, None, None)
    # A spread: the estimate, no sweep.
    spread = shown(pair_line((0, 1, 2, 3, 4)))
    assert spread["sweep"] is None and spread["regularized"] is False
    assert isinstance(spread["elo"], float) and isinstance(spread["los"], float)


def test_the_page_shows_a_sweeps_bound_and_its_los(client: TestClient) -> None:
    html = client.get("/events/1").text
    table = html[html.index('id="pairings"') :].split("</table>")[0]
    row = next(r for r in table.split("<tr>") if ">bot1</a>" in r and ">bot2</a>" in r)
    bound = sweep_bound(3)
    assert f"&gt; {bound:+.0f} <span" in row and "(95%, a clean sweep)</span> 3 games" in row
    assert row.rstrip().endswith('<td class="num">100%</td></tr>')


def test_the_duplicate_sets_column_is_shown_only_where_a_deal_was_played_twice(
    client: TestClient,
) -> None:
    """Each game of this event is a deal of its own: no column for the sets (the built tournament,
    on duplicate deals, has it: test_api)."""
    assert client.get("/api/events/1").json()["duplicate_sets"] is False
    html = client.get("/events/1").text
    assert "duplicate sets" not in html[html.index('id="pairings"') :].split("</thead>")[0]


def test_between_the_two_caps_the_head_to_head_line_names_the_crosstable_and_opponents_pages(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 45: for 33 to 40 entrants head to head was left out with a line that named no other
    place to find it, and the board had no link to each entrant's opponents."""
    monkeypatch.setattr(head_to_head, "MAX_PAIRING_ENTRANTS", 4)
    data = client.get("/api/events/1").json()
    assert data["pairings"] is None and data["crosstable"] is not None
    assert data["pairings_omitted"] == (
        "head to head is shown for events of up to 4 entrants; this one has 6: the crosstable "
        "below gives each two entrants' score, and each entrant's opponents, with the Elo and LOS "
        "against each, are on its page"
    )
    html = client.get("/events/1").text
    line = html[html.index('id="pairings-omitted"') :].split("</p>")[0]
    assert ">Head to head is shown" in line and "the crosstable below gives" in line
    assert "with the Elo and LOS against each" in line and "“opponents” link" in line
    board = html[html.index('id="leaderboard"') :].split("</table>")[0]
    for i in range(1, FIELD + 1):
        assert f'href="/entrants/{i}?board=1#opponents">opponents</a>' in board
    # Above both caps, the line names only the opponents pages (no crosstable is shown).
    monkeypatch.setattr(head_to_head, "MAX_CROSSTABLE_ENTRANTS", 4)
    data = client.get("/api/events/1").json()
    assert data["crosstable"] is None
    assert data["pairings_omitted"].endswith(
        "this one has 6: each entrant's opponents, with the Elo and LOS against each, are on its page"
    )
