"""Connecting the coordinator to a Ray cluster, with a clear error at once when it cannot be done.

An address is one of:

- ``auto``: the cluster started on this machine with ``ray start --head`` (or ``$RAY_ADDRESS``);
- ``HOST:PORT``: a head node's address (``ray start --head`` prints it; port 6379 by default);
- ``ray://HOST:PORT``: a head node's Ray Client server (port 10001 by default), for a coordinator
  outside the cluster's network;
- ``local``: a Ray instance of this machine's own, started for the run and stopped after it, every
  one of its services on loopback (:func:`_on_loopback`) and behind Ray's token.

Ray waits a minute or more before it gives up on an address that does not answer; the coordinator
first checks that a gRPC server (Ray's control service or its client server) answers there, so that a
typing slip fails in seconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import logging
import os
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from arena.cluster.errors import INSTALL_HINT, ClusterError
from arena.play.cluster_address import FORMS, address_problem

PROBE_SECONDS = 5.0  # for the address to answer a gRPC handshake
LOST_ATTEMPTS = 2  # times the head must not answer, PROBE_SECONDS apart, for the cluster to be lost
NAMESPACE = "bezique-arena"
LOOPBACK = "127.0.0.1"
# Ray's own switch for a Ray that runs on one machine only (its default on macOS and Windows): with
# it off, Ray keeps a node address of 127.0.0.1 as given, and its services then listen on loopback.
ONE_MACHINE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def import_ray() -> ModuleType:
    """Ray, or a :class:`ClusterError` saying how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise ClusterError(
            f"running on a cluster needs Ray, which cannot be imported here ({exc}): {INSTALL_HINT}"
        ) from None


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    address: str
    host: str
    cpus: float


class Cluster:
    """A connection to a Ray cluster (``ray.init``); :meth:`close` disconnects (and stops a ``local``
    instance)."""

    def __init__(self, address: str, ray: ModuleType, target: str | None = None) -> None:
        self.address = address
        self.ray = ray
        self.target = target  # HOST:PORT of the head's server the connection goes through

    def lost(self) -> str:
        """Why the cluster is gone, "" while its head answers: a socket to the server the connection
        goes through (Ray's control service, or its client server) is refused or does not open. Ray
        itself would wait for a lost control service for a minute, then end this process."""
        if self.target is None:  # ``local``: Ray's processes are this one's own
            return ""
        why = ""
        for attempt in range(LOST_ATTEMPTS):  # a server that is there accepts at once, even busy
            if attempt:
                time.sleep(PROBE_SECONDS)
            try:
                _connect(self.target)
                return ""
            except OSError as exc:
                why = f"its head node at {self.target} does not answer ({exc.strerror or exc})"
        return why

    def nodes(self) -> list[Node]:
        """The nodes alive now that can run games (those with CPUs)."""
        found = []
        for n in self.ray.nodes():
            cpus = float(n.get("Resources", {}).get("CPU", 0.0))
            if n.get("Alive") and cpus > 0:
                found.append(
                    Node(n["NodeID"], n["NodeManagerAddress"], n["NodeManagerHostname"], cpus)
                )
        return found

    def close(self) -> None:
        self.ray.shutdown()


def connect(address: str) -> Cluster:
    """Connect to the cluster at ``address`` (see the module's text)."""
    address = address.strip()
    problem = address_problem(address)
    if problem:
        raise ClusterError(f"bad cluster address: {problem}")
    ray = import_ray()
    target = None
    if address != "local":
        target = _target(address)
        _probe(address, target)
    local = address == "local"
    try:
        with _on_loopback(ray) if local else contextlib.nullcontext():
            ray.init(
                address=address,
                namespace=NAMESPACE,
                logging_level=logging.WARNING,
                log_to_driver=False,  # a node's messages stay in its logs, not in the arena's output
                include_dashboard=False if local else None,
                ignore_reinit_error=False,
                _node_ip_address=LOOPBACK if local else None,
            )
    except ClusterError:
        raise
    except Exception as exc:
        raise ClusterError(
            f"cannot connect to the Ray cluster at {address}: {exc}{_auth_hint()}"
        ) from None
    cluster = Cluster(address, ray, target)
    if not cluster.nodes():
        cluster.close()
        raise ClusterError(f"the Ray cluster at {address} has no node with CPUs to play games on")
    return cluster


@contextlib.contextmanager
def _on_loopback(ray: ModuleType) -> Iterator[None]:
    """While a ``local`` Ray starts: Ray told that it runs on this machine only, so that it keeps
    the node address 127.0.0.1 that it is given, and its services (the GCS, the raylet, the workers,
    the agents and their metrics) listen on loopback only. Otherwise Ray replaces 127.0.0.1 with the
    machine's own address, and its C++ services listen on every interface. The processes it starts
    inherit the switch; this process's environment and Ray's reading of it are restored after."""
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    before = os.environ.get(ONE_MACHINE)
    was = getattr(constants, "ENABLE_RAY_CLUSTER", None)
    os.environ[ONE_MACHINE] = "0"
    if constants is not None and was is not None:
        constants.ENABLE_RAY_CLUSTER = False  # read by Ray when it was imported
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ONE_MACHINE, None)
        else:
            os.environ[ONE_MACHINE] = before
        if constants is not None and was is not None:
            constants.ENABLE_RAY_CLUSTER = was


def _auth_hint() -> str:
    """Ray's own error does not say that the cluster wants its token (on by default for clusters
    started with ``ray start`` since Ray 2.59)."""
    if os.environ.get("RAY_AUTH_MODE", "").strip():
        return ""
    return (
        " (if the cluster uses Ray's token authentication, as one started by ray start does since "
        "Ray 2.59, set RAY_AUTH_MODE=token, with the head's token in RAY_AUTH_TOKEN or "
        "~/.ray/auth_token: ray get-auth-token prints it)"
    )


def _connect(target: str) -> None:
    """Open and close a TCP connection to ``target`` (HOST:PORT), within PROBE_SECONDS; OSError if
    it cannot be made."""
    host, _, port = target.rpartition(":")
    with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_SECONDS):
        pass


def _probe(address: str, target: str) -> None:
    """Fail at once unless a gRPC server answers at ``target``, the address Ray would dial."""
    where = f"{address}" + (f" ({target})" if target != address else "")
    try:
        _connect(target)
    except OSError as exc:
        raise ClusterError(
            f"cannot reach the Ray cluster at {where}: {exc.strerror or exc} (is the head node "
            "started, with ray start --head, and is the address right?)"
        ) from None
    import grpc

    channel = grpc.insecure_channel(target)
    try:
        grpc.channel_ready_future(channel).result(timeout=PROBE_SECONDS)
    except grpc.FutureTimeoutError:
        raise ClusterError(
            f"no Ray cluster answers at {where}: something listens there but does not speak gRPC "
            f"within {PROBE_SECONDS:.0f} s (is it the head node's address?)"
        ) from None
    finally:
        channel.close()


def _target(address: str) -> str:
    """HOST:PORT of the server behind ``address``."""
    if address.startswith("ray://"):
        target = address.removeprefix("ray://").split("/", 1)[0]
    elif address == "auto":
        target = _auto_address()
    else:
        target = address
    problem = address_problem(target)
    if problem or target in ("auto", "local"):
        raise ClusterError(f"bad cluster address {address!r}: expected {FORMS}")
    return target


def _auto_address() -> str:
    """The address ``auto`` stands for: $RAY_ADDRESS, or the cluster last started on this machine."""
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if env and env != "auto":
        return env.removeprefix("ray://") if env.startswith("ray://") else env
    try:
        from ray._private.services import canonicalize_bootstrap_address  # type: ignore[import-not-found,unused-ignore]

        found = canonicalize_bootstrap_address("auto")
    except Exception as exc:
        raise ClusterError(
            f"no Ray cluster is running on this machine (start one with ray start --head): {exc}"
        ) from None
    if not found:
        raise ClusterError(
            "no Ray cluster is running on this machine (start one with ray start --head)"
        )
    return str(found)


def fingerprint() -> str:
    """A digest of the arena's own code: a node must run the very same arena as the coordinator, or
    the same game could be refereed differently."""
    return _fingerprint(Path(__file__).resolve().parent.parent)


_cache: dict[Path, str] = {}


def _fingerprint(root: Path) -> str:
    if root not in _cache:
        digest = hashlib.sha256(f"python {sys.version_info[:2]}".encode())
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(path.read_bytes())
        _cache[root] = digest.hexdigest()[:16]
    return _cache[root]


def resources_per_game(players: int) -> dict[str, Any]:
    """What a game asks of a node: one CPU per bot process, so that a node never runs more games at
    once than its CPUs allow (the bots' clocks stay fair)."""
    return {"num_cpus": players}
