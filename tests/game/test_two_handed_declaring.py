"""Declaring in ordinary two-handed Bezique (docs/rules.md §1 and §2; sources 002, 004, Hoffmann).

Seat 0 is the non-dealer (dealer 1) and leads. Unless a test says otherwise hearts are trumps (turn-up 9H),
seat 0 wins a trick by leading a spade or diamond to which seat 1 throws a club, and the stock's top cards
are chosen so that the draws add nothing to declare.
"""

from __future__ import annotations

import pytest
from declaring_helpers import CLUBS, ONE, deal, declares, table
from engine_helpers import act, finish_turn, texts

from arena.game import (
    Action,
    GameState,
    IllegalActionError,
    card_text,
    observe,
)


def to_score(state: GameState, seat: int, viewer: int | None = None) -> tuple[str, ...]:
    return observe(state, viewer).seats[seat].to_score


# ---------------------------------------------------------------- who declares, and when


def test_only_the_winner_declares_after_winning_before_drawing() -> None:
    """002: a declaration can only be made by the winner of a trick immediately after he has won it,
    and before he draws from the stock."""
    s = deal(
        ["QS", "JD", "8S", "9S", "7S", "7S", "8S", "9S"],
        ["JS", "JH", "JD", "JC", "AS", "7C", "8C", "9C"],
    )
    assert declares(s) == []  # nothing is declared before a trick is won
    act(s, "play 8S", "play 7C")
    assert s.phase == 2
    assert s.to_act == 0
    assert texts(s) == ["declare bezique QS JD", "done"]  # not the loser's four knaves
    # Before drawing: nobody has drawn yet.
    assert s.stock_size == 48
    assert len(s.hands[0]) == 7
    assert len(s.hands[1]) == 7
    act(s, "declare bezique QS JD")
    finish_turn(s)
    assert s.stock_size == 46
    assert len(s.hands[0]) == len(s.hands[1]) == 8
    # Seat 1 wins the next trick and gets to declare its four knaves.
    act(s, "play 7S", "play AS")
    assert s.phase == 2
    assert s.to_act == 1
    assert "declare four-knaves JS JH JD JC" in texts(s)


def test_the_loser_of_a_trick_never_declares() -> None:
    """002: only the winner declares; the loser holding a bezique gets no declaring turn."""
    s = deal(["8S", "9S", "7S", "7S", "8S", "9S", "8D", "9D"], ["QS", "JD", *CLUBS[:6]])
    act(s, "play 8S", "play 7C")
    assert s.phase == 1  # seat 0 had nothing to declare; seat 1 was not asked
    assert s.to_act == 0
    assert declares(s) == []
    assert all(seat == 0 or a.text.startswith("play") for seat, a in s.history)


def test_declaring_is_never_compulsory() -> None:
    """002: a player is not bound to declare, although he may win a trick and hold scoring cards."""
    s = deal(["QS", "JD", "8S", "9S", "7S", "7S", "8S", "9S"])
    act(s, "play 8S", "play 7C")
    assert "done" in texts(s)
    act(s, "done")
    assert s.deal_points == [0, 0]
    assert s.phase == 1
    act(s, "play 9S", "play 8C")
    assert "declare bezique QS JD" in texts(s)  # still there on a later trick


@pytest.mark.parametrize(
    ("cards", "action"),
    [
        (["KD", "QD"], "declare marriage KD QD"),
        (["KC", "QC"], "declare marriage KC QC"),
        (["KS", "QS"], "declare marriage KS QS"),
        (["KH", "QH"], "declare royal-marriage KH QH"),
    ],
)
def test_a_marriage_alone_is_offered(cards: list[str], action: str) -> None:
    """002 (table of scores): a king and queen of one suit are a marriage (royal in trumps), declarable
    by the trick's winner even when the hand holds no other combination."""
    s = deal([*cards, "8S", "9S", "7S", "7S", "8S", "9S"])
    act(s, "play 8S", "play 7C")
    assert s.phase == 2
    assert texts(s) == [action, "done"]


def test_a_card_led_cannot_be_declared() -> None:
    """002: a card led or played cannot be declared (KH led, so no royal marriage with it)."""
    s = deal(["KH", "QH", "QS", "JD", "8S", "9S", "7S", "8D"])
    act(s, "play KH", "play 7C")
    assert s.to_act == 0
    assert texts(s) == ["declare bezique QS JD", "done"]


def test_a_card_played_to_win_cannot_be_declared() -> None:
    """002: a card played (by the follower, winning) cannot be declared: QS played, no bezique."""
    s = deal(
        ["9S", "8S", "7S", "8D", "9D", "7D", "8C", "9C"],
        ["QS", "JD", "KS", "KH", "KD", "KC", "7C", "7C"],
    )
    act(s, "play 9S", "play QS")
    assert s.to_act == 1
    assert texts(s) == ["declare four-kings KS KH KD KC", "done"]


def test_declared_cards_stay_in_the_hand_and_are_played_from_the_table() -> None:
    """002: declared cards are left face up on the table but still form part of the hand, and can be
    led or played just as though they had not been declared."""
    s = deal(["QS", "JD", "8S", "9S", "7S", "7S", "8S", "9S"])
    act(s, "play 8S", "play 7C", "declare bezique QS JD")
    finish_turn(s)
    assert table(s, 0) == ["JD.1", "QS.1"]
    assert table(s, 1) == []
    assert len(s.hands[0]) == 8
    assert "play QS.1" in texts(s)
    assert "play JD.1" in texts(s)
    assert "play QS" not in texts(s)
    # The opponent sees the declared cards on the table.
    assert sorted(card_text(c) for c, _ in observe(s, 1).seats[0].table) == ["JD.1", "QS.1"]
    act(s, "play QS.1")
    assert observe(s, 1).to_dict()["trick"] == [[0, "QS.1"]]
    assert table(s, 0) == ["JD.1"]


# ---------------------------------------------------------------- re-use of declared cards


def _knaves_and_queens() -> GameState:
    """Seat 0 holds four knaves and three queens; the fourth queen is its first draw."""
    return deal(
        ["JS", "JH", "JD", "JC", "QS", "QH", "QD", "8S"],
        CLUBS,
        stock=["QC", "9D", "9S", "9D", "7S", "TC"],
    )


def test_a_declaration_of_only_declared_cards_is_refused_002() -> None:
    """002: four knaves (incl. JD) and four queens (incl. QS) declared: the knave and queen already
    declared cannot be declared again as bezique."""
    s = _knaves_and_queens()
    act(s, "play 8S", "play 7C", "declare four-knaves JS JH JD JC")
    finish_turn(s)
    act(s, "play JS.1", "play 7C", "declare four-queens QS QH QD QC")
    finish_turn(s)
    assert s.deal_points[0] == 100
    act(s, "play 9S", "play 8C")
    assert not any("bezique" in t for t in texts(s))
    with pytest.raises(IllegalActionError):
        s.apply(Action.parse("declare bezique QS.1 JD.1"))


def test_worked_sequence_knaves_then_bezique_then_four_queens_002() -> None:
    """002: to score all of them, after the knaves are declared and another trick won, bezique must next
    be made, after which, on winning another trick, the three queens can be added for four queens."""
    s = _knaves_and_queens()
    act(s, "play 8S", "play 7C", "declare four-knaves JS JH JD JC")
    finish_turn(s)
    act(s, "play JS.1", "play 7C")
    assert "declare bezique QS JD.1" in texts(s)
    act(s, "declare bezique QS JD.1")
    finish_turn(s)
    act(s, "play 9S", "play 8C")
    assert "declare four-queens QS.1 QH QD QC" in texts(s)
    act(s, "declare four-queens QS.1 QH QD QC")
    assert [(i.reason, i.points) for i in s.items] == [
        ("four-knaves", 40),
        ("bezique", 40),
        ("four-queens", 60),
    ]
    assert s.deal_points == [140, 0]


def test_royal_marriage_grows_into_a_sequence() -> None:
    """002: a sequence's K-Q may be married first; after winning another trick the remaining sequence
    cards (A, T, J of trumps) are added for the sequence: 40 + 250."""
    s = deal(["AH", "TH", "KH", "QH", "JH", "8S", "9S", "7S"])
    act(s, "play 8S", "play 7C")
    assert "declare sequence AH TH KH QH JH" in texts(s)
    act(s, "declare royal-marriage KH QH")
    assert not any("sequence" in t for t in texts(s))  # K-Q already used this turn
    finish_turn(s)
    act(s, "play 9S", "play 8C")
    assert "declare sequence AH TH KH.1 QH.1 JH" in texts(s)
    act(s, "declare sequence AH TH KH.1 QH.1 JH")
    assert s.deal_points == [290, 0]


def test_the_kq_of_a_declared_sequence_is_never_married() -> None:
    """002: if a sequence in trumps is declared, marriage of the king and queen on the table cannot
    afterwards take place, not even with a fresh queen (never down within a class)."""
    s = deal(["AH", "TH", "KH", "QH", "JH", "8S", "9S", "7S"], stock=["QH", "9D", "9D", "TC"])
    act(s, "play 8S", "play 7C", "declare sequence AH TH KH QH JH")
    finish_turn(s)
    assert s.deal_points == [250, 0]
    assert observe(s, 0).to_dict()["hand"].count("QH") == 1  # seat 0 drew the second QH
    act(s, "play 9S", "play 8C")
    assert not any("marriage" in t for t in texts(s))


def test_single_bezique_grows_into_double_40_plus_500() -> None:
    """002/docs/rules.md §1: a single bezique may be declared first and a second pair added later for the
    double (40 + 500)."""
    s = deal(["QS", "QS", "JD", "JD", "7S", "8S", "9S", "9S"])
    act(s, "play 7S", "play 7C")
    assert "declare double-bezique QS QS JD JD" in texts(s)
    act(s, "declare bezique QS JD")
    assert not any("double" in t for t in texts(s))  # QS.1 and JD.1 already used this turn
    finish_turn(s)
    act(s, "play 8S", "play 8C")
    assert "declare double-bezique QS.1 QS JD.1 JD" in texts(s)
    act(s, "declare double-bezique QS.1 QS JD.1 JD")
    assert [(i.reason, i.points) for i in s.items] == [("bezique", 40), ("double-bezique", 500)]
    finish_turn(s)
    act(s, "play 9S", "play 9C")
    assert not any("bezique" in t for t in texts(s))  # the cards of a double are never a single


def test_double_bezique_declared_at_once_scores_500_and_never_a_single() -> None:
    """002: double bezique 500; its cards are never afterwards scored as a single bezique."""
    s = deal(["QS", "QS", "JD", "JD", "7S", "8S", "9S", "9S"])
    act(s, "play 7S", "play 7C", "declare double-bezique QS QS JD JD")
    assert s.deal_points == [500, 0]
    finish_turn(s)
    assert table(s, 0) == ["JD.1", "JD.2", "QS.1", "QS.2"]
    act(s, "play 8S", "play 8C")
    assert not any("bezique" in t for t in texts(s))


def test_two_single_beziques_never_make_a_double() -> None:
    """002 (at least one card not declared before): with two singles declared, all four cards are
    declared, so no double bezique can be declared from them."""
    s = deal(
        ["QS", "JD", "7S", "8S", "9S", "9S", "8D", "7D"],
        stock=["QS", "9D", "JD", "9D", "TC", "TC", "JC", "JC"],
    )
    act(s, "play 7S", "play 7C", "declare bezique QS JD")
    finish_turn(s)
    act(s, "play 8S", "play 8C")  # QS drawn: QS.1 is married to JD.1 already
    assert not any("bezique" in t for t in texts(s))
    finish_turn(s)
    act(s, "play 9S", "play 9C")  # JD drawn: a new single, or the double by adding the pair
    assert "declare bezique QS JD" in texts(s)
    assert "declare double-bezique QS.1 QS JD.1 JD" in texts(s)
    act(s, "declare bezique QS JD")
    finish_turn(s)
    act(s, "play 9S", "play 9C")
    assert not any("bezique" in t for t in texts(s))
    assert s.deal_points == [80, 0]


def test_double_bezique_needs_all_four_cards_none_played() -> None:
    """002/docs/rules.md §1: double bezique needs all its cards on the table at once, none of them played."""
    s = deal(
        ["QS", "JD", "7S", "8S", "9S", "9S", "8D", "7D"],
        stock=["QS", "9D", "JD", "9D", "TC", "TC"],
    )
    act(s, "play 7S", "play 7C", "declare bezique QS JD")
    finish_turn(s)
    act(s, "play QS.1", "play 8C")  # the declared queen is played; the fresh QS is drawn
    assert not any("bezique" in t for t in texts(s))
    finish_turn(s)
    act(s, "play 8S", "play 9C")  # the fresh JD is drawn
    assert texts(s) == ["declare bezique QS JD", "done"]


def test_a_queen_marries_only_once() -> None:
    """002: having been married once, she cannot be married again (not to a second king)."""
    s = deal(["KS", "QS", "TS", "8D", "9D", "7D", "8S", "9S"], stock=["KS", "9D", "TC", "TC"])
    act(s, "play 8D", "play 7C", "declare marriage KS QS")
    finish_turn(s)
    assert s.deal_points == [20, 0]
    act(s, "play 9D", "play 8C")  # seat 0 now holds a fresh KS beside QS.1
    assert not any("marriage" in t for t in texts(s))


def test_a_queen_takes_part_in_one_four_queens_only() -> None:
    """002: having taken part in one set of four queens, she cannot take part in another (a fifth queen
    added after one is played does not score four queens again; that is Rubicon only)."""
    s = deal(["QS", "QH", "QD", "QC", "7S", "8S", "9S", "8D"], stock=["QD", "9D", "TC", "TC"])
    act(s, "play 7S", "play 7C", "declare four-queens QS QH QD QC")
    finish_turn(s)
    act(s, "play QH.1", "play 8C")  # the trump queen wins; the fifth queen (QD) is in the hand
    assert not any("four-queens" in t for t in texts(s))
    finish_turn(s)
    act(s, "play 8S", "play 9C")
    assert not any("four-queens" in t for t in texts(s))
    assert s.deal_points == [60, 0]


def test_a_card_takes_part_in_one_single_bezique_only() -> None:
    """002: having once been declared in single bezique, the queen cannot form part of another single."""
    s = deal(["QS", "JD", "7S", "8S", "9S", "9S", "8D", "7D"], stock=["JD", "9D", "TC", "TC"])
    act(s, "play 7S", "play 7C", "declare bezique QS JD")
    finish_turn(s)
    act(s, "play 8S", "play 8C")  # QS.1 beside a fresh JD
    assert not any("bezique" in t for t in texts(s))


def test_a_card_is_reused_in_another_class() -> None:
    """002: the bezique queen can be declared in bezique, marriage and four queens (other classes)."""
    s = deal(
        ["QS", "JD", "KS", "QH", "QD", "QC", "8D", "9D"],
        stock=["7S", "9D", "7S", "TC", "TC", "JC"],
    )
    act(s, "play 8D", "play 7C", "declare bezique QS JD")
    finish_turn(s)
    act(s, "play 9D", "play 8C")
    assert "declare marriage KS QS.1" in texts(s)
    act(s, "declare marriage KS QS.1")
    finish_turn(s)
    act(s, "play 7S", "play 9C")
    assert "declare four-queens QS.1 QH QD QC" in texts(s)
    act(s, "declare four-queens QS.1 QH QD QC")
    assert s.deal_points == [120, 0]


# ---------------------------------------------------------------- several declarations on one trick


def test_disjoint_four_knaves_and_a_marriage_together() -> None:
    """002 (declarations_per_trick = disjoint, default): four knaves and a marriage may be declared at
    the same time."""
    s = deal(["JS", "JH", "JD", "JC", "KC", "QC", "8S", "9S"])
    act(s, "play 8S", "play 7C", "declare four-knaves JS JH JD JC")
    assert s.phase == 2
    assert "declare marriage KC QC" in texts(s)
    act(s, "declare marriage KC QC")
    assert s.deal_points == [60, 0]


def test_disjoint_no_card_in_two_declarations_of_one_turn() -> None:
    """002: a player cannot declare KS, QS and JD together to score marriage and bezique with those three
    cards; he declares bezique, and when he wins another trick he scores marriage by declaring the king."""
    s = deal(["KS", "QS", "JD", "7D", "8D", "9D", "7S", "8S"])
    act(s, "play 7D", "play 7C")
    assert "declare marriage KS QS" in texts(s)
    assert "declare bezique QS JD" in texts(s)
    act(s, "declare bezique QS JD")
    assert not any("marriage" in t for t in texts(s))
    with pytest.raises(IllegalActionError):
        s.apply(Action.parse("declare marriage KS QS.1"))
    finish_turn(s)
    act(s, "play 8D", "play 8C")
    assert "declare marriage KS QS.1" in texts(s)
    act(s, "declare marriage KS QS.1")
    assert s.deal_points == [60, 0]


def test_default_all_declared_marriage_is_not_offered_004_situation() -> None:
    """002 (default rules): four kings incl. KS, then bezique: the marriage KS.1 QS.1 would consist only
    of declared cards, so it is not offered (under option "one" it is held "to score", see below)."""
    s = deal(
        ["KS", "KH", "KD", "KC", "QS", "JD", "8H", "8D"],
        turn_up="9S",
        stock=["7D", "9D", "9H", "9D", "7H", "TC"],
    )
    act(s, "play 8H", "play 7C", "declare four-kings KS KH KD KC")
    finish_turn(s)
    act(s, "play 8D", "play 8C", "declare bezique QS JD")
    finish_turn(s)
    act(s, "play 7D", "play 9C")
    assert not any("marriage" in t for t in texts(s))
    assert to_score(s, 0) == ()


def test_one_declaration_per_trick_option() -> None:
    """Hoffmann/Portland Club (declarations_per_trick = one): only one declaration scores per trick;
    the marriage is scored on the next trick won."""
    s = deal(["JS", "JH", "JD", "JC", "KC", "QC", "8S", "9S"], v=ONE)
    act(s, "play 8S", "play 7C")
    assert "declare marriage KC QC" in texts(s)
    act(s, "declare four-knaves JS JH JD JC")
    assert declares(s) == []
    assert s.deal_points == [40, 0]
    finish_turn(s)
    act(s, "play 9S", "play 8C")
    assert "declare marriage KC QC" in texts(s)
    act(s, "declare marriage KC QC")
    assert s.deal_points == [60, 0]


def _four_kings_then_bezique() -> GameState:
    """004's example with spades trumps: four kings incl. KS declared, then bezique: royal marriage
    KS.1 QS.1 "to score". Seat 0 draws AS, TS, JS on its first three tricks."""
    s = deal(
        ["KS", "KH", "KD", "KC", "QS", "JD", "8H", "8D"],
        turn_up="9S",
        stock=["AS", "9D", "TS", "9D", "JS", "TC", "7D", "TC"],
        v=ONE,
    )
    act(s, "play 8H", "play 7C", "declare four-kings KS KH KD KC")
    finish_turn(s)
    act(s, "play 8D", "play 8C", "declare bezique QS JD")
    return s


def test_one_option_marriage_held_to_score_004() -> None:
    """004: having declared four kings incl. KS and then bezique, he says 'I score forty, and forty for
    marriage to score'; the claim is visible to every seat and scored on a later won trick."""
    s = _four_kings_then_bezique()
    assert s.deal_points == [120, 0]
    assert to_score(s, 0, viewer=0) == ("declare royal-marriage KS.1 QS.1",)
    assert to_score(s, 0, viewer=1) == ("declare royal-marriage KS.1 QS.1",)
    assert to_score(s, 0, viewer=None) == ("declare royal-marriage KS.1 QS.1",)
    assert declares(s) == []  # one declaration per trick: not now
    finish_turn(s)
    act(s, "play KH.1", "play 9C")
    assert "declare royal-marriage KS.1 QS.1" in texts(s)
    act(s, "declare royal-marriage KS.1 QS.1")
    assert s.deal_points == [160, 0]
    assert to_score(s, 0) == ()


def test_one_option_claim_lapses_when_a_card_is_played_004() -> None:
    """004: if he plays a card of the combination before he has actually scored it, the right to score
    is at an end."""
    s = _four_kings_then_bezique()
    finish_turn(s)
    act(s, "play KS.1")
    assert to_score(s, 0) == ()
    act(s, "play 9C")  # KS (trump) wins
    assert not any("marriage" in t for t in texts(s))


def test_one_option_claim_lapses_when_used_in_a_higher_declaration_004() -> None:
    """004: declaring a combination 'to score' does not preserve the right if the declarant makes use of
    its cards to score a higher declaration of the same class (here the sequence)."""
    s = _four_kings_then_bezique()
    finish_turn(s)
    act(s, "play KH.1", "play 9C", "done")  # JS drawn
    act(s, "play KD.1", "play 7D")
    assert "declare sequence AS TS KS.1 QS.1 JS" in texts(s)
    act(s, "declare sequence AS TS KS.1 QS.1 JS")
    assert s.deal_points == [370, 0]
    assert to_score(s, 0) == ()
    finish_turn(s)
    act(s, "play KC.1", "play 8D")
    assert not any("marriage" in t for t in texts(s))


def test_default_option_holds_nothing_to_score() -> None:
    """docs/rules.md §2: "to score" claims exist only under option "one"; by default nothing is held."""
    s = deal(["JS", "JH", "JD", "JC", "KC", "QC", "QS", "8S"])
    act(s, "play 8S", "play 7C", "declare four-knaves JS JH JD JC")
    assert to_score(s, 0) == ()


def test_one_option_every_other_combination_available_is_held_to_score_000() -> None:
    """000: "If a player has a chance of a double declaration he can declare both, but can only score one
    at the time ... he announces, say, 'forty, and twenty to score.'" Four aces and the royal marriage
    are both available: he scores the aces and holds the marriage "to score"; the list is his to see
    (its cards are still hidden in his hand), and he scores it on the next trick won."""
    s = deal(["AS", "AH", "AD", "AC", "KH", "QH", "8S", "9S"], v=ONE)
    act(s, "play 8S", "play 7C")
    assert "declare royal-marriage KH QH" in texts(s)
    act(s, "declare four-aces AS AH AD AC")
    assert s.deal_points == [100, 0]
    assert to_score(s, 0, viewer=0) == ("declare royal-marriage KH QH",)
    assert to_score(s, 0, viewer=1) == ()
    finish_turn(s)
    act(s, "play 9S", "play 8C", "declare royal-marriage KH QH")
    assert s.deal_points == [140, 0]
    assert to_score(s, 0, viewer=0) == ()
