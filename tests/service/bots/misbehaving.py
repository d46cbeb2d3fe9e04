"""A bot that misbehaves on purpose, one way per mode, for the referee service's tests.

    python misbehaving.py MODE [--out FILE] [--token TOKEN] [--after N]

The referee's address and the seat's token come from ARENA_ADDRESS and ARENA_TOKEN, as the referee
sets them. ``--out`` names a file where the bot writes what it learnt (a refusal's reason) as JSON.

Modes:
  exit           exit at once with code 3, before dialling
  sleep          never dial in; sleep until killed
  hang           present the token, then never answer
  fork-hang      start a child process that sleeps, present the token, never answer
  exit-mid       answer the first legal action N times (--after), then exit with code 1
  crash-start    present the token, then raise an exception on the Welcome
  wrong-id       answer every request with a request id it was never sent
  twice          answer every request twice
  illegal        answer an action that is well formed but not legal
  garbage-text   answer text that is no action at all
  garbage-bytes  answer with bytes that do not decode as a message
  hello-again    answer with a second Hello instead of a Reply
  connect-twice  open a second stream with the same token (and record the answer), then play
  token          present the token given by --token instead of its own, record the answer
  protocol-2     present its token in a Hello of protocol version 2, and exit when refused
  garbage-socket write nonsense bytes to the referee's port (no gRPC at all), then sleep
  chatter-between  play the first legal action, and send a Hello after each MatchOver
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator

import grpc

from arena.wire.v1 import bot_pb2

ALL_PLAYS = [f"play {r}{s}" for s in "SHDC" for r in "789JQKTA"]


class Stream:
    """One BotGateway.Play stream: messages to send go in a queue, answers come from an iterator.
    Messages travel as bytes, so that the bot can also send bytes that are no message at all."""

    def __init__(self, channel: grpc.Channel, token: str, protocol: int = 1) -> None:
        self.outgoing: queue.Queue[bytes | None] = queue.Queue()
        self.send(
            hello=bot_pb2.Hello(
                token=token, name="misbehaving", version="1", protocol_version=protocol
            )
        )
        play = channel.stream_stream(
            "/arena.v1.BotGateway/Play",
            request_serializer=None,
            response_deserializer=bot_pb2.RefereeMessage.FromString,
        )
        self.incoming: Iterator[bot_pb2.RefereeMessage] = play(self._messages())

    def _messages(self) -> Iterator[bytes]:
        while (message := self.outgoing.get()) is not None:
            yield message

    def send(self, **body: object) -> None:
        self.outgoing.put(bot_pb2.BotMessage(**body).SerializeToString())  # type: ignore[arg-type]

    def send_bytes(self, data: bytes) -> None:
        self.outgoing.put(data)

    def reply(self, request: bot_pb2.DecisionRequest, action: str, request_id: int = -1) -> None:
        rid = request.request_id if request_id < 0 else request_id
        self.send(reply=bot_pb2.Reply(request_id=rid, match_id=request.match_id, action=action))

    def close(self) -> None:
        self.outgoing.put(None)


def crash(why: str) -> None:
    """End as an uncaught exception does (its traceback, status 1), but without the interpreter's
    finalisation. At exit, gRPC's blocking API can hang: a daemon thread of a call is stopped while it
    holds the call's lock, and the call's finaliser then waits for that lock for ever (about one exit
    in seventy under load, seen with py-spy). The referee rightly calls a process that never exits a
    disconnect, not a crash, and this bot is here to crash."""
    try:
        raise RuntimeError(why)
    except RuntimeError:
        traceback.print_exc()
    sys.stderr.flush()
    os._exit(1)


def write(path: str | None, data: dict[str, object]) -> None:
    if path:
        with open(path, "w") as f:
            json.dump(data, f)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--out")
    parser.add_argument("--token")
    parser.add_argument("--after", type=int, default=5)
    args = parser.parse_args()
    mode = args.mode
    if mode == "exit":
        sys.exit(3)
    if mode == "sleep":
        time.sleep(3600)
        return
    address = os.environ["ARENA_ADDRESS"]
    if mode == "garbage-socket":
        host, port = address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"\x16\x03\x01 hello? " * 200 + bytes(range(256)) * 20)
            time.sleep(3600)
        return
    token = args.token if mode == "token" else os.environ["ARENA_TOKEN"]
    if mode == "fork-hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        write(args.out, {"child": child.pid})
    with grpc.insecure_channel(address) as channel:
        stream = Stream(channel, token, 2 if mode == "protocol-2" else 1)
        if mode == "connect-twice":
            next(stream.incoming)  # the Welcome: this seat is connected; now the second try
            second = Stream(channel, token)
            answers = list(second.incoming)
            reasons = [m.refused.reason for m in answers if m.HasField("refused")]
            second.close()
            write(
                args.out, {"answers": [m.WhichOneof("body") for m in answers], "reasons": reasons}
            )
        answered = 0
        try:
            for message in stream.incoming:
                kind = message.WhichOneof("body")
                if kind == "refused":
                    write(args.out, {"refused": message.refused.reason})
                    if mode == "protocol-2":
                        sys.exit(4)  # as the SDKs do when refused
                    return
                if kind == "welcome" and mode == "crash-start":
                    crash("this bot crashes as soon as it is welcomed")
                if kind == "match_over" and mode == "chatter-between":
                    stream.send(
                        hello=bot_pb2.Hello(token=token, name="chatter", protocol_version=1)
                    )
                if kind != "request":
                    continue
                req = message.request
                legal = [a.text for a in req.legal_actions]
                if mode in ("hang", "fork-hang"):
                    continue
                if mode == "exit-mid" and answered >= args.after:
                    os._exit(1)
                if mode == "wrong-id":
                    stream.reply(req, legal[0], request_id=req.request_id + 1000)
                elif mode == "twice":
                    stream.reply(req, legal[0])
                    stream.reply(req, legal[0])
                elif mode == "illegal":
                    stream.reply(req, next(p for p in ALL_PLAYS if p not in legal))
                elif mode == "garbage-bytes":
                    stream.send_bytes(b"\xff\xfe\xfd garbage, not a BotMessage \x07\x00")
                elif mode == "garbage-text":
                    stream.reply(req, "\x00\x01 not an action \xff")
                elif mode == "hello-again":
                    stream.send(hello=bot_pb2.Hello(token=token, name="again", protocol_version=1))
                else:
                    stream.reply(req, legal[0])
                answered += 1
        except grpc.RpcError:
            pass
        finally:
            stream.close()


if __name__ == "__main__":
    main()
