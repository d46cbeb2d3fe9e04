"""The red team's attacks of issue 47, and what each costs the server: its health check's latency
and its memory while the attack runs.

    python benchmarks/attacks.py [--flood 1100] [--flood-many 15000] [--only NAME ...]

A referee (``create_server``: the bots' listener and the admin listener, guarded as ``arena serve``
and a competition guard theirs) runs in a process of its own, on loopback. The benchmark checks its
health (the bots' listener's ``Health.Check``, from 127.0.0.1, every 50 ms) throughout each attack,
and reads the server's memory from ``/proc`` (VmRSS now, VmHWM its peak) before and after:

- ``gzip-global-pax``: a 1 KB gzip bundle of three 64 KiB global pax headers;
- ``bzip2-pax``: an 842-byte-class bzip2 bundle of one 120 KB pax header;
- ``bzip2-long-name``: a bzip2 bundle of a GNU long name of 300 MB;
  each handed to the bundle store as a competition's Submit hands it (``Store.put`` in a worker
  thread of the server's process), its answer and time printed;
- ``flood-bots``: ``--flood`` idle TCP connections from 127.0.0.2 to the bots' listener (half of them
  say HTTP/2's preface), then a match of two registered remote seats started through the admin
  listener and played from 127.0.0.1: whether it finishes with no forfeit;
- ``flood-admin``: as many idle connections to the admin listener, then an admin call;
- ``flood-many``: ``--flood-many`` (15,000) idle connections to the admin listener, which has the
  submission port's guard (20,174 of them once spent the competition server's open files): the
  server's open files after, and an admin call.

Every wait is bounded (an attack's at most ``--seconds``) and Ctrl-C ends the run and the server.
Each line: ``attack NAME health_ms p50 P50 max MAX rss_mb BEFORE->AFTER peak_mb PEAK result ...``.
With ``PYTHONPATH`` set to an older checkout, the same script measures the code before the fixes
(the server is then started without the guard, which that code does not have).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "competition"))  # the hostile archives' builders

TOKEN = "attacks-benchmark-admin-token"
ATTACKER = "127.0.0.2"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

SERVER = r"""
import asyncio, inspect, json, sys, tempfile, threading, time
from pathlib import Path
from arena.competition import bundles
from arena.service import server as service

async def main():
    kwargs = {}
    if "guarded" in inspect.signature(service.create_server).parameters:
        kwargs["guarded"] = True
    server, port, manager = await service.create_server(
        "127.0.0.1:0", admin_address="127.0.0.1:0", admin_token=sys.argv[1], **kwargs
    )
    print(json.dumps({"bots": f"127.0.0.1:{port}", "admin": server.admin_address,
                      "guarded": bool(kwargs)}), flush=True)
    store = bundles.Store(Path(tempfile.mkdtemp()) / "bundles")
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        path = line.strip()
        data = Path(path).read_bytes()
        started = time.monotonic()
        try:
            _, manifest, _ = await asyncio.to_thread(store.put, data, 100, 100 * 1024 * 1024)
            answer = {"accepted": manifest.name}
        except bundles.BundleError as exc:
            answer = {"refused": str(exc)[:120]}
        answer["seconds"] = round(time.monotonic() - started, 2)
        print(json.dumps(answer), flush=True)
    await manager.close()
    await server.stop(None)

asyncio.run(main())
"""


def memory(pid: int) -> tuple[float, float]:
    """The process's (VmRSS, VmHWM) in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


class Prober:
    """Health checks of the bots' listener every 50 ms, in a thread: latencies in ms (a failed check
    counts its time, and is counted)."""

    def __init__(self, address: str) -> None:
        import grpc
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        self.channel = grpc.insecure_channel(address)
        self.stub = health_pb2_grpc.HealthStub(self.channel)
        self.request = health_pb2.HealthCheckRequest()
        self.samples: list[float] = []
        self.failed = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                self.stub.Check(self.request, timeout=60, wait_for_ready=True)
            except Exception:
                self.failed += 1
            self.samples.append((time.monotonic() - started) * 1000)
            self.stop.wait(0.05)

    def window(self) -> list[float]:
        taken, self.samples = self.samples, []
        return taken

    def close(self) -> None:
        self.stop.set()
        self.thread.join(70)
        self.channel.close()


def flood(address: str, count: int) -> list[socket.socket]:
    host, port = address.rsplit(":", 1)
    conns = []
    for i in range(count):
        conn = socket.socket(socket.AF_INET)
        try:
            conn.bind((ATTACKER, 0))
            conn.settimeout(5)
            conn.connect((host, int(port)))
            if i % 2 == 0:
                conn.sendall(PREFACE)
        except OSError:
            conn.close()
            continue
        conns.append(conn)
    return conns


def held(conns: list[socket.socket]) -> int:
    count = 0
    for conn in conns:
        conn.setblocking(False)
        try:
            while conn.recv(65536):
                pass
        except BlockingIOError:
            count += 1
        except OSError:
            pass
    return count


def play_match(admin: str, seconds: float) -> str:
    """A match of two remote random bots, started through the admin listener: its outcome."""
    import grpc

    from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2
    from arena_bot.random_bot import RandomBot
    from arena_bot.sdk import play

    metadata = (("authorization", f"Bearer {TOKEN}"),)
    with grpc.insecure_channel(admin) as channel:
        stub = admin_pb2_grpc.AdminStub(channel)
        try:
            started = stub.StartMatch(
                admin_pb2.StartMatchRequest(
                    variant="two-handed",
                    seats=[admin_pb2.SeatSpec(name="left"), admin_pb2.SeatSpec(name="right")],
                    seed=5,
                    time_control=bot_pb2.TimeControl(budget_ms=5000, bank_ms=60000, grace_ms=1000),
                    connect_timeout_ms=int(seconds * 1000),
                ),
                metadata=metadata,
                timeout=seconds,
            )
        except grpc.RpcError as exc:
            return f"StartMatch failed: {exc.code().name}"
        errors: list[str] = []

        def seat(i: int, token: str) -> None:
            try:
                play(RandomBot(i), started.bot_address, token)
            except Exception as exc:
                errors.append(type(exc).__name__)

        threads = [
            threading.Thread(target=seat, args=(i, t.token), daemon=True)
            for i, t in enumerate(started.tokens)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(seconds)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            info = stub.GetMatch(
                admin_pb2.GetMatchRequest(match_id=started.match_id), metadata=metadata, timeout=10
            )
            if info.summary.status == "finished":
                outcomes = {1: "normal"}
                found = [outcomes.get(g.outcome, f"outcome {g.outcome}") for g in info.games]
                return f"match {'/'.join(found)}" + (f" (bots: {errors})" if errors else "")
            time.sleep(0.2)
        return "match unfinished"


def start_match_call(admin: str, seconds: float) -> str:
    import grpc

    from arena.wire.v1 import admin_pb2, admin_pb2_grpc

    started = time.monotonic()
    with grpc.insecure_channel(admin) as channel:
        try:
            admin_pb2_grpc.AdminStub(channel).ListMatches(
                admin_pb2.ListMatchesRequest(),
                metadata=(("authorization", f"Bearer {TOKEN}"),),
                timeout=seconds,
            )
        except grpc.RpcError as exc:
            return f"admin call failed: {exc.code().name}"
    return f"admin call answered in {(time.monotonic() - started) * 1000:.0f} ms"


def report(name: str, samples: list[float], failed: int, before: tuple[float, float],
           after: tuple[float, float], result: str) -> None:  # fmt: skip
    p50 = statistics.median(samples) if samples else float("nan")
    top = max(samples) if samples else float("nan")
    print(
        f"attack {name:16} health_ms p50 {p50:7.1f} max {top:8.1f} failed {failed:3d}  "
        f"rss_mb {before[0]:6.0f}->{after[0]:6.0f} peak_mb {after[1]:6.0f} (+{after[1] - before[1]:.0f})"
        f"  {result}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flood", type=int, default=1100, help="idle connections per flood")
    parser.add_argument(
        "--flood-many",
        type=int,
        default=15000,
        help="idle connections of the large flood (the admin listener; the submission port has the "
        "same guard); at most this process's open files allow",
    )
    parser.add_argument("--seconds", type=float, default=90.0, help="the most an attack may take")
    parser.add_argument("--only", nargs="*", default=None, help="attacks to run (by name)")
    args = parser.parse_args()
    from tar_attacks import bzip2_long_name_bundle, bzip2_pax_bundle, global_pax_bundle

    work = Path(tempfile.mkdtemp(prefix="attacks-"))
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, TOKEN],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    prober: Prober | None = None
    try:
        assert proc.stdin is not None and proc.stdout is not None
        where = json.loads(proc.stdout.readline())
        print(f"server pid {proc.pid}: bots {where['bots']}, admin {where['admin']}, "
              f"guarded {where['guarded']}", flush=True)  # fmt: skip
        prober = Prober(where["bots"])
        time.sleep(1.0)
        prober.window()
        bundles_ = {
            "gzip-global-pax": lambda: global_pax_bundle(3, 64 * 1024),
            "bzip2-pax": lambda: bzip2_pax_bundle(120 * 1000),
            "bzip2-long-name": lambda: bzip2_long_name_bundle(300 * 1000 * 1000),
        }
        for name, make in bundles_.items():
            if args.only is not None and name not in args.only:
                continue
            path = work / f"{name}.bundle"
            path.write_bytes(make())
            before = memory(proc.pid)
            prober.window()
            proc.stdin.write(f"{path}\n")
            proc.stdin.flush()
            answer = _read_line(proc, args.seconds)
            time.sleep(0.3)
            samples, failed = prober.window(), prober.failed
            prober.failed = 0
            result = f"{path.stat().st_size} bytes: {answer}"
            report(name, samples, failed, before, memory(proc.pid), result)
        for name, target, count, follow in (
            ("flood-bots", where["bots"], args.flood,
             lambda: play_match(where["admin"], args.seconds)),
            ("flood-admin", where["admin"], args.flood,
             lambda: start_match_call(where["admin"], 30)),
            ("flood-many", where["admin"], args.flood_many,
             lambda: start_match_call(where["admin"], 30)),
        ):  # fmt: skip
            if args.only is not None and name not in args.only:
                continue
            before = memory(proc.pid)
            prober.window()
            conns = flood(target, count)
            time.sleep(1.0)
            kept = held(conns)
            files = len(os.listdir(f"/proc/{proc.pid}/fd"))
            result = f"server open files {files}; " + follow()
            samples, failed = prober.window(), prober.failed
            prober.failed = 0
            after = memory(proc.pid)
            for conn in conns:
                conn.close()
            report(name, samples, failed, before, after,
                   f"{len(conns)} connected, {kept} held after 1 s; {result}")  # fmt: skip
    finally:
        if prober is not None:
            prober.close()
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _read_line(proc: subprocess.Popen[str], seconds: float) -> str:
    """The server's next line, or a note that it gave none within ``seconds``."""
    got: list[str] = []
    reader = threading.Thread(
        target=lambda: got.append(proc.stdout.readline() if proc.stdout else "")
    )
    reader.daemon = True
    reader.start()
    reader.join(seconds)
    return got[0].strip() if got else f"no answer within {seconds:g} s"


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
