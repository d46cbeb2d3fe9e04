"""Arranging a deck so that a deal gives chosen hands: for tests, scripted bot checks and puzzles.

>>> v = variant("two-handed")
>>> deck = arrange_deck(v, dealer=1, hands=[["QS", "JD"], []], turn_up="7H")
>>> state = GameState.new(v, seed=0, dealer=1, decks=[deck])

Hands may be given partly; every card not placed is laid, in a fixed order, first into the hands that
still need cards and then into the stock below the cards given in ``stock`` (top card first).
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.game.cards import parse_kind
from arena.game.variants import Variant


def arrange_deck(
    variant: Variant,
    dealer: int,
    hands: Sequence[Sequence[str]],
    turn_up: str | None = None,
    stock: Sequence[str] = (),
) -> list[int]:
    """A deck (kinds, top card first) that deals ``hands[seat]`` to each seat when ``dealer`` deals."""
    n = variant.seats
    if len(hands) != n:
        raise ValueError(f"{variant.name} has {n} seats, got {len(hands)} hands")
    if turn_up is not None and not variant.turn_up:
        raise ValueError(f"{variant.name} has no turn-up")
    left = [variant.packs] * 32

    def take(text: str) -> int:
        kind = parse_kind(text)
        if left[kind] == 0:
            raise ValueError(f"{text} is placed more than {variant.packs} times")
        left[kind] -= 1
        return kind

    chosen = [[take(c) for c in hand] for hand in hands]
    for seat, hand in enumerate(chosen):
        if len(hand) > variant.hand_size:
            raise ValueError(
                f"seat {seat} is given {len(hand)} cards; a hand has {variant.hand_size}"
            )
    up = take(turn_up) if turn_up is not None else None
    top = [take(c) for c in stock]
    rest = [k for k in range(32) for _ in range(left[k])]
    for hand in chosen:
        while len(hand) < variant.hand_size:
            hand.append(rest.pop())
    if variant.turn_up and up is None:
        up = rest.pop()
    order: list[int] = []
    first = (dealer + 1) % n
    pos = [0] * n
    for packet in variant.deal_packets:
        for i in range(n):
            seat = (first + i) % n
            order.extend(chosen[seat][pos[seat] : pos[seat] + packet])
            pos[seat] += packet
    if up is not None:
        order.append(up)
    order.extend(top)
    order.extend(rest)
    return order
