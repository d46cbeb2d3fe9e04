"""The author area in a real browser (Debian's Chromium through Playwright) against a real
``arena compete serve`` and ``arena web --submissions``, each a process of its own: the organiser
signs in, adds an author (the token shown once), pauses, resumes, suspends with a reason and
reinstates; the author signs in, uploads the example Python bundle, watches it build and enter play,
opens a game's output, asks for a challenge (refused over the cap, then played), sees its result,
opens a challenge game's replay, cancels another challenge, withdraws the bot and signs out. Another author is refused that game's
output. No token appears in either process's output, nor in any URL the browser asked for.

It prints the time from the upload in the browser to the bot's first rated game."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from area_helpers import ORGANISER_TOKEN, Browser, example_bundle
from playwright.sync_api import Browser as Chromium
from playwright.sync_api import Page, sync_playwright
from test_browser import launch

from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser"), pytest.mark.timeout(1500)]

WAIT_MS = 60_000
PLAY_SECONDS = 480.0  # from the upload to the first rated game, on a loaded machine

COMPETITION = """\
name = "Browser Ladder"
variant = "rubicon"
seed = 9

[time_control]
budget_ms = 5000
bank_ms = 60000
grace_ms = 500

[matchmaking]
games_at_once = 1
pause_seconds = 0.2
duplicate = false

[submissions]
build_seconds = 120
check_seconds = 300
max_bundle_mb = 1

[server]
submissions = "127.0.0.1:{submissions}"
bots = "127.0.0.1:{bots}"
"""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Process:
    """A process of the arena's command line, its output (both streams) gathered as it comes."""

    def __init__(self, *args: str) -> None:
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "arena.cli.main", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.append(line)

    def wait_for(self, pattern: str, seconds: float = 120) -> re.Match[str]:
        deadline = time.monotonic() + seconds
        while True:
            for line in list(self.lines):
                found = re.search(pattern, line)
                if found:
                    return found
            assert self.popen.poll() is None, "".join(self.lines)
            assert time.monotonic() < deadline, f"no {pattern!r} in: {''.join(self.lines)}"
            time.sleep(0.1)

    def stop(self) -> str:
        self.popen.send_signal(2)
        try:
            self.popen.wait(60)
        finally:
            if self.popen.poll() is None:
                self.popen.kill()
        self.reader.join(10)
        return "".join(self.lines)


class Site:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        toml = folder / "ladder.toml"
        toml.write_text(COMPETITION.format(submissions=free_port(), bots=free_port()))
        (folder / "organiser.token").write_text(ORGANISER_TOKEN + "\n")
        self.ledger = folder / "ledger.sqlite"
        self.serve = Process(
            "compete", "serve", str(toml), "--ledger", str(self.ledger),
            "--organiser-token-file", str(folder / "organiser.token"),
        )  # fmt: skip
        self.address = self.serve.wait_for(r"submissions on (\S+),").group(1)
        self.web = Process(
            "web", "--ledger", str(self.ledger), "--submissions", self.address, "--port", "0"
        )
        self.url = self.web.wait_for(r"at (http://\S+)").group(1).rstrip("/")
        self.outputs = ""

    def stop(self) -> None:
        self.outputs = self.web.stop() + self.serve.stop()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    s = Site(tmp_path_factory.mktemp("author-browser"))
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chromium]:
    with sync_playwright() as p:
        b = launch(p)
        try:
            yield b
        finally:
            b.close()


def new_page(chromium: Chromium, asked: list[str]) -> Page:
    context = chromium.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.on("request", lambda r: asked.append(r.url))
    return page


def sign_in(page: Page, url: str, token: str) -> None:
    page.goto(url + "/")
    page.click("#signin-link")
    page.fill("#token", token)
    page.click("#sign-in")


def test_the_author_and_the_organiser_walk_their_areas(
    site: Site, chromium: Chromium, tmp_path: Path
) -> None:
    asked: list[str] = []
    boss = new_page(chromium, asked)
    sign_in(boss, site.url, ORGANISER_TOKEN)
    boss.wait_for_url(site.url + "/organiser")
    # Three authors: ada (in the browser), bob (her opponent, submitting over gRPC) and cy.
    tokens: dict[str, str] = {}
    for name in ("ada", "bob", "cy"):
        boss.fill("#author-name", name)
        boss.click("#add-author")
        tokens[name] = boss.inner_text("#new-token").strip()
        assert len(tokens[name]) >= 32
        boss.goto(site.url + "/organiser")
        assert tokens[name] not in boss.content(), "the token is shown once"
        assert name in boss.inner_text("#authors")
    with grpc.insecure_channel(site.address) as channel:
        stub = competition_pb2_grpc.CompetitionStub(channel)
        stub.Submit(
            pb.SubmitRequest(bundle=example_bundle(tmp_path, "bobs-bot")),
            metadata=(("authorization", f"Bearer {tokens['bob']}"),),
        )

    ada = new_page(chromium, asked)
    sign_in(ada, site.url, tokens["ada"])
    ada.wait_for_url(site.url + "/author")
    assert ada.inner_text("#signed-in-as") == "ada"
    bundle = tmp_path / "adas-bot.tar.gz"
    bundle.write_bytes(example_bundle(tmp_path, "adas-bot"))
    ada.set_input_files("#bundle", str(bundle))
    uploaded = time.monotonic()
    ada.click("#upload")
    ada.wait_for_url(re.compile(r".*/author/submissions/\d+$"))
    mine = ada.url
    # The page follows the build and the check by itself, until the bot is in play.
    ada.locator("#status", has_text=re.compile(r"^(active|failed)$")).wait_for(
        timeout=PLAY_SECONDS * 1000
    )
    assert ada.inner_text("#status") == "active", ada.inner_text("main")
    assert "active" in ada.inner_text("#history")
    deadline = uploaded + PLAY_SECONDS
    while not ada.query_selector("#games tr.rated"):
        assert time.monotonic() < deadline, "no rated game yet"
        time.sleep(1.0)
        ada.goto(mine)
    first_rated = time.monotonic() - uploaded
    print(f"\nfrom the upload in the browser to the first rated game: {first_rated:.1f} s")

    # A game's output: ada's own bot's.
    ada.click("#games tr.rated a.game-log")
    ada.wait_for_url(re.compile(r".*/author/games/\d+$"))
    game_url = ada.url
    assert "Seat" in ada.inner_text("main") and "adas-bot" in ada.inner_text("main")
    # Bob is refused ada's bot's output of that game (he played it: only his own seat is his).
    bob = Browser(site.url)
    try:
        bob.sign_in(tokens["bob"])
        theirs = bob.get(game_url.removeprefix(site.url))
        assert theirs.status_code == 200 and "adas-bot" not in theirs.text, "his own seat alone"
        assert "bobs-bot" in theirs.text
    finally:
        bob.close()
    # Cy, who played no part in it, is refused it whole, by the service's own words.
    cy = Browser(site.url)
    try:
        cy.sign_in(tokens["cy"])
        refused = cy.get(game_url.removeprefix(site.url))
        assert refused.status_code == 404 and "no bot of yours played a game" in refused.text
    finally:
        cy.close()

    # A challenge: refused over the cap (said on the form), then two games against bob's bot, played
    # between the ranked games; its result, and a game's replay. Another, cancelled.
    ada.goto(site.url + "/author")
    ada.click("#challenges-link")
    ada.wait_for_url(site.url + "/author/challenges")
    ada.fill("#challenge-bot", "adas-bot")
    ada.fill("#challenge-against", "bobs-bot@1")
    ada.fill("#challenge-games", "51")
    ada.click("#challenge")
    assert "games: expected 1..50" in ada.inner_text("#challenge-problem")
    ada.fill("#challenge-games", "2")
    ada.click("#challenge")
    ada.wait_for_url(re.compile(r".*/author/challenges#challenge-\d+$"))
    challenge = ada.url.rsplit("#", 1)[1]
    deadline = time.monotonic() + PLAY_SECONDS
    while "done" not in ada.inner_text(f"#{challenge} .status"):
        assert time.monotonic() < deadline, ada.inner_text(f"#{challenge}")
        time.sleep(1.0)
        ada.goto(site.url + "/author/challenges")
    facts = ada.inner_text(f"#{challenge}")
    assert "2 of 2 game(s) played" in facts
    won = re.search(r"(\d+)-(\d+)-(\d+) \(W-L-D\)", facts)
    assert won and sum(int(n) for n in won.groups()) == 2, facts
    ada.click(f"#{challenge} a.challenge-replay")
    ada.wait_for_url(re.compile(r".*/author/challenges/games/\d+$"))
    ada.locator("#position", has_text=re.compile(r"^step \d+ of \d+")).wait_for()
    assert ada.locator("#all-lines li").count() > 0, "the replay's commentary"
    output = ada.inner_text("#challenge-output")
    assert "adas-bot" in output and "bobs-bot" not in output, "her own bot's output alone"
    # Bob, whose bot played it, is refused her challenge's game: it is hers alone.
    bob = Browser(site.url)
    try:
        bob.sign_in(tokens["bob"])
        refused = bob.get(ada.url.removeprefix(site.url))
        assert refused.status_code == 404 and "you have no challenge" in refused.text
        assert "you have no challenge" in bob.get(ada.url.removeprefix(site.url) + "/replay").text
    finally:
        bob.close()
    ada.goto(site.url + "/author/challenges")
    ada.fill("#challenge-bot", "adas-bot")
    ada.fill("#challenge-against", "bobs-bot")
    ada.fill("#challenge-games", "50")
    ada.click("#challenge")
    ada.wait_for_url(re.compile(r".*/author/challenges#challenge-\d+$"))
    second = ada.url.rsplit("#", 1)[1]
    ada.click(f"#cancel-{second.removeprefix('challenge-')}")
    ada.wait_for_url(re.compile(r".*/author/challenges#challenge-\d+$"))
    assert "cancelled" in ada.inner_text(f"#{second} .status")

    # The organiser: pause, resume, suspend with a reason, reinstate.
    boss.goto(site.url + "/organiser")
    boss.click("#pause")
    assert boss.inner_text("#paused-state") == "paused"
    boss.click("#resume")
    assert boss.inner_text("#paused-state") == "running"
    boss.select_option("#suspend-bot", "adas-bot")
    boss.fill("#suspend-reason", "a look at its logs")
    boss.click("#suspend")
    assert "suspended: a look at its logs" in boss.inner_text("#submissions")
    ada.goto(mine)
    assert ada.inner_text("#status") == "suspended"
    assert "a look at its logs" in ada.inner_text("#reason")
    boss.select_option("#reinstate-bot", "adas-bot")
    boss.click("#reinstate")
    ada.goto(mine)
    assert ada.inner_text("#status") == "active"

    # Ada withdraws her bot (confirmed), and signs out.
    ada.goto(site.url + "/author")
    ada.click("#withdraw-adas-bot")
    ada.click("#confirm-withdraw")
    ada.wait_for_url(site.url + "/author")
    assert "withdrawn" in ada.inner_text("#bot-adas-bot")
    ada.click("#sign-out")
    ada.wait_for_url(site.url + "/")
    ada.goto(site.url + "/author")
    assert ada.url == site.url + "/signin", "signed out: the sign-in page"
    boss.click("#sign-out")

    site.stop()
    secrets = [ORGANISER_TOKEN, *tokens.values()]
    for secret in secrets:
        assert secret not in site.outputs, "a token in a process's output"
        assert not any(secret in url for url in asked), "a token in a URL"
