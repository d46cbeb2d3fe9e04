"""Small helpers shared by the engine's rule tests: reading legal actions, applying actions by their
text, a seat's hand as it sees it, finishing declaring turns, playing on."""

from __future__ import annotations

from arena.game import Action, GameState, observe, ref_text

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
