"""Tournaments on a real Ray cluster: several Ray nodes on this machine (``ray.cluster_utils``).

A tournament played on the cluster gives the same games, results and ratings as on this machine; the
nodes play the bots' files they were sent, not the coordinator's, and send back every bot's log whole,
that of a process that played several games too; a node that dies mid-run loses only its games,
which are played again and recorded once; a coordinator killed with SIGKILL resumes from the ledger
as it does locally."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import exposure_helpers as exposure
import grpc
import pytest
from ray._private import ray_constants
from ray._private import services as ray_services
from ray._private import utils as ray_utils
from ray.cluster_utils import Cluster as RayCluster

from arena.bots.launcher import resolve_paths
from arena.cluster import connect as cluster_connect
from arena.cluster import player as cluster_player
from arena.competition import bundles
from arena.competition import spec as competition_spec
from arena.competition.server import CompetitionServer
from arena.competition.submission_api import serve_submissions
from arena.ledger import Ledger, records
from arena.ledger import competitions as store
from arena.play.game import GameRules
from arena.referee import MatchRecord
from arena.sandbox import procs
from arena.tournament.runner import EntrantCannotStart, TournamentRunner, hidden_paths
from arena.tournament.schedule import full_schedule
from arena.tournament.spec import TournamentSpec, load
from arena.wire.v1 import competition_pb2, competition_pb2_grpc

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("on-cluster")]  # one Ray cluster
EXAMPLE = Path(__file__).resolve().parents[2] / "competitions" / "examples" / "python-bot"
T = TypeVar("T")

RUN_TIMEOUT = 600.0  # seconds for a tournament on a loaded machine (workers start slowly)
KEY = bytes(range(32))  # the deal secret of every tournament here: the same deals everywhere
CPUS = 2  # per node: one two-player game at a time
NODE_START = 240.0  # seconds for a Ray node to start on a loaded machine

# A bot in the tournament's own folder: it answers the first legal action after a pause, and notes
# each start in a file, with its parent (the Ray worker process refereeing its game), where the test
# sees how many games have begun.
SLOW_BOT = """\
import os, sys, time
from arena_bot.sdk import Bot, run

pause, notes = float(sys.argv[1]), sys.argv[2]
with open(notes, "a") as f:
    f.write(f"start {os.getppid()}\\n")

class Slow(Bot):
    def decide(self, view, legal, clock):
        time.sleep(pause)
        return legal[0]

run(Slow())
"""


def started(start: Callable[[], T]) -> T:
    """A Ray node started with patience: Ray gives a starting node 30 s to register with the head,
    asking every 0.1 s, and a node of a machine whose two cores are shared may need longer. Each
    asking waits here (up to NODE_START seconds) instead."""
    ask = ray_services.get_node

    def patiently(gcs_address: str, node_id: str) -> Any:
        deadline = time.monotonic() + NODE_START
        while True:
            try:
                return ask(gcs_address, node_id)
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ray_services, "get_node", patiently)
        # A starting raylet gives its dashboard agent about 15 s to report its ports, then aborts;
        # the full agent (ray[default]'s metrics and HTTP server) imports too slowly for that on a
        # loaded machine. The nodes of these tests run the minimal agent, as a minimal Ray install
        # would: the games need no dashboard.
        mp.setattr(ray_utils, "get_dashboard_dependency_error", lambda: "minimal for the tests")
        # The head's GCS server may take longer than Ray's default 30 s to bind its port on a
        # machine loaded by the rest of the suite.
        mp.setenv("RAY_gcs_server_port_wait_time_s", "180")
        return start()


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[tuple[RayCluster, cluster_connect.Cluster]]:
    """Three nodes of two CPUs each; a node's death is noticed within seconds. (The last test
    takes one away.)"""
    system = {
        "health_check_initial_delay_ms": 0,
        "health_check_period_ms": 500,
        "health_check_failure_threshold": 4,
        # A raylet starts up to as many worker processes at once as it has CPUs: for a game it
        # started two, one never used (a game takes both CPUs of its node), on every node and for
        # every driver (each a job with workers of its own: three here). One at a time: about 30
        # worker processes -> 18 over this module, their CPU 15.5 -> 6.2 s.
        "worker_maximum_startup_concurrency": 1,
        # Nor two more on the head for the first driver, before it asks for anything.
        "prestart_worker_first_driver": False,
        # The coordinator handed back each game's worker after 0.5 s of holding it (a game lasts
        # seconds), and its node's raylet started a new process for the next game, then used the
        # old one: one unused worker process a game. Kept while games are queued: 19 -> 13.
        "worker_lease_timeout_milliseconds": 60000,
        # Metrics and the task events that Ray's dashboard shows: nothing here reads them.
        "enable_metrics_collection": False,
        "task_events_report_interval_ms": 0,
    }
    # No log monitor (the coordinator asks for no worker's output: log_to_driver=False) and no
    # autoscaler monitor (nodes are added and removed by the tests).
    # Every node on loopback (what Ray keeps as given when told it runs on one machine, a switch
    # its processes and the coordinators started here inherit): nothing listens beyond this machine.
    head = {
        "num_cpus": CPUS,
        "node_ip_address": cluster_connect.LOOPBACK,
        "include_dashboard": False,
        "include_log_monitor": False,
        "no_monitor": True,
        "_system_config": system,
    }
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(cluster_connect.ONE_MACHINE, "0")
        mp.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)
        nodes = started(lambda: RayCluster(initialize_head=True, head_node_args=head))
        handle = None
        try:
            for _ in range(2):
                started(
                    lambda: nodes.add_node(num_cpus=CPUS, node_ip_address=cluster_connect.LOOPBACK)
                )
            nodes.wait_for_nodes()
            handle = cluster_connect.connect(nodes.address)
            yield nodes, handle
        finally:
            if handle is not None:
                handle.close()
            nodes.shutdown()


def ancestors(pid: int) -> list[int]:
    """``pid`` and the processes above it, nearest first (as far as they are still alive)."""
    chain = []
    while pid > 1:
        chain.append(pid)
        fields = procs.stat(pid)
        if fields is None:
            break
        pid = int(fields[1])  # the parent
    return chain


def write_tournament(
    directory: Path, entrants: dict[str, str], sandbox: str = "auto", **top: object
) -> Path:
    deals = top.pop("deals_per_pairing", 1)
    lines = [
        'name = "on-cluster"',
        'variant = "rubicon"',
        f"deals_per_pairing = {deals}",
        "seed = 11",
    ]
    lines += [f"{k} = {v!r}".replace("'", '"') for k, v in top.items()]
    lines += ["[time_control]", "budget_ms = 10000", "bank_ms = 120000", "grace_ms = 2000"]
    lines += ["[limits]", f'sandbox = "{sandbox}"']
    for name, command in entrants.items():
        lines += ["[[entrants]]", f'name = "{name}"', f"command = {command!r}".replace("'", '"')]
    path = directory / "tournament.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def on_cluster(
    cluster: cluster_connect.Cluster, spec: TournamentSpec, led: Ledger, logs: Path | None = None
) -> cluster_player.ClusterPlayer:
    """The cluster's player of a tournament, as the command line hands it to the runner."""
    exclude = [*hidden_paths(spec, led), *([logs] if logs else [])]
    return cluster_player.for_tournament(cluster, spec, exclude, logs)


def run(
    spec: TournamentSpec,
    ledger: Path,
    cluster: cluster_connect.Cluster | None = None,
    logs: Path | None = None,
) -> TournamentRunner:
    led = Ledger(ledger)
    remote = on_cluster(cluster, spec, led, logs) if cluster is not None else None
    runner = TournamentRunner(spec, led, logs_dir=logs, deal_key=KEY, remote=remote)
    try:
        asyncio.run(asyncio.wait_for(runner.run(), RUN_TIMEOUT))
    finally:
        led.close()
    return runner


def query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path, timeout=30.0)
    try:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def recorded_games(path: Path) -> int:
    """Games in a ledger that another process may still be making."""
    try:
        return int(query(path, "SELECT count(*) FROM games")[0][0]) if path.exists() else 0
    except sqlite3.OperationalError:  # its tables are not made yet
        return 0


def results(path: Path) -> list[tuple[Any, ...]]:
    """Every game's seats: (key, seat, entrant, place, score), and its outcome."""
    return query(
        path,
        "SELECT g.key, g.seed, g.outcome, s.seat, e.name, s.place, s.score FROM games g "
        "JOIN game_seats s ON s.game_id = g.id JOIN entrants e ON e.id = s.entrant_id "
        "ORDER BY g.key, s.seat",
    )


def ratings(path: Path) -> list[tuple[Any, ...]]:
    """Every rating update, in the order applied (the history), and the boards' final ratings."""
    history = query(
        path,
        "SELECT g.key, e.name, h.board_id, h.mu_before, h.sigma_before, h.mu_after, h.sigma_after "
        "FROM rating_history h JOIN games g ON g.id = h.game_id JOIN entrants e "
        "ON e.id = h.entrant_id ORDER BY g.rating_seq, h.board_id, e.name",
    )
    final = query(
        path,
        "SELECT b.kind, e.name, r.mu, r.sigma, r.games FROM ratings r JOIN boards b ON "
        "b.id = r.board_id JOIN entrants e ON e.id = r.entrant_id ORDER BY b.kind, e.name",
    )
    return history + final


def nodes_of(path: Path) -> list[str]:
    """The node each recorded game was played on, from its record."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT encoding, record FROM game_records").fetchall()
    finally:
        conn.close()
    return [records.decode(enc, data)["node"]["id"] for enc, data in rows]


def check_complete(path: Path, spec: TournamentSpec) -> None:
    """Exactly the planned games, each once, all rated in the schedule's order."""
    planned = [g.key for g in full_schedule(spec)]
    assert [k for (k,) in query(path, "SELECT key FROM games ORDER BY ord")] == planned
    assert [k for (k,) in query(path, "SELECT key FROM games ORDER BY rating_seq")] == planned
    assert query(path, "SELECT count(*) FROM game_records") == [(len(planned),)]


def test_the_same_games_and_ratings_as_on_this_machine(
    tmp_path: Path, ray_cluster: tuple[RayCluster, cluster_connect.Cluster]
) -> None:
    _, handle = ray_cluster
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "plain.py").write_text(
        "from arena_bot.first_bot import FirstBot\nfrom arena_bot.sdk import main_for\n"
        "main_for(FirstBot())\n"
    )
    spec = load(
        write_tournament(
            tmp_path,
            {
                "first": "{python} -m arena_bot.first_bot",
                "greedy": "{python} -m arena_bot.greedy_bot",
                "shipped": "{python} bots/plain.py",
            },
            concurrency=2,
            matches_per_process=4,  # here and on the nodes alike
        )
    )
    here, there = tmp_path / "here.sqlite", tmp_path / "there.sqlite"
    run(spec, here)
    runner = run(spec, there, handle)
    check_complete(here, spec)
    check_complete(there, spec)
    assert results(there) == results(here), "the same games, seat by seat"
    assert ratings(there) == ratings(here), "identical ratings, update by update"
    assert query(there, "SELECT count(*) FROM games WHERE outcome != 'normal'") == [(0,)]
    played_on = nodes_of(there)
    alive = {n.id for n in handle.nodes()}
    assert set(played_on) <= alive and len(set(played_on)) >= 2, "spread over the nodes"
    assert isinstance(runner.remote, cluster_player.ClusterPlayer)
    assert sum(runner.remote.nodes.values()) == len(full_schedule(spec))


def test_the_nodes_of_these_tests_listen_on_loopback_only(
    ray_cluster: tuple[RayCluster, cluster_connect.Cluster],
) -> None:
    """The nodes are started with the node address 127.0.0.1: every socket that their processes (the
    GCS, the raylets, the workers and agents) and this coordinator hold listens on loopback."""
    _, handle = ray_cluster
    # A task, so that the nodes have started a worker process.
    ray = handle.ray
    assert ray.get(ray.remote(lambda: "played").options(num_cpus=1).remote()) == "played"
    found = exposure.listeners(exposure.descendants(os.getpid()))
    names = {x.process for x in found}
    assert {"gcs_server", "raylet"} <= names, found
    assert [x for x in found if not x.loopback] == [], "listening beyond this machine"


def test_a_node_plays_the_files_it_was_sent(
    tmp_path: Path, ray_cluster: tuple[RayCluster, cluster_connect.Cluster]
) -> None:
    _, handle = ray_cluster
    folder = tmp_path / "bots"
    folder.mkdir()
    (folder / "mine.py").write_text(
        "from arena_bot.greedy_bot import main\nmain()\n"  # greedy_bot's entry point
    )
    spec = load(
        write_tournament(
            tmp_path,
            {"mine": "{python} bots/mine.py", "first": "{python} -m arena_bot.first_bot"},
        )
    )
    logs = tmp_path / "logs"
    player = cluster_player.for_tournament(handle, spec, logs_dir=logs)
    player.rules = GameRules(
        spec.variant, spec.options, spec.time_control, spec.policies, spec.limits, deal_key=KEY
    )
    commands = {e.name: resolve_paths(e.command, spec.base_dir) for e in spec.entrants}
    folder.rename(tmp_path / "gone")  # the coordinator's copy is gone: the node has its own
    played = asyncio.run(player.play(full_schedule(spec)[0], commands))
    assert played.record is not None, played.error
    assert played.outcome == "normal"
    assert played.record.node is not None
    assert played.record.node["id"] in {n.id for n in handle.nodes()}
    # replays read it
    assert MatchRecord.from_dict(played.record.to_dict()).node == played.record.node
    # the bots' logs came back from the node: one per bot process, named after the match, the seat
    # and the player
    match = played.record.match_id
    names = [seat[0] for seat in played.record.players]
    assert sorted(p.name for p in logs.iterdir()) == [
        f"{match}-seat0-0-{names[0]}.log",
        f"{match}-seat1-0-{names[1]}.log",
    ]


# A bot that notes in its output, and so in its log, that it has started, and each match it has seen
# to its end.
NOTING_BOT = """\
from arena_bot.first_bot import FirstBot
from arena_bot.sdk import run

class Noting(FirstBot):
    def on_match_over(self, over):
        print(f"over {over.match_id}", flush=True)

print("start", flush=True)
run(Noting())
"""


def test_the_logs_of_processes_that_play_several_games_come_back_whole(
    tmp_path: Path, ray_cluster: tuple[RayCluster, cluster_connect.Cluster]
) -> None:
    _, handle = ray_cluster
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "noting.py").write_text(NOTING_BOT)
    # Eight games between two entrants on three nodes, one game at a time on each: a node plays
    # three at least, in its worker process, whose referee keeps each bot process for the next game
    # of a deal it has not played. The last ones wait in its pool when the run ends.
    spec = load(
        write_tournament(
            tmp_path,
            {n: "{python} bots/noting.py" for n in ("a", "b")},
            deals_per_pairing=4,
            matches_per_process=4,
        )
    )
    ledger, logs = tmp_path / "ledger.sqlite", tmp_path / "logs"
    run(spec, ledger, handle, logs)
    check_complete(ledger, spec)
    games = {
        records.decode(enc, data)["match_id"]
        for enc, data in query(ledger, "SELECT encoding, record FROM game_records")
    }
    assert len(games) == 8
    # One log a bot process, each whole: its first line, and a line for each match it saw end.
    # (A check of an entrant, on a node whose referee kept logs for an earlier test, logs too.)
    texts = {p.name: p.read_text().splitlines() for p in logs.iterdir()}
    assert all(lines[0] == "start" and lines.count("start") == 1 for lines in texts.values()), texts
    ended = {
        name: [line.removeprefix("over ") for line in lines[1:]] for name, lines in texts.items()
    }
    seen = Counter(match for matches in ended.values() for match in matches)
    assert {m: n for m, n in seen.items() if not m.startswith("check")} == dict.fromkeys(games, 2)
    assert max(len(games.intersection(m)) for m in ended.values()) >= 2, "a process played on"


def test_an_entrant_that_cannot_start_on_a_node_stops_the_run_before_its_first_game(
    tmp_path: Path, ray_cluster: tuple[RayCluster, cluster_connect.Cluster]
) -> None:
    _, handle = ray_cluster
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "broken.py").write_text("import sys\nsys.exit('no luck here')\n")
    spec = load(
        write_tournament(
            tmp_path,
            {"broken": "{python} bots/broken.py", "first": "{python} -m arena_bot.first_bot"},
        )
    )
    ledger = tmp_path / "ledger.sqlite"
    with pytest.raises(EntrantCannotStart) as caught:
        run(spec, ledger, handle)
    (failure,) = caught.value.failures
    assert failure.startswith("entrant 'broken'") and "no luck here" in failure, failure
    assert query(ledger, "SELECT count(*) FROM tournaments") == [(0,)], "nothing recorded"


def test_a_competition_plays_its_bundles_games_on_the_cluster(
    tmp_path: Path, ray_cluster: tuple[RayCluster, cluster_connect.Cluster]
) -> None:
    _, handle = ray_cluster
    asyncio.run(asyncio.wait_for(competition_on(handle, tmp_path), RUN_TIMEOUT))


DECIDE = "    def decide(self, view: Observation, legal: list[Action], clock: Clock) -> Action:\n"
SAYS = '        print("{author} decides", flush=True)\n'


async def competition_on(handle: cluster_connect.Cluster, tmp_path: Path) -> None:
    """Two authors submit the example Python bundle under two names: once built and checked here,
    their games are played on the nodes, from the builds sent there, and recorded here."""
    spec = competition_spec.parse(
        {
            "name": "Cluster Ladder",
            "seed": 5,
            "variant": "rubicon",
            "time_control": {"budget_ms": 10000, "bank_ms": 120000, "grace_ms": 2000},
            "matchmaking": {"games_at_once": 2, "pause_seconds": 0.2},
            "submissions": {"build_seconds": 120, "check_seconds": 300},
            "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
        }
    )
    led = Ledger(tmp_path / "ledger.sqlite")
    server = CompetitionServer(
        spec, led, tmp_path / "data", cluster=handle, serve_submissions=serve_submissions
    )
    await server.start()
    try:
        comp = store.Competitions(led)
        # Both authors first, as the organiser would: this test shares the server's own ledger
        # connection, which the server's ledger thread writes on once a submission is in.
        tokens = {author: comp.add_author(server.cid, author) for author in ("ada", "bob")}
        for author, token in tokens.items():
            folder = tmp_path / f"{author}-bot"
            shutil.copytree(EXAMPLE, folder)
            manifest = folder / bundles.MANIFEST
            manifest.write_text(manifest.read_text().replace('"py-trickster"', f'"{author}-bot"'))
            # Each decision says so in the bot's output: what its author reads of each game.
            bot = folder / "bot.py"
            bot.write_text(bot.read_text().replace(DECIDE, DECIDE + SAYS.format(author=author)))
            await submit(server.submissions_address, token, bundles.pack(folder, 2**20))
        deadline = time.monotonic() + RUN_TIMEOUT
        while count_games(led) < 2:
            assert time.monotonic() < deadline and server.fatal is None, server.fatal
            await asyncio.sleep(0.3)
    finally:
        await server.stop()
    assert server.cluster_player is not None
    assert sum(server.cluster_player.nodes.values()) >= 2, "the games went to the cluster"
    alive = {n.id for n in handle.nodes()}
    rows = led.conn.execute("SELECT game_id, encoding, record FROM game_records").fetchall()
    # Each seat's output of a game played on a node kept for its author, as a local game's is
    # (the cluster's player handed back the record alone: no output at all).
    outputs = {gid: store.Competitions(led).game_outputs(gid) for gid, _, _ in rows}
    led.close()
    assert rows and all(records.decode(enc, data)["node"]["id"] in alive for _, enc, data in rows)
    for seats in outputs.values():
        assert len(seats) == 2, seats
        for seat in seats:
            said = f"{seat.bot.removesuffix('-bot')} decides"
            assert seat.output_bytes > 0 and said in seat.output, seat


def count_games(led: Ledger) -> int:
    return int(led.conn.execute("SELECT count(*) FROM games").fetchone()[0])


async def submit(address: str, token: str, bundle: bytes) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = competition_pb2_grpc.CompetitionStub(channel)
        md = (("authorization", f"Bearer {token}"),)
        await stub.Submit(competition_pb2.SubmitRequest(bundle=bundle), metadata=md)


def test_a_coordinator_killed_with_sigkill_resumes_from_the_ledger(
    tmp_path: Path, ray_cluster: tuple[RayCluster, cluster_connect.Cluster]
) -> None:
    nodes, _ = ray_cluster
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "slow.py").write_text(SLOW_BOT)
    command = f"{{python}} bots/slow.py 0.02 {tmp_path / 'starts.txt'}"
    # The first run finds the cluster in the file; the second is told it on the command line.
    # (SLOW_BOT notes its starts outside its folder: not in a sandbox.)
    path = write_tournament(
        tmp_path,
        {n: command for n in ("a", "b", "c")},
        "none",
        cluster=nodes.address,
        matches_per_process=3,
    )
    spec = load(path)
    assert spec.cluster == nodes.address
    ledger = tmp_path / "ledger.sqlite"
    first = [
        sys.executable, "-m", "arena.cli.main", "run", str(path), "--ledger", str(ledger),
        "--deal-secret", KEY.hex(),
    ]  # fmt: skip
    argv = [*first, "--cluster", nodes.address]
    with (tmp_path / "first-run.log").open("w") as log:
        proc = subprocess.Popen(first, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + RUN_TIMEOUT
            while time.monotonic() < deadline and proc.poll() is None:
                if recorded_games(ledger) >= 2:
                    break
                time.sleep(0.1)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, (tmp_path / "first-run.log").read_text()
    recorded = query(ledger, "SELECT count(*) FROM games")[0][0]
    assert 2 <= recorded < len(full_schedule(spec)), "killed part-way"

    again = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"resumed: {recorded} game(s)" in again.stdout
    assert "played on a Ray cluster" in again.stdout
    check_complete(ledger, spec)
    # The uninterrupted run to compare with, on this machine: the same bots without their pause
    # (they answer the same), two games at a time (the ratings follow the schedule's order).
    here = tmp_path / "here.sqlite"
    quick = [
        dataclasses.replace(e, command=e.command.replace(" 0.02 ", " 0 ")) for e in spec.entrants
    ]
    assert quick != list(spec.entrants)
    run(dataclasses.replace(spec, cluster="", entrants=tuple(quick), concurrency=2), here)
    assert results(ledger) == results(here)
    assert ratings(ledger) == ratings(here), "the ratings of an uninterrupted run"


def test_a_worker_or_a_node_that_dies_mid_run_loses_only_its_games(
    tmp_path: Path, ray_cluster: tuple[RayCluster, cluster_connect.Cluster]
) -> None:
    nodes, handle = ray_cluster
    victim = next(iter(nodes.worker_nodes))  # not the head: the cluster lives on without it
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "slow.py").write_text(SLOW_BOT)
    notes = tmp_path / "starts.txt"
    notes.touch()
    # A game lasts about 3 s with the bots' 0.02 s pause (7 s with 0.05: half this test's time),
    # seconds more than the test takes to see a bot start and kill what plays its game.
    command = f"{{python}} bots/slow.py 0.02 {notes}"
    # (SLOW_BOT notes its starts, and the Ray worker above it, outside its folder: not in a sandbox.)
    spec = load(write_tournament(tmp_path, {n: command for n in ("a", "b", "c", "d")}, "none"))
    planned = len(full_schedule(spec))  # six pairings on two seatings: twelve games
    ledger = tmp_path / "ledger.sqlite"
    led = Ledger(ledger)
    runner = TournamentRunner(spec, led, deal_key=KEY, remote=on_cluster(handle, spec, led))
    failed: list[BaseException] = []

    def coordinator() -> None:
        try:
            asyncio.run(asyncio.wait_for(runner.run(), RUN_TIMEOUT))
        except BaseException as exc:  # handed to the test
            failed.append(exc)

    def starts(at_least: int) -> list[str]:
        deadline = time.monotonic() + RUN_TIMEOUT
        while len(lines := notes.read_text().splitlines()) < at_least:
            assert time.monotonic() < deadline and thread.is_alive(), failed
            time.sleep(0.1)
        return lines

    thread = threading.Thread(target=coordinator)
    thread.start()
    try:
        # Three nodes with room for one game each and more games in flight: once six bots have
        # started, every node has a game under way. The newest bot's parent is the Ray worker
        # process that referees its game, which has just begun: it dies.
        worker = int(starts(6)[-1].split()[1])
        os.kill(worker, signal.SIGKILL)
        # Then, with games still to play, a whole node dies while it plays one: once a bot has
        # started under one of its workers (a game lasts seconds after its bots start; a node
        # removed between two games would lose none).
        raylet = victim.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid
        seen = len(starts(12))
        while raylet not in ancestors(int(starts(seen + 1)[seen].split()[1])):
            seen += 1
        nodes.remove_node(victim, allow_graceful=False)
    finally:
        thread.join(RUN_TIMEOUT)
        led.close()
    assert not failed, failed
    assert runner.progress.errors == 0, runner.progress.last
    check_complete(ledger, spec)
    assert isinstance(runner.remote, cluster_player.ClusterPlayer)
    assert runner.remote.resent >= 2, "the worker's game and the node's were sent again"
    assert planned == 12
