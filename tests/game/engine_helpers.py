"""Small helpers shared by the engine's rule tests: reading legal actions, applying actions by their
text, a seat's hand as it sees it, finishing declaring turns, playing on, and a deck that reaches the
end of the stock with given hands (for games of three or four seats)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from arena.game import Action, GameState, Variant, arrange_deck, kind_text, observe, ref_text
from arena.game.cards import RANK_CHARS

DECLARE_PHASE = 2
PLAY_PHASE = 1


def texts(state: GameState) -> list[str]:
    """The legal actions' texts."""
    return [a.text for a in state.legal_actions()]


def act(state: GameState, *actions: str) -> None:
    """Apply actions given by their texts, in order."""
    for text in actions:
        state.apply(Action.parse(text))


def hand_kinds(state: GameState, seat: int) -> list[str]:
    """The kinds in a seat's hand, as that seat sees them."""
    return sorted(ref_text(r)[:2] for r in observe(state, seat).hand)


def plays(state: GameState) -> set[str]:
    """The kinds the seat to act may play."""
    return {t.split()[1][:2] for t in texts(state) if t.startswith("play ")}


def declarations(state: GameState) -> list[str]:
    """The legal declarations' texts."""
    return [t for t in texts(state) if t.startswith("declare")]


def finish_turn(state: GameState) -> None:
    """End the declaring turn(s) after a trick, if the engine opened any."""
    while state.phase == DECLARE_PHASE:
        act(state, "done")
    assert state.phase == PLAY_PHASE


def first_legal(state: GameState) -> None:
    state.apply(state.legal_actions()[0])


def last_winner(state: GameState) -> int | None:
    """The winner of the last trick played."""
    return observe(state, None).last_trick_winner


def stock_end_deck(v: Variant, dealer: int, finals: Sequence[Sequence[str]]) -> list[int]:
    """A deck with which the player left of ``dealer`` wins all 24 stock tricks when every seat keeps
    the first seven cards of its ``finals`` entry and plays the other card it holds (see
    :func:`play_out_stock`). At the end of the stock each seat holds its ``finals`` entry: its last card
    is the one drawn after the 24th trick, and the last player in the drawing order (the dealer) draws
    the turn-up, so the dealer's last card fixes trumps."""
    n = v.seats
    leader = (dealer + 1) % n
    order = [(leader + i) % n for i in range(n)]
    trump = finals[dealer][-1][1]
    left = Counter({kind_text(k): v.packs for k in range(32)})
    left.subtract([c for f in finals for c in f])
    assert min(left.values()) >= 0, left
    # The leader leads the strongest remaining cards (trumps first, then by rank); every card that
    # follows is weaker, or an identical card played later.
    rest = sorted(
        left.elements(), key=lambda c: (c[1] == trump, RANK_CHARS.index(c[0])), reverse=True
    )
    leads, follows = rest[:24], rest[24:]
    tricks = [[leads[t], *follows[t * (n - 1) : (t + 1) * (n - 1)]] for t in range(24)]
    hands: list[list[str]] = [[] for _ in range(n)]
    for i, seat in enumerate(order):
        hands[seat] = [*finals[seat][:-1], tricks[0][i]]
    stock = [tricks[t][i] for t in range(1, 24) for i in range(n)]
    stock += [finals[seat][-1] for seat in order[:-1]]
    return arrange_deck(v, dealer=dealer, hands=hands, turn_up=finals[dealer][-1], stock=stock)


def play_out_stock(state: GameState, finals: Sequence[Sequence[str]], tricks: int = 24) -> None:
    """Play until ``tricks`` tricks are done and the declaring turns after the last are over: each
    seat plays a card it does not keep; every declaring turn is ended at once."""
    keeps = [f[:-1] for f in finals]
    while state.tricks_done < tricks or state.phase == 2:
        if state.phase == 2:
            act(state, "done")
            continue
        seat = state.to_act
        extra = Counter(hand_kinds(state, seat)) - Counter(keeps[seat])
        act(state, "play " + sorted(extra)[0])
