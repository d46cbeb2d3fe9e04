"""Polish (Open) Bezique's declarations, docs/rules.md §5.3, from seed 000: what may be declared
(open cards only, a card of the trick in each), compound declarations, and a card never scoring twice
in one kind. Decks are laid out as in test_polish_rules.py (see polish_helpers.py)."""

from __future__ import annotations

import random

from engine_helpers import act as run
from engine_helpers import declarations
from polish_helpers import (
    DECLARE,
    PLAY,
    POLISH,
    QUEEN,
    cards,
    deal,
)

from arena.game import (
    GameState,
    ScoreItem,
    card_text,
    parse_card,
)

# ---------------------------------------------------------------------------- what may be declared


def test_000_declarations_come_only_from_open_cards_not_the_hand() -> None:
    """000: "no declaration can be effected by means of cards held in the hand": seat 1 holds KH, QH,
    QS and JD in hand and wins KD + QD; only the open marriage of diamonds is offered."""
    s = deal(
        [
            ["QD", "9C", "8C", "7C", "9D", "8D", "7D", "8H"],
            ["KD", "KH", "QH", "QS", "JD", "7H", "TC", "8S"],
        ]
    )
    run(s, "play QD", "play KD")
    assert s.phase == DECLARE
    assert declarations(s) == ["declare marriage KD.1 QD.1"]


def test_000_queen_in_hand_cannot_join_three_open_queens() -> None:
    """000: "A having three open queens and a queen in hand cannot add it to his open cards. He must
    win another trick containing a queen, when he can declare queens." Every declaration must include
    a card of the trick last won."""
    s = deal(
        [
            ["QH", "QD", "QC", "7C", "7D", "9C", "8C", "9D"],
            ["AH", "AD", "AC", "KC", "QS", "8H", "9H", "7H"],
        ]
    )
    run(s, "play QH", "play AH")  # seat 1 wins
    run(s, "play AD", "play QD")
    run(s, "play AC", "play QC")
    assert sorted(card_text(c) for c in s.open[1] if c & 7 == QUEEN) == ["QC.1", "QD.1", "QH.1"]
    run(s, "play KC", "play 7C")  # a trick with a king: something to declare, but no queen
    assert s.phase == DECLARE and s.to_act == 1
    assert declarations(s) == ["declare marriage KC.1 QC.1"]
    run(s, "done")
    run(s, "play QS", "play 7D")  # now a trick containing the fourth queen
    assert s.phase == DECLARE
    assert "declare four-queens QS.1 QH.1 QD.1 QC.1" in declarations(s)


def test_000_every_declaration_includes_a_card_of_the_trick_last_won() -> None:
    """000: "Every declaration must include a card played to the trick last won." An undeclared open
    marriage (KH, QH) is not offered again when a later trick brings only diamonds."""
    s = deal(
        [
            ["QH", "QD", "9C", "8C", "7C", "9D", "8D", "7D"],
            ["KH", "KD", "8H", "9H", "7H", "TC", "8S", "JC"],
        ]
    )
    run(s, "play QH", "play KH")
    assert declarations(s) == ["declare marriage KH.1 QH.1"]
    run(s, "done")
    run(s, "play KD", "play QD")
    assert declarations(s) == ["declare marriage KD.1 QD.1"]


def test_000_a_declaration_omitted_before_drawing_is_lost() -> None:
    """000: "If a declaration or part of a compound declaration is omitted, and the winner of the trick
    draws again, he cannot amend his score." Seat 1 passes on four kings; after the draw, winning a
    trick with a knave offers nothing, and four kings never come back."""
    s = deal(
        [
            ["7C", "7D", "7H", "8S", "9C", "8C", "9D", "8D"],
            ["KC", "KD", "KH", "KS", "JC", "JH", "TC", "9H"],
        ]
    )
    run(s, "play 7C", "play KC", "play KD", "play 7D", "play KH", "play 7H")
    stock = s.stock_size
    run(s, "play KS", "play 8S")
    assert "declare four-kings KS.1 KH.1 KD.1 KC.1" in declarations(s)
    run(s, "done")
    assert s.stock_size == stock - 2  # both have drawn
    run(s, "play JC", "play 9C")
    assert s.phase == PLAY  # nothing to declare: the kings' chance has gone
    assert not any(i.reason == "four-kings" for i in s.items)


def test_000_declarations_continue_through_the_last_eight_tricks() -> None:
    """000: "Declarations continue during the play of the last eight tricks just the same as during the
    play of the other cards." Random play that always passes, until a declaration is offered after the
    stock is exhausted; it is then scored, and nobody draws."""
    found = 0
    for seed in range(30):
        rng = random.Random(seed)
        s = GameState.new(POLISH, seed=seed)
        while not s.is_terminal() and s.deal_index == 0:
            legal = s.legal_actions()
            decl = [a for a in legal if a.text.startswith("declare")]
            if s.phase == DECLARE and s.stock_size == 0 and decl:
                before = list(s.deal_points)
                seat = s.to_act
                action = decl[0]
                s.apply(action)
                item = s.items[-1]
                assert item.seat == seat and item.reason == action.text.split()[1]
                assert s.deal_points[seat] == before[seat] + item.points > before[seat]
                assert s.stock_size == 0
                found += 1
                break
            done = [a for a in legal if a.text == "done"]
            s.apply(done[0] if done else rng.choice(legal))
        if found:
            break
    assert found, "no declaration was ever offered in the last eight tricks"


# ---------------------------------------------------------------------------- compound declarations


def test_000_compound_declaration_430() -> None:
    """000's example: "he has the following open cards -- three kings, three queens, and ace, ten, knave
    of trumps" and wins the queen of trumps, led, with the king of trumps. "He at once declares royal
    marriage (40); four kings (80); four queens (60); and sequence (250); and scores in all, 430."

    Spades are trumps. Seat 1 takes KH+QH, KD+QD, KC+QC, TS+JS and AS in tricks (passing on the
    marriages), loses a trick, then wins QS (led by seat 0) with KS."""
    s = deal(
        [
            ["QH", "QD", "QC", "JS", "7D", "9H", "QS", "8C"],
            ["KH", "KD", "KC", "TS", "AS", "8H", "KS", "8D"],
        ]
    )
    run(s, "play QH", "play KH", "done")
    run(s, "play KD", "play QD", "done")
    run(s, "play KC", "play QC", "done")
    run(s, "play TS", "play JS")
    run(s, "play AS", "play 7D")
    run(s, "play 8H", "play 9H")  # seat 0 wins and leads the queen of trumps
    assert s.to_act == 0
    opened = sorted(card_text(c) for c in s.open[1])
    assert opened == sorted(
        ["KH.1", "KD.1", "KC.1", "QH.1", "QD.1", "QC.1", "AS.1", "TS.1", "JS.1"]
    )
    before = len(s.items)
    points = s.deal_points[1]
    run(s, "play QS", "play KS")
    assert s.phase == DECLARE and s.to_act == 1
    assert set(declarations(s)) == {
        "declare royal-marriage KS.1 QS.1",
        "declare four-kings KS.1 KH.1 KD.1 KC.1",
        "declare four-queens QS.1 QH.1 QD.1 QC.1",
        "declare sequence AS.1 TS.1 KS.1 QS.1 JS.1",
    }
    run(
        s,
        "declare royal-marriage KS.1 QS.1",
        "declare four-kings KS.1 KH.1 KD.1 KC.1",
        "declare four-queens QS.1 QH.1 QD.1 QC.1",
        "declare sequence AS.1 TS.1 KS.1 QS.1 JS.1",
    )
    assert s.items[before:] == [
        ScoreItem(1, "royal-marriage", 40, tuple(cards("KS.1", "QS.1"))),
        ScoreItem(1, "four-kings", 80, tuple(cards("KS.1", "KH.1", "KD.1", "KC.1"))),
        ScoreItem(1, "four-queens", 60, tuple(cards("QS.1", "QH.1", "QD.1", "QC.1"))),
        ScoreItem(1, "sequence", 250, tuple(cards("AS.1", "TS.1", "KS.1", "QS.1", "JS.1"))),
    ]
    assert s.deal_points[1] - points == 430
    assert s.phase == PLAY  # nothing left: the turn ended and both drew


def test_000_compound_declaration_430_in_any_order() -> None:
    """000: compound declarations are made "at once": the cards added to the open cards "can at once be
    used ... in as many combinations ... as they will form", and the example scores the royal marriage
    and the sequence of the same K-Q together. Announcing the sequence first must not forfeit the royal
    marriage: the 430 is the value of the trick, not of the order of the announcements (the "never
    down" rule of docs/rules.md §1 concerns a card declared on an earlier trick)."""
    s = deal(
        [
            ["QH", "QD", "QC", "JS", "7D", "9H", "QS", "8C"],
            ["KH", "KD", "KC", "TS", "AS", "8H", "KS", "8D"],
        ]
    )
    run(s, "play QH", "play KH", "done", "play KD", "play QD", "done", "play KC", "play QC", "done")
    run(s, "play TS", "play JS", "play AS", "play 7D", "play 8H", "play 9H")
    points = s.deal_points[1]
    run(s, "play QS", "play KS")
    run(s, "declare sequence AS.1 TS.1 KS.1 QS.1 JS.1")
    assert "declare royal-marriage KS.1 QS.1" in declarations(s)
    run(
        s,
        "declare royal-marriage KS.1 QS.1",
        "declare four-kings KS.1 KH.1 KD.1 KC.1",
        "declare four-queens QS.1 QH.1 QD.1 QC.1",
    )
    assert s.deal_points[1] - points == 430


def test_000_compound_declaration_130() -> None:
    """000's example: "ace of spades is turned up, and ace of hearts is led. The second player has two
    open aces, and wins the ace of hearts with the seven of trumps and exchanges. He scores for the
    exchange, 10; for the ace of hearts, 10; for the ace of spades, 10; and adds the aces to his open
    cards, and scores 100 for aces; in all, 130."

    Seat 1 first wins AC (trumping with 8S) and AD; then loses a trick so that seat 0 leads AH."""
    s = deal(
        [
            ["AC", "9C", "9H", "AH", "7C", "8C", "7D", "8D"],
            ["8S", "AD", "8H", "7S", "9D", "7H", "8D", "7C"],
        ],
        turn_up="AS",
    )
    run(s, "play AC", "play 8S")
    run(s, "play AD", "play 9C")
    run(s, "play 8H", "play 9H")
    assert s.to_act == 0
    assert sorted(card_text(c) for c in s.open[1]) == ["AC.1", "AD.1"]
    before = len(s.items)
    points = s.deal_points[1]
    run(s, "play AH", "play 7S")
    assert s.phase == DECLARE and s.to_act == 1
    run(s, "exchange 7S.1")
    assert "declare four-aces AS.1 AH.1 AD.1 AC.1" in declarations(s)
    run(s, "declare four-aces AS.1 AH.1 AD.1 AC.1")
    assert s.items[before:] == [
        ScoreItem(1, "brisque", 10, tuple(cards("AH.1"))),
        ScoreItem(1, "exchange", 10, tuple(cards("7S.1", "AS.1"))),
        ScoreItem(1, "brisque", 10, tuple(cards("AS.1"))),
        ScoreItem(1, "four-aces", 100, tuple(cards("AS.1", "AH.1", "AD.1", "AC.1"))),
    ]
    assert s.deal_points[1] - points == 130
    assert parse_card("AS.1") in s.open[1]
    assert card_text(s.turn_up) == "7S.1"


# ---------------------------------------------------------------------------- never twice in a kind


def test_000_a_queen_once_married_cannot_be_married_again() -> None:
    """000: "a queen once married, cannot be married again." Seat 1 marries KH.1 QH.1, then wins KH.2
    and QH.2 together: only the new pair may marry, never a crosswise pair with a married card."""
    s = deal(
        [
            ["QH", "QH", "9C", "8C", "7C", "9D", "8D", "7D"],
            ["KH", "KH", "8H", "9H", "7H", "TC", "8S", "JC"],
        ]
    )
    run(s, "play QH", "play KH", "declare marriage KH.1 QH.1")
    assert s.to_act == 1 and s.phase == PLAY
    run(s, "play KH", "play QH")
    assert declarations(s) == ["declare marriage KH.2 QH.2"]


def test_two_marriages_of_one_suit_made_of_other_copies_score_in_one_turn() -> None:
    """Each card serves once in each kind of combination (docs/rules.md §5.3): with both kings of
    clubs open, a trick bringing both queens of clubs makes two marriages of clubs, as two kings and
    queens of different suits make two marriages. The turn's options hold one marriage for the
    interchangeable copies; once it is declared, the other copies still marry."""
    s = deal(
        [
            ["KC", "KC", "QC", "8H", "8H", "9H", "9H", "7H"],
            ["7D", "7D", "QC", "8D", "8D", "9D", "9D", "7C"],
        ]
    )
    run(s, "play KC", "play 7D", "play KC", "play 7D", "play QC", "play QC")
    assert declarations(s) == ["declare marriage KC.1 QC.1"]
    run(s, "declare marriage KC.1 QC.1")
    assert declarations(s) == ["declare marriage KC.2 QC.2"]
    run(s, "declare marriage KC.2 QC.2")
    assert s.phase == PLAY and s.deal_points[0] == 40


def test_a_second_bezique_of_other_copies_in_one_turn() -> None:
    """The same for bezique: both queens of spades open, both knaves of diamonds won in one trick make
    two beziques, or a double."""
    s = deal(
        [
            ["QS", "QS", "JD", "8H", "8H", "9H", "9H", "7H"],
            ["7D", "7D", "JD", "8D", "8D", "9D", "9D", "7C"],
        ]
    )
    run(s, "play QS", "play 7D", "play QS", "play 7D", "play JD", "play JD")
    run(s, "declare bezique QS.1 JD.1")
    assert "declare bezique QS.2 JD.2" in declarations(s)


def test_000_a_fifth_king_does_not_score_four_kings_again() -> None:
    """000: "a fifth king added to four already declared does not entitle to another score for
    kings." The fifth king comes with a queen, so there is a declaration turn to inspect."""
    s = deal(
        [
            ["7C", "7D", "7H", "8S", "QH", "9C", "8C", "9D"],
            ["KC", "KD", "KH", "KS", "KH", "JC", "TC", "9H"],
        ]
    )
    run(s, "play 7C", "play KC", "play KD", "play 7D", "play KH", "play 7H")
    run(s, "play KS", "play 8S", "declare four-kings KS.1 KH.1 KD.1 KC.1")
    assert s.to_act == 1 and s.phase == PLAY
    run(s, "play KH", "play QH")
    assert s.phase == DECLARE
    decls = declarations(s)
    assert decls, "the new queen may at least marry"
    assert not any("four-kings" in t for t in decls)
