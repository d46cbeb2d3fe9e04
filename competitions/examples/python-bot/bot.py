"""An example submission: it declares the rarest combination it can, exchanges the seven of trumps
when it may, and otherwise plays its lowest card."""

from __future__ import annotations

from arena.game import Action, Observation, Verb
from arena_bot.engine import EngineBot
from arena_bot.sdk import Clock, main_for

ORDER = "789JQKTA"  # ranks from lowest to highest in Bezique


def rank(action: Action) -> int:
    card = action.text.split()[-1]
    return ORDER.index(card[0]) if card[0] in ORDER else 0


class Trickster(EngineBot):
    name = "py-trickster"
    version = "1"

    def decide(self, view: Observation, legal: list[Action], clock: Clock) -> Action:
        declarations = [a for a in legal if a.verb is Verb.DECLARE]
        if declarations:  # the rarer the combination, the more it scores: the highest first
            return max(declarations, key=lambda a: (int(a.combo), a.text))
        exchange = [a for a in legal if a.verb is Verb.EXCHANGE]
        if exchange:
            return exchange[0]
        plays = [a for a in legal if a.verb is Verb.PLAY]
        if plays:
            return min(plays, key=lambda a: (rank(a), a.text))
        return legal[0]


if __name__ == "__main__":
    main_for(Trickster())
