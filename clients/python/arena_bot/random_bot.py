"""A bot that plays a random legal action: the floor of any ladder.

Its random numbers come from the game it is playing (the SDK's per-game seed, see
:func:`arena_bot.sdk.game_seed`), mixed with ``BOT_SEED`` (an integer, default 0): the same deal is
played the same way in every run, whatever the process played before.
"""

from __future__ import annotations

import os
import random
import sys

from arena_bot.sdk import EXIT_USAGE, Bot, Clock, GameStart, main_for
from arena_bot.values import Action, View


def bot_seed() -> int:
    """``BOT_SEED`` from the environment (default 0): an integer, else a usage error (the SDK's
    one line, ``NAME: ...``, and its status 2: status 1 says the bot's own code failed)."""
    text = os.environ.get("BOT_SEED", "").strip() or "0"
    try:
        return int(text)
    except ValueError:
        print(f"{RandomBot.name}: BOT_SEED must be an integer, got {text!r}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None


class RandomBot(Bot):
    name = "random"
    version = "2"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self.salt = seed if seed is not None else bot_seed()
        self.rng = random.Random(self.salt)  # until a game starts (or when played in-process)

    def on_game_start(self, start: GameStart[View]) -> None:
        super().on_game_start(start)
        self.rng = random.Random(start.seed ^ self.salt)

    def decide(self, view: View, legal: list[Action], clock: Clock) -> Action:
        return self.rng.choice(legal)


def main() -> None:
    main_for(RandomBot())


if __name__ == "__main__":
    main()
