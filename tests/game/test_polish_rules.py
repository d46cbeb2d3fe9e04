"""Polish (Open) Bezique, docs/rules.md §5, from seed 000.

Most tests lay out a deck with ``arrange_deck`` and play a scripted run of tricks: the dealer is seat 1,
so seat 0 leads the first trick; hands are given in full so that every card played is known. The turn-up
fixes trumps (spades unless said otherwise).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from engine_helpers import act as run
from engine_helpers import declarations, texts

from arena.game import (
    GameState,
    ScoreItem,
    arrange_deck,
    card_text,
    observe,
    parse_card,
    variant,
)

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


# ---------------------------------------------------------------------------- open cards


def test_000_scoring_cards_won_go_face_up_among_open_cards() -> None:
    """000: "Whenever a scoring card is played, the winner of the trick places it face upwards in front
    of him ... forming rows of aces, kings, queens, knaves and trump tens"; sevens, eights, nines and
    plain suit tens are turned down."""
    s = deal(
        [
            ["TH", "8S", "8D", "7C", "9C", "8C", "9D", "7D"],
            ["AH", "TS", "JD", "KC", "8H", "9H", "7H", "7S"],
        ]
    )
    run(s, "play TH", "play AH")  # s1 wins: ace open, plain ten turned down
    run(s, "play TS", "play 8S")  # trump ten open, eight down
    run(s, "play JD", "play 8D")
    run(s, "play KC", "play 7C")
    assert sorted(card_text(c) for c in s.open[1]) == ["AH.1", "JD.1", "KC.1", "TS.1"]
    assert s.open[0] == []
    assert sorted(observe(s, 0).seats[1].open_cards) == sorted(s.open[1])  # face up: all see them
    turned_down = set(cards("TH.1", "8S.1", "8D.1", "7C.1"))
    assert turned_down <= set(s.won[1])
    assert not turned_down & set(s.open[1])


def test_000_open_cards_can_never_be_played_again() -> None:
    """000: "Open cards cannot be played a second time, and can only be used in declaring.\" The seat
    that won AH, KC and JD holds no other copy of them, so they never appear among its plays."""
    s = deal(
        [
            ["AH", "KC", "JD", "9C", "8C", "9D", "7D", "8H"],
            ["7H", "8C", "8D", "9H", "9S", "8S", "7C", "7S"],
        ]
    )
    run(s, "play AH", "play 7H", "play KC", "play 8C", "play JD", "play 8D")
    assert sorted(card_text(c) for c in s.open[0]) == ["AH.1", "JD.1", "KC.1"]
    assert s.to_act == 0 and s.phase == PLAY
    plays = texts(s)
    for kind in ("AH", "KC", "JD"):
        assert f"play {kind}" not in plays
        assert f"play {kind}.1" not in plays
    assert not set(s.open[0]) & set(s.hands[0])


def test_000_open_cards_stay_until_the_end_of_the_hand_and_are_never_played() -> None:
    """000: open cards "remain face upwards on the table until the end of the hand, including the last
    eight tricks", and cannot be played a second time. Random legal play of whole deals: at every step
    each seat's open cards are exactly the scoring cards it has won, they only ever grow within a deal,
    and no card that lay open is ever played."""
    for seed in range(3):
        rng = random.Random(seed)
        s = GameState.new(POLISH, seed=seed)
        deal_index = s.deal_index
        seen_open: list[set[int]] = [set(), set()]
        steps = 0
        while not s.is_terminal() and s.deal_index == deal_index and steps < 400:
            steps += 1
            ever_open = seen_open[0] | seen_open[1]
            was_play = s.phase == PLAY
            s.apply(rng.choice(s.legal_actions()))
            if s.deal_index != deal_index:
                break
            if was_play:
                played = s.trick[-1] if s.trick else s.last_trick[1][-1]
                assert played not in ever_open, f"open card {card_text(played)} played again"
            for seat in (0, 1):
                now = set(s.open[seat])
                assert seen_open[seat] <= now, "an open card left the table before the hand ended"
                seen_open[seat] = now
                expected = {c for c in s.won[seat] if is_scoring(c, s.trump)}
                assert now == expected
        assert s.deal_index != deal_index or s.is_terminal(), "the deal did not finish"


# ---------------------------------------------------------------------------- brisques at once


def test_000_aces_and_tens_score_ten_as_soon_as_won() -> None:
    """000: "Aces and tens must be scored as soon as won, and not at the end of the hand." The brisque
    is credited to the trick's winner right after the trick, plain ten as well as ace."""
    s = deal(
        [
            ["AC", "TH", "9D", "8D", "7D", "9C", "8C", "7C"],
            ["8S", "9H", "9S", "7H", "8H", "7S", "JC", "JH"],
        ]
    )
    run(s, "play AC", "play 8S")  # trumped: seat 1 wins the ace
    assert [(i.seat, i.reason, i.points) for i in s.items] == [(1, "brisque", 10)]
    assert s.items[0].cards == tuple(cards("AC.1"))
    assert s.deal_points == [0, 10]
    run(s, "play 9H", "play TH")  # seat 0 wins a plain ten (turned down, but a brisque)
    assert new_items(s, 1) == [(0, "brisque", 10)]
    assert s.deal_points == [10, 10]
    assert parse_card("TH.1") not in s.open[0]


def test_000_brisques_are_not_counted_again_and_last_trick_scores_ten() -> None:
    """000: aces and tens are scored when won "and not at the end of the hand"; docs/rules.md §5 keeps the
    last trick at 10 (002). Whole random deals: each seat's brisque items add up to the brisques it
    took, there is no end-of-hand brisque count, the last trick scores 10, and the deal's points are the
    sum of its items."""
    for seed in (5, 6):
        rng = random.Random(seed)
        s = GameState.new(POLISH, seed=seed)
        while not s.deals:
            s.apply(rng.choice(s.legal_actions()))
        d = s.deals[0]
        assert d.completed
        reasons = {i.reason for i in d.items}
        assert "brisques" not in reasons
        last = [i for i in d.items if i.reason == "last-trick"]
        assert len(last) == 1 and last[0].points == 10
        for seat in (0, 1):
            brisque_items = [i for i in d.items if i.seat == seat and i.reason == "brisque"]
            assert all(i.points == 10 and len(i.cards) == 1 for i in brisque_items)
            assert sum(i.points for i in brisque_items) == d.brisques[seat]
            assert sum(i.points for i in d.items if i.seat == seat) == d.points[seat]
        assert sum(d.brisques) == 160


# ---------------------------------------------------------------------------- the seven of trumps


def test_000_seven_of_trumps_in_a_trick_scores_ten_to_its_winner() -> None:
    """000: "The seven of trumps when not exchanged is scored for by the player winning the trick
    containing it" -- here the loser played it."""
    s = deal(
        [
            ["7S", "9C", "8C", "7C", "9D", "8D", "7D", "9H"],
            ["8S", "JC", "JH", "8H", "7H", "QC", "QH", "TC"],
        ],
        turn_up="9S",
    )
    run(s, "play 7S", "play 8S")
    assert s.phase == DECLARE and s.to_act == 1
    assert texts(s) == ["exchange 7S.1", "done"]
    run(s, "done")
    assert new_items(s, 0) == [(1, "seven-of-trumps", 10)]
    assert card_text(s.turn_up) == "9S.1"


def test_000_seven_exchanged_for_the_turn_up_scores_ten_not_twenty() -> None:
    """000: the seven of trumps "can be exchanged by the winner of the trick containing it; and if the
    turn-up card is one that can be used in declaring, it becomes an open card when exchanged". The
    exchange scores 10 (docs/rules.md §5.2: "He may instead exchange it for the turn-up, for 10"), not 10 for the seven besides."""
    s = deal(
        [
            ["9H", "9C", "8C", "7C", "9D", "8D", "7D", "8H"],
            ["7S", "JC", "JH", "TH", "7H", "QC", "TC", "8S"],
        ],
        turn_up="KS",
    )
    run(s, "play 9H", "play 7S")  # trumped with the seven
    run(s, "exchange 7S.1")
    assert new_items(s, 0) == [(1, "exchange", 10)]
    assert parse_card("KS.1") in s.open[1]
    assert card_text(s.turn_up) == "7S.1"
    assert s.deal_points == [0, 10]


def test_000_exchanged_turn_up_that_is_no_scoring_card_is_not_open() -> None:
    """000: only a turn-up "that can be used in declaring" becomes an open card: a nine does not."""
    s = deal(
        [
            ["9H", "9C", "8C", "7C", "9D", "8D", "7D", "8H"],
            ["7S", "JC", "JH", "TH", "7H", "QC", "TC", "8S"],
        ],
        turn_up="9S",
    )
    run(s, "play 9H", "play 7S", "exchange 7S.1")
    assert s.open[1] == []
    assert parse_card("9S.1") in s.won[1]
    assert new_items(s, 0) == [(1, "exchange", 10)]


def test_000_an_exchanged_seven_does_not_score_again_when_won_later() -> None:
    """000: "The seven of trumps when not exchanged is scored for by the player winning the trick
    containing it." An exchanged seven becomes the turn-up, is drawn by the loser of the last stock
    trick and may be played in the last eight tricks; it has scored its 10 by the exchange and must not
    score again for the winner of that trick. Random deals in which every possible exchange is made."""
    twice: list[str] = []
    for seed in range(12):
        rng = random.Random(seed)
        s = GameState.new(POLISH, seed=seed)
        while not s.is_terminal() and s.deal_index == 0:
            legal = s.legal_actions()
            exchanges = [a for a in legal if a.text.startswith("exchange")]
            s.apply(exchanges[0] if exchanges else rng.choice(legal))
        items = s.deals[0].items
        exchanged = {i.cards[0] for i in items if i.reason == "exchange"}
        twice += [
            f"seed {seed}: {i.text}"
            for i in items
            if i.reason == "seven-of-trumps" and i.cards[0] in exchanged
        ]
    assert twice == []


def test_000_seven_of_trumps_held_in_hand_scores_nothing() -> None:
    """000: the seven is exchanged, or scored, by "the winner of the trick containing it"; in Polish
    nothing is declared from the hand, so a seven of trumps in the hand offers neither."""
    s = deal(
        [
            ["9H", "9C", "8C", "7C", "9D", "8D", "7D", "8H"],
            ["TH", "7S", "JH", "JC", "7H", "QC", "TC", "8S"],
        ],
        turn_up="KS",
    )
    run(s, "play 9H", "play TH")
    assert s.phase == PLAY  # nothing to decide: no exchange offered
    assert not any(i.reason in ("exchange", "seven-of-trumps") for i in s.items)
    assert card_text(s.turn_up) == "KS.1"


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


# ---------------------------------------------------------------------------- the game


def test_000_polish_is_played_to_2000() -> None:
    """000: "The game is not less than 2000 up." Random play of a whole game: no deal before the last
    leaves a single seat at 2000 or more; the last does, and that seat wins."""
    assert POLISH.target == 2000
    rng = random.Random(11)
    s = GameState.new(POLISH, seed=11)
    while not s.is_terminal():
        s.apply(rng.choice(s.legal_actions()))
    res = s.result()
    assert len(s.deals) >= 2
    for d in s.deals[:-1]:
        best = max(d.totals)
        assert best < 2000 or list(d.totals).count(best) > 1
    final = s.deals[-1].totals
    winner = max(range(2), key=lambda i: final[i])
    assert final[winner] >= 2000 and final[winner] > final[1 - winner]
    assert res.winners == (winner,)
    assert res.scores == final


@pytest.mark.parametrize("seed", [1, 2])
def test_000_polish_deals_two_packs_like_two_handed(seed: int) -> None:
    """000/docs/rules.md §5: two packs; dealing, leading and drawing as in two-handed: 8 cards each, a turn-up
    fixing trumps, 47 cards in the stock besides it, and no open cards before a trick is won."""
    s = GameState.new(POLISH, seed=seed)
    assert POLISH.packs == 2
    assert [len(h) for h in s.hands] == [8, 8]
    assert s.turn_up >= 0 and s.trump == (s.turn_up >> 3) & 3
    assert s.stock_size == 48
    assert s.open == [[], []]
    assert s.to_act == (s.dealer + 1) % 2
