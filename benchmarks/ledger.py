"""Ledger throughput: ingest, leaderboard and rating rebuild on a fresh ledger of synthetic games.

    python benchmarks/ledger.py --entrants 1000 --games 100000
    python benchmarks/ledger.py --entrants 1000 --games 1000000 --bulk [--tournaments 2]

Creates a fresh SQLite ledger in a temporary directory, plans ``--tournaments`` tournaments (one by
default) of ``--games`` two-handed games in all between random pairs of ``--entrants`` entrants
(``Ledger.plan``), and records each game with a random winner through ``Ledger.record_game`` (one
transaction per game, in the schedule's order, as a tournament run does); with ``--bulk`` the games
and their seats are written directly instead (fast: ingest is not measured) and a first rebuild rates
them. Then it times the leaderboard query, ``Ledger.rebuild_ratings`` (what ``arena ratings rebuild``
runs), and the floor: the bare TrueSkill updates the rebuild must make, ``arena.rating.rate_game`` on
each of the game's boards (its tournament's and its variant's pooled board: updates x boards), in
memory. Both are timed in CPU seconds (a loaded machine stretches the wall clock of both, unevenly),
the rebuild's wall time beside. With one tournament the pooled board is the tournament's, and the
rebuild counts one update on both (see arena.ledger.boards.rebuild); with two or more it cannot.
``library_floor`` is the same updates made by the trueskill library itself (its factor graph, what the
arena used before issue 47), timed on up to 20,000 games and scaled to all. The last line is

    leaderboard_ms <N> ingest_per_second <M> rebuild_seconds <S> rebuild_cpu_seconds <C>
    trueskill_floor_seconds <F> library_floor_seconds <L>

Targets: leaderboard under 100 ms; rebuild at most 1.5 times the TrueSkill floor, the library's
updates x boards (in CPU: printed OK or MISSED; the ratio to the arena's own faster path for one
against one is printed beside: the rest is mostly SQLite writing four history rows a game, about
2 us a row); a million games rebuilt in under 10 minutes.
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

import trueskill

from arena.ledger import Ledger
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.rating import ENV, Rating, initial, rate_game
from arena.tournament.spec import TournamentSpec, parse

VARIANT = "two-handed"


def make_spec(entrants: int, suffix: str = "") -> TournamentSpec:
    return parse(
        {
            "name": f"Ledger benchmark: {entrants} entrants{suffix}",
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
    led: Ledger, specs: list[TournamentSpec], games: list[ScheduledGame], winners: list[int]
) -> float:
    tids = [led.tournament(spec)[0] for spec in specs]
    ids = led.entrant_ids(specs[0].entrants)
    for k, tid in enumerate(tids):
        led.plan(tid, games[k :: len(tids)])
    start = time.perf_counter()
    step = max(1, len(games) // 20)
    for i, (game, winner) in enumerate(zip(games, winners, strict=True)):
        tid = tids[i % len(tids)]
        led.record_game(tid, VARIANT, game, ids, FinishedGame.from_data(make_record(game, winner)))
        if (i + 1) % step == 0:
            rate = (i + 1) / (time.perf_counter() - start)
            print(f"  ingested {i + 1} games, {rate:.0f}/s so far", file=sys.stderr, flush=True)
    return time.perf_counter() - start


def bulk(
    led: Ledger, specs: list[TournamentSpec], games: list[ScheduledGame], winners: list[int]
) -> None:
    """The games and their seats written directly, in the ledger's rating order (a game i of
    tournament i % K), unrated: the caller's first rebuild rates them."""
    tids = [led.tournament(spec)[0] for spec in specs]
    ids = led.entrant_ids(specs[0].entrants)
    conn = led.conn
    now = "2026-01-01T00:00:00+00:00"
    with led.transaction():
        first = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM games").fetchone()[0]
        for start in range(0, len(games), 50_000):
            chunk = list(enumerate(games[start : start + 50_000], start=start))
            conn.executemany(
                "INSERT INTO games (id, tournament_id, key, ord, round, pairing, deal, rotation, "
                "variant, seed, outcome, detail, culprit, finished_at, rating_seq) "
                "VALUES (?, ?, ?, ?, 0, ?, 0, 0, ?, ?, 'normal', '', -1, ?, ?)",
                [
                    (first + i, tids[i % len(tids)], g.key, i, i, VARIANT, g.seed, now, i + 1)
                    for i, g in chunk
                ],
            )
            conn.executemany(
                "INSERT INTO game_seats VALUES (?, ?, 0, ?, ?, ?, ?)",
                [
                    (first + i, seat, ids[g.seats[seat][0]], seat, place, score)
                    for i, g in chunk
                    for seat, place, score in (
                        (0, winners[i], 600 if winners[i] else 1000),
                        (1, 1 - winners[i], 1000 if winners[i] else 600),
                    )
                ],
            )


def floor(
    games: list[ScheduledGame], winners: list[int], boards: int
) -> tuple[float, dict[str, Rating]]:
    """The bare TrueSkill updates the rebuild must make, in memory: each game's update on each of
    its ``boards`` (CPU seconds; the first board's ratings: the pooled board's with one
    tournament)."""
    current: list[dict[str, Rating]] = [{} for _ in range(boards)]
    start = time.process_time()
    for game, winner in zip(games, winners, strict=True):
        a, b = game.seats[0][0], game.seats[1][0]
        for board in current:
            [[ra], [rb]] = rate_game(
                [[board.get(a, initial())], [board.get(b, initial())]], [winner, 1 - winner]
            )
            board[a] = ra
            board[b] = rb
    return time.process_time() - start, current[0]


def library_floor(games: list[ScheduledGame], winners: list[int], boards: int) -> float:
    """The same updates made by the trueskill library's own factor graph (CPU seconds), timed on up
    to 20,000 games and scaled to all of them."""
    sample = min(len(games), 20_000)
    current: dict[str, trueskill.Rating] = {}
    start = time.process_time()
    for game, winner in zip(games[:sample], winners[:sample], strict=True):
        a, b = game.seats[0][0], game.seats[1][0]
        for _ in range(boards):
            [[ra], [rb]] = ENV.rate(
                [[current.get(a, ENV.create_rating())], [current.get(b, ENV.create_rating())]],
                ranks=[winner, 1 - winner],
            )
        current[a], current[b] = ra, rb
    return (time.process_time() - start) * len(games) / sample


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--tournaments", type=int, default=1)
    parser.add_argument("--bulk", action="store_true", help="Write the games directly (fast).")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="Write the ledger here (default: a temp file).")
    args = parser.parse_args()
    if args.entrants < 2 or args.games < 1 or args.tournaments < 1:
        parser.error("needs at least 2 entrants, 1 game and 1 tournament")

    rng = random.Random(args.seed)
    spec = make_spec(args.entrants)
    specs = [spec] + [make_spec(args.entrants, f" ({k + 1})") for k in range(1, args.tournaments)]
    games = make_games(spec, args.games, rng)
    winners = [rng.randrange(2) for _ in games]

    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "ledger.sqlite"
        if path.exists():
            parser.error(f"{path} exists; the benchmark needs a fresh ledger")
        led = Ledger(path)
        ingest_seconds = 0.0
        if args.bulk:
            bulk(led, specs, games, winners)
            began = time.perf_counter()
            led.rebuild_ratings()
            print(f"  rated in bulk in {time.perf_counter() - began:.1f} s", file=sys.stderr)
        else:
            ingest_seconds = ingest(led, specs, games, winners)

        board_times = []
        for _ in range(7):
            start = time.perf_counter()
            board = led.leaderboard(VARIANT)
            board_times.append(time.perf_counter() - start)
        leaderboard_ms = statistics.median(board_times) * 1000

        start, cpu = time.perf_counter(), time.process_time()
        diff = led.rebuild_ratings()
        rebuild_seconds = time.perf_counter() - start
        rebuild_cpu = time.process_time() - cpu

        boards = 2  # each game: its tournament's board and the variant's pooled board
        floor_seconds, memory = floor(games, winners, boards)
        library_seconds = library_floor(games, winners, boards)
        stored = {row.entrant: Rating(row.mu, row.sigma) for row in led.leaderboard(VARIANT)}
        led.close()

    same = stored == memory
    ratio = rebuild_cpu / library_seconds
    print(
        f"entrants {args.entrants} games {args.games} tournaments {args.tournaments} "
        f"rated {len(board)} rebuild_difference {diff:g} ledger_equals_memory {same}"
    )
    print(
        f"ingest_seconds {ingest_seconds:.2f} leaderboard target 100 ms: "
        f"{'met' if leaderboard_ms < 100 else 'MISSED'}; rebuild target 1.5 x the TrueSkill "
        f"floor of {boards} boards, CPU ({ratio:.2f} x; {rebuild_cpu / floor_seconds:.2f} x the "
        f"arena's own one-against-one path): {'OK' if ratio <= 1.5 else 'MISSED'}"
    )
    print(
        f"leaderboard_ms {leaderboard_ms:.2f} "
        f"ingest_per_second {args.games / ingest_seconds if ingest_seconds else 0:.0f} "
        f"rebuild_seconds {rebuild_seconds:.2f} rebuild_cpu_seconds {rebuild_cpu:.2f} "
        f"trueskill_floor_seconds {floor_seconds:.2f} library_floor_seconds {library_seconds:.2f}"
    )


if __name__ == "__main__":
    main()
