"""The Java starter kit (clients/java): it builds with make from Debian's packages alone, passes its own
self-test and `arena check-bot` with no mistake, plays a match against the Python greedy bot, and its
SDK behaves as the other SDKs do against a scripted referee: several matches on one stream, unknown
verbs passed through, a request it cannot read or bytes that are no message ending it with one line
on stderr and status 3, never a hang.

Without the toolchain these tests fail (CI installs it: .ci/run); they are never skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

from arena.wire.v1 import bot_pb2, game_pb2

# Building the kit and starting JVMs takes well over 20 s on a loaded machine; the tests share one
# worker so that the kit is built once, in place (its build/ and ./bot are ignored by git).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("java-kit")]

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "clients" / "java"
BOT = KIT / "bot"
ARENA = Path(sys.executable).with_name("arena")
WAIT_S = 300.0  # a build or a match on a loaded 2-core machine; each normally takes seconds


def _run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )


@pytest.fixture(scope="module")
def kit() -> Path:
    """The kit built in place: ./bot and its classes. A missing toolchain fails, naming the packages."""
    make = shutil.which("make")
    assert make is not None, "make is not installed"
    built = _run([make, "-C", str(KIT)])
    assert built.returncode == 0, f"make -C clients/java failed:\n{built.stdout}\n{built.stderr}"
    assert os.access(BOT, os.X_OK), "make -C clients/java made no executable clients/java/bot"
    return BOT


def test_self_test(kit: Path) -> None:
    make = shutil.which("make")
    assert make is not None
    result = _run([make, "-C", str(KIT), "test"])
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    last = next(line for line in reversed(result.stdout.splitlines()) if " passed, " in line)
    assert last.endswith(" passed, 0 failed"), last
    assert int(last.split()[0]) >= 40


def test_check_bot_finds_no_mistake(kit: Path) -> None:
    # As a tournament launches it: in the sandbox where this machine has one (a unix: address there).
    result = _run([str(ARENA), "check-bot", str(kit)])
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert "decisions, 0 mistakes" in result.stdout, result.stdout
    assert "hello: name 'java-greedy'" in result.stdout


def test_match_against_python_greedy(kit: Path, tmp_path: Path) -> None:
    # The light mode: the bot dials the referee over TCP (the sandbox gives it a unix: address). Under
    # an address space of 768 MiB, as the README promises (memory_mb = 768): the JVM's reservations
    # and glibc's malloc arenas (one per thread without MALLOC_ARENA_MAX) must fit.
    prlimit = shutil.which("prlimit")
    assert prlimit is not None, "prlimit (util-linux) is not installed"
    result = _run(
        [
            str(ARENA),
            "match",
            "--bot",
            f"{prlimit} --as={768 * 2**20} {kit}",
            "--bot",
            "{python} -m arena_bot.greedy_bot",
            "--name",
            "java",
            "--name",
            "greedy",
            "--games",
            "2",
            "--seed",
            "7",
            "--sandbox",
            "none",
            "--logs",
            str(tmp_path),
        ]
    )
    logs = "\n".join(f"--- {p.name}\n{p.read_text()}" for p in sorted(tmp_path.glob("*")))
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}\n{logs}"
    games = [line for line in result.stdout.splitlines() if line.startswith("game ")]
    assert len(games) == 2 and all(": normal |" in g for g in games), result.stdout
    java_logs = [p for p in tmp_path.glob("*") if "java" in p.name]
    assert len(java_logs) == 2 and all(p.read_text() == "" for p in java_logs), logs


def test_the_readme_bot_compiles(kit: Path, tmp_path: Path) -> None:
    readme = (KIT / "README.md").read_text()
    source = readme.split("```java\n", 1)[1].split("```", 1)[0]
    (tmp_path / "MyBot.java").write_text(source)
    make = shutil.which("make")
    javac = shutil.which("javac")
    assert make is not None and javac is not None
    classpath = _run([make, "-s", "-C", str(KIT), "classpath"]).stdout.strip()
    compiled = _run(
        [
            javac,
            "-cp",
            f"{KIT / 'build' / 'bot.jar'}:{classpath}",
            "-d",
            str(tmp_path / "classes"),
            str(tmp_path / "MyBot.java"),
        ]
    )
    assert compiled.returncode == 0, compiled.stderr
    assert (tmp_path / "classes" / "mybot" / "MyBot.class").is_file()


# ------------------------------------------------------------------------ against a scripted referee


HAND = ("AS", "8H", "KC", "QS")


def _action(text: str) -> game_pb2.Action:
    words = text.split()
    verbs = {"play": 1, "declare": 2, "exchange": 3, "done": 4}
    verb = verbs.get(words[0], 5)  # 5: a verb added after the kit (four-handed partners' inquire)
    cards = words[2:] if words[0] == "declare" else words[1:] if verb in (1, 3) else []
    return game_pb2.Action(text=text, verb=verb, cards=cards)  # type: ignore[arg-type]


def _request(
    request_id: int, match_id: str, game: int, *legal: str, hand: tuple[str, ...] = HAND
) -> bytes:
    obs = game_pb2.Observation(
        variant="two-handed",
        seat=0,
        to_act=0,
        phase="play",
        trump="C",
        turn_up="9C.1",
        stock_size=20,
        hand=hand,
    )
    request = bot_pb2.DecisionRequest(
        request_id=request_id,
        match_id=match_id,
        game=game,
        seat=0,
        observation=obs,
        legal_actions=[_action(t) for t in legal],
        clock=bot_pb2.Clock(budget_ms=5000, bank_ms=10_000),
        events=[f"deal 1: seat 1 deals, turn-up 9C.1 (request {request_id})"],
    )
    return bot_pb2.RefereeMessage(request=request).SerializeToString()


def _welcome(match_id: str) -> bytes:
    welcome = bot_pb2.Welcome(
        match_id=match_id,
        seat=0,
        variant="two-handed",
        games=1,
        time_control=bot_pb2.TimeControl(budget_ms=5000, bank_ms=10_000, grace_ms=100),
        seat_names=["java", "other"],
    )
    return bot_pb2.RefereeMessage(welcome=welcome).SerializeToString()


def _game_over(match_id: str, game: int) -> bytes:
    result = game_pb2.GameResult(outcome=game_pb2.OUTCOME_NORMAL, culprit=-1)
    over = bot_pb2.GameOver(match_id=match_id, game=game, result=result)
    return bot_pb2.RefereeMessage(game_over=over).SerializeToString()


def _match_over(match_id: str) -> bytes:
    return bot_pb2.RefereeMessage(
        match_over=bot_pb2.MatchOver(match_id=match_id, points=[1.0, 0.0])
    ).SerializeToString()


@dataclass
class Referee:
    """A gRPC server of BotGateway.Play that sends what ``script`` yields (serialized messages, or any
    bytes) and keeps what the bot sent: ``script`` gets a function returning the bot's next message."""

    script: Callable[[Callable[[], bot_pb2.BotMessage | None]], Iterator[bytes]]
    received: list[bot_pb2.BotMessage] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)

    def play(
        self, messages: Iterator[bot_pb2.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[bytes]:
        def next_message() -> bot_pb2.BotMessage | None:
            message = next(messages, None)
            if message is not None:
                self.received.append(message)
            return message

        try:
            yield from self.script(next_message)
        finally:
            self.done.set()

    def serve(self, address: str) -> tuple[grpc.Server, str]:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        handler = grpc.stream_stream_rpc_method_handler(
            self.play,
            request_deserializer=bot_pb2.BotMessage.FromString,
            response_serializer=lambda data: data,
        )
        server.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler("arena.v1.BotGateway", {"Play": handler})]
        )
        port = server.add_insecure_port(address)
        server.start()
        return server, address if address.startswith("unix:") else f"127.0.0.1:{port}"


def _bot_against(
    referee: Referee, address: str = "127.0.0.1:0"
) -> tuple[subprocess.CompletedProcess[str], str]:
    """The bot's run against the referee, and the address it was given."""
    server, dial = referee.serve(address)
    try:
        env = {"PATH": os.environ.get("PATH", ""), "ARENA_ADDRESS": dial, "ARENA_TOKEN": "tok-0"}
        return _run([str(BOT)], env), dial
    finally:
        server.stop(None)


def test_several_matches_on_one_stream_and_an_unknown_verb(kit: Path, tmp_path: Path) -> None:
    def script(receive: Callable[[], bot_pb2.BotMessage | None]) -> Iterator[bytes]:
        assert receive() is not None  # the Hello
        for match_id in ("m1", "m2"):
            yield _welcome(match_id)
            rid = 10 if match_id == "m1" else 2**63 + 5  # uint64 past a signed long: echoed as is
            yield _request(rid, match_id, 0, "play AS", "play 8H", "play KC", "play QS")
            assert receive() is not None
            yield _request(rid + 1, match_id, 0, "inquire")
            assert receive() is not None
            yield _game_over(match_id, 0)
            yield _match_over(match_id)

    referee = Referee(script)
    # Over a Unix socket, as in the sandbox: the SDK's bridge to Java's own Unix sockets.
    result, _ = _bot_against(referee, f"unix:{tmp_path / 'referee.sock'}")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    hello = referee.received[0].hello
    assert (hello.token, hello.name, hello.protocol_version) == ("tok-0", "java-greedy", 1)
    replies = [(m.reply.request_id, m.reply.match_id, m.reply.action) for m in referee.received[1:]]
    assert replies == [
        (10, "m1", "play 8H"),
        (11, "m1", "inquire"),
        (2**63 + 5, "m2", "play 8H"),
        (2**63 + 6, "m2", "inquire"),
    ]


def test_a_request_it_cannot_read_ends_it_with_one_line(kit: Path) -> None:
    def script(receive: Callable[[], bot_pb2.BotMessage | None]) -> Iterator[bytes]:
        receive()
        yield _welcome("m1")
        yield _request(4, "m1", 0, "play AS", "play XZ")
        receive()  # the end of the bot's stream

    referee = Referee(script)
    result, address = _bot_against(referee)
    assert result.returncode == 3, result.stderr
    assert result.stderr == (
        f"java-greedy: cannot read request 4 of match m1 from the referee at {address}: "
        'legal action 2: action "play XZ": '
        '"XZ" is not a card (a card is a rank 7 8 9 J Q K T A and a suit S H D C)\n'
    )
    assert len(referee.received) == 1  # the Hello, and no reply


def test_a_hand_it_cannot_read_ends_it(kit: Path) -> None:
    def script(receive: Callable[[], bot_pb2.BotMessage | None]) -> Iterator[bytes]:
        receive()
        yield _welcome("m1")
        yield _request(4, "m1", 0, "play AS", hand=("AS", "Q\u00a7"))
        receive()

    result, _ = _bot_against(Referee(script))
    assert result.returncode == 3, result.stderr
    assert result.stderr.endswith(
        ': its observation: "Q\u00a7" is not a card (a card is a rank '
        "7 8 9 J Q K T A and a suit S H D C)\n"
    ), result.stderr
    assert result.stderr.count("\n") == 1


def test_a_request_with_no_legal_action_ends_it(kit: Path) -> None:
    def script(receive: Callable[[], bot_pb2.BotMessage | None]) -> Iterator[bytes]:
        receive()
        yield _welcome("m1")
        yield _request(4, "m1", 0)
        receive()

    result, _ = _bot_against(Referee(script))
    assert result.returncode == 3, result.stderr
    assert result.stderr.endswith(": it has no legal action\n"), result.stderr
    assert result.stderr.count("\n") == 1


def test_bytes_that_are_no_message_end_it_with_one_line(kit: Path) -> None:
    def script(receive: Callable[[], bot_pb2.BotMessage | None]) -> Iterator[bytes]:
        receive()
        yield _welcome("m1")
        yield b"\xff\xff\xff\xff"
        receive()

    result, _ = _bot_against(Referee(script))
    assert result.returncode == 3, result.stderr
    assert "sent a message that is not a RefereeMessage" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1


def test_a_stream_ended_mid_match(kit: Path) -> None:
    def script(receive: Callable[[], bot_pb2.BotMessage | None]) -> Iterator[bytes]:
        receive()
        yield _welcome("m7")

    result, _ = _bot_against(Referee(script))
    assert result.returncode == 3, result.stderr
    assert result.stderr.startswith("java-greedy: the referee at 127.0.0.1:"), result.stderr
    assert result.stderr.endswith(" ended the stream in the middle of match m7\n")


def test_refused(kit: Path) -> None:
    def script(receive: Callable[[], bot_pb2.BotMessage | None]) -> Iterator[bytes]:
        receive()
        yield bot_pb2.RefereeMessage(
            refused=bot_pb2.Refused(reason="unknown or expired token")
        ).SerializeToString()

    result, _ = _bot_against(Referee(script))
    assert result.returncode == 4, result.stderr
    assert result.stderr == "java-greedy: the referee refused the bot: unknown or expired token\n"


@pytest.mark.parametrize("address", ["127.0.0.1:9", "unix:/nonexistent/referee.sock"])
def test_unreachable(kit: Path, address: str) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "ARENA_ADDRESS": address, "ARENA_TOKEN": "t"}
    result = _run([str(kit)], env)
    assert result.returncode == 3, result.stderr
    assert result.stderr.startswith(f"java-greedy: cannot reach the referee at {address}: ")
    assert result.stderr.count("\n") == 1


def test_usage(kit: Path) -> None:
    result = _run([str(kit), "--adress", "x"], {"PATH": os.environ.get("PATH", "")})
    assert result.returncode == 2
    assert result.stderr == (
        'java-greedy: unknown argument "--adress" (expected --address HOST:PORT --token TOKEN)\n'
    )
