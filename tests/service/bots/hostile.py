"""A bot that attacks the referee's resources, one way per mode, for the hardening tests (issue 6).

    python hostile.py MODE [--token TOKEN]

Modes:
  oversized   answer the first request with a reply over the message size limit (not over the
              transport's, which gRPC refuses itself)
  flood       answer the first request with thousands of replies to requests never asked
  flood-after answer the first request, then send thousands of replies to requests never asked
  memory      allocate memory without bound on the first request
  stderr      play the first legal action, writing megabytes to stderr at every decision
  fork        start children in sessions of their own that outlive the bot, then never answer
  token       present the token given by --token (another seat's) instead of its own, then play
"""

from __future__ import annotations

import argparse
import os
import queue
import subprocess
import sys
import time
from collections.abc import Iterator

import grpc

from arena.wire.v1 import bot_pb2, bot_pb2_grpc


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--token")
    args = parser.parse_args()
    token = args.token or os.environ["ARENA_TOKEN"]
    outgoing: queue.Queue[bot_pb2.BotMessage | None] = queue.Queue()
    outgoing.put(
        bot_pb2.BotMessage(
            hello=bot_pb2.Hello(token=token, name="hostile", version="1", protocol_version=1)
        )
    )

    def send() -> Iterator[bot_pb2.BotMessage]:
        while (message := outgoing.get()) is not None:
            yield message

    if args.mode == "fork":
        for _ in range(2):
            try:
                subprocess.Popen(
                    [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
                )
            except OSError:  # a session of its own is refused in the sandbox: a group, then
                subprocess.Popen(
                    [sys.executable, "-c", "import time; time.sleep(600)"], process_group=0
                )
    flooded = False
    with grpc.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
        stub = bot_pb2_grpc.BotGatewayStub(channel)
        for message in stub.Play(send()):
            if message.WhichOneof("body") != "request":
                continue
            req = message.request
            if args.mode == "oversized":
                huge = "play " + "X" * 40_000
                outgoing.put(
                    bot_pb2.BotMessage(
                        reply=bot_pb2.Reply(
                            request_id=req.request_id, match_id=req.match_id, action=huge
                        )
                    )
                )
            elif args.mode == "flood":
                for i in range(5000):
                    outgoing.put(
                        bot_pb2.BotMessage(
                            reply=bot_pb2.Reply(
                                request_id=10**9 + i, match_id=req.match_id, action="done"
                            )
                        )
                    )
            elif args.mode == "flood-after":
                outgoing.put(
                    bot_pb2.BotMessage(
                        reply=bot_pb2.Reply(
                            request_id=req.request_id,
                            match_id=req.match_id,
                            action=req.legal_actions[0].text,
                        )
                    )
                )
                if not flooded:
                    flooded = True
                    for i in range(20_000):
                        outgoing.put(
                            bot_pb2.BotMessage(
                                reply=bot_pb2.Reply(
                                    request_id=10**9 + i, match_id=req.match_id, action="x"
                                )
                            )
                        )
            elif args.mode == "memory":
                blocks = []
                while True:
                    blocks.append(bytearray(64 * 1024 * 1024))
            elif args.mode == "fork":
                time.sleep(600)
            else:
                if args.mode == "stderr":
                    sys.stderr.write("noise " * 500_000)
                    sys.stderr.flush()
                reply = bot_pb2.Reply(
                    request_id=req.request_id,
                    match_id=req.match_id,
                    action=req.legal_actions[0].text,
                )
                outgoing.put(bot_pb2.BotMessage(reply=reply))
    outgoing.put(None)


if __name__ == "__main__":
    main()
