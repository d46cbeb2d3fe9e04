"""A bot that answers the first legal action at once: for benchmarks and protocol checks."""

from __future__ import annotations

from arena_bot.sdk import Bot, Clock, main_for
from arena_bot.values import Action, View


class FirstBot(Bot):
    name = "first"
    version = "1"

    def decide(self, view: View, legal: list[Action], clock: Clock) -> Action:
        return legal[0]


def main() -> None:
    main_for(FirstBot())


if __name__ == "__main__":
    main()
