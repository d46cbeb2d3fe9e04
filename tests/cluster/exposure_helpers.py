"""What a Ray cluster exposes: the listening TCP sockets of its processes, and whether each answers a
caller that has no token.

Used by ``test_exposure.py``, and runnable, to print the table the README's "What a cluster exposes"
is made from (each configuration is started, listed, probed and stopped; a few minutes)::

    .venv/bin/python tests/cluster/exposure_helpers.py            # ray start --head, as documented and bare
    .venv/bin/python tests/cluster/exposure_helpers.py --bare     # only Ray's defaults

Linux only: the sockets are read from ``/proc`` (each process's descriptors, the namespace's
``/proc/net/tcp`` and ``tcp6``), so that nothing beyond the standard library is needed.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc

LISTEN = "0A"  # the TCP state LISTEN in /proc/net/tcp
# A method of each of Ray's gRPC services, asked with an empty message (harmless: an empty request
# reads, or frees nothing): the first one a server knows tells whether it wants the token.
METHODS = (
    "/ray.rpc.NodeInfoGcsService/GetClusterId",  # the GCS
    "/ray.rpc.NodeManagerService/GetSystemConfig",  # a raylet's node manager
    "/ray.rpc.ObjectManagerService/Pull",  # a raylet's object manager (checks the token first)
    "/ray.rpc.CoreWorkerService/NumPendingTasks",  # a worker (or a driver)
    "/ray.rpc.ReporterService/HealthCheck",  # a node's dashboard agent
    "/ray.rpc.RayletDriver/ClusterInfo",  # the Ray Client server
)
PROBE_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class Listener:
    """A listening TCP socket: its address, port and the process that holds it."""

    ip: str  # as bound: 0.0.0.0 and :: are every interface
    port: int
    pid: int
    process: str  # a short name: gcs_server, raylet, ray::IDLE, dashboard.py, ...

    @property
    def loopback(self) -> bool:
        """Reachable from this machine only."""
        return address(self.ip).is_loopback

    @property
    def everywhere(self) -> bool:
        """Bound to every interface (0.0.0.0, ::)."""
        return address(self.ip).is_unspecified


def address(ip: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """``ip``, an IPv4 address mapped into IPv6 (::ffff:127.0.0.1) taken as the IPv4 one."""
    found = ipaddress.ip_address(ip)
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found


def _decode(hex_address: str) -> tuple[str, int]:
    """An address of /proc/net/tcp{,6} (``0100007F:1F90``: 32-bit words in host order)."""
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    if sys.byteorder == "big":
        words = raw
    family = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
    return socket.inet_ntop(family, words), int(port, 16)


def _listening_inodes() -> dict[int, tuple[str, int]]:
    """Every listening TCP socket of this network namespace, by inode."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == LISTEN:
                    found[int(fields[9])] = _decode(fields[1])
    return found


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(int(target[8:-1]))
    return inodes


def process_name(pid: int) -> str:
    """A short name for ``pid``: Ray's title (``ray::IDLE``), a script's or module's name, or the
    executable's."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return "?"
    words = [w for w in words if w]
    if not words:
        return "?"
    if words[0].startswith("ray::"):
        return words[0].split()[0]
    for i, word in enumerate(words):
        if word.endswith(".py"):
            return os.path.basename(word)
        if word == "-m" and i + 1 < len(words):
            return words[i + 1]
    return os.path.basename(words[0])


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (as far as they are alive)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                parent = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children.get(current, [])
    return found


def listeners(pids: Iterable[int]) -> list[Listener]:
    """The listening TCP sockets held by ``pids``, sorted by process and port."""
    table = _listening_inodes()
    found = set()
    for pid in pids:
        name = process_name(pid)
        for inode in _socket_inodes(pid):
            if inode in table:
                ip, port = table[inode]
                found.add(Listener(ip, port, pid, name))
    return sorted(found, key=lambda x: (x.process, x.port, x.ip))


def routable_ip() -> str | None:
    """An address of this machine that is not loopback (None without one): where another machine
    would knock."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent, a route is chosen
            ip = str(s.getsockname()[0])
        except OSError:
            return None
    return None if address(ip).is_loopback else ip


def probe(ip: str, port: int) -> str:
    """What a caller without a token gets at ``ip:port``: ``grpc token`` (every call refused as
    unauthenticated), ``grpc open`` (a call answered), ``grpc ?`` (gRPC, but none of Ray's methods
    known), ``http NNN`` (an HTTP status to ``GET /``), or ``closed``."""
    host = f"[{ip}]" if ":" in ip else ip
    channel = grpc.insecure_channel(f"{host}:{port}")
    try:
        grpc.channel_ready_future(channel).result(timeout=PROBE_SECONDS)
        for method in METHODS:
            call = channel.unary_unary(method)
            try:
                call(b"", timeout=PROBE_SECONDS)
                return "grpc open"
            except grpc.RpcError as exc:
                code = exc.code()
                if code == grpc.StatusCode.UNAUTHENTICATED:
                    return "grpc token"
                if code not in (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.UNAVAILABLE):
                    return "grpc open"  # the server took the call (and found the message wanting)
        return "grpc ?"
    except grpc.FutureTimeoutError:
        return _http(ip, port)
    finally:
        channel.close()


def _http(ip: str, port: int) -> str:
    try:
        family = socket.AF_INET6 if ":" in ip else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(PROBE_SECONDS)
            s.connect((ip, port))
            s.sendall(f"GET / HTTP/1.0\r\nHost: {ip}\r\n\r\n".encode())
            head = s.recv(64).decode(errors="replace").split()
    except OSError:
        return "closed"
    if len(head) >= 2 and head[0].startswith("HTTP/"):
        return f"http {head[1]}"
    return "other"


def reach(listener: Listener, outside: str | None) -> str:
    """The address a caller uses for ``listener``: the routable one for a socket bound everywhere
    (another machine's view), else the bound one."""
    if listener.everywhere:
        return outside or ("::1" if ":" in listener.ip else "127.0.0.1")
    return str(address(listener.ip))


# ----------------------------------------------------------------------------- a node, started


@contextlib.contextmanager
def head(
    words: list[str], env: dict[str, str], temp: Path, seconds: float = 240.0
) -> Iterator[subprocess.Popen[bytes]]:
    """``ray start --head --block`` with ``words``, until its GCS answers; stopped (its own process
    group only: never ``ray stop``, which would stop every Ray of this user) at the end."""
    ray = Path(sys.executable).with_name("ray")
    temp.mkdir(parents=True, exist_ok=True)
    log = (temp / "ray-start.log").open("wb")
    sessions = tempfile.mkdtemp(prefix="ray-")  # short: Ray's Unix sockets are made in it
    process = subprocess.Popen(
        [str(ray), "start", "--head", "--block", "--temp-dir", sessions, *words],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + seconds
        while "Ray runtime started" not in (temp / "ray-start.log").read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    "ray start did not start: "
                    + (temp / "ray-start.log").read_text(errors="replace")[-3000:]
                )
            time.sleep(0.5)
        yield process
    finally:
        stop(process)
        log.close()
        shutil.rmtree(sessions, ignore_errors=True)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop ``process`` (SIGTERM: ``ray start --block`` stops its node), then its process group."""
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(90)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# A coordinator's stand-in: it connects as the arena does, runs a task (so that a worker process
# listens too), then waits for a line on stdin before it lets the cluster go.
DRIVER = """
import sys
from arena.cluster.connect import connect
cluster = connect(sys.argv[1])
ray = cluster.ray
print(ray.get(ray.remote(lambda: "played").remote()), flush=True)
sys.stdin.readline()
cluster.close()
"""


@contextlib.contextmanager
def driver(address: str, env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """A process connected to the cluster at ``address`` as the arena's coordinator is, once a task
    has run on the cluster; let go at the end."""
    process = subprocess.Popen(
        [sys.executable, "-c", DRIVER, address],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if line.strip() != "played":
            process.kill()
            raise RuntimeError(f"the driver did not connect: {line}{process.communicate()[1]}")
        yield process
    finally:
        if process.poll() is None:
            assert process.stdin is not None
            with contextlib.suppress(OSError):
                process.stdin.write("\n")
                process.stdin.flush()
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


def private_env(home: Path) -> dict[str, str]:
    """The environment of a one-machine cluster kept on loopback, as the README documents: Ray told
    that it runs on one machine (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``: it then keeps
    ``--node-ip-address 127.0.0.1`` as given), with its token (``RAY_AUTH_MODE=token``)."""
    return {**base_env(home), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def base_env(home: Path) -> dict[str, str]:
    """This environment with token auth on, and a home of its own (where Ray keeps its token)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    home.mkdir(parents=True, exist_ok=True)
    token = home / ".ray" / "auth_token"
    token.parent.mkdir(exist_ok=True)
    if not token.exists():
        token.write_text(os.urandom(16).hex())
    # The head's GCS may take longer than Ray's 30 s to bind its port on a loaded machine.
    return {
        **env,
        "HOME": str(home),
        "RAY_AUTH_MODE": "token",
        "RAY_gcs_server_port_wait_time_s": "180",
    }


def table(found: Iterable[Listener], outside: str | None) -> list[str]:
    """One line a socket: process, bound address, port, and what a caller without a token gets."""
    return [
        f"{x.process:<28} {x.ip:>22} {x.port:<6} {probe(reach(x, outside), x.port)}" for x in found
    ]


def _show(words: list[str], env: dict[str, str], temp: Path, connect_to: str) -> None:
    outside = routable_ip()
    port = int(words[words.index("--port") + 1])
    with head(words, env, temp) as node, driver(connect_to.format(port=port), env) as coordinator:
        time.sleep(5)  # the agents' ports open once the node has registered
        found = listeners(descendants(node.pid) + descendants(coordinator.pid))
        print(f"ray start --head {' '.join(words)}")
        print("\n".join(table(found, outside)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bare", action="store_true", help="only Ray's defaults")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="exposure-") as folder:
        temp = Path(folder)
        common = ["--port", str(free_port()), "--num-cpus", "1"]
        if not args.bare:
            _show(
                [*common, "--node-ip-address", "127.0.0.1", "--include-dashboard", "false"],
                private_env(temp / "home"),
                temp / "private",
                "127.0.0.1:{port}",
            )
        _show(common, base_env(temp / "home"), temp / "bare", f"{routable_ip()}:{{port}}")


if __name__ == "__main__":
    main()
