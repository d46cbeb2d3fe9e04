"""Screenshots of the web pages for the README, taken with Playwright and Debian's Chromium.

    .venv/bin/python tests/web/screenshots.py arena.sqlite docs/screenshots

Serves the app over LEDGER (make demo's arena.sqlite, say) on a free loopback port and writes
leaderboard.png (the first event's board), entrant.png (its leader's page) and replay.png (a game of
that event at a step with declared cards on the table) into the folder.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright
from web_helpers import WebServer

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def fetch(url: str) -> object:
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.load(response)


def interesting_step(frames: list[dict[str, object]]) -> int:
    """A step with declarations on the table and a card in the trick, in the full view."""
    for i, f in enumerate(frames):
        seats = f["seats"]
        assert isinstance(seats, list)
        if sum(len(s["table"]) for s in seats) >= 4 and f["trick"]:
            return i
    return len(frames) // 3


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("ledger", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with WebServer(args.ledger) as site, sync_playwright() as p:
        base = site.url
        events = fetch(base + "api/events")["events"]  # type: ignore[index]
        if not events:
            sys.exit(f"{args.ledger}: no event to show")
        event = events[-1]
        board = fetch(f"{base}api/events/{event['id']}")["leaderboard"]  # type: ignore[index]
        games = fetch(f"{base}api/games?event={event['id']}&limit=500")["games"]  # type: ignore[index]
        game = games[-1]
        frames = fetch(f"{base}api/games/{game['id']}/replay")["frames"]  # type: ignore[index]
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 800}, device_scale_factor=1)
        page.goto(f"{base}events/{event['id']}")
        page.screenshot(path=args.out / "leaderboard.png", full_page=True)
        page.goto(f"{base}entrants/{board[0]['entrant_id']}")
        page.wait_for_selector("#chart[data-rendered='true'] canvas")
        page.screenshot(path=args.out / "entrant.png", full_page=True)
        page.goto(f"{base}games/{game['id']}#view=full&step={interesting_step(frames)}")
        page.wait_for_selector("#position[data-step]")
        page.locator("#player").screenshot(path=args.out / "replay.png")
        browser.close()
    for name in ("leaderboard", "entrant", "replay"):
        print(args.out / f"{name}.png")


if __name__ == "__main__":
    main()
