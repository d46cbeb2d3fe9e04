"""Helpers shared by test_polish_rules.py and test_polish_declaring.py: Polish decks laid out with
``arrange_deck``, the dealer seat 1 (seat 0 leads the first trick), harmless cards on top of the
stock, spades trumps unless said otherwise."""

from __future__ import annotations

from collections.abc import Sequence

from arena.game import GameState, arrange_deck, parse_card, variant

POLISH = variant("polish")

PLAY, DECLARE = 1, 2  # state.phase values
JACK, QUEEN, KING, TEN, ACE = 3, 4, 5, 6, 7  # ranks, 7 lowest (0) to ace highest


def quiet_stock(hands: Sequence[Sequence[str]], turn_up: str, size: int = 12) -> list[str]:
    """Sevens, eights and nines of plain suits not placed elsewhere: draws that change nothing."""
    placed = [c for hand in hands for c in hand] + [turn_up]
    out: list[str] = []
    for rank in "987":
        for suit in "SHDC":
            if suit == turn_up[1]:
                continue
            card = rank + suit
            out.extend([card] * (POLISH.packs - placed.count(card)))
    return out[:size]


def deal(hands: Sequence[Sequence[str]], turn_up: str = "9S") -> GameState:
    """A Polish game whose first deal gives these hands, with harmless cards on top of the stock;
    seat 1 deals, seat 0 leads."""
    stock = quiet_stock(hands, turn_up)
    deck = arrange_deck(POLISH, 1, hands=hands, turn_up=turn_up, stock=stock)
    return GameState.new(POLISH, seed=0, dealer=1, decks=[deck])


def cards(*names: str) -> list[int]:
    return [parse_card(n) for n in names]


def is_scoring(card: int, trump: int) -> bool:
    """000: aces, kings, queens, knaves and the trump ten are scoring cards."""
    rank = card & 7
    return rank in (ACE, KING, QUEEN, JACK) or (rank == TEN and (card >> 3) & 3 == trump)


def new_items(state: GameState, before: int) -> list[tuple[int, str, int]]:
    return [(i.seat, i.reason, i.points) for i in state.items[before:]]
