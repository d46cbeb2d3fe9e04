"""The referee service end to end, through a real server on free loopback ports: the admin service on
its own listener with its token (StartMatch with local bots, ListMatches, GetMatch, WatchMatch from the
start), the health and reflection services, remote bots dialling in with the tokens StartMatch returns
on the bot listener, bad StartMatch arguments, and the server's own limits for admin-started bots."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shlex
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena.bots.limits import Limits
from arena.sandbox import SOCKET_ADDRESS
from arena.sandbox import probe as sandbox_probe
from arena.service.match_manager import MatchManager
from arena.service.server import admin_channel, create_server
from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2, game_pb2
from arena_bot import run
from arena_bot.greedy_bot import GreedyBot
from arena_bot.random_bot import RandomBot

PY = shlex.quote(sys.executable)
GENEROUS = bot_pb2.TimeControl(budget_ms=5_000, bank_ms=20_000, grace_ms=1_000)
TIMEOUT = 90.0
T = TypeVar("T")

# Every public log entry has one of these forms (arena/game/events.py); none names a hidden card.
CARD = r"[789JQKTA][SHDC]\.[1-4]"
PUBLIC_EVENT = re.compile(
    "|".join(
        [
            rf"seat \d plays {CARD}",
            r"seat \d wins trick \d+",
            rf"seat \d declares [a-z-]+( {CARD})* for \d+",
            rf"seat \d exchanges {CARD} for the turn-up {CARD}",
            rf"seat \d draws the turn-up {CARD}",
            r"seat \d shows carte blanche:( [789JQKTA][SHDC])+",
            r"seat \d scores \d+ for [a-z-]+",
            r"seat \d fixes trumps: [SHDC]",
            rf"deal \d+: seat \d deals(, turn-up {CARD})?",
            r"seat \d cuts [789JQKTA][SHDC] for the deal",  # issue 48: the cut for the deal
            r"seat \d inquires of seat \d",  # four-handed partners, inquiry on
            r"seat \d answers: nothing to declare",
        ]
    )
)


@asynccontextmanager
async def serving(
    records: Path | None = None, logs: Path | None = None, limits: Limits | None = None
) -> AsyncIterator[tuple[str, str, str, MatchManager]]:
    """The bot address, the admin address and token, and the manager of a running server."""
    server, port, manager = await create_server(
        "127.0.0.1:0",
        records_dir=records,
        logs_dir=logs,
        admin_address="127.0.0.1:0",
        limits=limits,
    )
    try:
        yield f"127.0.0.1:{port}", server.admin_address, server.admin_token, manager
    finally:
        await manager.close()
        await server.stop(None)


def scenario(body: Callable[[str, MatchManager, grpc.aio.Channel], Any], **kw: Any) -> Any:
    """Run ``body(bot address, manager, admin channel)`` against a running server."""

    async def go() -> Any:
        async with (
            serving(**kw) as (address, admin_address, token, manager),
            admin_channel(admin_address, token) as channel,
        ):
            return await asyncio.wait_for(body(address, manager, channel), TIMEOUT)

    return asyncio.run(go())


def local(name: str, module: str) -> admin_pb2.SeatSpec:
    return admin_pb2.SeatSpec(name=name, command=f"{PY} -m arena_bot.{module}")


@pytest.mark.slow
def test_admin_starts_lists_gets_and_watches_a_match_of_local_bots(tmp_path: Path) -> None:
    async def body(
        address: str, manager: MatchManager, channel: grpc.aio.Channel
    ) -> dict[str, Any]:
        admin = admin_pb2_grpc.AdminStub(channel)
        started = await admin.StartMatch(
            admin_pb2.StartMatchRequest(
                variant="two-handed",
                seats=[local("random", "random_bot"), local("greedy", "greedy_bot")],
                games=2,
                seed=31,
                time_control=GENEROUS,
            )
        )
        listed = await admin.ListMatches(admin_pb2.ListMatchesRequest())
        events = [
            e
            async for e in admin.WatchMatch(
                admin_pb2.WatchMatchRequest(match_id=started.match_id, from_start=True)
            )
        ]
        entry = manager.matches[started.match_id]
        await entry.done.wait()
        info = await admin.GetMatch(admin_pb2.GetMatchRequest(match_id=started.match_id))
        late = [
            e
            async for e in admin.WatchMatch(
                admin_pb2.WatchMatchRequest(match_id=started.match_id, from_start=True)
            )
        ]
        return {
            "started": started,
            "listed": listed,
            "events": events,
            "late": late,
            "info": info,
            "entry": entry,
        }

    got = scenario(body, records=tmp_path)
    started, entry, info = got["started"], got["entry"], got["info"]
    assert started.match_id and list(started.tokens) == []  # local bots need no token handed out
    summaries = {m.match_id: m for m in got["listed"].matches}
    assert summaries[started.match_id].variant == "two-handed"
    assert list(summaries[started.match_id].seat_names) == ["random", "greedy"]
    assert summaries[started.match_id].games == 2
    record = entry.record
    assert record is not None, entry.error
    assert [g.outcome for g in record.games] == ["normal", "normal"]
    assert record.players == [["random"], ["greedy"]]
    # WatchMatch from the start: every public event, in order, and nothing else.
    events = got["events"]
    assert [(e.game, e.sequence) for e in events] == [
        (g.index, i) for g in record.games for i in range(len(g.events))
    ]
    assert [e.text for e in events] == [t for g in record.games for t in g.events]
    assert all(e.match_id == started.match_id for e in events)
    assert all(PUBLIC_EVENT.fullmatch(e.text) for e in events), [
        e.text for e in events if not PUBLIC_EVENT.fullmatch(e.text)
    ]
    assert [e.text for e in got["late"]] == [e.text for e in events]
    # GetMatch: the summary and each game's result.
    assert info.summary.status == "finished"
    assert (info.summary.games_played, info.summary.games) == (2, 2)
    assert [g.outcome for g in info.games] == [game_pb2.OUTCOME_NORMAL] * 2
    assert [list(g.scores) for g in info.games] == [g.result["scores"] for g in record.games]
    assert [list(g.ranking) for g in info.games] == [g.result["ranking"] for g in record.games]
    # The full record is saved as JSON.
    saved = json.loads((tmp_path / f"{started.match_id}.json").read_text())
    assert saved["match_id"] == started.match_id
    assert [g["events"] for g in saved["games"]] == [g.events for g in record.games]


@pytest.mark.slow
def test_local_bots_hear_every_game_over_and_the_match_over(tmp_path: Path) -> None:
    """bot.proto: a bot gets GameOver after each game and MatchOver at the end, then the referee ends
    the stream. Local bots (recording every message) must get them before they are stopped."""
    recorder = Path(__file__).resolve().parent / "bots" / "recorder.py"

    command = shlex.join([sys.executable, str(recorder)])  # what it receives goes to its log

    async def body(address: str, manager: MatchManager, channel: grpc.aio.Channel) -> Any:
        admin = admin_pb2_grpc.AdminStub(channel)
        started = []
        for m in range(2):
            seats = [admin_pb2.SeatSpec(name=f"rec{s}", command=command) for s in range(2)]
            started.append(
                await admin.StartMatch(
                    admin_pb2.StartMatchRequest(
                        variant="rubicon", seats=seats, games=2, seed=33 + m, time_control=GENEROUS
                    )
                )
            )
        entries = [manager.matches[s.match_id] for s in started]
        for entry in entries:
            await entry.done.wait()
        return entries

    logs = tmp_path / "logs"
    entries = scenario(body, logs=logs, limits=Limits(log_bytes=100_000_000))
    for m, entry in enumerate(entries):
        assert entry.record is not None, entry.error
        assert [g.outcome for g in entry.record.games] == ["normal", "normal"]
        for s in range(2):
            (log,) = logs.glob(f"{entry.match_id}-seat{s}-0-*.log")
            text = log.read_text()
            received = [
                bot_pb2.RefereeMessage.FromString(base64.b64decode(x.removeprefix("RECORD ")))
                for x in text.splitlines()
                if x.startswith("RECORD ")
            ]
            kinds = [message.WhichOneof("body") for message in received]
            assert kinds.count("game_over") == 2 and kinds[-1] == "match_over", (m, s, kinds[-3:])
            over = received[-1].match_over
            assert over.match_id == entry.match_id and len(over.games) == 2


def test_health_and_reflection() -> None:
    """The bot listener serves the bot gateway and health, nothing else; the admin listener serves
    admin, health and reflection, every call with the token."""

    async def go() -> dict[str, Any]:
        async with serving() as (address, admin_address, token, _):
            out: dict[str, Any] = {}
            async with grpc.aio.insecure_channel(address) as bots:
                health = health_pb2_grpc.HealthStub(bots)
                out["bot health"] = {
                    name: (await health.Check(health_pb2.HealthCheckRequest(service=name))).status
                    for name in ("", "arena.v1.BotGateway")
                }
                with pytest.raises(grpc.aio.AioRpcError) as absent:
                    await health.Check(health_pb2.HealthCheckRequest(service="arena.v1.Admin"))
                out["admin health on bots"] = absent.value.code()
                for name, call in (
                    ("admin on bots", _list(bots)),
                    ("reflection on bots", _reflect_refused(bots)),
                ):
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await call
                    out[name] = refused.value.code()
            async with grpc.aio.insecure_channel(admin_address) as anonymous:
                for name, call in (
                    ("admin without token", _list(anonymous)),
                    ("reflection without token", _reflect_refused(anonymous)),
                    (
                        "health without token",
                        health_pb2_grpc.HealthStub(anonymous).Check(
                            health_pb2.HealthCheckRequest()
                        ),
                    ),
                ):
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await call
                    out[name] = refused.value.code()
            async with admin_channel(admin_address, token) as admin:
                health = health_pb2_grpc.HealthStub(admin)
                out["admin health"] = {
                    name: (await health.Check(health_pb2.HealthCheckRequest(service=name))).status
                    for name in ("", "arena.v1.Admin")
                }
                out["listed"] = await _reflect(admin, "")
                out["described"] = await _reflect(admin, "arena.v1.Admin")
            return out

    out = asyncio.run(go())
    serving_ = health_pb2.HealthCheckResponse.SERVING
    assert out["bot health"] == {"": serving_, "arena.v1.BotGateway": serving_}
    assert out["admin health on bots"] is grpc.StatusCode.NOT_FOUND
    assert out["admin on bots"] is grpc.StatusCode.UNIMPLEMENTED
    assert out["reflection on bots"] is grpc.StatusCode.UNIMPLEMENTED
    for name in ("admin without token", "reflection without token", "health without token"):
        assert out[name] is grpc.StatusCode.UNAUTHENTICATED, name
    assert out["admin health"] == {"": serving_, "arena.v1.Admin": serving_}
    names = {s.name for s in out["listed"].list_services_response.service}
    assert names == {
        "arena.v1.Admin",
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    }
    assert out["described"].file_descriptor_response.file_descriptor_proto


async def _list(channel: grpc.aio.Channel) -> admin_pb2.ListMatchesResponse:
    return await admin_pb2_grpc.AdminStub(channel).ListMatches(admin_pb2.ListMatchesRequest())


async def _reflect(
    channel: grpc.aio.Channel, symbol: str
) -> reflection_pb2.ServerReflectionResponse:
    call = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo()
    if symbol:
        await call.write(reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol))
    else:
        await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    response = await call.read()
    await call.done_writing()
    assert isinstance(response, reflection_pb2.ServerReflectionResponse)
    return response


async def _reflect_refused(channel: grpc.aio.Channel) -> object:
    """Opens a reflection stream and reads, writing nothing: the server refuses the call at once, and
    grpc.aio reports a write that lands after the refusal as INTERNAL, hiding the server's status.
    A server that served the call would wait for a request: the timeout turns that into a failure."""
    call = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo()
    return await asyncio.wait_for(call.read(), timeout=30)


@pytest.mark.slow
def test_admin_started_bots_run_under_the_servers_sandbox_and_limits(tmp_path: Path) -> None:
    """A caller cannot loosen the server's policy: the request has no say in limits or sandbox."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os, resource, sys\n"
        "print('limits', resource.getrlimit(resource.RLIMIT_AS)[0], os.getuid(),\n"
        "      os.environ['ARENA_ADDRESS'], file=sys.stderr, flush=True)\n"
    )

    async def body(address: str, manager: MatchManager, channel: grpc.aio.Channel) -> Any:
        admin = admin_pb2_grpc.AdminStub(channel)
        started = await admin.StartMatch(
            admin_pb2.StartMatchRequest(
                variant="two-handed",
                seats=[
                    admin_pb2.SeatSpec(name="probe", command=f"{PY} {shlex.quote(str(probe))}"),
                    admin_pb2.SeatSpec(name="remote"),
                ],
                connect_timeout_ms=1_000,
            )
        )
        entry = manager.matches[started.match_id]
        await entry.done.wait()
        return entry

    logs = tmp_path / "logs"
    entry = scenario(body, logs=logs, limits=Limits(memory_mb=300))
    text = "".join(p.read_text() for p in logs.glob(f"{entry.match_id}-*"))
    words = text.split("limits ", 1)[1].split()
    assert int(words[0]) == 300 * 1024 * 1024  # the server's limit, not the default
    if sandbox_probe("auto").isolated:  # the server's sandbox (the default: isolated)
        assert words[2] == SOCKET_ADDRESS
        if os.geteuid() == 0:
            assert int(words[1]) != 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variant", "players"),
    [("two-handed", 2), ("three-handed-consultation", 3)],
)
def test_remote_bots_dial_in_with_the_tokens_start_match_returns(
    variant: str, players: int
) -> None:
    """Seats with no command are remote: StartMatch returns one token per player, and SDK bots
    running elsewhere (here: threads) dial in with them and play the match to its end."""

    async def body(address: str, manager: MatchManager, channel: grpc.aio.Channel) -> Any:
        admin = admin_pb2_grpc.AdminStub(channel)
        started = await admin.StartMatch(
            admin_pb2.StartMatchRequest(
                variant=variant,
                seats=[admin_pb2.SeatSpec(name=f"remote{i}") for i in range(players)],
                seed=32,
                time_control=GENEROUS,
                connect_timeout_ms=30_000,
            )
        )
        bots = [GreedyBot() if i % 2 else RandomBot(i) for i in range(players)]
        threads = [
            asyncio.to_thread(run, bot, address, t.token)
            for bot, t in zip(bots, started.tokens, strict=True)
        ]
        await asyncio.gather(*threads)
        entry = manager.matches[started.match_id]
        await entry.done.wait()
        return started, entry

    started, entry = scenario(body)
    tokens = list(started.tokens)
    assert len(tokens) == players and len({t.token for t in tokens}) == players
    assert all(len(t.token) >= 16 and not t.token.startswith("-") for t in tokens)
    if players == 2:
        assert [(t.seat, t.team_member) for t in tokens] == [(0, 0), (1, 0)]
    else:
        assert [(t.seat, t.team_member) for t in tokens] == [(0, 0), (1, 0), (1, 1)]
    assert [t.name for t in tokens] == [f"remote{i}" for i in range(players)]
    assert entry.record is not None, entry.error
    assert entry.record.games[0].outcome == "normal"
    members = {(d.seat, d.member) for d in entry.record.games[0].decisions}
    assert members == {(t.seat, t.team_member) for t in tokens}


@pytest.mark.parametrize(
    ("request_fields", "message"),
    [
        ({"variant": "bogus", "seats": 2}, "unknown variant 'bogus'"),
        ({"variant": "two-handed", "seats": 3}, "takes 2 players"),
        ({"variant": "two-handed", "seats": 1}, "got 1 seat spec"),
        ({"variant": "three-handed", "seats": 2}, "takes 3 players"),
        ({"variant": "four-handed-consultation", "seats": 2}, "takes 4 players"),
        (
            {"variant": "two-handed", "seats": 2, "options": {"bezique": "yes"}},
            "no option 'bezique'",
        ),
        (
            {"variant": "two-handed", "seats": 2, "options": {"game_end": "never"}},
            "game_end",
        ),
        ({"variant": "rubicon", "seats": 2, "options": {"game_end": "immediate"}}, "no option"),
        ({"variant": "two-handed", "seats": 2, "games": -1}, "at least one game"),
    ],
    ids=[
        "unknown-variant",
        "too-many-seats",
        "too-few-seats",
        "three-handed-two-seats",
        "consultation-two-players",
        "unknown-option",
        "bad-option-value",
        "rubicon-option",
        "negative-games",
    ],
)
def test_bad_start_match_arguments_are_invalid_argument(
    request_fields: dict[str, Any], message: str
) -> None:
    async def body(address: str, manager: MatchManager, channel: grpc.aio.Channel) -> Any:
        fields = dict(request_fields)
        seats = [admin_pb2.SeatSpec(name=f"s{i}") for i in range(fields.pop("seats"))]
        admin = admin_pb2_grpc.AdminStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await admin.StartMatch(admin_pb2.StartMatchRequest(seats=seats, **fields))
        listed = await admin.ListMatches(admin_pb2.ListMatchesRequest())
        return caught.value, listed

    error, listed = scenario(body)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (error.details() or "")
    assert list(listed.matches) == []  # nothing was created


def test_unknown_matches_are_not_found() -> None:
    async def body(address: str, manager: MatchManager, channel: grpc.aio.Channel) -> Any:
        admin = admin_pb2_grpc.AdminStub(channel)
        errors = []
        for call in (
            admin.GetMatch(admin_pb2.GetMatchRequest(match_id="nope")),
            _drain(admin.WatchMatch(admin_pb2.WatchMatchRequest(match_id="nope"))),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await call
            errors.append(caught.value)
        return errors

    errors = scenario(body)
    assert [e.code() for e in errors] == [grpc.StatusCode.NOT_FOUND] * 2
    assert all("nope" in (e.details() or "") for e in errors)


async def _drain(stream: AsyncIterator[T]) -> list[T]:
    return [item async for item in stream]
