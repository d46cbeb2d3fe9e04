"""Python SDK for Bezique Arena bots: subclass :class:`Bot`, implement ``decide``, call :func:`run`.

>>> class MyBot(Bot):
...     name = "my-bot"
...     def decide(self, view, legal, clock):
...         return legal[0]
>>> run(MyBot())   # address and token from ARENA_ADDRESS and ARENA_TOKEN, as the referee sets them
"""

from arena_bot.sdk import Bot, Clock, GameEnd, run

__all__ = ["Bot", "Clock", "GameEnd", "run"]
