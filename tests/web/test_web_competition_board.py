"""The web's competition board shows what ``arena compete leaderboard`` shows (issue 45): each
version in play with when it last played and the places it gained over the last 24 hours, from the
same ledger reads, for the page shown; the versions out of play listed apart, greyed, with their last
rating."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena.competition.spec import parse
from arena.ledger import Ledger
from arena.ledger.competitions import WITHDRAWN, BoardLine, Competitions
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.web import queries
from arena.web.app import create_app

BOTS = "abcdef"


def ladder(path: Path) -> tuple[int, list[BoardLine]]:
    """Six bots: 40 games two days ago, then 30 in the last hours, random pairs and winners; bot f
    withdrawn, bot e entered late (rated only today). Returns the competition's id and its board as
    the CLI reads it."""
    led = Ledger(path)
    cid = led.register(parse({"name": "Ladder"}, "c.toml"), kind="competition").id
    store = Competitions(led)
    ids, subs = {}, {}
    for bot in BOTS:
        who = store.author_of(cid, store.add_author(cid, f"author-{bot}"))
        assert who is not None
        subs[bot], _ = store.submit(cid, who.id, bot, "1", "python", bundle=bot * 64, run="r")
        ids[bot] = store.activate(subs[bot], f"bundle:{bot}")
    rng = random.Random(5)
    now = datetime.now(UTC)
    times = [now - timedelta(days=2, minutes=40 - i) for i in range(40)]
    times += [now - timedelta(hours=6) + timedelta(minutes=10 * i) for i in range(30)]
    for n, at in enumerate(times):
        a, b = rng.sample(BOTS if n >= 40 else BOTS[:4] + "f", 2)
        g = ScheduledGame(f"c{n:09d}", n, 0, n, 0, 0, n, ((a,), (b,)), (a, b))
        led.plan(cid, [g])
        ranking = [0, 1] if rng.randrange(3) else [1, 0]  # the first drawn wins two games in three
        result = {"sides": [[0], [1]], "ranking": ranking, "scores": [1000, 500]}
        rec = {"games": [{"outcome": "normal", "detail": "", "culprit": -1, "result": result}]}
        led.record_game(cid, "two-handed", g, {a: ids[a], b: ids[b]}, FinishedGame.from_data(rec))
        led.conn.execute(
            "UPDATE games SET finished_at = ? WHERE key = ? AND tournament_id = ?",
            (at.isoformat(timespec="seconds"), g.key, cid),
        )
    led.conn.commit()
    store.set_status(subs["f"], WITHDRAWN, "withdrawn by its author")
    board = store.board(cid)
    led.close()
    return cid, board


def change_text(line: BoardLine) -> str:
    if not line.in_play:
        return "-"
    if line.rank_change is None:
        return "new"
    return f"{line.rank_change:+d}" if line.rank_change else "="


def page_rows(html: str) -> list[list[str]]:
    table = html[html.index('id="leaderboard"') :].split("</table>")[0]
    body = table.split("<tbody>")[1]
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in body.split("</tr>")
        if "<td" in row
    ]


@pytest.mark.parametrize("page_size", [100, 2])
def test_each_line_shows_last_played_and_its_rank_change_as_the_cli_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page_size: int
) -> None:
    cid, board = ladder(tmp_path / "l.sqlite")
    changes = [r.rank_change for r in board if r.in_play]
    assert any(changes) and None in changes, "the ladder moves ranks, and one entered today"
    monkeypatch.setattr(queries, "BOARD_PAGE", page_size)
    with TestClient(create_app(tmp_path / "l.sqlite")) as client:
        shown: list[list[str]] = []
        api: list[dict[str, object]] = []
        pages = -(-len(board) // page_size)
        for page in range(1, pages + 1):
            html = client.get(f"/events/{cid}?page={page}").text
            assert "<th" in html and ">last played</th>" in html and ">24 h</th>" in html
            shown += page_rows(html)
            api += client.get(f"/api/events/{cid}?page={page}").json()["leaderboard"]
            if page == pages:
                assert html.count('class="out-of-play"') == 1
    assert [r["entrant"] for r in api] == [r.bot for r in board]
    assert [(r["last_played"], r["rank_change"]) for r in api] == [
        (r.last_played, r.rank_change if r.in_play else None) for r in board
    ]
    for row, line in zip(shown, board, strict=True):
        assert row[0] == (str(line.rank) if line.in_play else "\u2013")
        assert row[1] == line.bot
        assert row[-2] == line.last_played.replace("T", " ").removesuffix("+00:00")
        assert row[-1] == change_text(line)
    # The withdrawn version is listed last, unranked, greyed, with its last rating.
    assert board[-1].bot == "f" and not board[-1].in_play
    assert shown[-1][5] == f"{board[-1].exposed:.2f}"


def test_a_tournaments_board_has_no_such_columns(client: TestClient) -> None:
    html = client.get("/events/1").text
    assert 'id="leaderboard"' in html and ">last played</th>" not in html
    assert "last_played" not in client.get("/api/events/1").json()["leaderboard"][0]
