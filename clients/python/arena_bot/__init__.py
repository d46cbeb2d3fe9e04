"""Python SDK for Bezique Arena bots: subclass :class:`Bot`, implement ``decide``, call :func:`run`.

>>> class MyBot(Bot):
...     name = "my-bot"
...     def decide(self, view, legal, clock):
...         return legal[0]
>>> run(MyBot())   # --address/--token from the command line, else ARENA_ADDRESS and ARENA_TOKEN

Before each game's first ``decide`` the SDK calls ``on_game_start`` with the game's seed (see
:func:`game_seed`); by default it reseeds ``self.rng``, so a bot drawing from ``self.rng`` plays the
same deal the same way in every run.

``decide`` receives plain values (:mod:`arena_bot.values`: a :class:`View`, :class:`Action` values,
cards as their texts): the SDK needs grpcio, protobuf and the generated protocol only. A bot that
simulates subclasses :class:`arena_bot.engine.EngineBot` and receives the rules engine's values (the
engine is a package of its own: ``pip install ./clients/python/engine``).
"""

import gc as _gc
import os as _os

# gRPC's transport: the arena's choice (arena/__init__.py says why: the older transport costs a small
# message half the CPU of the EventEngine), made before grpc is first imported, since grpc reads it
# then. Whoever sets GRPC_EXPERIMENTS keeps their own choice (an empty value is grpc's defaults). The
# SDK does not import the arena's package (it may not be installed), so the value is written here
# too; a test holds the two equal.
_os.environ.setdefault("GRPC_EXPERIMENTS", "-event_engine_client,-event_engine_listener")
del _os

# Importing the SDK (grpc, asyncio, protobuf) creates some 20,000 objects the garbage
# collector tracks, which all live until the process exits: its passes over them (some fifty during the
# imports, or one over all of them after) find nothing and cost a bot process 5 to 10 ms of CPU at every
# start. The collector is paused for these imports, and what they created is then handed to its oldest
# generation unexamined (freeze, unfreeze), unless the program has frozen objects of its own: those are
# left alone. The collector is left enabled or not as it was found.
_collecting = _gc.isenabled()
_gc.disable()
try:
    from arena_bot.sdk import (
        EXIT_BOT_ERROR,
        EXIT_CONNECTION,
        EXIT_OK,
        EXIT_REFUSED,
        EXIT_USAGE,
        ArenaError,
        Bot,
        Clock,
        GameEnd,
        GameStart,
        RefusedError,
        StreamError,
        UnreachableError,
        UsageError,
        game_seed,
        game_seed_text,
        main_for,
        play,
        run,
    )
    from arena_bot.values import (
        RANKS,
        SUITS,
        Action,
        SeatView,
        View,
        card_kind,
        card_pack,
        card_rank,
        card_suit,
    )
finally:
    if _collecting:
        if _gc.get_freeze_count() == 0:
            _gc.freeze()
            _gc.unfreeze()
        _gc.enable()
    del _collecting, _gc


__all__ = [
    "EXIT_BOT_ERROR",
    "EXIT_CONNECTION",
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_USAGE",
    "RANKS",
    "SUITS",
    "Action",
    "ArenaError",
    "Bot",
    "Clock",
    "GameEnd",
    "GameStart",
    "RefusedError",
    "SeatView",
    "StreamError",
    "UnreachableError",
    "UsageError",
    "View",
    "card_kind",
    "card_pack",
    "card_rank",
    "card_suit",
    "game_seed",
    "game_seed_text",
    "main_for",
    "play",
    "run",
]
