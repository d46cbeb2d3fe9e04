"""The JavaScript example bot (clients/javascript) plays a real match through the referee's gRPC server
against the Python random bot: two games of two-handed, started with the Admin API, played to the end."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.game import Action
from arena.referee import MatchConfig, MatchRecord, TimeControl
from arena.referee.record import replay
from arena.service.match_manager import PlayerSpec
from arena.service.server import admin_channel, create_server
from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2, game_pb2

pytestmark = pytest.mark.slow  # Node bots playing whole matches

ROOT = Path(__file__).resolve().parents[2]
JS_DIR = ROOT / "clients" / "javascript"
JS_BOT = JS_DIR / "bot.js"
JS_SEAT = 0
MATCH_TIMEOUT_S = 600.0  # a whole match on a loaded 2-core machine; it normally takes a few seconds

# Points per combination, as the JavaScript bot's score table: it must pick the best declaration.
SCORES = {
    "marriage": 20,
    "royal-marriage": 40,
    "plain-sequence": 150,
    "sequence": 250,
    "bezique": 40,
    "double-bezique": 500,
    "triple-bezique": 1500,
    "quadruple-bezique": 4500,
    "four-knaves": 40,
    "four-queens": 60,
    "four-kings": 80,
    "four-aces": 100,
    "seven-of-trumps": 10,
    "carte-blanche": 50,
}


def _score(text: str) -> int | None:
    words = text.split()
    if words[0] == "declare":
        return SCORES[words[1]]
    if words[0] == "exchange":
        return SCORES["seven-of-trumps"]
    return None


def _node() -> str:
    """The node executable; without node or the installed dependencies, fail in CI, else skip."""
    node = shutil.which("node")
    missing = []
    if node is None:
        missing.append("`node` is not on PATH")
    if not (JS_DIR / "node_modules").is_dir():
        missing.append("clients/javascript/node_modules is missing")
    if node is None or missing:
        message = "; ".join(missing) + ": run `npm ci --prefix clients/javascript`"
        if os.environ.get("CI"):
            pytest.fail(f"the JavaScript bot test cannot run in CI: {message}")
        pytest.skip(message)
    return node


async def _play(node: str, logs: Path) -> tuple[MatchRecord, admin_pb2.MatchInfo, list[str]]:
    server, _, manager = await create_server(logs_dir=logs, admin_address="127.0.0.1:0")
    try:
        async with admin_channel(server.admin_address, server.admin_token) as channel:
            admin = admin_pb2_grpc.AdminStub(channel)
            seats = [
                admin_pb2.SeatSpec(
                    name="js", command=f"{shlex.quote(node)} {shlex.quote(str(JS_BOT))}"
                ),
                admin_pb2.SeatSpec(
                    name="py-random",
                    command=f"{shlex.quote(sys.executable)} -m arena_bot.random_bot",
                ),
            ]
            started = await admin.StartMatch(
                admin_pb2.StartMatchRequest(
                    variant="two-handed",
                    seats=seats,
                    games=2,
                    seed=20240611,
                    time_control=bot_pb2.TimeControl(budget_ms=5000, bank_ms=30_000, grace_ms=1000),
                    policies=bot_pb2.Policies(
                        on_timeout=bot_pb2.FAILURE_POLICY_FORFEIT,
                        on_illegal_action=bot_pb2.FAILURE_POLICY_FORFEIT,
                        on_crash=bot_pb2.FAILURE_POLICY_FORFEIT,
                        on_protocol_error=bot_pb2.FAILURE_POLICY_FORFEIT,
                        max_strikes=1,
                    ),
                    connect_timeout_ms=120_000,  # node starts slowly on a loaded machine
                )
            )
            entry = manager.matches[started.match_id]
            await asyncio.wait_for(entry.done.wait(), timeout=MATCH_TIMEOUT_S)
            info = await admin.GetMatch(admin_pb2.GetMatchRequest(match_id=started.match_id))
            bot_names = [p.bot_name for seat in entry.players for p in seat]
        assert entry.error == "", entry.error
        assert entry.record is not None
        return entry.record, info, bot_names
    finally:
        await manager.close()
        await server.stop(grace=None)


def _bot_logs(logs: Path) -> str:
    return "\n".join(
        f"--- {p.name}\n{p.read_text(errors='replace')}" for p in sorted(logs.glob("*"))
    )


def test_javascript_bot_plays_a_match_against_the_python_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = _node()
    monkeypatch.setenv("BOT_SEED", "7")  # both bots' choices, hence the whole match, are fixed
    logs = tmp_path / "logs"
    record, info, bot_names = asyncio.run(_play(node, logs))
    context = _bot_logs(logs)

    # Both bots dialled in and said who they are.
    assert bot_names == ["js-declarer", "random"], context
    assert record.players == [["js"], ["py-random"]]

    # Both games were played to the end under the rules, as the record and the Admin API say.
    assert len(record.games) == 2
    for game in record.games:
        assert (game.outcome, game.detail, game.culprit) == ("normal", "", -1), context
        assert game.strikes == [0, 0]
    assert info.summary.status == "finished"
    assert info.summary.games_played == 2
    assert [g.outcome for g in info.games] == [game_pb2.OUTCOME_NORMAL] * 2

    declared = 0
    for game in record.games:
        js = [d for d in game.decisions if d.seat == JS_SEAT]
        assert js, f"game {game.index}: the JavaScript seat was never asked"
        for d in js:
            # Every decision of the JavaScript seat got a legal reply, which was played.
            assert d.failure is None, (d, context)
            assert d.reply is not None and d.reply in d.legal, d
            assert d.action == d.reply
            # Its policy: the best-scoring declaration whenever one is legal.
            scores = [s for s in map(_score, d.legal) if s is not None]
            if scores:
                assert _score(d.reply) == max(scores), d
                declared += 1
    assert declared > 0, "the JavaScript bot never had a declaration to make: pick another seed"

    # The record is complete: replaying its decisions from its seed ends each game with its result.
    for game in record.games:
        assert game.decks and game.events and game.decisions
        assert [d.request_id for d in game.decisions] == sorted(
            {d.request_id for d in game.decisions}
        )
        state = replay(record, game)
        for d in game.decisions:
            assert not state.is_terminal()
            assert Action.parse(d.action) in state.legal_actions()
            state.apply(Action.parse(d.action))
        assert state.is_terminal()
        result: dict[str, Any] = game.result
        assert list(state.result().scores) == result["scores"]
        assert list(state.result().ranking) == result["ranking"]
    assert [list(g.scores) for g in info.games] == [g.result["scores"] for g in record.games]
    # The record survives its own serialisation.
    assert MatchRecord.from_dict(record.to_dict()).to_dict() == record.to_dict()


def test_javascript_bot_plays_several_matches_over_one_stream(tmp_path: Path) -> None:
    """With matches_per_process, the JavaScript and Python bots are welcomed to a second match on
    the stream they already hold, and play it to the end."""
    node = _node()

    async def go() -> list[Any]:
        server, _, manager = await create_server(logs_dir=tmp_path)
        try:
            specs = [
                [PlayerSpec("js", f"{shlex.quote(node)} {shlex.quote(str(JS_BOT))}")],
                [PlayerSpec("py", f"{shlex.quote(sys.executable)} -m arena_bot.random_bot")],
            ]
            entries = []
            for seed in (11, 12):
                config = MatchConfig(
                    seed=seed,
                    time_control=TimeControl(budget_ms=5000, bank_ms=30_000, grace_ms=1000),
                )
                entry = manager.create(config, specs, 120.0, matches_per_process=2)
                await manager.start(entry)
                await asyncio.wait_for(entry.done.wait(), timeout=MATCH_TIMEOUT_S)
                entries.append(entry)
            return entries
        finally:
            await manager.close()
            await server.stop(grace=None)

    first, second = asyncio.run(go())
    context = _bot_logs(tmp_path)
    for entry in (first, second):
        assert entry.record is not None, (entry.error, context)
        assert [g.outcome for g in entry.record.games] == ["normal"], context
        assert [p.bot_name for seat in entry.players for p in seat] == ["js-declarer", "random"]
    assert len(first.processes) == 2
    assert second.processes == [], "the second match launched new processes"


def test_javascript_bot_plays_a_deal_the_same_whatever_it_played_before(tmp_path: Path) -> None:
    """issue 14: the JavaScript bot (and the Python random bot beside it) draw their random numbers
    from the game's seed, so a process that has played a match before plays the next match's deal
    move for move as fresh processes do."""
    node = _node()
    specs = [
        [PlayerSpec("js", f"{shlex.quote(node)} {shlex.quote(str(JS_BOT))}")],
        [PlayerSpec("py", f"{shlex.quote(sys.executable)} -m arena_bot.random_bot")],
    ]

    async def go(seeds: list[int], per_process: int) -> list[Any]:
        server, _, manager = await create_server(logs_dir=tmp_path)
        try:
            entries = []
            for seed in seeds:
                config = MatchConfig(
                    seed=seed,
                    time_control=TimeControl(budget_ms=5000, bank_ms=30_000, grace_ms=1000),
                )
                entry = manager.create(config, specs, 120.0, matches_per_process=per_process)
                await manager.start(entry)
                await asyncio.wait_for(entry.done.wait(), timeout=MATCH_TIMEOUT_S)
                entries.append(entry)
            return entries
        finally:
            await manager.close()
            await server.stop(grace=None)

    _, second = asyncio.run(go([31, 32], per_process=2))
    (alone,) = asyncio.run(go([32], per_process=1))
    context = _bot_logs(tmp_path)
    assert second.processes == [], "the second match launched new processes"
    plays = []
    for entry in (second, alone):
        assert entry.record is not None, (entry.error, context)
        assert [g.outcome for g in entry.record.games] == ["normal"], context
        plays.append([(d.seat, d.action) for d in entry.record.games[0].decisions])
    assert plays[0] == plays[1]
    assert any(seat == JS_SEAT for seat, _ in plays[0])
