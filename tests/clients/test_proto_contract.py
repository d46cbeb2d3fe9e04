"""The contract in the proto: the comments of ``bot.proto`` state every rule a bot must follow, and
the numbers and words they quote are the referee's own (its limits, timeouts, refusal reasons, the
sandbox's address). A change to the referee that one of these tests catches changes the contract:
the comment is to be changed with it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from arena.bots import launcher
from arena.bots.launcher import BotProcess
from arena.cli import match as cli_match
from arena.play import conformance
from arena.play import game as games
from arena.sandbox import mounts
from arena.service import servicers, sockets
from arena.service import stream_port as ports
from arena.service.match_manager import MatchManager
from arena.service.server import MAX_BOT_RECEIVE_BYTES, MAX_STREAMS_PER_BOT_CONNECTION

PROTO = Path(__file__).resolve().parents[2] / "proto" / "arena" / "wire" / "v1"


def _comments(name: str) -> str:
    """The comments of a .proto file, as one line of text (whitespace folded)."""
    lines = (PROTO / name).read_text().splitlines()
    text = " ".join(line.split("//", 1)[1] for line in lines if "//" in line)
    return " ".join(text.split())


def _number(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    assert found is not None, f"the comment matching {pattern!r} is gone"
    return float(found.group(1))


def test_the_proto_quotes_the_referees_limits() -> None:
    text = _comments("bot.proto")
    size = _number(r"Each message is at most (\d+) KiB \((\d+) bytes\) encoded", text)
    assert size * 1024 == servicers.MAX_BOT_MESSAGE_BYTES
    assert f"({servicers.MAX_BOT_MESSAGE_BYTES} bytes)" in text
    assert _number(r"fails the stream on anything over (\d+) KiB", text) * 1024 == (
        MAX_BOT_RECEIVE_BYTES
    )
    hello = r"the referee waits (\d+) s from the opening of the stream"
    assert _number(hello, text) == servicers.HELLO_TIMEOUT
    assert _number(r"nothing within those (\d+) s", text) == servicers.HELLO_TIMEOUT
    assert _number(r"at most (\d+) characters kept", text) == servicers.MAX_NAME_CHARS
    version = r"(\d+); any other value \(a missing one is 0\) is refused"
    assert _number(version, text) == servicers.PROTOCOL_VERSION
    assert _number(r"keeps at most (\d+) connections open", text) == sockets.MAX_CONNECTIONS_PER_BOT
    assert _number(r"and (\d+) streams on each", text) == MAX_STREAMS_PER_BOT_CONNECTION
    flood = r"More than (\d+) protocol errors not yet charged are a flood"
    assert _number(flood, text) == ports.MAX_REMEMBERED_VIOLATIONS
    assert _number(r"a crash if its process exits within (\d+) s", text) == ports.SETTLE_SECONDS
    grace = inspect.signature(BotProcess.stop).parameters["grace"].default
    assert _number(r"then SIGKILL (\d+) s later", text) == grace
    assert _number(r"Past (\d+) refusals in a burst", text) == servicers.FREE_REFUSALS
    assert _number(r"only after a (\d+) s pause", text) == servicers.REFUSAL_PAUSE


def test_the_proto_quotes_the_connect_timeouts() -> None:
    text = _comments("bot.proto")
    found = re.search(
        r"\((\d+) s for tournaments and `arena match`, (\d+) s for `arena check-bot`, "
        r"StartMatchRequest.connect_timeout_ms over the Admin API, (\d+) s when that is 0\)",
        text,
    )
    assert found is not None, "the connect timeouts sentence changed"
    match_default = inspect.signature(cli_match.match).parameters["connect_timeout"].default
    assert float(found.group(1)) == games.CONNECT_TIMEOUT == match_default
    assert float(found.group(2)) == conformance.CONNECT_TIMEOUT
    admin_default = inspect.signature(MatchManager.create).parameters["connect_timeout"].default
    assert float(found.group(3)) == admin_default
    start_match = inspect.getsource(servicers.Admin.StartMatch).replace("_", "")
    assert f"connecttimeoutms or {int(found.group(3)) * 1000})" in start_match


def test_the_proto_names_the_sandbox_address_and_the_environment() -> None:
    text = _comments("bot.proto")
    assert f'it is always "{mounts.SOCKET_ADDRESS}"' in text
    assert f"{mounts.HOME} (also HOME and TMPDIR)" in text
    source = inspect.getsource(launcher)
    for name in ("ARENA_ADDRESS", "ARENA_TOKEN", "ARENA_BOT_NAME", "ARENA_BOT_MARKER", "BOT_"):
        assert name in text
        assert name in source, f"{name} is no longer what the launcher passes"


def test_the_proto_quotes_every_refusal_reason() -> None:
    """Each reason the Refused comment quotes is one the gateway gives (the version as N)."""
    text = _comments("bot.proto")
    source = inspect.getsource(servicers) + inspect.getsource(MatchManager.claim)
    quoted = [
        "unknown or expired token",
        "this seat is already connected",
        "the first message must be a Hello with the seat's token",
        "is not supported; ",
        "this referee speaks version",
    ]
    for reason in quoted:
        assert reason in text, f"the proto no longer quotes {reason!r}"
        assert reason in source, f"the gateway no longer says {reason!r}"
    assert "protocol version N is not supported; this referee speaks version 1" in text


def test_an_empty_match_id_is_a_protocol_error_in_the_proto_and_the_readme() -> None:
    """The gateway refuses a reply without match_id (tests/service/test_gateway.py): the contract
    says so, and the README no longer says it is allowed."""
    text = _comments("bot.proto")
    assert "never empty (an empty one is a protocol error)" in text
    assert "a reply without match_id" in inspect.getsource(servicers)
    readme = " ".join((PROTO.parents[3] / "clients" / "README.md").read_text().split())
    assert "an empty one is a protocol error" in readme
    assert "an empty one is taken as the match" not in readme
