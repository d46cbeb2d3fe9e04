"""The pages in a real browser: Debian's headless Chromium driven by Playwright (which cannot download
a browser of its own here). Every page loads with no script error and no request to another host; the
leaderboard shows the ledger's rows and sorts; the entrant's chart is drawn; the replay steps by keys
and buttons and its scores change; a live match is followed to its end."""

from __future__ import annotations

import shlex
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, sync_playwright
from web_helpers import Referee, WebServer, crowd_ledger, query, stored_record

from arena.ledger import Ledger
from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2
from arena_bot import run
from arena_bot.greedy_bot import GreedyBot
from arena_bot.random_bot import RandomBot

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]  # one module fixture

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package (.ci/run installs it)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 60_000  # for anything a loaded machine may be slow to show
PY = shlex.quote(sys.executable)


def launch(p: Any) -> Browser:
    if not CHROMIUM.exists():
        pytest.fail(
            f"no browser at {CHROMIUM}: install Debian's chromium (apt-get install chromium)"
        )
    browser: Browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    return browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = launch(p)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def site(built_ledger: Path) -> Iterator[WebServer]:
    with WebServer(built_ledger) as server:
        yield server


class Watch:
    """A page with its script errors and the hosts it asked anything of."""

    def __init__(self, page: Page, origin: str) -> None:
        self.page = page
        self.origin = origin.rstrip("/")
        self.errors: list[str] = []
        self.foreign: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("request", self._request)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def _request(self, request: Request) -> None:
        if not (request.url.startswith(self.origin) or request.url.startswith("data:")):
            self.foreign.append(request.url)


@pytest.fixture
def page(browser: Browser, site: WebServer) -> Iterator[Watch]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    watch = Watch(context.new_page(), site.url)
    page = watch.page
    page.set_default_timeout(WAIT_MS)
    try:
        yield watch
    finally:
        context.close()
    assert watch.errors == [], "no script error or failed load on any page"
    assert watch.foreign == [], "nothing is loaded from another host"


def test_every_page_loads(page: Watch, site: WebServer, built_ledger: Path) -> None:
    [(pooled,)] = query(built_ledger, "SELECT id FROM boards WHERE kind = 'pooled'")
    for path, heading in [
        ("", "Tournaments and competitions"),
        ("events/1", "Web <fixture> & co"),
        (f"boards/{pooled}", "two-handed: every tournament"),
        ("entrants/1", "random"),
        ("games", "Games"),
        ("games?outcome=normal&event=1", "Games"),
        ("games/1", "Game 1"),
        ("live", "Live matches"),
    ]:
        response = page.page.goto(site.url + path)
        assert response is not None and response.status == 200, path
        assert heading in page.page.inner_text("h1"), path
    page.page.goto(site.url + "games/999")
    assert page.page.inner_text("#error-message") == "no game 999"
    page.errors.clear()  # the 404 of that page is the expected failed load


def test_the_leaderboard_shows_the_ledgers_rows_and_sorts(
    page: Watch, site: WebServer, built_ledger: Path
) -> None:
    led = Ledger(built_ledger)
    try:
        expected = led.leaderboard(tournament="Web <fixture> & co")
    finally:
        led.close()
    p = page.page
    p.goto(site.url + "events/1")

    def rows() -> list[list[str]]:
        return [
            [c.strip() for c in r.split("\t")]
            for r in p.locator("#leaderboard tbody tr").all_inner_texts()
        ]

    shown = rows()
    assert [r[:8] for r in shown] == [
        [
            str(i),
            b.entrant,
            b.version,
            "",
            f"{b.exposed:.2f}",
            f"{b.mu:.2f}",
            f"{b.sigma:.2f}",
            str(b.games),
        ]
        for i, b in enumerate(expected, start=1)
    ]
    assert all("%" in r[8] and "[" in r[8] for r in shown), "win rates with their intervals"
    p.click("#leaderboard th[data-key='sigma']")
    sigmas = [float(r[6]) for r in rows()]
    assert sigmas == sorted(sigmas)
    p.click("#leaderboard th[data-key='sigma']")
    assert [float(r[6]) for r in rows()] == sorted(sigmas, reverse=True)
    p.click("#leaderboard th[data-key='entrant']")
    assert [r[1] for r in rows()] == sorted(b.entrant for b in expected)
    p.click("#leaderboard tbody tr:first-child a")
    p.wait_for_selector("#entrant-name")
    assert p.inner_text("#entrant-name") == sorted(b.entrant for b in expected)[0]


def test_an_entrants_chart_is_drawn(page: Watch, site: WebServer) -> None:
    p = page.page
    p.goto(site.url + "entrants/1")
    p.wait_for_selector("#chart[data-rendered='true'] canvas")
    assert p.get_attribute("#chart", "data-points") == "4"
    assert p.locator("#recent-games tbody tr").count() == 4


# Words (runs of letters, digits and marks between spaces, hyphens and slashes, where a line may end)
# whose text is laid out on more than one line: a word broken mid-word.
BROKEN_WORDS_JS = """() => {
  const broken = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement || !node.parentElement.offsetParent) continue;  // not shown
    for (const match of node.textContent.matchAll(/[^\\s\\-\u2013\u2014/]+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const tops = new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top)));
      if (tops.size > 1) broken.push(match[0]);
    }
  }
  return broken;
}"""


def test_the_event_page_fits_a_narrow_screen_with_no_word_broken(
    browser: Browser, site: WebServer
) -> None:
    """At 390 px (a phone) the page does not scroll sideways, no word wraps mid-word, and the wide
    tables (the leaderboard, head to head, the crosstable) scroll in boxes of their own."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    watch = Watch(context.new_page(), site.url)
    p = watch.page
    p.set_default_timeout(WAIT_MS)
    try:
        for path in ("events/1", "entrants/1"):
            p.goto(site.url + path)
            width = p.evaluate(
                "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            assert width[0] <= width[1], f"{path} scrolls sideways: {width}"
            assert p.evaluate(BROKEN_WORDS_JS) == [], path
        p.goto(site.url + "events/1")
        for table in ("#leaderboard", "#pairings", "#crosstable"):
            box = p.locator(f".scroll:has({table})")
            assert box.count() == 1, table
            sizes = box.evaluate("(e) => [e.scrollWidth, e.clientWidth]")
            assert sizes[1] <= 390, table
        wide = p.locator(".scroll:has(#leaderboard)").evaluate(
            "(e) => e.scrollWidth > e.clientWidth"
        )
        assert wide, "the leaderboard is wider than a phone: it scrolls in its box"
    finally:
        context.close()
    assert watch.errors == [] and watch.foreign == []


def test_the_charts_legend_shows_the_latest_values_before_any_hover(
    page: Watch, site: WebServer
) -> None:
    p = page.page
    p.goto(site.url + "entrants/1")
    p.wait_for_selector("#chart[data-rendered='true'] canvas")
    history = p.evaluate("() => JSON.parse(document.getElementById('history-data').textContent)")
    last = history[-1]
    expected = [
        f"{last['n']} (game {last['game_id']})",
        f"{last['mu']:.2f}",
        f"{last['mu'] - 3 * last['sigma']:.2f}",
        f"{last['mu'] + 3 * last['sigma']:.2f}",
    ]

    def legend() -> list[str]:
        return [t.strip() for t in p.locator("#chart .u-legend .u-value").all_inner_texts()]

    assert legend() == expected
    box = p.locator("#chart .u-over").bounding_box()
    assert box is not None
    p.mouse.move(box["x"] + 2, box["y"] + box["height"] / 2)  # over the start: its values
    p.wait_for_function(
        "() => document.querySelector('#chart .u-legend .u-value').textContent.includes('start')"
    )
    p.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] + 150)  # away again
    p.wait_for_function(
        f"() => document.querySelector('#chart .u-legend .u-value').textContent === {expected[0]!r}"
    )
    assert legend() == expected


def test_the_replay_steps_and_its_scores_change(
    page: Watch, site: WebServer, built_ledger: Path
) -> None:
    record = stored_record(built_ledger, 1)
    steps = len(record.games[0].decisions)
    p = page.page
    p.goto(site.url + "games/1")
    p.wait_for_selector("#position[data-step='0']")

    def scores() -> tuple[str, str]:
        return p.inner_text("#score-0"), p.inner_text("#score-1")

    def step() -> int:
        return int(p.get_attribute("#position", "data-step") or -1)

    assert scores() in {("0", "0"), ("10", "0"), ("0", "10")}  # 10: a seven turned up
    start = scores()
    p.locator("body").press("ArrowRight")
    assert step() == 1
    pressed = 1
    while scores() == start and pressed < steps:
        p.keyboard.press("ArrowRight")
        pressed += 1
    assert scores() != start, "the scores change as the game is stepped through"
    assert step() == pressed
    p.keyboard.press("ArrowLeft")
    assert step() == pressed - 1
    p.click("#next")
    assert step() == pressed
    p.keyboard.press("End")
    assert step() == steps
    assert [int(s) for s in scores()] == record.games[0].result["scores"]
    assert "game over" in p.inner_text("#step-lines")
    p.click("#first")
    assert step() == 0
    # both hands face up in the full view
    assert p.locator("#seat-1 .hand .card.back").count() == 0
    assert p.locator("#seat-1 .hand .card").count() == 8
    # seat 0's view: its own cards face up, the other seat's hidden
    p.select_option("#view", "0")
    p.wait_for_selector("#seat-1 .hand .card.back")
    assert p.locator("#seat-1 .hand .card:not(.back)").count() == 0
    assert p.locator("#seat-1 .hand .card.back").count() == 8
    assert p.locator("#seat-0 .hand .card:not(.back)").count() == 8
    p.keyboard.press("End")
    assert [int(s) for s in scores()] == record.games[0].result["scores"]


class SlowGreedy(GreedyBot):
    """Takes a moment over each move, so that the match is watched while it runs."""

    def decide(self, *args: Any) -> Any:
        time.sleep(0.02)
        return super().decide(*args)


class SlowRandom(RandomBot):
    def decide(self, *args: Any) -> Any:
        time.sleep(0.02)
        return super().decide(*args)


def test_a_live_match_is_followed_to_its_end(browser: Browser, built_ledger: Path) -> None:
    referee = Referee()
    try:
        with grpc.insecure_channel(referee.address) as channel:
            admin = admin_pb2_grpc.AdminStub(channel)
            started = admin.StartMatch(
                admin_pb2.StartMatchRequest(
                    variant="two-handed",
                    seats=[admin_pb2.SeatSpec(name="greedy"), admin_pb2.SeatSpec(name="random")],
                    seed=5,
                    time_control=bot_pb2.TimeControl(budget_ms=5000, bank_ms=60000, grace_ms=1000),
                    connect_timeout_ms=120_000,
                ),
                metadata=referee.metadata,
            )
            match_id = started.match_id
            with WebServer(built_ledger, server=referee.address, admin_token=referee.token) as site:
                context = browser.new_context()
                watch = Watch(context.new_page(), site.url)
                p = watch.page
                p.set_default_timeout(WAIT_MS)
                p.goto(site.url + "live")
                p.click(f"#matches a:has-text('{match_id}')")
                p.wait_for_selector("#live-status.status-running")
                # the match waits for its remote bots: they dial in now, with the page watching
                bots = [SlowGreedy(), SlowRandom(3)]
                threads = [
                    threading.Thread(target=run, args=(bot, started.bot_address, t.token))
                    for bot, t in zip(bots, started.tokens, strict=True)
                ]
                for t in threads:
                    t.start()
                p.wait_for_selector("#all-lines li:nth-child(2)")
                assert referee.manager.matches[match_id].status == "running", (
                    "the page shows the match's events while it is played"
                )
                p.wait_for_selector("#live-status.status-finished", timeout=180_000)
                for t in threads:
                    t.join(60)
                info = admin.GetMatch(
                    admin_pb2.GetMatchRequest(match_id=match_id), metadata=referee.metadata
                )
                [game] = info.games
                final = [p.inner_text("#score-0"), p.inner_text("#score-1")]
                assert final == [str(s) for s in game.scores]
                row = p.inner_text("#results-table tbody tr")
                assert "normal" in row
                assert f"greedy {game.scores[0]}" in row and f"random {game.scores[1]}" in row
                entry = referee.finished(match_id)
                assert entry.record is not None
                events = entry.record.games[0].events
                lines = p.locator("#all-lines li").all_inner_texts()
                assert lines == ["game 1", *events], "every public event, in order, and no other"
                assert watch.errors == [] and watch.foreign == []
                context.close()
    finally:
        referee.close()


@pytest.fixture(scope="module")
def crowd_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    path = tmp_path_factory.mktemp("crowd") / "ledger.sqlite"
    crowd_ledger(path)
    with WebServer(path) as server:
        yield server


@pytest.fixture
def crowd_page(browser: Browser, crowd_site: WebServer) -> Iterator[Watch]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    watch = Watch(context.new_page(), crowd_site.url)
    watch.page.set_default_timeout(WAIT_MS)
    try:
        yield watch
    finally:
        context.close()
    assert watch.errors == [] and watch.foreign == []


def test_the_board_pages_searches_and_shows_an_entrants_own_line(
    crowd_page: Watch, crowd_site: WebServer
) -> None:
    p = crowd_page.page
    first_cells = "#leaderboard tbody tr td:first-child"
    p.goto(crowd_site.url + "events/1")
    assert p.locator("#leaderboard tbody tr").count() == 100
    assert "page 1 of 3" in p.inner_text("#board-pager")
    p.click("#board-next")
    p.wait_for_url("**/events/1?page=2")
    ranks = [int(t) for t in p.locator(first_cells).all_inner_texts()]
    assert ranks == list(range(101, 201))
    p.fill("#board-search input[name=q]", "bot24")
    p.click("#board-search button")
    p.wait_for_url("**/events/1?q=bot24")
    names = p.locator("#leaderboard tbody tr td:nth-child(2)").all_inner_texts()
    assert sorted(names) == [f"bot24{i}" for i in range(10)]
    assert "10 entrants named like" in p.inner_text("#board-found")
    p.goto(crowd_site.url + "entrants/237")
    rank = int(p.inner_text("a.rank"))
    p.click("a.rank")
    p.wait_for_url("**/events/1?entrant=237#leaderboard")
    mine = p.locator("#shown-entrant")
    assert mine.is_visible()
    assert mine.locator("td").nth(0).inner_text() == str(rank)
    assert mine.locator("td").nth(1).inner_text() == "bot237"


def test_the_games_filter_offers_entrants_as_a_name_is_typed(
    crowd_page: Watch, crowd_site: WebServer
) -> None:
    p = crowd_page.page
    p.goto(crowd_site.url + "games")
    assert p.locator("#entrant-options option").count() == 0  # no name is sent with the page
    p.fill("#entrant-search", "bot04")
    p.wait_for_selector('#entrant-options[data-for="bot04"]', state="attached")
    offered = [o.get_attribute("value") for o in p.locator("#entrant-options option").all()]
    assert offered == [f"bot04{i} (1)" for i in range(10)]
    p.fill("#entrant-search", "bot042 (1)")
    assert p.input_value("#entrant-id") == "42"
    p.click("#game-filters button[type=submit]")
    p.wait_for_url("**/games?*entrant=42*")
    assert p.inner_text("h1") == "Games of bot042 (1)"
    seats = set(p.locator("#games a[href^='/entrants/']").all_inner_texts())
    assert "bot042" in seats and seats <= {"bot041", "bot042", "bot043"}
