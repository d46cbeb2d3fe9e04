"""Card tracking (arena_bot.tracking): what a seat knows of every card of the deal, from its view and
public log (as a bot gets them) and from a full state (inside a search); both must agree, never
name a hidden card, and follow declarations, exchanges, plays and the turn-up."""

from __future__ import annotations

import random

import pytest

from arena.game import VARIANT_NAMES, Action, GameState, arrange_deck, observe, variant
from arena.game.cards import parse_kind
from arena.game.events import DECLARE
from arena_bot.tracking import Knowledge


def random_states(name: str, seed: int, steps: int = 400) -> list[tuple[GameState, int]]:
    """Clones of a seeded random game's states at each decision, with the seat to act."""
    state = GameState.new(variant(name), seed=seed)
    rng = random.Random(seed)
    out = []
    while not state.is_terminal() and len(out) < steps:
        out.append((state.clone(), state.to_act))
        state.apply(rng.choice(state.legal_actions()))
    return out


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_view_and_state_agree(name: str) -> None:
    """At every decision of random games, the knowledge built from the seat's observation (with its
    public log) equals the knowledge built from the full state, count for count."""
    fields = ("counts", "played", "unseen", "unseen_total", "hand", "hand_marks", "known")
    checked = 0
    for seed in (1, 2):
        for state, seat in random_states(name, seed):
            a = Knowledge.from_view(observe(state, seat))
            b = Knowledge.from_state(state, seat)
            for field in fields:
                assert getattr(a, field) == getattr(b, field), (name, field)
            assert tuple(a.trick) == tuple(b.trick)
            assert sorted(a.open) == sorted(b.open)
            for other in range(state.variant.seats):
                assert sorted(a.known_marks[other]) == sorted(b.known_marks[other]), (name, other)
            checked += 1
    assert checked > 200


def test_a_double_bezique_with_the_partners_cards_leaves_them_on_the_partners_table() -> None:
    """Four-handed partners: seat 0 declares a double bezique with the queen and knave of bezique
    his partner (seat 2) declared; the other seats know those two cards on seat 2's table, not in
    seat 0's hand, from the view as from the state."""
    state = GameState.new(variant("four-handed-partners"), seed=20, dealer=0)
    rng = random.Random(20)
    double = None
    while double is None and not state.is_terminal():
        legal = state.legal_actions()
        double = next(
            (a for a in legal if a.text.startswith("declare double-bezique") and state.to_act == 0),
            None,
        )
        state.apply(double if double is not None else rng.choice(legal))
    assert double is not None, "seed 20 no longer reaches a double bezique of seat 0"
    partners = [c for c in double.refs if c in state.hands[2]]
    assert partners, "the double no longer takes cards from the partner's table"
    for seat in (1, 3):
        a = Knowledge.from_view(observe(state, seat))
        b = Knowledge.from_state(state, seat)
        for c in partners:
            assert a.known[2][c & 31] == b.known[2][c & 31] >= 1
        assert a.known == b.known
        assert sorted(a.known_marks[0]) == sorted(b.known_marks[0])


@pytest.mark.parametrize("name", ["two-handed", "polish", "rubicon", "three-handed"])
def test_counts_add_up_and_unseen_cards_are_hidden(name: str) -> None:
    """Every copy is somewhere: held, played, known in another hand, the turn-up, or unseen; and the
    unseen copies are exactly the other hands' hidden cards and the face-down stock."""
    v = variant(name)
    for state, seat in random_states(name, 3):
        kn = Knowledge.from_state(state, seat)
        turn_up = [0] * 32
        if state.turn_up >= 0:
            turn_up[state.turn_up & 31] = 1
        for kind in range(32):
            placed = kn.counts[kind] + kn.played[kind] + turn_up[kind] + kn.unseen[kind]
            placed += sum(kn.known[s][kind] for s in range(v.seats) if s != seat)
            assert placed == v.packs, kind
        hidden = [0] * 32
        for s, hand in enumerate(state.hands):
            if s != seat:
                for c in hand:
                    if c >= 128:
                        hidden[c & 31] += 1
        for k in state.stock[state.stock_pos :]:
            hidden[k] += 1
        assert kn.unseen == hidden


def test_declared_and_exchanged_cards_are_known_until_played() -> None:
    """Seat 0 declares bezique (QS + JD) and exchanges the seven of trumps for the turn-up: seat 1
    then knows QS, JD and the turn-up taken are in seat 0's hand, and forgets each one seat 0 plays.
    Seat 0 knows the seven it gave is the turn-up now."""
    v = variant("two-handed")
    deck = arrange_deck(
        v,
        dealer=1,
        hands=[
            ["QS", "JD", "7H", "AH", "8C", "9C", "8D", "9D"],
            ["7C", "7D", "8S", "9S", "7S", "TC", "TD", "TS"],
        ],
        turn_up="KH",
    )
    state = GameState.new(v, seed=0, dealer=1, decks=[deck])
    state.apply(Action.parse("play AH"))  # seat 0 leads
    state.apply(Action.parse("play 7C"))
    assert state.phase == DECLARE and state.to_act == 0
    state.apply(Action.parse("declare bezique QS JD"))
    state.apply(Action.parse("exchange 7H"))
    while state.phase == DECLARE:
        state.apply(state.legal_actions()[-1])
    theirs = Knowledge.from_view(observe(state, 1))
    for card in ("QS", "JD", "KH"):
        assert theirs.known[0][parse_kind(card)] == 1, card
    mine = Knowledge.from_view(observe(state, 0))
    assert mine.turn_up & 31 == parse_kind("7H")
    assert mine.unseen[parse_kind("7H")] == 1  # this copy is the turn-up; the other is unseen
    assert mine.counts[parse_kind("KH")] == 1
    # Seat 0 leads the declared QS: seat 1 no longer counts it in seat 0's hand, but as played.
    state.apply(next(a for a in state.legal_actions() if a.text == "play QS.1"))
    theirs = Knowledge.from_view(observe(state, 1))
    assert theirs.known[0][parse_kind("QS")] == 0
    assert theirs.played[parse_kind("QS")] == 1
    assert theirs.known[0][parse_kind("JD")] == 1


def test_the_other_hand_is_known_once_the_stock_is_empty() -> None:
    """Two seats, stock empty: the other hand is every card neither played nor held, and it is the
    real one."""
    checked = 0
    for seed in range(4):
        state = GameState.new(variant("two-handed"), seed=seed)
        rng = random.Random(seed)
        while state.in_stock_phase:
            state.apply(rng.choice(state.legal_actions()))
        deals = len(state.deals)
        while not state.is_terminal() and len(state.deals) == deals:
            seat = state.to_act
            kn = Knowledge.from_view(observe(state, seat))
            other = kn.other_hand()
            assert other == sorted(c & 31 for c in state.hands[1 - seat])
            checked += 1
            state.apply(rng.choice(state.legal_actions()))
    assert checked > 40


def test_carte_blanche_cards_stay_known_after_the_chain_ends() -> None:
    """Rubicon: both seats show carte blanche and then draw a court card, which ends their chains.
    The cards each showed and has not played are still known to the other seat, from the state as
    from the view (the state's knowledge used to forget them once no carte blanche was active)."""
    v = variant("rubicon")
    deck = arrange_deck(
        v,
        dealer=1,
        hands=[
            ["AS", "TS", "9S", "8S", "7S", "AH", "TH", "9H", "8H"],
            ["AD", "TD", "9D", "8D", "7D", "AC", "TC", "9C", "8C"],
        ],
        stock=["KH", "KD"],
    )
    state = GameState.new(v, seed=0, dealer=1, decks=[deck])
    state.apply(Action.parse("declare carte-blanche"))  # seat 0, the leader
    state.apply(Action.parse("declare carte-blanche"))  # seat 1
    state.apply(Action.parse("play 7S"))
    state.apply(Action.parse("play 7D"))  # seat 0 wins; each draws a king: both chains end
    assert state.cb_active == [False, False]
    for seat in range(2):
        other = 1 - seat
        a = Knowledge.from_view(observe(state, seat))
        b = Knowledge.from_state(state, seat)
        assert a.known == b.known and a.unseen == b.unseen, seat
        assert sorted(a.known_marks[other]) == sorted(b.known_marks[other]), seat
        assert sum(b.known[other]) == 8  # nine shown, one played
        assert b.known[other][parse_kind("7D" if other else "7S")] == 0
