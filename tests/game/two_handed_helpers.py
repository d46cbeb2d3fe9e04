"""Helpers shared by test_two_handed_rules.py, test_two_handed_endgame.py."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from engine_helpers import act, first_legal, hand_kinds, texts

from arena.game import (
    GameState,
    Variant,
    arrange_deck,
    kind_text,
    observe,
    variant,
)

V = variant("two-handed")


RANKS = "789JQKTA"


FILLER = ["9D", "TC", "TD", "9D", "TC", "TD", "8D", "9C", "8C", "8D", "9C", "8C"]


def deal(
    seat0: Sequence[str],
    seat1: Sequence[str],
    *,
    turn_up: str = "9H",
    stock: Sequence[str] = (),
    v: Variant = V,
) -> GameState:
    """Seat 0 (non-dealer, dealer 1) is dealt seat0 and leads; the stock starts with ``stock``, then
    cards that form nothing."""
    placed = Counter([*seat0, *seat1, turn_up, *stock])
    top = list(stock)
    for card in FILLER:
        if placed[card] < 2 and card != "7" + turn_up[1]:
            placed[card] += 1
            top.append(card)
    deck = arrange_deck(v, dealer=1, hands=[list(seat0), list(seat1)], turn_up=turn_up, stock=top)
    return GameState.new(v, seed=0, dealer=1, decks=[deck])


def play_deal(state: GameState, policy: Callable[[GameState], None] = first_legal) -> None:
    """Play until the current deal is over (the next deal has started, or the game is over)."""
    index = state.deal_index
    while not state.is_terminal() and state.deal_index == index:
        policy(state)


def winner_of_last_trick(state: GameState) -> int | None:
    return observe(state, None).last_trick_winner


def _leader_beats(lead: str, follow: str, trump: str) -> bool:
    if follow[1] == lead[1]:
        return RANKS.index(follow[0]) <= RANKS.index(lead[0])
    return follow[1] != trump


def leader_wins_deck(final0: Sequence[str], final1: Sequence[str]) -> list[int]:
    """A deck (dealer 1) with which seat 0 wins every stock trick when each seat keeps its first seven
    ``final`` cards and plays the other card it holds (see :func:`keep_playing`). At the end of the
    stock seat 0 holds ``final0`` (its last card is the last face-down card of the stock) and seat 1
    holds ``final1`` (its last card is the turn-up, so it fixes trumps)."""
    trump = final1[-1][1]
    left = Counter({kind_text(k): 2 for k in range(32)})
    left.subtract([*final0, *final1])
    assert min(left.values()) >= 0
    rest = sorted(left.elements(), key=lambda c: (RANKS.index(c[0]), "SHDC".index(c[1])))
    follow = [c for c in rest if c[1] != trump][:24]
    lead = list((Counter(rest) - Counter(follow)).elements())
    match: dict[int, int] = {}  # follow index -> lead index (bipartite matching, Kuhn)

    def augment(i: int, seen: set[int]) -> bool:
        for j, f in enumerate(follow):
            if j in seen or not _leader_beats(lead[i], f, trump):
                continue
            seen.add(j)
            if j not in match or augment(match[j], seen):
                match[j] = i
                return True
        return False

    for i in range(len(lead)):
        assert augment(i, set())
    pairs = sorted((lead[i], follow[j]) for j, i in match.items())
    stock = [card for pair in pairs[1:] for card in pair]
    stock.append(final0[-1])
    hands = [[*final0[:-1], pairs[0][0]], [*final1[:-1], pairs[0][1]]]
    return arrange_deck(V, dealer=1, hands=hands, turn_up=final1[-1], stock=stock)


def keep_playing(
    state: GameState, keeps: Sequence[Sequence[str]], tricks: int, declare: str = "done"
) -> None:
    """Play until ``tricks`` tricks are done and the winner's turn is over: each seat plays a card it
    does not keep; in a declaring turn, ``declare`` (done)."""
    while state.tricks_done < tricks or state.phase == 2:
        if state.phase == 2:
            act(state, declare if declare in texts(state) else "done")
            continue
        seat = state.to_act
        extra = Counter(hand_kinds(state, seat)) - Counter(keeps[seat])
        act(state, "play " + sorted(extra)[0])
