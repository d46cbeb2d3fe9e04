"""Connect to the referee, present the token, answer every decision request, until the stream closes.

One stream carries one or several matches (the referee may send a new Welcome after a match ends). The
SDK keeps each game's public log, since requests carry only the events the seat has not seen yet, and
hands a :class:`Bot` plain values read from the messages (:mod:`arena_bot.values`: a :class:`View`
and the legal :class:`Action` list, cards as their texts). It needs grpcio, protobuf and the
generated protocol only; a bot that simulates subclasses :class:`arena_bot.engine.EngineBot`, which
hands it the rules engine's own values instead (the engine is a package of its own).

Before a game's first ``decide`` the bot's :meth:`Bot.on_game_start` is called with the game's seed
(:func:`game_seed`), a pure function of what the bot is told about the game: a bot that draws its random
numbers from it plays the same deal the same way in every run, however many games its process has
played before.

:func:`run` reports every failure with a one-line message on stderr and an exit status of its own
(:data:`EXIT_USAGE`, :data:`EXIT_CONNECTION`, :data:`EXIT_REFUSED`; a bot's own exception: its traceback
and :data:`EXIT_BOT_ERROR`). :func:`play` is the same session for a program that handles errors itself.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import os
import random
import sys
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

import grpc

from arena.wire.v1 import bot_pb2, bot_pb2_grpc, game_pb2
from arena_bot.values import Action, View, legal_actions, read_view

if TYPE_CHECKING:
    import argparse

PROTOCOL_VERSION = 1

# Exit statuses of run() (and of the JavaScript SDK's main(): the same numbers).
EXIT_OK = 0  # the referee ended the stream after the last match
EXIT_BOT_ERROR = 1  # the bot's own code raised (its traceback is printed)
EXIT_USAGE = 2  # no referee address or token, or a bad command-line option
EXIT_CONNECTION = 3  # the referee could not be reached, or the stream broke or ended mid-match
EXIT_REFUSED = 4  # the referee refused the Hello (the reason is printed)

SEED_VERSION = "arena-game-seed/1"  # the first field of the text game_seed() hashes


@dataclass(frozen=True, slots=True)
class Clock:
    budget_ms: int  # for this decision
    bank_ms: int  # left for the rest of the game


@dataclass(frozen=True, slots=True)
class GameEnd:
    match_id: str
    game: int
    result: game_pb2.GameResult


V = TypeVar("V")  # the view a bot's decide() receives
A = TypeVar("A")  # one legal action as decide() receives it


@dataclass(frozen=True, slots=True)
class GameStart(Generic[V]):
    """A game's first decision for this bot is about to be asked."""

    match_id: str
    game: int  # 0-based, within the match
    seat: int
    seed: int  # game_seed() of this game: the same deal gives the same seed in every run
    view: V  # the bot's first view of the game (as its decide() will receive it)


# ---------------------------------------------------------------------------------- the game's seed


def game_seed_text(
    variant: str, seat: int, game: int, dealer: int, turn_up: str, hand: Iterable[str]
) -> str:
    """The text :func:`game_seed` hashes: ``arena-game-seed/1|variant|seat|game|dealer|turn-up|hand``.

    ``turn_up`` and ``hand`` are card texts as the referee sends them (``AD.1``, ``QS``); only the
    kind is kept (``AD``, ``QS``: a copy's pack number depends on what was shown before), the hand's
    kinds sorted as plain ASCII strings and joined by single spaces, duplicates kept. No turn-up: empty.
    """
    kinds = sorted(card.split(".", 1)[0] for card in hand)
    up = turn_up.split(".", 1)[0]
    return f"{SEED_VERSION}|{variant}|{seat}|{game}|{dealer}|{up}|{' '.join(kinds)}"


def game_seed(
    variant: str, seat: int, game: int, dealer: int, turn_up: str, hand: Iterable[str]
) -> int:
    """A game's seed for a bot's random numbers: the first 8 bytes of the SHA-256 of
    :func:`game_seed_text` (UTF-8), read as a big-endian unsigned integer (0 to 2**64 - 1).

    Its arguments come from the bot's first decision request of the game: the request's ``seat`` and
    ``game`` and its observation's ``variant``, ``dealer``, ``turn_up`` and ``hand``. They depend only
    on the deal (not on the match id, which is random, nor on anything the process did before), so a
    tournament replaying the same deals gives every deterministic bot the same seeds.
    """
    text = game_seed_text(variant, seat, game, dealer, turn_up, hand)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _request_seed(req: bot_pb2.DecisionRequest) -> int:
    obs = req.observation
    return game_seed(obs.variant, req.seat, req.game, obs.dealer, obs.turn_up, obs.hand)


# ---------------------------------------------------------------------------------- the bot


class BotBase(Generic[V, A]):
    """What every bot shares: its name, its per-game random numbers and the hooks the session
    calls. :meth:`view_from` and :meth:`legal_from` say which values :meth:`decide` receives:
    :class:`Bot` (plain values, no engine) and :class:`arena_bot.engine.EngineBot` (the rules
    engine's) define them; a bot subclasses one of those two."""

    name = "bot"
    version = "0"
    game_seed = 0  # the current game's seed (see on_game_start)

    def __init__(self) -> None:
        self.game_seed = 0  # the current game's seed (see on_game_start)
        self.rng = random.Random(0)  # reseeded from the game's seed before each game

    def decide(self, view: V, legal: list[A], clock: Clock) -> A | str:
        """One of ``legal`` (or its exact text): the bot's answer to this decision."""
        raise NotImplementedError

    def view_from(self, observation: game_pb2.Observation, log: Sequence[str]) -> V:
        """The view ``decide`` receives, from the request's observation and the public log."""
        raise NotImplementedError

    def legal_from(self, actions: Sequence[game_pb2.Action]) -> list[A]:
        """The legal actions ``decide`` receives, from the request's."""
        raise NotImplementedError

    def on_welcome(self, welcome: bot_pb2.Welcome) -> None:
        """A match starts: seat, variant, options, time control, policies."""

    def on_game_start(self, start: GameStart[V]) -> None:
        """A game starts for this bot (before its first ``decide`` in the game). By default: keep the
        game's seed in ``self.game_seed`` and reseed ``self.rng`` with it. Override it (calling this or
        not) to seed your own generators from ``start.seed``."""
        self.game_seed = start.seed
        self.rng = random.Random(start.seed)

    def on_game_over(self, end: GameEnd) -> None:
        """A game has ended."""

    def on_match_over(self, over: bot_pb2.MatchOver) -> None:
        """A match has ended: every game's result and the match points per seat."""


class Bot(BotBase[View, Action]):
    """Override :meth:`decide`; the other hooks are optional. ``decide`` receives a
    :class:`arena_bot.values.View` and the legal :class:`arena_bot.values.Action` list: plain values
    read from the request, cards as their texts (``QS``, ``QS.2``)."""

    def view_from(self, observation: game_pb2.Observation, log: Sequence[str]) -> View:
        return read_view(observation, log)

    def legal_from(self, actions: Sequence[game_pb2.Action]) -> list[Action]:
        return legal_actions(actions)


# ---------------------------------------------------------------------------------- errors


class ArenaError(Exception):
    """A failure of the session (not of the bot's own code), reported by its message alone."""

    exit_code = EXIT_CONNECTION


class UsageError(ArenaError):
    """No referee address or token."""

    exit_code = EXIT_USAGE


class UnreachableError(ArenaError):
    """The referee could not be reached."""


class StreamError(ArenaError):
    """The stream broke, or the referee ended it in the middle of a match."""


class RefusedError(ArenaError):
    """The referee refused the Hello."""

    exit_code = EXIT_REFUSED

    def __init__(self, reason: str) -> None:
        super().__init__(f"the referee refused the bot: {reason}")
        self.reason = reason


# ---------------------------------------------------------------------------------- the session


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


async def _send(
    call: grpc.aio.StreamStreamCall[bot_pb2.BotMessage, bot_pb2.RefereeMessage],
    message: bot_pb2.BotMessage,
) -> None:
    try:
        await call.write(message)
    except asyncio.InvalidStateError:
        return  # the call is over (the referee ended it meanwhile): the next read says how


def _limit_ms(req: bot_pb2.DecisionRequest, grace_ms: int | None) -> int | None:
    """The longest the referee waits for a reply to ``req``: budget, bank (sent in whole
    milliseconds, so one more) and grace; None for a match whose Welcome (and so its grace) was not
    seen. The referee's measure starts before the request is sent and ends after the reply arrives:
    a bot that has taken longer by its own clock has certainly been timed out."""
    if grace_ms is None:
        return None
    return req.clock.budget_ms + req.clock.bank_ms + 1 + grace_ms


def _reply_text(bot: BotBase[V, A], choice: object) -> str:
    """The text of what ``decide`` returned: an action (anything with a ``text``) or a text."""
    text = choice if isinstance(choice, str) else getattr(choice, "text", None)
    if not isinstance(text, str):
        raise TypeError(
            f"{type(bot).__name__}.decide() must return an action or an action's text, "
            f"got {choice!r:.80}"
        )
    return text


async def _play(bot: BotBase[V, A], address: str, token: str) -> int:
    hello = bot_pb2.Hello(
        token=token, name=bot.name, version=bot.version, protocol_version=PROTOCOL_VERSION
    )
    logs: dict[tuple[str, int], list[str]] = {}
    graces: dict[str, int] = {}  # match id -> the grace_ms of its time control
    playing: set[str] = set()  # matches welcomed and not over
    welcomed = matches_over = 0
    heard = False  # anything at all from the referee
    async with grpc.aio.insecure_channel(address) as channel:
        call = bot_pb2_grpc.BotGatewayStub(channel).Play()
        try:
            await _send(call, bot_pb2.BotMessage(hello=hello))
            while (message := await call.read()) is not grpc.aio.EOF:
                assert isinstance(message, bot_pb2.RefereeMessage)
                heard = True
                kind = message.WhichOneof("body")
                if kind == "request":
                    received = time.perf_counter()
                    req = message.request
                    key = (req.match_id, req.game)
                    log = logs.get(key)
                    if log is None:
                        log = logs[key] = list(req.events)
                        view = bot.view_from(req.observation, log)
                        seed = _request_seed(req)
                        bot.on_game_start(GameStart(req.match_id, req.game, req.seat, seed, view))
                    else:
                        log.extend(req.events)
                        view = bot.view_from(req.observation, log)
                    legal = bot.legal_from(req.legal_actions)
                    choice = bot.decide(view, legal, Clock(req.clock.budget_ms, req.clock.bank_ms))
                    text = _reply_text(bot, choice)
                    limit = _limit_ms(req, graces.get(req.match_id))
                    took = round((time.perf_counter() - received) * 1000)
                    if limit is not None and took > limit:
                        # The referee has timed the seat out and ignores the reply. Not sent: once
                        # it has ended the stream (after a match's last game) gRPC fails a write
                        # there as an internal error of the whole call, and the GameOver and
                        # MatchOver still to be read would be lost with it.
                        print(
                            f"{bot.name}: request {req.request_id} of match {req.match_id} took "
                            f"{took} ms, past its limit of {limit} ms (budget + bank + grace): "
                            "timed out, the reply is not sent",
                            file=sys.stderr,
                            flush=True,
                        )
                        continue
                    reply = bot_pb2.Reply(
                        request_id=req.request_id, match_id=req.match_id, action=text
                    )
                    try:
                        await _send(call, bot_pb2.BotMessage(reply=reply))
                    except grpc.aio.AioRpcError as exc:
                        # The stream closed while the bot decided. gRPC makes the failed write the
                        # status of the whole call (often 'INTERNAL: Internal error from Core'),
                        # which says nothing of why: say when it happened.
                        raise StreamError(
                            _one_line(
                                f"the stream to the referee at {address} closed while the bot "
                                f"was deciding request {req.request_id} of match {req.match_id}; "
                                f"the reply could not be sent ({exc.code().name}: "
                                f"{exc.details() or ''})"
                            )
                        ) from None
                elif kind == "welcome":
                    welcomed += 1
                    playing.add(message.welcome.match_id)
                    graces[message.welcome.match_id] = message.welcome.time_control.grace_ms
                    bot.on_welcome(message.welcome)
                elif kind == "game_over":
                    end = message.game_over
                    logs.pop((end.match_id, end.game), None)
                    bot.on_game_over(GameEnd(end.match_id, end.game, end.result))
                elif kind == "match_over":
                    over = message.match_over
                    matches_over += 1
                    playing.discard(over.match_id)
                    graces.pop(over.match_id, None)
                    for key in [k for k in logs if k[0] == over.match_id]:
                        del logs[key]
                    bot.on_match_over(over)
                elif kind == "refused":
                    raise RefusedError(message.refused.reason)
                # Any other body (event, or one added later) is not for bots: ignore it.
        except grpc.aio.AioRpcError as exc:
            what = f"{exc.code().name}: {exc.details() or ''}"
            if not heard:
                if exc.code() is grpc.StatusCode.UNAVAILABLE:
                    raise UnreachableError(
                        _one_line(f"cannot reach the referee at {address}: {exc.details() or ''}")
                    ) from None
                raise StreamError(
                    _one_line(f"the referee at {address} ended the stream before a Welcome: {what}")
                ) from None
            if playing:
                raise StreamError(
                    _one_line(
                        f"the stream to the referee at {address} broke during match "
                        f"{sorted(playing)[0]}: {what}"
                    )
                ) from None
            if matches_over == 0:
                raise StreamError(
                    _one_line(f"the stream to the referee at {address} broke: {what}")
                ) from None
            # Broken between matches, after the last one was over: no game is affected.
            return matches_over
    if welcomed == 0:
        raise StreamError(f"the referee at {address} ended the stream without a Welcome or Refused")
    if playing:
        raise StreamError(
            f"the referee at {address} ended the stream in the middle of match {sorted(playing)[0]}"
        )
    return matches_over


def play(bot: BotBase[V, A], address: str, token: str) -> int:
    """One session on one stream, until the referee ends it; the number of matches played.

    Raises :class:`RefusedError`, :class:`UnreachableError` or :class:`StreamError` for the session's
    failures, and whatever the bot's own code raises (the stream is then dropped, which the referee
    records for the seat)."""
    if not address:
        raise UsageError("no referee address: pass --address HOST:PORT or set ARENA_ADDRESS")
    if not token:
        raise UsageError("no token: set ARENA_TOKEN (or pass --token TOKEN)")
    return asyncio.run(_play(bot, address, token))


def parser(bot: BotBase[V, A]) -> argparse.ArgumentParser:
    """The SDK's command-line options (``--address``, ``--token``), for a bot to extend."""
    import argparse  # here: a bot started with no options (as the arena starts one) never needs it

    p = argparse.ArgumentParser(
        prog=os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else bot.name,
        description=f"Bezique Arena bot {bot.name!r}. The referee address and the seat's token come "
        "from these options, else from ARENA_ADDRESS and ARENA_TOKEN (a bot the arena launches "
        "gets its token only from ARENA_TOKEN).",
    )
    p.add_argument("--address", help="referee address, HOST:PORT (default: $ARENA_ADDRESS)")
    p.add_argument("--token", help="the seat's token (default: $ARENA_TOKEN)")
    return p


def run(
    bot: BotBase[V, A],
    address: str | None = None,
    token: str | None = None,
    *,
    argv: Sequence[str] | None = None,
) -> int:
    """Play until the referee ends the stream; the number of matches played.

    The address and the token are taken from the arguments, else from the command line
    (``--address HOST:PORT``, ``--token TOKEN``; ``argv`` defaults to ``sys.argv[1:]``, and options
    the SDK does not know are left to the bot), else from ``ARENA_ADDRESS`` and ``ARENA_TOKEN``.

    Every failure ends the program (``SystemExit``) with a one-line message on stderr: no address or
    token (status 2), the referee unreachable, or the stream broken or ended mid-match (3), the token
    refused, with the referee's reason (4). An exception from the bot's own code prints its traceback
    and exits with status 1.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if (address is None or token is None) and args:
        given, _ = parser(bot).parse_known_args(args)
        address = address if address is not None else given.address
        token = token if token is not None else given.token
    address = address or os.environ.get("ARENA_ADDRESS", "")
    token = token or os.environ.get("ARENA_TOKEN", "")
    # What the program holds so far (the modules: grpc, protobuf, asyncio, the engine; the bot) lives
    # until it exits: leave it out of the garbage collector's passes, the game's and above all the
    # interpreter's own full collections at exit, which walk every object (some 20 ms of a bot
    # process's 190 ms of CPU). The cost: a reference cycle already garbage at this point (there is
    # next to none after the imports) is never reclaimed; what the bot creates later is collected.
    gc.freeze()
    try:
        return play(bot, address, token)
    except ArenaError as exc:
        print(f"{bot.name}: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except Exception:
        traceback.print_exc()
        print(
            f"{bot.name}: the bot's own code failed; stopping",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(EXIT_BOT_ERROR) from None


def main_for(bot: BotBase[V, A], argv: Sequence[str] | None = None) -> None:
    """Command-line entry point shared by the example bots: ``--address``, ``--token``, ``--help``;
    an unknown option is a usage error (status 2)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:  # nothing to parse (a bot the arena starts): both from the environment
        run(bot, "", "")
        return
    args = parser(bot).parse_args(argv)
    run(bot, args.address or "", args.token or "")  # "": not given, so from the environment
