"""Python SDK for Bezique Arena bots: subclass :class:`Bot`, implement ``decide``, call :func:`run`.

>>> class MyBot(Bot):
...     name = "my-bot"
...     def decide(self, view, legal, clock):
...         return legal[0]
>>> run(MyBot())   # --address/--token from the command line, else ARENA_ADDRESS and ARENA_TOKEN

Before each game's first ``decide`` the SDK calls ``on_game_start`` with the game's seed (see
:func:`game_seed`); by default it reseeds ``self.rng``, so a bot drawing from ``self.rng`` plays the
same deal the same way in every run.
"""

import gc as _gc

# Importing the SDK (grpc, asyncio, protobuf, the rules engine) creates some 20,000 objects the garbage
# collector tracks, which all live until the process exits: its passes over them (some fifty during the
# imports, or one over all of them after) find nothing and cost a bot process 5 to 10 ms of CPU at every
# start. The collector is paused for these imports, and what they created is then handed to its oldest
# generation unexamined (freeze, unfreeze), unless the program has frozen objects of its own: those are
# left alone. The collector is left enabled or not as it was found.
_collecting = _gc.isenabled()
_gc.disable()
try:
    # The arena's package first: it chooses gRPC's transport, which grpc reads as it is imported.
    import arena  # noqa: F401
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
        view_seed,
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
    "ArenaError",
    "Bot",
    "Clock",
    "GameEnd",
    "GameStart",
    "RefusedError",
    "StreamError",
    "UnreachableError",
    "UsageError",
    "game_seed",
    "game_seed_text",
    "main_for",
    "play",
    "run",
    "view_seed",
]
