"""The tournament runner with the real example bots (subprocesses, through the in-process referee
server): a run records exactly the planned games; a second run plays nothing; a run killed with SIGKILL
resumes to exactly the planned games with the ratings of an uninterrupted run; Swiss rounds never
repeat a pairing; three-handed games are rated free-for-all."""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from arena.ledger import Ledger
from arena.ledger import db as ledger_db
from arena.rating import Rating, initial, rate_game
from arena.tournament.runner import Progress, TournamentRunner
from arena.tournament.schedule import full_schedule, swiss_pairings
from arena.tournament.spec import TournamentSpec, load

pytestmark = pytest.mark.slow  # whole tournaments of real bot processes

# (name, module, version): identical programs under two names are two entrants.
BOTS = [
    ("random", "random_bot", "1"),
    ("first", "first_bot", "1"),
    ("random-b", "random_bot", "b"),
    ("first-b", "first_bot", "b"),
]
RUN_TIMEOUT = 300.0  # seconds, for a whole tournament on a loaded machine


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def tournament_file(directory: Path, name: str, entrants: int, **top: Any) -> Path:
    """A small tournament of the example bots, with a generous clock so that no game ends on time
    and every game is decided by the bots alone (deterministic)."""
    lines = [f'name = "{name}"']
    top = {"variant": "rubicon", "deals_per_pairing": 1, "concurrency": 2, "seed": 7, **top}
    for key, value in top.items():
        lines.append(f"{key} = {toml_value(value)}")
    lines += ["[time_control]", "budget_ms = 10000", "bank_ms = 120000", "grace_ms = 2000"]
    for bot, module, version in BOTS[:entrants]:
        lines += [
            "[[entrants]]",
            f'name = "{bot}"',
            f'command = "{{python}} -m arena_bot.{module}"',
            f'version = "{version}"',
        ]
    path = directory / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


class Sink:
    def __init__(self) -> None:
        self.max_running = 0
        self.calls = 0

    def __call__(self, p: Progress) -> None:
        self.calls += 1
        self.max_running = max(self.max_running, p.running)


def run(
    spec: TournamentSpec, path: Path, deal_key: bytes | None = None
) -> tuple[int, Progress, Sink]:
    led = Ledger(path)
    sink = Sink()
    runner = TournamentRunner(spec, led, sink, deal_key=deal_key)
    try:
        tid = asyncio.run(asyncio.wait_for(runner.run(), RUN_TIMEOUT))
    finally:
        led.close()
    return tid, runner.progress, sink


def query(path: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path, timeout=30.0)
    try:
        return [tuple(r) for r in conn.execute(sql, args).fetchall()]
    finally:
        conn.close()


def dump(path: Path, skip: tuple[str, ...] = ()) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [
            line
            for line in conn.iterdump()
            if not any(line.startswith(f'INSERT INTO "{t}"') for t in skip)
        ]
    finally:
        conn.close()


def ratings(path: Path) -> dict[str, tuple[float, float, int]]:
    """The pooled boards' ratings (in these tests, one tournament per ledger: the same numbers as its
    own board)."""
    rows = query(
        path,
        "SELECT e.name, r.mu, r.sigma, r.games FROM ratings r JOIN entrants e ON e.id = r.entrant_id "
        "JOIN boards b ON b.id = r.board_id AND b.kind = 'pooled'",
    )
    return {name: (mu, sigma, games) for name, mu, sigma, games in rows}


def results(path: Path) -> dict[str, list[tuple[int, str, int, int]]]:
    """Each game's seats by key: (seat, entrant, place, score)."""
    out: dict[str, list[tuple[int, str, int, int]]] = {}
    for key, seat, name, place, score in query(
        path,
        "SELECT g.key, s.seat, e.name, s.place, s.score FROM games g JOIN game_seats s "
        "ON s.game_id = g.id JOIN entrants e ON e.id = s.entrant_id ORDER BY g.key, s.seat, s.member",
    ):
        out.setdefault(key, []).append((seat, name, place, score))
    return out


def check_complete(path: Path, spec: TournamentSpec) -> None:
    """Exactly the planned games, none doubled, each with its seats and record, all rated in order."""
    planned = [g.key for g in full_schedule(spec)]
    keys = [r[0] for r in query(path, "SELECT key FROM games ORDER BY ord")]
    assert keys == planned
    assert query(path, "SELECT count(*) FROM game_records") == [(len(planned),)]
    players = sum(len(g.players) for g in full_schedule(spec))
    assert query(path, "SELECT count(*) FROM game_seats") == [(players,)]
    # every player on two boards: the tournament's and the variant's pooled board
    assert query(path, "SELECT count(*) FROM rating_history") == [(2 * players,)]
    rated = [r[0] for r in query(path, "SELECT key FROM games ORDER BY rating_seq")]
    assert rated == planned, "every game rated, in the canonical order"
    assert query(path, "SELECT count(*) FROM games WHERE rating_seq IS NULL") == [(0,)]
    assert query(path, "SELECT count(*) FROM games WHERE outcome != 'normal'") == [(0,)]


# ---------------------------------------------------------------- a run, and a run again


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[TournamentSpec, Path, Progress, Sink]:
    """Three entrants, round robin, one deal per pairing on both seatings: six games."""
    d = tmp_path_factory.mktemp("tiny")
    spec = load(tournament_file(d, "tiny", 3))
    path = d / "ledger.sqlite"
    counter = itertools.count()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ledger_db, "_now", lambda: f"2026-01-01T00:00:00+{next(counter):06d}")
        _, progress, sink = run(spec, path)
    return spec, path, progress, sink


@pytest.mark.xdist_group("runner-tiny")  # the one played tournament
def test_a_run_records_exactly_the_planned_games(
    tiny: tuple[TournamentSpec, Path, Progress, Sink],
) -> None:
    spec, path, progress, sink = tiny
    assert len(full_schedule(spec)) == 6
    check_complete(path, spec)
    assert (progress.planned, progress.done, progress.resumed) == (6, 6, 0)
    assert (progress.errors, progress.failures, progress.running) == (0, 0, 0)
    assert 1 <= sink.max_running <= spec.concurrency
    assert {n: g for n, (_, _, g) in ratings(path).items()} == {
        "random": 4,
        "first": 4,
        "random-b": 4,
    }
    assert query(path, "SELECT count(*) FROM tournaments WHERE finished_at IS NOT NULL") == [(1,)]


@pytest.fixture(scope="module")
def rerun(
    tiny: tuple[TournamentSpec, Path, Progress, Sink], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, Progress, Sink]:
    spec, path, _, _ = tiny
    again = tmp_path_factory.mktemp("rerun") / "ledger.sqlite"
    shutil.copy(path, again)
    counter = itertools.count(1000)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ledger_db, "_now", lambda: f"2026-01-02T00:00:00+{next(counter):06d}")
        _, progress, sink = run(spec, again)
    return path, again, progress, sink


@pytest.mark.xdist_group("runner-tiny")  # the one played tournament
def test_running_again_plays_nothing(rerun: tuple[Path, Path, Progress, Sink]) -> None:
    before, after, progress, sink = rerun
    assert (progress.planned, progress.done, progress.resumed) == (6, 6, 6)
    assert sink.max_running == 0, "no game was started"
    assert dump(after, skip=("tournaments",)) == dump(before, skip=("tournaments",))


@pytest.mark.xdist_group("runner-tiny")  # the one played tournament
def test_running_again_leaves_the_ledger_unchanged(
    rerun: tuple[Path, Path, Progress, Sink],
) -> None:
    """Including the tournament's finish time: it finished with the first run."""
    before, after, _, _ = rerun
    assert dump(after) == dump(before)


# ---------------------------------------------------------------- killed and resumed


def arena_command(toml: Path, ledger: Path) -> list[str]:
    return [sys.executable, "-m", "arena.cli.main", "run", str(toml), "--ledger", str(ledger)]


def deal_key_of(path: Path) -> bytes:
    return bytes.fromhex(query(path, "SELECT deal_key FROM tournaments")[0][0])


def count_games(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        return int(query(path, "SELECT count(*) FROM games")[0][0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_a_killed_run_resumes_with_nothing_lost_or_doubled(tmp_path: Path) -> None:
    # 6 pairings: 6 games. A bot process plays several (the bots play each deal the same whatever
    # they played before): the test is about the ledger, and starting processes cost the most here.
    toml = tournament_file(tmp_path, "killed", 4, duplicate=False, matches_per_process=6)
    spec = load(toml)
    planned = len(full_schedule(spec))
    assert planned == 6
    ledger = tmp_path / "killed.sqlite"
    log = (tmp_path / "first-run.log").open("wb")
    proc = subprocess.Popen(
        arena_command(toml, ledger), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + RUN_TIMEOUT
        while count_games(ledger) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        log.close()
    assert proc.returncode == -signal.SIGKILL, (tmp_path / "first-run.log").read_text()
    recorded = count_games(ledger)
    assert 2 <= recorded < planned, "killed part-way"
    # what was written is whole: every game with its seats and record, none rated out of order
    assert query(ledger, "SELECT count(*) FROM game_records") == [(recorded,)]
    assert query(ledger, "SELECT count(*) FROM game_seats") == [(2 * recorded,)]
    done = {r[0] for r in query(ledger, "SELECT key FROM games")}
    prefix = list(itertools.takewhile(lambda k: k in done, (g.key for g in full_schedule(spec))))
    rated = query(ledger, "SELECT key FROM games WHERE rating_seq IS NOT NULL ORDER BY rating_seq")
    assert [key for (key,) in rated] == prefix

    again = subprocess.run(
        arena_command(toml, ledger), capture_output=True, text=True, timeout=RUN_TIMEOUT
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"resumed: {recorded} game(s)" in again.stdout
    check_complete(ledger, spec)

    fresh = tmp_path / "fresh.sqlite"
    run(spec, fresh, deal_key_of(ledger))  # the same secret: the same deals
    check_complete(fresh, spec)
    assert results(ledger) == results(fresh), "the same games, seat by seat"
    assert ratings(ledger) == ratings(fresh), "exactly the ratings of an uninterrupted run"
    assert {g for _, _, g in ratings(ledger).values()} == {3}


def test_killed_again_and_again_at_random_moments(tmp_path: Path) -> None:
    """Issue 6: SIGKILL at random moments, several times over one tournament, resuming each time; in
    the end exactly the planned games, none doubled, and the ratings of an uninterrupted run."""
    import random

    # 6 pairings x 2 seatings; processes play several games, as in the test above
    toml = tournament_file(tmp_path, "battered", 4, duplicate=True, matches_per_process=6)
    spec = load(toml)
    planned = len(full_schedule(spec))
    ledger = tmp_path / "battered.sqlite"
    rng = random.Random(2026)
    kills = 0
    for attempt in range(6):
        before = count_games(ledger)
        if before >= planned or kills == 3:
            break
        log = (tmp_path / f"run-{attempt}.log").open("wb")
        proc = subprocess.Popen(
            arena_command(toml, ledger),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            # A random moment. The first run is killed while it starts or plays its first games;
            # each later one once it has recorded a game, at a random point of what follows. (On a
            # fast machine the whole tournament takes about two seconds: a moment drawn from a fixed
            # span would often come after its end.)
            if attempt == 0:
                time.sleep(rng.uniform(0.2, 1.5))
            else:
                deadline = time.monotonic() + RUN_TIMEOUT
                while proc.poll() is None and count_games(ledger) == before:
                    assert time.monotonic() < deadline, "the resumed run recorded no game"
                    time.sleep(0.02)
                time.sleep(rng.uniform(0.0, 0.4))
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                kills += 1
            proc.wait(timeout=60)
            log.close()
        after = count_games(ledger)
        assert after <= planned
        if after:  # (a process killed while it started may not have made the tables yet)
            assert query(ledger, "SELECT count(*) FROM game_records") == [(after,)]
    assert kills >= 2, "the tournament was interrupted several times"
    final = subprocess.run(
        arena_command(toml, ledger), capture_output=True, text=True, timeout=RUN_TIMEOUT
    )
    assert final.returncode == 0, final.stdout + final.stderr
    check_complete(ledger, spec)
    assert query(ledger, "SELECT count(*), count(DISTINCT key) FROM games") == [(planned, planned)]
    fresh = tmp_path / "fresh.sqlite"
    run(spec, fresh, deal_key_of(ledger))  # the same secret: the same deals
    assert results(ledger) == results(fresh), "the same games, seat by seat"
    assert ratings(ledger) == ratings(fresh), "exactly the ratings of an uninterrupted run"


# ---------------------------------------------------------------- swiss, three-handed


def test_swiss_rounds_pair_by_score_without_repeats(tmp_path: Path) -> None:
    # Bot processes play several games (of any pairing): the test is about the pairings.
    spec = load(
        tournament_file(
            tmp_path, "swiss", 4, format="swiss", rounds=2, duplicate=False, matches_per_process=4
        )
    )
    path = tmp_path / "swiss.sqlite"
    tid, progress, _ = run(spec, path)
    assert (progress.planned, progress.done, progress.errors) == (4, 4, 0)
    led = Ledger(path)
    try:
        rounds = [led.planned(tid, r) for r in range(2)]
        assert led.planned(tid, 2) == []
        groups = [{frozenset(g.group) for g in games} for games in rounds]
        for games, met in zip(rounds, groups, strict=True):
            assert len(games) == 2, "two pairings of one game"
            assert sorted(n for p in met for n in p) == sorted(e.name for e in spec.entrants)
        assert groups[0].isdisjoint(groups[1]), "no pairing repeats"
        assert min(g.ord for g in rounds[1]) > max(g.ord for g in rounds[0])
        # round 1 is the Swiss pairing of round 0's results
        names = [e.name for e in spec.entrants]
        points = dict.fromkeys(names, 0.0)
        firsts: dict[int, list[str]] = {}
        for row in led.seat_rows(tid):
            if row["place"] == 0:
                firsts.setdefault(row["game_id"], []).append(row["entrant"])
        round0 = {g.key for g in rounds[0]}
        for row in led.seat_rows(tid):
            if row["key"] in round0 and row["place"] == 0:
                points[row["entrant"]] += 1.0 / len(firsts[row["game_id"]])
        pairs, bye = swiss_pairings(names, points, groups[0], 1)
        assert bye is None
        assert [g.group for g in rounds[1]] == pairs
        assert led.done_keys(tid) == {g.key for games in rounds for g in games}
        assert led.rebuild_ratings() == 0.0
    finally:
        led.close()
    assert query(path, "SELECT count(*) FROM tournaments WHERE finished_at IS NOT NULL") == [(1,)]


def test_three_handed_is_rated_free_for_all(tmp_path: Path) -> None:
    spec = load(tournament_file(tmp_path, "three", 3, variant="three-handed"))
    path = tmp_path / "three.sqlite"
    _, progress, _ = run(spec, path)
    assert progress.done == 3
    check_complete(path, spec)
    current: dict[str, Rating] = {}
    for (gid,) in query(path, "SELECT id FROM games ORDER BY ord"):
        seats = query(
            path,
            "SELECT s.side, s.place, e.name FROM game_seats s JOIN entrants e ON e.id = s.entrant_id "
            "WHERE s.game_id = ? ORDER BY s.side",
            gid,
        )
        assert [side for side, _, _ in seats] == [0, 1, 2], "three sides of one player"
        assert len({name for _, _, name in seats}) == 3
        new = rate_game(
            [[current.get(name, initial())] for _, _, name in seats], [p for _, p, _ in seats]
        )
        for (_, _, name), (r,) in zip(seats, new, strict=True):
            current[name] = r
    assert {n: (mu, sigma) for n, (mu, sigma, _) in ratings(path).items()} == {
        n: (r.mu, r.sigma) for n, r in current.items()
    }
    assert {g for _, _, g in ratings(path).values()} == {3}


def test_bot_processes_play_several_games_when_the_tournament_allows(tmp_path: Path) -> None:
    """matches_per_process: fewer processes are launched and every planned game is played and rated.
    (The games themselves may differ: a random bot's generator runs on from one game to the next.)"""
    outcomes = {}
    launched = {}
    for reuse in (1, 4):
        d = tmp_path / f"reuse-{reuse}"
        d.mkdir()
        spec = load(tournament_file(d, "reuse", 3, matches_per_process=reuse))
        assert spec.matches_per_process == reuse
        logs = d / "logs"
        led = Ledger(d / "ledger.sqlite")
        try:
            runner = TournamentRunner(spec, led, Sink(), logs_dir=logs)
            asyncio.run(asyncio.wait_for(runner.run(), RUN_TIMEOUT))
        finally:
            led.close()
        check_complete(d / "ledger.sqlite", spec)
        outcomes[reuse] = query(
            d / "ledger.sqlite",
            "SELECT g.key, g.outcome, s.seat, s.score FROM games g "
            "JOIN game_seats s ON s.game_id = g.id ORDER BY g.ord, s.seat",
        )
        # One log per launched process; the first of each entrant's is its check before the run.
        assert len(list(logs.glob("check*.log"))) == 3
        launched[reuse] = len([p for p in logs.glob("*.log") if not p.name.startswith("check")])
    games = len(full_schedule(spec))
    assert launched[1] == 2 * games
    assert launched[4] < launched[1]
    assert [row[:1] + row[2:3] for row in outcomes[4]] == [
        row[:1] + row[2:3] for row in outcomes[1]
    ]
    assert {row[1] for row in outcomes[4]} == {"normal"}
