"""Ledger throughput: ingest, leaderboard and rating rebuild on a fresh ledger of synthetic games.

    python benchmarks/ledger.py --entrants 1000 --games 100000

Creates a fresh SQLite ledger in a temporary directory, plans one tournament of ``--games`` two-handed
games between random pairs of ``--entrants`` entrants (``Ledger.plan``), and records each game with a
random winner through ``Ledger.record_game`` (one transaction per game, in the schedule's order, as a
tournament run does). Then it times the leaderboard query, ``Ledger.rebuild_ratings``, and the floor:
the bare TrueSkill updates (``arena.rating.rate_game``) of the same games in memory. The last line is

    leaderboard_ms <N> ingest_per_second <M> rebuild_seconds <S> trueskill_floor_seconds <F>

Targets: leaderboard under 100 ms; rebuild at most 1.5 times the floor.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from arena.ledger import Ledger
from arena.ledger.rows import ScheduledGame
from arena.rating import Rating, initial, rate_game
from arena.tournament.spec import TournamentSpec, parse

VARIANT = "two-handed"


def make_spec(entrants: int) -> TournamentSpec:
    return parse(
        {
            "name": f"Ledger benchmark: {entrants} entrants",
            "variant": VARIANT,
            "entrants": [
                {"name": f"bot{i:05d}", "command": f"bot --id {i}", "version": "1"}
                for i in range(entrants)
            ],
        },
        "benchmarks/ledger.py",
    )


def make_games(spec: TournamentSpec, games: int, rng: random.Random) -> list[ScheduledGame]:
    names = [e.name for e in spec.entrants]
    out = []
    for i in range(games):
        a, b = rng.sample(names, 2)
        out.append(
            ScheduledGame(
                key=f"g{i:09d}",
                ord=i,
                round=0,
                pairing=i,
                deal=0,
                rotation=0,
                seed=rng.getrandbits(48),
                seats=((a,), (b,)),
                group=(a, b),
            )
        )
    return out


def make_record(game: ScheduledGame, winner: int) -> dict[str, Any]:
    """The least a record needs for the ledger: one game's outcome and result."""
    scores = [1000, 600] if winner == 0 else [600, 1000]
    return {
        "match_id": game.key,
        "variant": VARIANT,
        "players": [list(s) for s in game.seats],
        "games": [
            {
                "index": 0,
                "seed": game.seed,
                "outcome": "normal",
                "detail": "",
                "culprit": -1,
                "result": {"sides": [[0], [1]], "ranking": [winner, 1 - winner], "scores": scores},
            }
        ],
    }


def ingest(
    led: Ledger, spec: TournamentSpec, games: list[ScheduledGame], winners: list[int]
) -> float:
    tid, _ = led.tournament(spec)
    ids = led.entrant_ids(spec.entrants)
    led.plan(tid, games)
    start = time.perf_counter()
    step = max(1, len(games) // 20)
    for i, (game, winner) in enumerate(zip(games, winners, strict=True)):
        led.record_game(tid, VARIANT, game, ids, make_record(game, winner))
        if (i + 1) % step == 0:
            rate = (i + 1) / (time.perf_counter() - start)
            print(f"  ingested {i + 1} games, {rate:.0f}/s so far", file=sys.stderr, flush=True)
    return time.perf_counter() - start


def floor(games: list[ScheduledGame], winners: list[int]) -> tuple[float, dict[str, Rating]]:
    """The bare TrueSkill updates of the same games, in memory."""
    current: dict[str, Rating] = {}
    start = time.perf_counter()
    for game, winner in zip(games, winners, strict=True):
        a, b = game.seats[0][0], game.seats[1][0]
        [[ra], [rb]] = rate_game(
            [[current.get(a, initial())], [current.get(b, initial())]], [winner, 1 - winner]
        )
        current[a] = ra
        current[b] = rb
    return time.perf_counter() - start, current


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="Write the ledger here (default: a temp file).")
    args = parser.parse_args()
    if args.entrants < 2 or args.games < 1:
        parser.error("needs at least 2 entrants and 1 game")

    rng = random.Random(args.seed)
    spec = make_spec(args.entrants)
    games = make_games(spec, args.games, rng)
    winners = [rng.randrange(2) for _ in games]

    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "ledger.sqlite"
        if path.exists():
            parser.error(f"{path} exists; the benchmark needs a fresh ledger")
        led = Ledger(path)
        ingest_seconds = ingest(led, spec, games, winners)

        board_times = []
        for _ in range(7):
            start = time.perf_counter()
            board = led.leaderboard(VARIANT)
            board_times.append(time.perf_counter() - start)
        leaderboard_ms = statistics.median(board_times) * 1000

        start = time.perf_counter()
        diff = led.rebuild_ratings()
        rebuild_seconds = time.perf_counter() - start

        floor_seconds, memory = floor(games, winners)
        stored = {row.entrant: Rating(row.mu, row.sigma) for row in led.leaderboard(VARIANT)}
        led.close()

    same = stored == memory
    print(
        f"entrants {args.entrants} games {args.games} rated {len(board)} "
        f"rebuild_difference {diff:g} ledger_equals_memory {same}"
    )
    print(
        f"ingest_seconds {ingest_seconds:.2f} leaderboard target 100 ms: "
        f"{'met' if leaderboard_ms < 100 else 'MISSED'}; rebuild target 1.5 x floor "
        f"({rebuild_seconds / floor_seconds:.2f} x): "
        f"{'met' if rebuild_seconds <= 1.5 * floor_seconds else 'MISSED'}"
    )
    print(
        f"leaderboard_ms {leaderboard_ms:.2f} ingest_per_second {args.games / ingest_seconds:.0f} "
        f"rebuild_seconds {rebuild_seconds:.2f} trueskill_floor_seconds {floor_seconds:.2f}"
    )


if __name__ == "__main__":
    main()
