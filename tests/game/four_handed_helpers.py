"""Helpers shared by test_four_handed_rules.py, test_four_handed_partners.py."""

from __future__ import annotations

from collections.abc import Sequence

from engine_helpers import first_legal

from arena.game import (
    GameState,
    Variant,
    arrange_deck,
    variant,
)

V = variant("four-handed")


P = variant("four-handed-partners")


RANKS = "789JQKTA"


def play_deal(state: GameState) -> None:
    index = state.deal_index
    while not state.is_terminal() and state.deal_index == index:
        first_legal(state)


def deal(
    hands: Sequence[Sequence[str]],
    *,
    v: Variant = P,
    turn_up: str = "9H",
    stock: Sequence[str] = (),
    dealer: int = 3,
) -> GameState:
    deck = arrange_deck(v, dealer=dealer, hands=hands, turn_up=turn_up, stock=stock)
    return GameState.new(v, seed=0, dealer=dealer, decks=[deck])
