"""The author area's challenges, over HTTP against a real competition server (its submission service
in a thread; paused, so that a challenge stays open) and the web served by uvicorn: asking for one
(its bot NAME or NAME@VERSION), the service's refusals shown on the form (never a 500), the list,
cancelling, CSRF on both POSTs, and another author who can neither see nor cancel it, nor open its
games. Its games' replays are walked in a real browser (test_author_browser)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from area_helpers import Browser, Competition, example_bundle
from web_helpers import WebServer

from arena.wire.v1 import competition_pb2 as pb

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("author-area")]

IN_PLAY_SECONDS = 480.0  # both bots built and checked, on a loaded machine


class Setting:
    def __init__(self, comp: Competition, web: WebServer, ada: str, bob: str) -> None:
        self.comp, self.web, self.ada, self.bob = comp, web, ada, bob


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    """A paused competition (no game is played) with ada's and bob's bots in play, and the web."""
    folder = tmp_path_factory.mktemp("challenges")
    comp = Competition(folder, submissions={"max_challenge_games": 6})
    try:
        comp.stub.SetPaused(pb.SetPausedRequest(paused=True), metadata=comp.as_organiser())
        ada, bob = comp.add_author("ada"), comp.add_author("bob")
        sids = [
            comp.submit(ada, example_bundle(folder, "adas-bot")),
            comp.submit(bob, example_bundle(folder, "bobs-bot")),
        ]
        deadline = time.monotonic() + IN_PLAY_SECONDS
        while True:
            statuses = {s.submission_id: s.status for s in comp.status().submissions}
            if all(statuses[sid] == "active" for sid in sids):
                break
            assert not {"failed", "rejected"} & set(statuses.values()), statuses
            assert time.monotonic() < deadline, f"not in play yet: {statuses}"
            time.sleep(0.5)
        with WebServer(comp.ledger_path, submissions=comp.address) as web:
            yield Setting(comp, web, ada, bob)
    finally:
        comp.close()


@pytest.fixture
def ada(setting: Setting) -> Iterator[Browser]:
    b = Browser(setting.web.url)
    try:
        assert b.sign_in(setting.ada).status_code == 303
        yield b
    finally:
        b.close()


@pytest.fixture
def bob(setting: Setting) -> Iterator[Browser]:
    b = Browser(setting.web.url)
    try:
        assert b.sign_in(setting.bob).status_code == 303
        yield b
    finally:
        b.close()


def ask(browser: Browser, bot: str, against: str, games: str) -> tuple[int, str]:
    csrf = browser.csrf("/author/challenges")
    answer = browser.post(
        "/author/challenges", {"csrf": csrf, "bot": bot, "against": against, "games": games}
    )
    return answer.status_code, answer.headers.get("location", "") or answer.text


def test_asking_listing_and_cancelling_a_challenge(ada: Browser, bob: Browser) -> None:
    assert 'href="/author/challenges"' in ada.get("/author").text
    status, where = ask(ada, "adas-bot@1", "bobs-bot", "3")
    assert status == 303, where
    found = re.fullmatch(r"/author/challenges#challenge-(\d+)", where)
    assert found, where
    number = int(found.group(1))
    page = ada.get("/author/challenges")
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    section = page.text.split(f'id="challenge-{number}"', 1)[1].split("</section>", 1)[0]
    assert "adas-bot 1 v bobs-bot 1" in section and ">open<" in section
    assert "0-0-0 (W-L-D)" in section and "0 of 3 game(s) played" in section
    # Bob, whose bot it challenges, neither sees it nor may cancel it.
    theirs = bob.get("/author/challenges")
    assert theirs.status_code == 200 and f"challenge-{number}" not in theirs.text
    refused = bob.post(
        f"/author/challenges/{number}/cancel", {"csrf": bob.csrf("/author/challenges")}
    )
    assert refused.status_code == 404 and f"you have no challenge {number}" in refused.text
    # A cancel (and an ask) without the session's CSRF token is refused.
    for data in ({}, {"csrf": "guessed"}):
        answer = ada.post(f"/author/challenges/{number}/cancel", data)
        assert answer.status_code == 403 and "CSRF token is missing or stale" in answer.text
        asked = ada.post(
            "/author/challenges", {**data, "bot": "adas-bot", "against": "bobs-bot", "games": "1"}
        )
        assert asked.status_code == 403
    assert ">open<" in ada.get("/author/challenges").text.split(f'id="challenge-{number}"')[1]
    # Ada cancels it.
    csrf = ada.csrf("/author/challenges")
    done = ada.post(f"/author/challenges/{number}/cancel", {"csrf": csrf})
    assert done.status_code == 303
    section = ada.get("/author/challenges").text.split(f'id="challenge-{number}"', 1)[1]
    assert ">cancelled<" in section.split("</section>", 1)[0]
    assert "cancelled by its author" in section.split("</section>", 1)[0]
    again = ada.post(f"/author/challenges/{number}/cancel", {"csrf": csrf})
    assert again.status_code == 409, again.status_code
    assert f"challenge {number} is cancelled already" in again.text


@pytest.mark.parametrize(
    ("bot", "against", "games", "status", "says"),
    [
        ("adas-bot", "bobs-bot", "7", 400, "games: expected 1..6 (max_challenge_games), got 7"),
        ("adas-bot", "no-such-bot", "1", 400, "no entrant &#39;no-such-bot&#39; is in play"),
        ("bobs-bot", "adas-bot", "1", 400, "you have no bot &#39;bobs-bot&#39; in play"),
        ("adas-bot", "adas-bot", "1", 400, "a bot cannot be challenged against itself"),
        ("adas-bot", "bobs-bot@9", "1", 400, "no entrant &#39;bobs-bot@9&#39; is in play"),
        ("adas-bot", "bobs-bot", "two", 400, "games: a whole number of games"),
        ("adas-bot", "", "1", 400, "choose your bot and the entrant it plays against"),
        ("Bad Name", "bobs-bot", "1", 400, "bot: expected NAME or NAME@VERSION"),
    ],
)
def test_a_refusal_is_shown_on_the_form(
    ada: Browser, bot: str, against: str, games: str, status: int, says: str
) -> None:
    code, text = ask(ada, bot, against, games)
    assert code == status, text
    problem = re.search(r'<p class="problem" id="challenge-problem">([^<]*)</p>', text)
    assert problem, text
    assert says in problem.group(1)
    # The form keeps what was typed.
    assert f'value="{against}"' in text


def test_another_authors_challenge_games_are_not_theirs_to_open(ada: Browser, bob: Browser) -> None:
    for who in (ada, bob):
        page = who.get("/author/challenges/games/424242")
        assert page.status_code == 404 and "you have no challenge game 424242" in page.text
        frames = who.get("/author/challenges/games/424242/replay")
        assert frames.status_code == 404
    # Without a session: the sign-in page, for the replay's frames too.
    anonymous = Browser(ada.client.base_url.__str__())
    try:
        assert anonymous.get("/author/challenges").headers["location"] == "/signin"
        assert anonymous.get("/author/challenges/games/1").headers["location"] == "/signin"
        refused = anonymous.post("/author/challenges", {"bot": "a", "against": "b", "games": "1"})
        assert refused.status_code == 403
    finally:
        anonymous.close()
