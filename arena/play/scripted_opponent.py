"""The conformance check's scripted session: arranged deals that put a bot in the game's tricky moments.

A session is a few matches (:func:`session`) whose first deals are arranged (:func:`arena.game.arrange_deck`
and :attr:`arena.referee.MatchConfig.decks`): a declaring turn with several declarations and the seven of
trumps exchange, the last tricks of a deal, carte blanche in Rubicon. Its policies keep a game going
after every mistake, so that the check (:mod:`arena.play.conformance`) collects them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.game import arrange_deck, variant
from arena.referee import FailurePolicy, MatchConfig, Policies, TimeControl

# The tricky moments a session puts the bot in; the report says how often it met each.
SEVERAL = "a declaring turn with several declarations"
SEVEN = "the seven of trumps exchange"
DECLINE = "a declaration it may decline (done beside declarations)"
LAST_TRICKS = "the last tricks: follow suit and win if able"
CARTE_BLANCHE = "carte blanche (rubicon)"
INQUIRY = "an inquiry to make or answer (four-handed partners, 003)"
MOMENTS = (SEVERAL, SEVEN, DECLINE, LAST_TRICKS, CARTE_BLANCHE, INQUIRY)
# Four-handed partners are checked with inquiries allowed (docs/rules.md §4.2): the bot is offered
# ``inquire`` on the tricks it wins, and answers its partner's (the first-legal bot inquires whenever
# it has nothing to declare).
INQUIRY_ON = (("inquiry", "on"),)


@dataclass(frozen=True, slots=True)
class ScriptedGame:
    """A game whose first deal is arranged: ``hands`` per seat (partly given), the turn-up and the top
    of the stock (see :func:`arena.game.arrange_deck`); the later deals come from the seed."""

    note: str
    dealer: int
    hands: tuple[tuple[str, ...], ...]
    turn_up: str | None = None
    stock: tuple[str, ...] = ()

    def deck(self, variant_name: str, options: tuple[tuple[str, str], ...]) -> tuple[int, ...]:
        v = variant(variant_name, **dict(options))
        return tuple(arrange_deck(v, self.dealer, self.hands, self.turn_up, self.stock))


@dataclass(frozen=True, slots=True)
class ScriptedMatch:
    variant: str
    games: tuple[ScriptedGame, ...]
    options: tuple[tuple[str, str], ...] = ()
    seed: int = 1

    def config(self, budget_ms: int, grace_ms: int, bank_ms: int = 0) -> MatchConfig:
        keep_going = FailurePolicy.RANDOM_ACTION
        return MatchConfig(
            variant=self.variant,
            options=self.options,
            seed=self.seed,
            games=len(self.games),
            time_control=TimeControl(budget_ms=budget_ms, bank_ms=bank_ms, grace_ms=grace_ms),
            policies=Policies(keep_going, keep_going, keep_going, keep_going, max_strikes=0),
            dealers=tuple(g.dealer for g in self.games),
            decks=tuple((g.deck(self.variant, self.options),) for g in self.games),
        )


# Seat 0 (the bot) leads the first trick; trumps are clubs (turn-up AC). The bot holds both queens of
# spades and both knaves of diamonds (bezique, double bezique), the royal marriage of clubs and both
# sevens of trumps, so that whatever it leads, its declaring turn offers several declarations and the
# exchange. The opponent holds only low spades, hearts and diamonds and draws the rest of them, and it
# plays its lowest card: it cannot win a trick the bot leads until the low cards are spent, so the bot
# wins the first ten tricks or more, each followed by a declaring turn.
_DECLARER_HAND = ("QS", "QS", "JD", "JD", "KC", "QC", "7C", "7C")
_LOW_HAND = ("7S", "7S", "8S", "8S", "7H", "7H", "8H", "8H")
_LOW_DRAWS = ("9S", "9S", "9H", "9H", "7D", "7D", "8D", "8D", "9D", "9D")
_HIGH_DRAWS = ("AS", "TS", "KS", "AH", "TH", "KH", "QH", "AD", "TD", "KD")
_DECLARER_STOCK = tuple(c for pair in zip(_HIGH_DRAWS, _LOW_DRAWS, strict=True) for c in pair)

DECLARING = ScriptedGame(
    "bot leads; bezique, double bezique, royal marriage and the seven of trumps in hand",
    dealer=1,
    hands=(_DECLARER_HAND, _LOW_HAND),
    turn_up="AC",
    stock=_DECLARER_STOCK,
)
# The bot deals and the opponent leads: the sequence in trumps (after or instead of the royal marriage)
# and four aces share the ace of trumps.
SEQUENCE = ScriptedGame(
    "opponent leads; sequence, royal marriage and four aces in hand",
    dealer=0,
    hands=(("AC", "TC", "KC", "QC", "JC", "AS", "AH", "AD"), _LOW_HAND),
    turn_up="9C",
)
# Rubicon: a hand with no king, queen or knave may be shown for carte blanche, and again after each
# draw that brings no court card.
CARTE_BLANCHE_DEAL = ScriptedGame(
    "bot dealt carte blanche (no king, queen or knave)",
    dealer=1,
    hands=(("7S", "8S", "9S", "TS", "AS", "7H", "8H", "9H", "TH"), ()),
    stock=("7D", "8D", "9D", "7C", "8C", "9C"),
)


def session(variant_name: str) -> list[ScriptedMatch]:
    """The scripted matches of a check: for two-handed, two arranged two-handed games, a Polish game and
    a Rubicon game; for another variant, one arranged game of it."""
    if variant_name == "two-handed":
        return [
            ScriptedMatch("two-handed", (DECLARING, SEQUENCE)),
            ScriptedMatch("polish", (DECLARING,)),
            ScriptedMatch("rubicon", (CARTE_BLANCHE_DEAL,)),
        ]
    if variant_name == "polish":
        return [ScriptedMatch("polish", (DECLARING, SEQUENCE))]
    if variant_name == "rubicon":
        return [ScriptedMatch("rubicon", (CARTE_BLANCHE_DEAL,))]
    v = variant(variant_name)  # raises VariantError for an unknown name
    hands: list[tuple[str, ...]] = [("QS", "JD", "KC", "QC", "7C")] + [()] * (v.seats - 1)
    game = ScriptedGame(
        "bot leads; bezique, royal marriage and the seven of trumps in hand",
        dealer=v.seats - 1,
        hands=tuple(hands),
        turn_up="AC",
    )
    options = INQUIRY_ON if variant_name == "four-handed-partners" else ()
    return [ScriptedMatch(variant_name, (game,), options)]


def possible_moments(matches: Sequence[ScriptedMatch]) -> set[str]:
    """The tricky moments the variants of a session have: no seven of trumps exchange in Rubicon,
    carte blanche only there, inquiries only between partners allowed them."""
    names = {m.variant for m in matches}
    possible = {SEVERAL, DECLINE, LAST_TRICKS}
    if names - {"rubicon"}:
        possible.add(SEVEN)
    if "rubicon" in names:
        possible.add(CARTE_BLANCHE)
    if any(dict(m.options).get("inquiry") == "on" for m in matches):
        possible.add(INQUIRY)
    return possible
