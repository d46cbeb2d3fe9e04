"""A bot that attacks the arena the ways of issue 12, then plays its first legal action to the end.

    python attacker.py MODE [ARGS...]

It reports what each attempt got on its standard error as ``ATTACK <what>: <result>`` lines (read back
from its log by the tests). Modes:

  admin ADDRESS        call the admin service on the address it was given (ARENA_ADDRESS) and on
                       ADDRESS (the admin listener's TCP address), and start a match there
  kill PID...          SIGKILL these processes (other bots, by their pids on the host), read their
                       environment, and look through /proc for anyone's ARENA_TOKEN
  escape TAG           leave a grandchild behind (new session, environment cleared, double fork)
                       holding the bot's output and its connection to the referee; TAG marks it
  limits               fork at once, before anything else, a child that reports its limits and tries
                       to allocate twice the address space limit and to burn CPU past its limit
  predict SEED         recompute the deal from the public seed of the game and compare the hand
  read PATH...         open these files (a ledger) and read them, and those named in BOT_TARGETS
                       (colon-separated: a path the bot knows without it being on its command line)
  reply TEXT           answer the first request with TEXT (markup injection)
  network              connect to a TCP port of the host and resolve a name
  connections N        once playing, open N more connections to the referee's socket (each saying
                       HTTP/2's preface) and count how many the referee keeps open; hold them all
  users                try to make a user namespace (unshare -U)
"""

from __future__ import annotations

import os
import sys

if len(sys.argv) > 1 and sys.argv[1] == "limits":
    # First thing, before any import: a child forked at once must already be bound.
    import resource

    child = os.fork()
    if child == 0:
        names = ("AS", "CPU", "NPROC", "FSIZE", "NOFILE")
        got = [resource.getrlimit(getattr(resource, f"RLIMIT_{n}"))[0] for n in names]
        print("ATTACK child-limits:", ",".join(map(str, got)), file=sys.stderr, flush=True)
        try:
            blob = bytearray(2 * got[0]) if got[0] > 0 else None
            print("ATTACK child-alloc: allocated", len(blob or b""), file=sys.stderr, flush=True)
        except MemoryError:
            print("ATTACK child-alloc: MemoryError", file=sys.stderr, flush=True)
        os._exit(0)
    os.waitpid(child, 0)

import queue
import signal
import socket
import subprocess
import time
from collections.abc import Iterator

import grpc

from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2, bot_pb2_grpc


def report(what: str, result: object) -> None:
    print(f"ATTACK {what}: {result}", file=sys.stderr, flush=True)


def outcome(call: object) -> str:
    try:
        if callable(call):
            call()
        return "succeeded"
    except grpc.RpcError as exc:
        code = exc.code() if hasattr(exc, "code") else None
        return f"refused {code.name if code is not None else exc}"
    except OSError as exc:
        return f"failed {type(exc).__name__}"


def attack_admin(address: str) -> None:
    request = admin_pb2.StartMatchRequest(
        variant="two-handed",
        seats=[
            admin_pb2.SeatSpec(name="evil", command="sh -c 'touch /tmp/owned; sleep 600'"),
            admin_pb2.SeatSpec(name="evil2"),
        ],
    )
    for where, target in (("gateway", os.environ["ARENA_ADDRESS"]), ("admin", address)):
        with grpc.insecure_channel(target) as channel:
            admin = admin_pb2_grpc.AdminStub(channel)
            report(
                f"list-on-{where}",
                outcome(lambda a=admin: a.ListMatches(admin_pb2.ListMatchesRequest(), timeout=5)),
            )
            report(f"start-on-{where}", outcome(lambda a=admin: a.StartMatch(request, timeout=5)))
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
        report("admin-tcp", "connected")
    except OSError as exc:
        report("admin-tcp", f"failed {type(exc).__name__}")


def attack_kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            report(f"kill-{pid}", "succeeded")
        except OSError as exc:
            report(f"kill-{pid}", f"failed {type(exc).__name__}")
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                report(f"environ-{pid}", f"read {len(f.read())} bytes")
        except OSError as exc:
            report(f"environ-{pid}", f"failed {type(exc).__name__}")
    mine = os.environ.get("ARENA_TOKEN", "")
    found = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    for item in f.read().split(b"\0"):
                        if (
                            item.startswith(b"ARENA_TOKEN=")
                            and item != f"ARENA_TOKEN={mine}".encode()
                        ):
                            found += 1
            except OSError:
                continue
    report("other-tokens", found)
    report("visible-processes", len([e for e in os.listdir("/proc") if e.isdigit()]))


ESCAPEE = """
import os, sys, time
if os.fork():
    os._exit(0)
try:
    os.setsid()
except OSError:  # refused in the sandbox (seccomp): a process group of its own, then
    os.setpgid(0, 0)
if os.fork():
    os._exit(0)
os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", sys.argv[1]])
"""


def attack_escape(tag: str) -> None:
    fds = [int(fd) for fd in os.listdir("/proc/self/fd") if int(fd) > 2]
    held = []
    for fd in fds:
        try:
            os.fstat(fd)
            held.append(fd)
        except OSError:
            continue
    for apart in ({"start_new_session": True}, {"process_group": 0}):
        try:  # a session of its own, or (refused in the sandbox: seccomp) a process group
            subprocess.Popen(
                [sys.executable, "-c", ESCAPEE, tag],
                env={},
                pass_fds=held,
                stdout=None,
                stderr=None,
                **apart,  # type: ignore[call-overload]
            ).wait()
            break
        except OSError:
            continue
    report("escape", f"left a grandchild holding {len(held)} descriptors and the output")


def attack_predict(seed: int, request: bot_pb2.DecisionRequest) -> None:
    from arena.game import GameState, observe, variant
    from arena.wire.serde import fill_observation
    from arena.wire.v1 import game_pb2

    obs = request.observation
    v = variant(obs.variant, **dict(obs.options))
    hand = sorted(obs.hand)
    hits = 0
    for candidate in range(seed - 50, seed + 51):
        state = GameState.new(v, seed=candidate, dealer=obs.dealer)
        guess = game_pb2.Observation()
        fill_observation(guess, observe(state, request.seat))
        if sorted(guess.hand) == hand:
            hits += 1
    report("predict", "predicted" if hits else "not predicted")


def attack_read(paths: list[str]) -> None:
    for path in paths:
        try:
            with open(path, "rb") as f:
                report(f"read {path}", f"read {len(f.read())} bytes")
        except OSError as exc:
            report(f"read {path}", f"failed {type(exc).__name__}")


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
held: list[socket.socket] = []  # open to the end


def attack_connections(count: int) -> None:
    path = os.environ["ARENA_ADDRESS"].removeprefix("unix:")
    for _ in range(count):
        conn = socket.socket(socket.AF_UNIX)
        try:
            conn.connect(path)
            conn.sendall(HTTP2_PREFACE)
        except OSError:
            conn.close()
            continue
        held.append(conn)

    def kept(conn: socket.socket) -> bool:
        conn.setblocking(False)
        try:
            while conn.recv(65536):
                pass
            return False  # the referee closed it
        except BlockingIOError:
            return True  # open, nothing more to read
        except OSError:
            return False

    # Until the referee has closed those it will not keep (a loaded machine takes its time: once it
    # was seen half-way, 39 of 200 still open, when this stopped at the first count under a
    # quarter), and the count has held for a second; or 15 s have passed.
    deadline = time.monotonic() + 15
    last, steady = -1, 0
    while time.monotonic() < deadline:
        alive = sum(kept(c) for c in held)
        steady = steady + 1 if alive == last else 0
        last = alive
        if alive <= count // 4 and steady >= 5:
            break
        time.sleep(0.2)
    report("connections", f"kept {last} of {count}")


def attack_network() -> None:
    try:
        socket.create_connection(("127.0.0.1", 22), timeout=3).close()
        report("tcp", "connected")
    except OSError as exc:
        report("tcp", f"failed {type(exc).__name__}")
    try:
        socket.getaddrinfo("pypi.org", 443)
        report("dns", "resolved")
    except OSError as exc:
        report("dns", f"failed {type(exc).__name__}")


def attack_users() -> None:
    done = subprocess.run(["unshare", "-U", "true"], capture_output=True, text=True)
    report("userns", "made" if done.returncode == 0 else f"failed {done.returncode}")


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "admin":
        attack_admin(args[0])
    elif mode == "kill":
        attack_kill([int(a) for a in args])
    elif mode == "read":
        attack_read(args + [p for p in os.environ.get("BOT_TARGETS", "").split(":") if p])
    elif mode == "network":
        attack_network()
    elif mode == "users":
        attack_users()
    outgoing: queue.Queue[bot_pb2.BotMessage | None] = queue.Queue()
    outgoing.put(
        bot_pb2.BotMessage(
            hello=bot_pb2.Hello(
                token=os.environ["ARENA_TOKEN"], name="attacker", version="1", protocol_version=1
            )
        )
    )

    def send() -> Iterator[bot_pb2.BotMessage]:
        while (message := outgoing.get()) is not None:
            yield message

    first = True
    try:
        with grpc.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
            for message in bot_pb2_grpc.BotGatewayStub(channel).Play(send()):
                if message.WhichOneof("body") != "request":
                    continue
                req = message.request
                action = req.legal_actions[0].text
                if first:
                    first = False
                    if mode == "escape":
                        attack_escape(args[0])
                    elif mode == "predict":
                        attack_predict(int(args[0]), req)
                    elif mode == "reply":
                        action = args[0]
                    elif mode == "connections":
                        attack_connections(int(args[0]))
                reply = bot_pb2.Reply(
                    request_id=req.request_id, match_id=req.match_id, action=action
                )
                outgoing.put(bot_pb2.BotMessage(reply=reply))
    except grpc.RpcError:
        pass
    finally:
        outgoing.put(None)


if __name__ == "__main__":
    main()
