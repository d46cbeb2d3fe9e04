"""The web's author area at scale: its pages' response times with 200 authors and 100,000 games.

    python benchmarks/author_web.py [--authors 200] [--games 100000] [--repeat 20]

Prepares a competition's ledger in bulk (``benchmarks/competition.py``'s ``prepare``: two active
entrants per author, ``--games`` games recorded and rated on its board, the competition paused so no
bot is run), gives one author a token and the last 200 games of each of their bots their seats'
output and decision times (as a competition keeps them) and 20 challenges of 50 games played, and starts the competition's server on it
(its submission service on a loopback port). The web app (in this process, through Starlette's test
client: routing, the calls to the submission service over gRPC, queries, templates, the whole body
read) then serves that author's pages and the organiser's, each ``--repeat`` times after a first
request. For each page: the median and slowest wall-clock time. The last line is

    page_ms <page>=<median> ...

Goal: each page under 100 ms.

The time from a bundle uploaded in the browser to its first rated game is printed by the browser
test (``tests/web/test_author_browser.py``, run with ``-s``): "from the upload in the browser to the
first rated game: N s".
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import struct
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from competition import make_spec, prepare  # a benchmark beside this one
from starlette.testclient import TestClient

from arena.competition import organiser
from arena.competition.server import CompetitionServer
from arena.competition.submission_api import serve_submissions
from arena.ledger import Ledger
from arena.ledger import competitions as store
from arena.web.app import create_app

AUTHOR_TOKEN = "benchmark-author-token-0123456789"
ORGANISER_TOKEN = "benchmark-organiser-token-0123456789"
OUTPUT_GAMES = 200  # the author's bots' last games with their output kept


def give_outputs(path: Path, seed: int = 5) -> tuple[int, list[int], int]:
    """Gives the first author a token, and their bots' last games their output: (their first
    submission's id, their bots' entrant ids, a game of theirs)."""
    rng = random.Random(seed)
    led = Ledger(path)
    conn = led.conn
    with led.transaction():
        author_id = conn.execute("SELECT min(id) FROM authors").fetchone()[0]
        conn.execute(
            "UPDATE authors SET token_hash = ? WHERE id = ?",
            (store.hash_token(AUTHOR_TOKEN), author_id),
        )
        subs = conn.execute(
            "SELECT id, entrant_id FROM submissions WHERE author_id = ? ORDER BY id", (author_id,)
        ).fetchall()
        entrants = [e for _, e in subs]
        games = [
            row
            for e in entrants
            for row in conn.execute(
                "SELECT game_id, seat, entrant_id FROM game_seats WHERE entrant_id = ? "
                "ORDER BY game_id DESC LIMIT ?",
                (e, OUTPUT_GAMES),
            )
        ]
        output = zlib.compress(("a line of the bot's output\n" * 400).encode())
        conn.executemany(
            "INSERT OR IGNORE INTO seat_reports VALUES (?, ?, 0, ?, ?, ?, ?, ?)",
            [
                (
                    g, seat, e, output, 400 * 27,
                    struct.pack("<60I", *(rng.randrange(1, 200) for _ in range(60))),
                    rng.randrange(0, 60000),
                )
                for g, seat, e in games
            ],
        )  # fmt: skip
    led.close()
    return subs[0][0], entrants, games[0][0]


CHALLENGES = 20  # the author's challenges on the challenges page
CHALLENGE_GAMES = 50  # games of each (the most one may ask for by default)


def give_challenges(path: Path, seed: int = 6) -> None:
    """Gives the first author CHALLENGES challenges of CHALLENGE_GAMES games each, played, against
    another author's bot (the challenges page lists them all, with their games)."""
    rng = random.Random(seed)
    led = Ledger(path)
    conn = led.conn
    with led.transaction():
        cid = conn.execute("SELECT min(competition_id) FROM authors").fetchone()[0]
        author_id = conn.execute("SELECT min(id) FROM authors").fetchone()[0]
        mine = conn.execute(
            "SELECT min(id) FROM submissions WHERE author_id = ?", (author_id,)
        ).fetchone()[0]
        theirs = conn.execute(
            "SELECT min(id) FROM submissions WHERE author_id != ?", (author_id,)
        ).fetchone()[0]
        at = "2026-01-01T00:00:00+00:00"
        for _ in range(CHALLENGES):
            challenge = conn.execute(
                "INSERT INTO challenges (competition_id, author_id, submission_id, opponent_id, "
                "games, rotations, status, created_at, finished_at) "
                "VALUES (?, ?, ?, ?, ?, 1, 'done', ?, ?)",
                (cid, author_id, mine, theirs, CHALLENGE_GAMES, at, at),
            ).lastrowid
            conn.executemany(
                "INSERT INTO challenge_games (challenge_id, number, deal, rotation, seed, seats, "
                "outcome, detail, culprit, challenger_seat, scores, places, record, encoding, "
                "schema, finished_at) VALUES (?, ?, ?, 0, ?, '[\"a\", \"b\"]', 'normal', '', "
                "-1, 0, ?, ?, x'7b7d', 'json', 1, ?)",
                [
                    (challenge, n, n, rng.randrange(2**31), f"[{rng.randrange(2000)}, 1000]",
                     f"[{rng.randrange(2)}, 0]", at)
                    for n in range(CHALLENGE_GAMES)
                ],
            )  # fmt: skip
    led.close()


def timed(client: TestClient, url: str, repeat: int) -> tuple[float, list[float]]:
    def once() -> float:
        start = time.perf_counter()
        answer = client.get(url)
        elapsed = time.perf_counter() - start
        assert answer.status_code == 200, (url, answer.status_code, answer.text[:300])
        return elapsed * 1000

    first = once()
    return first, [once() for _ in range(repeat)]


def sign_in(client: TestClient, token: str) -> None:
    form = client.get("/signin").text
    csrf = form.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    answer = client.post("/signin", data={"csrf": csrf, "token": token}, follow_redirects=False)
    assert answer.status_code == 303, answer.text[:300]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--authors", type=int, default=200)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path, data = folder / "ledger.sqlite", folder / "data"
        start = time.perf_counter()
        prepare(path, data, 2 * args.authors, args.games)
        sid, _, game = give_outputs(path)
        give_challenges(path)
        organiser.take_token(data, ORGANISER_TOKEN)
        print(
            f"ledger: {args.authors} authors, {2 * args.authors} entrants, {args.games} games "
            f"({time.perf_counter() - start:.1f} s to prepare)"
        )
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        led = Ledger(path)
        spec = make_spec(f"Scale {2 * args.authors} x {args.games}")
        server = CompetitionServer(spec, led, data, serve_submissions=serve_submissions)
        asyncio.run_coroutine_threadsafe(server.start(), loop).result(600)
        try:
            app = create_app(path, submissions=server.submissions_address, secure_cookies=False)
            pages = {
                "author": "/author",
                "submission": f"/author/submissions/{sid}",
                "game_log": f"/author/games/{game}",
                "challenges": "/author/challenges",
                "signin": "/signin",
            }
            results: dict[str, tuple[float, list[float]]] = {}
            with TestClient(app) as client:
                sign_in(client, AUTHOR_TOKEN)
                for name, url in pages.items():
                    results[name] = timed(client, url, args.repeat)
            with TestClient(app) as client:
                sign_in(client, ORGANISER_TOKEN)
                results["organiser"] = timed(client, "/organiser", args.repeat)
        finally:
            asyncio.run_coroutine_threadsafe(server.stop(), loop).result(120)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(30)
            led.close()
    print(f"{'page':<12} {'first ms':>9} {'median ms':>10} {'max ms':>8}")
    for name, (first, times) in results.items():
        print(f"{name:<12} {first:9.1f} {statistics.median(times):10.1f} {max(times):8.1f}")
    print(
        "page_ms "
        + " ".join(f"{name}={statistics.median(t):.1f}" for name, (_, t) in results.items())
    )


if __name__ == "__main__":
    main()
