"""The rules engine: pure, exact and fast. docs/rules.md states the rules it enforces.

>>> from arena.game import GameState, variant
>>> state = GameState.new(variant("two-handed"), seed=1)
>>> state.apply(state.legal_actions()[0])

The hot modules may also run compiled with mypyc (see arena/game/compiled.py).

It owns the cards, actions, variants, state, declarations, observation and results, and uses
nothing of the arena: no I/O, no clock, no global randomness.
"""

import arena.game.compiled  # noqa: F401  (first: refuses compiled modules older than their sources)
from arena.game.actions import DONE, Action, Combo, Verb
from arena.game.cards import card_text, kind_text, parse_card, parse_kind, parse_ref, ref_text
from arena.game.deals import arrange_deck
from arena.game.errors import IllegalActionError, ParseError, VariantError
from arena.game.observe import Observation, SeatInfo, observe
from arena.game.results import DealResult, GameResult, ScoreItem, Settlement, rubicon_settlement
from arena.game.state import GameState
from arena.game.variants import (
    RULES_VERSION,
    VARIANT_NAMES,
    Family,
    Variant,
    options_help,
    variant,
    variant_options,
)

__all__ = [
    "DONE",
    "RULES_VERSION",
    "VARIANT_NAMES",
    "Action",
    "Combo",
    "DealResult",
    "Family",
    "GameResult",
    "GameState",
    "IllegalActionError",
    "Observation",
    "ParseError",
    "ScoreItem",
    "SeatInfo",
    "Settlement",
    "Variant",
    "VariantError",
    "Verb",
    "arrange_deck",
    "card_text",
    "kind_text",
    "observe",
    "options_help",
    "parse_card",
    "parse_kind",
    "parse_ref",
    "ref_text",
    "rubicon_settlement",
    "variant",
    "variant_options",
]
