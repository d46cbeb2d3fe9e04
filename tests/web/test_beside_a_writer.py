"""The web never holds up a tournament: while a writer records games one transaction at a time (as a
tournament run does), pages and the API are read over and over; every game is recorded without a lock
error, every request is answered, and the pages follow the games as they come."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from arena.ledger import Ledger, LedgerError
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.tournament.spec import TournamentSpec, parse
from arena.web.app import create_app

GAMES = 300
ENTRANTS = 12
# The writer records its games in this many runs, each begun once the reader has answered one more
# request since the last: on a fast machine the writes would otherwise be over before a page is read.
RUNS = 12
PACE_TIMEOUT = 60.0  # seconds the writer waits for the reader, at most (it must not hang the test)


def spec() -> TournamentSpec:
    return parse(
        {
            "name": "Beside a writer",
            "variant": "two-handed",
            "entrants": [
                {"name": f"bot{i:02d}", "command": f"bot --id {i}", "version": "1"}
                for i in range(ENTRANTS)
            ],
        },
        "test",
    )


def schedule(s: TournamentSpec, rng: random.Random) -> list[ScheduledGame]:
    names = [e.name for e in s.entrants]
    out = []
    for i in range(GAMES):
        a, b = rng.sample(names, 2)
        out.append(
            ScheduledGame(f"g{i:06d}", i, 0, i, 0, 0, rng.getrandbits(40), ((a,), (b,)), (a, b))
        )
    return out


def result(game: ScheduledGame, winner: int) -> dict[str, Any]:
    scores = [1000, 700] if winner == 0 else [700, 1000]
    return {
        "match_id": game.key,
        "variant": "two-handed",
        "players": [list(p) for p in game.seats],
        "games": [
            {
                "index": 0,
                "seed": game.seed,
                "outcome": "normal",
                "detail": "",
                "culprit": -1,
                "decisions": [],
                "result": {"sides": [[0], [1]], "ranking": [winner, 1 - winner], "scores": scores},
            }
        ],
    }


def test_pages_read_beside_a_writer_that_is_never_held_up(tmp_path: Path) -> None:
    rng = random.Random(5)
    path = tmp_path / "ledger.sqlite"
    s = spec()
    games = schedule(s, rng)
    led = Ledger(path)
    tid, _ = led.tournament(s)
    ids = led.entrant_ids(s.entrants)
    led.plan(tid, games)
    # a first game, so that there is a board to show
    led.record_game(tid, "two-handed", games[0], ids, FinishedGame.from_data(result(games[0], 0)))

    errors: list[Exception] = []
    done = threading.Event()
    read = threading.Condition()
    statuses: list[tuple[str, int]] = []

    def read_at_least(k: int) -> None:
        with read:
            read.wait_for(lambda: len(statuses) >= k, PACE_TIMEOUT)

    def write() -> None:
        per_run = -(-(GAMES - 1) // RUNS)
        try:
            for n, game in enumerate(games[1:]):
                if n % per_run == 0:
                    read_at_least(n // per_run + 1)
                led.record_game(
                    tid,
                    "two-handed",
                    game,
                    ids,
                    FinishedGame.from_data(result(game, rng.randrange(2))),
                )
        except LedgerError as exc:
            errors.append(exc)
        finally:
            done.set()

    seen_played: list[int] = []
    with TestClient(create_app(path)) as client:
        writer = threading.Thread(target=write)
        writer.start()
        urls = ["/", "/events/1", "/entrants/1", "/games", "/api/games?limit=100", "/api/events/1"]
        i = 0
        while not done.is_set():
            url = urls[i % len(urls)]
            status = client.get(url).status_code
            with read:
                statuses.append((url, status))
                read.notify_all()
            if url == "/api/events/1":
                seen_played.append(client.get(url).json()["event"]["played"])
            i += 1
        writer.join()
        final = client.get("/api/events/1").json()
    led.close()

    # a write held up for longer than the ledger's busy timeout (10 s) would have failed here
    assert not errors, f"the writer was held up: {errors}"
    assert len(statuses) >= len(urls), "the pages were read while the games were written"
    assert all(code == 200 for _, code in statuses), [s for s in statuses if s[1] != 200]
    assert final["event"]["played"] == GAMES
    assert sum(r["played"] for r in final["leaderboard"]) == 2 * GAMES
    assert seen_played == sorted(seen_played), "the pages follow the games as they come"
