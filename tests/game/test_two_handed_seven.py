"""The seven of trumps and which cards make bezique, in ordinary two-handed Bezique (docs/rules.md
§1 and §2; sources 002, Hoffmann): exchanging and declaring the seven, the bezique_cards option.

Seat 0 is the non-dealer (dealer 1) and leads. Unless a test says otherwise hearts are trumps (turn-up 9H),
seat 0 wins a trick by leading a spade or diamond to which seat 1 throws a club, and the stock's top cards
are chosen so that the draws add nothing to declare.
"""

from __future__ import annotations

import pytest
from declaring_helpers import ONE, deal, declares, table
from engine_helpers import act, finish_turn, texts

from arena.game import (
    Action,
    IllegalActionError,
    card_text,
    observe,
    variant,
)

# ---------------------------------------------------------------- the seven of trumps


def test_seven_of_trumps_exchanged_for_the_turn_up_scores_10() -> None:
    """002: after winning a trick the seven of trumps may be exchanged for the turn-up (10): the turn-up
    is taken into the hand and the seven put in its place."""
    s = deal(["7H", "8S", "9S", "7S", "7S", "8S", "9S", "8D"])
    act(s, "play 8S", "play 7C")
    assert texts(s) == ["declare seven-of-trumps 7H", "exchange 7H", "done"]
    act(s, "exchange 7H")
    assert s.deal_points == [10, 0]
    assert card_text(s.turn_up) == "7H.1"
    assert observe(s, 1).to_dict()["turn_up"] == "7H.1"
    assert "9H.1" in [card_text(c) for c in s.hands[0] if c < 128]
    assert s.items[-1].points == 10


def test_seven_of_trumps_declared_scores_10_and_is_only_shown() -> None:
    """002: the seven may instead be declared (10); a declared seven is shown, not left on the table,
    and it scores once."""
    s = deal(["7H", "8S", "9S", "7S", "7S", "8S", "9S", "8D"])
    act(s, "play 8S", "play 7C", "declare seven-of-trumps 7H")
    assert s.deal_points == [10, 0]
    assert card_text(s.turn_up) == "9H.1"
    assert not any("7H" in t for t in declares(s)) and "exchange 7H" not in texts(s)
    finish_turn(s)
    assert table(s, 0) == []
    assert any("7H" in t for t in texts(s))  # still in the hand, playable
    act(s, "play 9S", "play 8C")
    assert not any("7H" in t for t in texts(s) if not t.startswith("play"))


def test_second_seven_is_declared_not_exchanged() -> None:
    """002: the second seven is declared, as it would be absurd to exchange one seven for another."""
    s = deal(["7H", "7H", "8S", "9S", "7S", "8S", "9S", "8D"])
    act(s, "play 8S", "play 7C", "exchange 7H")
    assert "exchange 7H" not in texts(s)
    finish_turn(s)
    act(s, "play 9S", "play 8C")
    assert texts(s) == ["declare seven-of-trumps 7H", "done"]
    act(s, "declare seven-of-trumps 7H")
    assert s.deal_points == [20, 0]


def test_seven_turned_up_scores_the_dealer_and_cannot_be_exchanged() -> None:
    """002: if the turn-up is a seven the dealer scores 10; the other seven can only be declared."""
    s = deal(["7H", "8S", "9S", "7S", "7S", "8S", "9S", "8D"], turn_up="7H")
    assert s.deal_points == [0, 10]
    act(s, "play 8S", "play 7C")
    assert texts(s) == ["declare seven-of-trumps 7H", "done"]


def test_exchange_goes_with_a_declaration_in_the_same_turn() -> None:
    """docs/rules.md §1 (002): the exchange may go with an ordinary declaration in the same turn."""
    s = deal(["7H", "QS", "JD", "8S", "9S", "7S", "8S", "9S"])
    act(s, "play 8S", "play 7C", "exchange 7H")
    assert "declare bezique QS JD" in texts(s)
    act(s, "declare bezique QS JD")
    assert s.deal_points == [50, 0]


def test_turn_up_just_taken_cannot_be_declared_in_the_same_turn() -> None:
    """docs/rules.md §1 (002): the turn-up just taken in exchange for the seven cannot be part of a declaration
    in the same turn; on a later trick it can (JD turned up, diamonds trumps, QS in the hand)."""
    s = deal(["7D", "QS", "8S", "9S", "7S", "8S", "9S", "8H"], turn_up="JD")
    act(s, "play 8S", "play 7C")
    assert not any("bezique" in t for t in texts(s))
    act(s, "exchange 7D")
    assert not any("bezique" in t for t in texts(s))
    with pytest.raises(IllegalActionError):
        s.apply(Action.parse("declare bezique QS JD"))
    finish_turn(s)
    act(s, "play 9S", "play 8C")
    assert "declare bezique QS JD" in texts(s)
    act(s, "declare bezique QS JD")
    assert s.deal_points == [50, 0]


def test_seven_exchange_under_one_option_still_allows_a_declaration() -> None:
    """docs/rules.md §1: the exchange may go with one ordinary declaration in the same turn (option "one" too)."""
    s = deal(["7H", "QS", "JD", "8S", "9S", "7S", "8S", "9S"], v=ONE)
    t = s.clone()
    act(s, "play 8S", "play 7C", "exchange 7H", "declare bezique QS JD")
    assert s.deal_points == [50, 0]
    act(t, "play 8S", "play 7C", "declare bezique QS JD")
    assert "exchange 7H" in texts(t)  # the other order: the declaration first, then the exchange
    act(t, "exchange 7H")
    assert t.deal_points == [50, 0]


# ---------------------------------------------------------------- which cards make bezique


@pytest.mark.parametrize(
    ("turn_up", "pair"),
    [("TS", "QC JH"), ("TD", "QC JH"), ("TH", "QS JD"), ("TC", "QS JD")],
)
def test_bezique_cards_trump_dependent(turn_up: str, pair: str) -> None:
    """docs/rules.md §1 option bezique_cards = trump-dependent: QC + JH when spades or diamonds are trumps, else
    QS + JD."""
    v = variant("two-handed", bezique_cards="trump-dependent")
    s = deal(
        ["QS", "JD", "QC", "JH", "7S", "8S", "7D", "8D"],
        ["9C", "9C", "8C", "7H", "8H", "8H", "9H", "7C"],
        turn_up=turn_up,
        v=v,
    )
    lead = "8D" if turn_up[1] != "D" else "8S"
    act(s, f"play {lead}", "play 7C" if turn_up[1] != "C" else "play 7H")
    assert s.to_act == 0
    other = "QS JD" if pair == "QC JH" else "QC JH"
    assert f"declare bezique {pair}" in texts(s)
    assert f"declare bezique {other}" not in texts(s)


def test_bezique_cards_fixed_by_default() -> None:
    """docs/rules.md §1 (002, 004): bezique is always QS + JD by default, whatever the trumps."""
    s = deal(["QS", "JD", "QC", "JH", "7S", "8S", "7D", "8D"], turn_up="9S")
    act(s, "play 8D", "play 7C")
    assert "declare bezique QS JD" in texts(s)
    assert "declare bezique QC JH" not in texts(s)
