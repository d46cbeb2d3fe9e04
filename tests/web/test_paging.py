"""Pages that cost what they show on a board of many entrants: the leaderboard 100 lines a page, a
search by name, an entrant's own line reachable from its page; the games page's entrant filter a
search (a small JSON endpoint), never a list of every entrant."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from web_helpers import CROWD, crowd_ledger

from arena.ledger import Ledger
from arena.ledger.leaderboard import placings
from arena.web.app import create_app


@pytest.fixture(scope="module")
def crowd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("crowd") / "ledger.sqlite"
    crowd_ledger(path)
    return path


@pytest.fixture(scope="module")
def client(crowd: Path) -> Iterator[TestClient]:
    with TestClient(create_app(crowd)) as c:
        yield c


def whole(path: Path) -> list[tuple[int, int]]:
    led = Ledger(path)
    try:
        return [(p.rank, p.entrant_id) for p in placings(led.conn, 1)]
    finally:
        led.close()


def rows(html: str) -> list[tuple[int, int]]:
    """(rank, entrant id) of the leaderboard's rows on a page."""
    body = html.split('id="leaderboard"', 1)[1].split("</table>", 1)[0]
    found = re.findall(r'<td class="num">(\d+)</td><td><a href="/entrants/(\d+)\?board=1"', body)
    return [(int(r), int(e)) for r, e in found]


def test_the_board_comes_100_lines_a_page_in_the_whole_boards_order(
    client: TestClient, crowd: Path
) -> None:
    expected = whole(crowd)
    assert len(expected) == CROWD
    pages = [client.get(f"/api/events/1?page={n}").json() for n in (1, 2, 3)]
    assert [len(p["leaderboard"]) for p in pages] == [100, 100, 50]
    assert {(p["total"], p["pages"]) for p in pages} == {(CROWD, 3)}
    got = [(r["rank"], r["entrant_id"]) for p in pages for r in p["leaderboard"]]
    assert got == expected
    html = client.get("/events/1?page=2").text
    assert rows(html) == expected[100:200]
    assert "page 2 of 3" in html and 'id="board-next"' in html and 'id="board-previous"' in html
    assert rows(client.get("/events/1").text) == expected[:100]
    answer = client.get("/events/1?page=4")
    assert answer.status_code == 400 and "page must be at most 3" in answer.text
    assert client.get("/api/boards/1?page=0").status_code == 400


def test_a_search_by_name_gives_the_matching_lines_with_their_ranks(
    client: TestClient, crowd: Path
) -> None:
    rank = dict((e, r) for r, e in whole(crowd))
    found = client.get("/api/events/1?q=BOT1").json()
    ids = [r["entrant_id"] for r in found["leaderboard"]]
    assert found["total"] == 100 and ids == sorted(range(100, 200), key=rank.__getitem__)
    assert all(r["rank"] == rank[r["entrant_id"]] for r in found["leaderboard"])
    html = client.get("/events/1?q=bot24").text
    assert rows(html) == sorted((rank[e], e) for e in range(240, 250))
    assert "10 entrants named like" in html
    assert "No entrant of this board" in client.get("/events/1?q=%25").text  # % is a character
    assert client.get("/events/1?q=" + "x" * 101).status_code == 400


def test_an_entrants_own_line_is_reachable_from_its_page(client: TestClient, crowd: Path) -> None:
    rank = dict((e, r) for r, e in whole(crowd))
    entrant = 237
    page = client.get(f"/entrants/{entrant}").text
    link = re.search(r'<a class="rank" href="([^"]+)"[^>]*>(\d+)</a>', page)
    assert link is not None and int(link.group(2)) == rank[entrant]
    shown = client.get(link.group(1).split("#")[0]).text
    assert (rank[entrant], entrant) in rows(shown)
    assert f"page {1 + (rank[entrant] - 1) // 100} of 3" in shown
    assert re.search(rf'id="shown-entrant"><td class="num">{rank[entrant]}</td>', shown)
    data = client.get(f"/api/boards/1?entrant={entrant}", follow_redirects=True).json()
    assert data["rank"] == rank[entrant]
    assert client.get("/events/1?entrant=99999").status_code == 404


def test_the_games_page_searches_entrants_instead_of_listing_them(client: TestClient) -> None:
    html = client.get("/games").text
    assert "bot123" not in html and html.count("<option") < 20  # outcomes and events only
    found = client.get("/api/entrants?q=OT12&limit=5").json()["entrants"]
    assert [e["name"] for e in found] == [f"bot{i}" for i in range(120, 125)]
    assert len(client.get("/api/entrants?q=bot").json()["entrants"]) == 20
    assert client.get("/api/entrants").status_code == 400
    # Without the page's script the form sends the name: one of that very name is chosen ...
    chosen = client.get("/games?who=bot042").text
    assert "Games of bot042" in chosen
    assert re.findall(r'href="/entrants/(\d+)"', chosen) and set(
        re.findall(r'href="/entrants/(\d+)"', chosen)
    ) <= {"41", "42", "43"}
    # ... else the page offers the entrants whose names hold it.
    offered = client.get("/games?who=bot04").text
    assert 'id="entrant-choices"' in offered
    assert sorted(re.findall(r'href="/games\?entrant=(\d+)"', offered)) == [
        str(i) for i in range(40, 50)
    ]
    assert "No entrant is named like" in client.get("/games?who=nobody").text
