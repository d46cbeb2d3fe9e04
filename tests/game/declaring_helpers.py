"""Helpers shared by test_two_handed_declaring.py, test_two_handed_seven.py."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from engine_helpers import texts

from arena.game import (
    GameState,
    Variant,
    arrange_deck,
    card_text,
    observe,
    variant,
)

V = variant("two-handed")


ONE = variant("two-handed", declarations_per_trick="one")


# Seat 1's usual hand: low clubs (to throw on seat 0's leads) and low diamonds.
CLUBS = ["7C", "7C", "8C", "8C", "9C", "9C", "7D", "8D"]


FILLER = ["9D", "TC", "TD", "9D", "TC", "TD", "8D", "9C", "8C", "8D", "9C", "8C"]


def deal(
    seat0: Sequence[str],
    seat1: Sequence[str] = CLUBS,
    *,
    turn_up: str = "9H",
    stock: Sequence[str] = (),
    v: Variant = V,
) -> GameState:
    """Seat 0 (non-dealer) is dealt seat0 and leads; the stock starts with ``stock`` and continues with
    cards that form nothing (nines, tens, eights of the minor suits)."""
    placed = Counter([*seat0, *seat1, turn_up, *stock])
    top = list(stock)
    for card in FILLER:
        if placed[card] < 2 and card != "7" + turn_up[1]:
            placed[card] += 1
            top.append(card)
    deck = arrange_deck(v, dealer=1, hands=[list(seat0), list(seat1)], turn_up=turn_up, stock=top)
    state = GameState.new(v, seed=0, dealer=1, decks=[deck])
    assert state.to_act == 0
    return state


def declares(state: GameState) -> list[str]:
    return [t for t in texts(state) if t.startswith("declare")]


def table(state: GameState, seat: int) -> list[str]:
    return sorted(card_text(c) for c, _ in observe(state, seat).seats[seat].table)
