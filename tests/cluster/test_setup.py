"""Before any game reaches a cluster: Ray stays out of a local run, a run without Ray or with an address
that does not answer fails at once with a clear error (exit 2) and leaves the ledger alone, a
tournament file's cluster field is checked, and a node starts bots under a Ray worker's loop policy
and refuses a game whose bots must be isolated when it cannot isolate them (the bots' files:
test_bot_files.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.cluster.connect import connect
from arena.cluster.errors import ClusterError
from arena.play.cluster_address import address_problem
from arena.tournament.spec import TournamentFileError, load

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120  # seconds for one arena command on a loaded machine (Ray alone would wait minutes)


def tournament(directory: Path, extra: str = "") -> Path:
    path = directory / "t.toml"
    path.write_text(
        'name = "t"\nvariant = "rubicon"\n' + extra + "\n"
        '[[entrants]]\nname = "a"\ncommand = "{python} -m arena_bot.first_bot"\n'
        '[[entrants]]\nname = "b"\ncommand = "{python} -m arena_bot.greedy_bot"\n'
    )
    return path


def arena(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = f"{prelude}\nimport sys\nfrom arena.cli.main import app\nsys.argv = ['arena', *{list(args)!r}]\napp()"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )


@pytest.mark.slow
def test_the_arena_command_does_not_import_ray() -> None:
    code = "import sys, arena.cli.main, arena.cluster, arena.tournament.runner; print('ray' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.slow
def test_without_ray_a_cluster_run_fails_at_once(tmp_path: Path) -> None:
    ledger = tmp_path / "l.sqlite"
    # As on a machine without the extra: importing ray fails.
    out = arena(
        "run", str(tournament(tmp_path)), "--cluster", "auto", "--ledger", str(ledger),
        prelude="import sys; sys.modules['ray'] = None",
    )  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    assert "needs Ray" in out.stderr and "bezique-arena[cluster]" in out.stderr
    assert not ledger.exists(), "nothing was written"


@pytest.mark.slow
def test_a_file_that_asks_for_a_cluster_without_ray_fails_the_same(tmp_path: Path) -> None:
    out = arena(
        "run", str(tournament(tmp_path, 'cluster = "auto"')), "--ledger", str(tmp_path / "l"),
        prelude="import sys; sys.modules['ray'] = None",
    )  # fmt: skip
    assert out.returncode == 2 and "needs Ray" in out.stderr, out.stdout + out.stderr


@pytest.mark.slow
def test_an_address_where_nothing_listens_fails_at_once(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port of this machine that nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ledger = tmp_path / "l.sqlite"
    out = arena(
        "run", str(tournament(tmp_path)), "--cluster", f"127.0.0.1:{port}", "--ledger", str(ledger)
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}" in out.stderr
    assert not ledger.exists()


@pytest.mark.slow
def test_a_competition_server_without_a_cluster_to_reach_fails_at_once(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ledger = tmp_path / "l.sqlite"
    competition = tmp_path / "c.toml"
    competition.write_text(f'name = "c"\n[server]\ncluster = "127.0.0.1:{port}"\n')
    out = arena("compete", "serve", str(competition), "--ledger", str(ledger))
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}" in out.stderr
    assert not ledger.exists(), "nothing was written"
    # A malformed address in the file is refused by name, before anything is written.
    competition.write_text('name = "c"\n[server]\ncluster = "my cluster"\n')
    out = arena("compete", "serve", str(competition), "--ledger", str(ledger))
    assert out.returncode == 2 and "cluster" in out.stderr and "my cluster" in out.stderr


@pytest.mark.slow
def test_an_address_that_is_not_ray_fails_at_once(tmp_path: Path) -> None:
    with socket.socket() as listener:  # it accepts connections but never speaks gRPC
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        out = arena(
            "run", str(tournament(tmp_path)), "--cluster", f"127.0.0.1:{port}",
            "--ledger", str(tmp_path / "l.sqlite"),
        )  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    assert "no Ray cluster answers" in out.stderr


def test_a_malformed_address_is_named(tmp_path: Path) -> None:
    out = arena("run", str(tournament(tmp_path)), "--cluster", "my cluster", "--ledger", "x")
    assert out.returncode == 2
    assert "bad cluster address" in out.stderr and "'my cluster'" in out.stderr


@pytest.mark.parametrize("command", ["run", "compete"])
def test_an_empty_cluster_option_is_a_mistake_not_this_machine(
    tmp_path: Path, command: str
) -> None:
    # --cluster "$UNSET": it played on this machine, silently.
    file = tournament(tmp_path) if command == "run" else ROOT / "competitions" / "example.toml"
    words = ["run", str(file)] if command == "run" else ["compete", "serve", str(file)]
    out = arena(*words, "--cluster", " ", "--ledger", str(tmp_path / "x.sqlite"))
    assert out.returncode == 2
    assert "--cluster: give auto, HOST:PORT, ray://HOST:PORT, local or none; got nothing" in (
        " ".join(out.stderr.split())
    )
    assert not (tmp_path / "x.sqlite").exists()


@pytest.mark.parametrize(
    ("address", "ok"),
    [
        ("auto", True),
        ("local", True),
        ("10.0.0.5:6379", True),
        ("head.example:6379", True),
        ("ray://head.example:10001", True),
        ("[::1]:6379", True),
        ("head.example", False),
        ("ray://head.example", False),
        ("head:0", False),
        ("head:70000", False),
        ("http://head:6379", False),
        ("", False),
        # host names that the connection cannot encode (a UnicodeError, not an OSError, came out of
        # the connection check)
        ("head..example:6379", False),
        (".:6379", False),
        ("ray://head..example:10001", False),
        (f"{'x' * 64}.example:6379", False),
        (f"{'x' * 63}.example:6379", True),
        ("head.example.:6379", True),
    ],
)
def test_addresses(address: str, ok: bool) -> None:
    assert (address_problem(address) == "") is ok


def test_a_host_name_that_cannot_be_encoded_is_a_clear_error() -> None:
    with pytest.raises(ClusterError, match=r"bad cluster address: 'head\.\.example' is not a host"):
        connect("head..example:6379")


def test_the_file_field_is_checked_and_is_not_part_of_the_identity(tmp_path: Path) -> None:
    spec = load(tournament(tmp_path, 'cluster = "ray://head:10001"'))
    assert spec.cluster == "ray://head:10001"
    assert "cluster" not in spec.to_dict(), "the same tournament may move between machines"
    assert load(tournament(tmp_path)).to_dict() == spec.to_dict()
    with pytest.raises(TournamentFileError, match=r"t\.toml: cluster: expected auto"):
        load(tournament(tmp_path, 'cluster = "head"'))


# A loop policy such as uvloop's, which a Ray worker makes its default when uvloop is installed: its
# loops start no process with process_group, and it has no child watcher for asyncio's own loop.
FOREIGN_POLICY = """
import asyncio, sys
from asyncio.events import BaseDefaultEventLoopPolicy


class Refusing(asyncio.SelectorEventLoop):
    def subprocess_exec(self, *args, **kwargs):
        if "process_group" in kwargs:
            raise ValueError("unexpected kwargs: process_group")
        return super().subprocess_exec(*args, **kwargs)


class Foreign(BaseDefaultEventLoopPolicy):
    _loop_factory = Refusing


asyncio.set_event_loop_policy(Foreign())
"""


@pytest.mark.parametrize("sandbox", ["none", "auto"])
def test_a_node_starts_bots_under_a_worker_s_foreign_loop_policy(sandbox: str) -> None:
    """A node's referee runs on asyncio's own loop whatever policy its Ray worker installed (without
    it, every light bot fails to start there: 'unexpected kwargs: process_group')."""
    code = FOREIGN_POLICY + (
        "from arena.bots.limits import Limits\n"
        "from arena.cluster.node import NodeReferee\n"
        "from arena.referee import MatchConfig\n"
        "referee = NodeReferee()\n"
        f"command = sys.executable + ' -m arena_bot.first_bot'\n"
        "failures = referee.preflight({'first': command}, MatchConfig(variant='two-handed'),\n"
        f"                             Limits(sandbox={sandbox!r}), 1)\n"
        "print('failures', failures)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    assert "failures []" in done.stdout, done.stdout + done.stderr


# ---------------------------------------------------------------- isolation on every node


def test_a_node_that_cannot_isolate_refuses_a_game_whose_bots_must_be(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With sandbox "auto", a node without bubblewrap ran its games' bots in the light mode (the
    node's files and network, the cluster's own services among them), while the node that had
    checked the entrants, and told the organiser so, isolated them."""
    from types import SimpleNamespace

    from arena.cluster import node as node_side
    from arena.sandbox import Probe

    here = {"id": "n", "address": "10.0.0.9", "host": "bare"}
    monkeypatch.setattr(node_side, "probe", lambda requested: Probe(requested, False, "no bwrap"))
    monkeypatch.setattr(node_side, "_node", lambda arena: here)
    refused = r"node bare \(10\.0\.0\.9\) cannot isolate the bots .*no bwrap"
    rules: Any = SimpleNamespace(limits=SimpleNamespace(sandbox="auto"))
    with pytest.raises(node_side.NodeError, match=refused):
        node_side.play(rules, Any, {}, {}, "", isolated=True)
    with pytest.raises(node_side.NodeError, match=refused):
        node_side.check_isolation("required", False, here)
    node_side.check_isolation("auto", False, here)  # light where the checked node was light too
    node_side.check_isolation("none", False, here)


def test_a_local_ray_starts_told_it_runs_on_one_machine_and_everything_is_put_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--cluster local`` keeps Ray's services on loopback (tests/cluster/test_exposure.py, on real
    processes): only while it starts, and the arena's own environment is left as it was."""
    from types import SimpleNamespace

    from arena.cluster import connect as connecting

    constants = SimpleNamespace(ENABLE_RAY_CLUSTER=True)
    ray: Any = SimpleNamespace(_private=SimpleNamespace(ray_constants=constants))
    monkeypatch.delenv(connecting.ONE_MACHINE, raising=False)
    with connecting._on_loopback(ray):
        assert os.environ[connecting.ONE_MACHINE] == "0" and constants.ENABLE_RAY_CLUSTER is False
    assert connecting.ONE_MACHINE not in os.environ and constants.ENABLE_RAY_CLUSTER is True
    monkeypatch.setenv(connecting.ONE_MACHINE, "1")
    with pytest.raises(RuntimeError), connecting._on_loopback(ray):
        raise RuntimeError("ray.init failed")
    assert os.environ[connecting.ONE_MACHINE] == "1" and constants.ENABLE_RAY_CLUSTER is True
