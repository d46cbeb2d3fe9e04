"""A bot that writes every message the referee sends it as a line, and plays the greedy bot's choice
(a seeded random legal action one time in four, to vary the games). A line is the message's wire
bytes in base64: the tests read thousands, and protobuf's JSON form costs the bot and
the test many times more. The lines go to the file named by the environment variable ARENA_RECORD_TO,
or else to its standard output (hence its log when the arena launched it, sandboxed), each after the
prefix ``RECORD ``.

    ARENA_RECORD_TO=seat0.txt python recorder.py
    python recorder.py                             # RECORD ... lines on stdout
"""

from __future__ import annotations

import base64
import os
import queue
import random
import sys
from collections.abc import Iterator
from typing import TextIO

import grpc

from arena.game import Action
from arena.wire.serde import observation_from_pb
from arena.wire.v1 import bot_pb2, bot_pb2_grpc
from arena_bot import Clock
from arena_bot.greedy_bot import GreedyBot


def main() -> None:
    address, token = os.environ["ARENA_ADDRESS"], os.environ["ARENA_TOKEN"]
    outgoing: queue.Queue[bot_pb2.BotMessage | None] = queue.Queue()
    outgoing.put(
        bot_pb2.BotMessage(
            hello=bot_pb2.Hello(token=token, name="recorder", version="1", protocol_version=1)
        )
    )

    def messages() -> Iterator[bot_pb2.BotMessage]:
        while (message := outgoing.get()) is not None:
            yield message

    greedy = GreedyBot()
    rng = random.Random(0)
    logs: dict[int, list[str]] = {}
    target = os.environ.get("ARENA_RECORD_TO")
    out: TextIO = open(target, "w") if target else sys.stdout  # noqa: SIM115
    prefix = "" if target else "RECORD "
    with out, grpc.insecure_channel(address) as channel:
        try:
            for message in bot_pb2_grpc.BotGatewayStub(channel).Play(messages()):
                out.write(prefix + base64.b64encode(message.SerializeToString()).decode() + "\n")
                out.flush()
                if message.HasField("welcome"):
                    w = message.welcome
                    rng = random.Random(f"{w.match_id}:{w.seat}:{w.team_member}")
                if not message.HasField("request"):
                    continue
                req = message.request
                log = logs.setdefault(req.game, [])
                log.extend(req.events)
                legal = [Action.parse(a.text) for a in req.legal_actions]
                if rng.random() < 0.25:
                    choice = rng.choice(legal)
                else:
                    view = observation_from_pb(req.observation, tuple(log))
                    choice = greedy.decide(
                        view, legal, Clock(req.clock.budget_ms, req.clock.bank_ms)
                    )
                reply = bot_pb2.Reply(
                    request_id=req.request_id, match_id=req.match_id, action=choice.text
                )
                outgoing.put(bot_pb2.BotMessage(reply=reply))
        except grpc.RpcError:
            pass
        finally:
            outgoing.put(None)


if __name__ == "__main__":
    main()
