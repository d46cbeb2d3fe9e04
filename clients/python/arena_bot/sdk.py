"""Connect to the referee, present the token, answer every decision request, until the stream closes.

One stream carries one or several matches (the referee may send a new Welcome after a match ends). The
SDK keeps each game's public log, since requests carry only the events the seat has not seen yet, and
hands the bot the engine's own values: an :class:`arena.game.Observation` and the legal
:class:`arena.game.Action` list, so a Python bot can use the rules engine to simulate.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import dataclass

import grpc

from arena.game import Action, Observation
from arena.wire.serde import observation_from_pb
from arena.wire.v1 import bot_pb2, bot_pb2_grpc, game_pb2

PROTOCOL_VERSION = 1


@dataclass(frozen=True, slots=True)
class Clock:
    budget_ms: int  # for this decision
    bank_ms: int  # left for the rest of the game


@dataclass(frozen=True, slots=True)
class GameEnd:
    match_id: str
    game: int
    result: game_pb2.GameResult


class Bot:
    """Override :meth:`decide`; the other hooks are optional."""

    name = "bot"
    version = "0"

    def decide(self, view: Observation, legal: list[Action], clock: Clock) -> Action | str:
        raise NotImplementedError

    def on_welcome(self, welcome: bot_pb2.Welcome) -> None:
        """A match starts: seat, variant, options, time control, policies."""

    def on_game_over(self, end: GameEnd) -> None:
        """A game has ended."""


def run(bot: Bot, address: str | None = None, token: str | None = None) -> None:
    """Play until the referee closes the stream. Address and token default to the environment."""
    address = address or os.environ.get("ARENA_ADDRESS", "")
    token = token or os.environ.get("ARENA_TOKEN", "")
    if not address or not token:
        raise SystemExit("no referee address or token: set ARENA_ADDRESS and ARENA_TOKEN")
    asyncio.run(_play(bot, address, token))


async def _play(bot: Bot, address: str, token: str) -> None:
    hello = bot_pb2.Hello(
        token=token, name=bot.name, version=bot.version, protocol_version=PROTOCOL_VERSION
    )
    logs: dict[tuple[str, int], list[str]] = {}
    async with grpc.aio.insecure_channel(address) as channel:
        call = bot_pb2_grpc.BotGatewayStub(channel).Play()
        try:
            await call.write(bot_pb2.BotMessage(hello=hello))
            while (message := await call.read()) is not grpc.aio.EOF:
                assert isinstance(message, bot_pb2.RefereeMessage)
                kind = message.WhichOneof("body")
                if kind == "request":
                    req = message.request
                    log = logs.setdefault((req.match_id, req.game), [])
                    log.extend(req.events)
                    view = observation_from_pb(req.observation, tuple(log))
                    legal = [Action.parse(a.text) for a in req.legal_actions]  # cached per text
                    choice = bot.decide(view, legal, Clock(req.clock.budget_ms, req.clock.bank_ms))
                    text = choice.text if isinstance(choice, Action) else str(choice)
                    reply = bot_pb2.Reply(
                        request_id=req.request_id, match_id=req.match_id, action=text
                    )
                    await call.write(bot_pb2.BotMessage(reply=reply))
                elif kind == "welcome":
                    bot.on_welcome(message.welcome)
                elif kind == "game_over":
                    end = message.game_over
                    logs.pop((end.match_id, end.game), None)
                    bot.on_game_over(GameEnd(end.match_id, end.game, end.result))
                elif kind == "refused":
                    raise SystemExit(f"the referee refused the bot: {message.refused.reason}")
        except grpc.aio.AioRpcError as exc:
            if exc.code() not in (grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE):
                raise


def main_for(bot: Bot) -> None:
    """Command-line entry point shared by the example bots."""
    parser = argparse.ArgumentParser(description=f"Bezique Arena bot {bot.name!r}")
    parser.add_argument("--address", help="referee address (default: $ARENA_ADDRESS)")
    parser.add_argument("--token", help="seat token (default: $ARENA_TOKEN)")
    args = parser.parse_args()
    try:
        run(bot, args.address, args.token)
    except KeyboardInterrupt:
        sys.exit(130)
