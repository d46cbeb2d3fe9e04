"""A bot that plays a random legal action: the floor of any ladder."""

from __future__ import annotations

import os
import random

from arena.game import Action, Observation
from arena_bot.sdk import Bot, Clock, main_for


class RandomBot(Bot):
    name = "random"
    version = "1"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed if seed is not None else int(os.environ.get("BOT_SEED", "0")))

    def decide(self, view: Observation, legal: list[Action], clock: Clock) -> Action:
        return self.rng.choice(legal)


def main() -> None:
    main_for(RandomBot())


if __name__ == "__main__":
    main()
