"""What a cluster exposes, on real Ray nodes (README, "What a cluster exposes"): the listening sockets
of every process of the cluster and of the coordinator, read from /proc (``exposure_helpers.py``).

A ``local`` cluster, a one-machine cluster started as the README says, and nodes started as the tests
start theirs (``ray.cluster_utils``) given the node address 127.0.0.1 listen on loopback only, and every
gRPC service there refuses a caller without the token; with Ray's defaults the GCS listens on every
interface, which is why the README's commands set these options."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import exposure_helpers as exposure
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("on-cluster")]  # one Ray cluster at a time

# The processes of a cluster that listen, as the README's table names them (a coordinator's own
# process is "python", its worker processes ray::IDLE or the task they run).
DOCUMENTED = {
    "gcs_server",
    "raylet",
    "ray.util.client.server",
    "ray::DashboardAgent",
    "ray::RuntimeEnvAgent",
    "dashboard.py",
    "monitor.py",
    "python",
    "python3",
    "python3.11",
}
SETTLE = 5.0  # seconds for a node's agents to open their ports once it has registered


def documented(name: str) -> bool:
    return name in DOCUMENTED or name.startswith("ray::")  # a worker, titled by its task


def every_socket(*roots: int) -> list[exposure.Listener]:
    time.sleep(SETTLE)
    pids = sorted({pid for root in roots for pid in exposure.descendants(root)})
    return exposure.listeners(pids)


def assert_private(found: list[exposure.Listener]) -> None:
    """Every socket on loopback, every gRPC one wanting the token, every process a documented one."""
    names = {x.process for x in found}
    assert {"gcs_server", "raylet"} <= names, found
    assert any(n.startswith("ray::") and "Agent" not in n for n in names), "a worker listens"
    assert [x for x in found if not x.loopback] == [], "listening beyond this machine"
    assert [x for x in found if not documented(x.process)] == [], "not in the README's table"
    gcs = [x for x in found if x.process == "gcs_server"]
    answers = {x: exposure.probe(exposure.reach(x, None), x.port) for x in found}
    assert answers[gcs[0]] == "grpc token", answers
    open_grpc = [
        x for x, answer in answers.items() if answer.startswith("grpc") and answer != "grpc token"
    ]
    assert open_grpc == [], f"gRPC without the token: {open_grpc}"


def test_a_local_cluster_listens_on_loopback_only(tmp_path: Path) -> None:
    """``--cluster local``: Ray on its own would take the machine's address and listen everywhere."""
    env = exposure.base_env(tmp_path / "home")
    del env["RAY_AUTH_MODE"]  # the token is on by default for a Ray that ray.init starts
    with exposure.driver("local", env) as coordinator:
        assert_private(every_socket(coordinator.pid))  # probed while the cluster is up


def test_a_one_machine_cluster_started_as_documented_listens_on_loopback_only(
    tmp_path: Path,
) -> None:
    port, client = exposure.free_port(), exposure.free_port()
    words = ["--port", str(port), "--ray-client-server-port", str(client), "--num-cpus", "1"]
    words += ["--node-ip-address", "127.0.0.1", "--include-dashboard", "false"]
    # The coordinator as the README starts it too: with the token and the one-machine switch (without
    # it, Ray takes the machine's address for the coordinator's, finds no node there, and waits).
    env = exposure.private_env(tmp_path / "home")
    with (
        exposure.head(words, env, tmp_path / "head") as node,
        exposure.driver(f"127.0.0.1:{port}", env) as coordinator,
    ):
        found = every_socket(node.pid, coordinator.pid)
        assert_private(found)
    ports = {(x.process, x.port) for x in found}
    assert ("gcs_server", port) in ports and ("ray.util.client.server", client) in ports


@contextmanager
def nodes_as_in_the_tests(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """A head and one more node as ``ray.cluster_utils`` starts them, with the node address
    127.0.0.1 (given to the nodes directly, which Ray keeps as it is), and the arena connected to
    them, in a process of their own; ``env`` has the one-machine switch, for the connection (without
    it, Ray takes the machine's address for the coordinator's, finds no node there, and waits)."""
    code = (
        "import sys\n"
        "from ray.cluster_utils import Cluster\n"
        "from arena.cluster.connect import connect\n"
        "private = {'node_ip_address': '127.0.0.1', 'num_cpus': 1, 'include_dashboard': False}\n"
        "nodes = Cluster(initialize_head=True, head_node_args=private)\n"
        "nodes.add_node(**private)\n"
        "nodes.wait_for_nodes()\n"
        "cluster = connect(nodes.address)\n"
        "ray = cluster.ray\n"
        "print(ray.get(ray.remote(lambda: 'played').remote()), flush=True)\n"
        "sys.stdin.readline()\n"
        "cluster.close()\n"
        "nodes.shutdown()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdin is not None
        line = process.stdout.readline()
        assert line.strip() == "played", line + process.communicate(timeout=60)[1]
        yield process
    finally:
        if process.poll() is None:
            assert process.stdin is not None
            process.stdin.write("\n")
            process.stdin.flush()
            try:
                process.wait(120)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


def test_nodes_started_as_the_tests_start_them_listen_on_loopback_only(tmp_path: Path) -> None:
    with nodes_as_in_the_tests(exposure.private_env(tmp_path / "home")) as process:
        found = every_socket(process.pid)
        assert_private(found)
    assert len({x.pid for x in found if x.process == "raylet"}) == 2, "both nodes were seen"


@pytest.mark.skipif(exposure.routable_ip() is None, reason="this machine has only loopback")
def test_with_ray_s_defaults_a_head_listens_on_every_interface(tmp_path: Path) -> None:
    """Why the README's commands set the node address (and the one-machine switch): without them
    the GCS, reached from another machine, still wants the token, but listens everywhere."""
    port = exposure.free_port()
    words = ["--port", str(port), "--ray-client-server-port", str(exposure.free_port())]
    words += ["--num-cpus", "1", "--include-dashboard", "false"]
    env = exposure.base_env(tmp_path / "home")
    with exposure.head(words, env, tmp_path / "head") as node:
        found = every_socket(node.pid)
    gcs = [x for x in found if x.process == "gcs_server" and x.port == port]
    assert gcs and gcs[0].everywhere, found
    assert [x for x in found if not documented(x.process)] == [], "not in the README's table"
