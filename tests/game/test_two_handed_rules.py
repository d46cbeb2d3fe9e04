"""Ordinary two-handed Bezique (docs/rules.md §1 and §2, source 002): the deal, tricks, drawing and
scores. The end of the stock, the last eight tricks and the end of the game are in
test_two_handed_endgame.py; declaring is in test_two_handed_declaring.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest
from engine_helpers import act, first_legal, hand_kinds, texts
from two_handed_helpers import (
    V,
    deal,
    keep_playing,
    leader_wins_deck,
    play_deal,
    winner_of_last_trick,
)

from arena.game import (
    Action,
    GameState,
    arrange_deck,
    card_text,
    kind_text,
    observe,
)

# ---------------------------------------------------------------- constructing the last eight tricks


# ---------------------------------------------------------------- the deal


# Positions 0..15 hold kinds 1..16, position 16 (the turn-up) kind 17 = 8D.
PLAIN_DECK = [(i + 1) % 32 for i in range(32)] + list(range(32))


@pytest.mark.parametrize("dealer", [0, 1])
def test_deal_three_two_three_non_dealer_first(dealer: int) -> None:
    """002: the dealer deals three cards to his adversary, three to himself, then two to each, and again
    three to each; 8 cards each."""
    s = GameState.new(V, seed=0, dealer=dealer, decks=[PLAIN_DECK])
    non_dealer = 1 - dealer
    deck = PLAIN_DECK
    first = [deck[i] for i in (0, 1, 2, 6, 7, 10, 11, 12)]
    second = [deck[i] for i in (3, 4, 5, 8, 9, 13, 14, 15)]
    assert hand_kinds(s, non_dealer) == sorted(kind_text(k) for k in first)
    assert hand_kinds(s, dealer) == sorted(kind_text(k) for k in second)
    assert len(s.hands[0]) == len(s.hands[1]) == 8


@pytest.mark.parametrize("dealer", [0, 1])
def test_seventeenth_card_is_turned_up_for_trumps_and_non_dealer_leads(dealer: int) -> None:
    """002: the top card of those remaining (the 17th) is turned up for trumps; the non-dealer leads."""
    s = GameState.new(V, seed=0, dealer=dealer, decks=[PLAIN_DECK])
    assert card_text(s.turn_up) == "8D.1"
    assert s.trump == 2  # diamonds
    assert observe(s, 0).trump == "D"
    assert s.stock_size == 48  # 47 face down and the turn-up
    assert s.to_act == 1 - dealer
    assert s.phase == 1
    assert all(t.startswith("play") for t in texts(s))
    assert s.deal_points == [0, 0]  # the turn-up is not a seven


@pytest.mark.parametrize("dealer", [0, 1])
def test_seven_turned_up_scores_10_for_the_dealer(dealer: int) -> None:
    """002: if the turn-up is a seven (so the seven of trumps), the dealer scores 10."""
    deck = list(range(32)) * 2  # position 16 is kind 16, the seven of diamonds
    s = GameState.new(V, seed=0, dealer=dealer, decks=[deck])
    assert card_text(s.turn_up) == "7D.1"
    assert s.deal_points[dealer] == 10
    assert s.deal_points[1 - dealer] == 0
    assert [(i.seat, i.points) for i in s.items] == [(dealer, 10)]


def test_first_dealer_is_drawn_from_the_seed() -> None:
    """docs/rules.md §2: the referee draws the first dealer from the match seed (deterministically)."""
    dealers = [GameState.new(V, seed=seed).dealer for seed in range(40)]
    assert set(dealers) == {0, 1}
    assert dealers == [GameState.new(V, seed=seed).dealer for seed in range(40)]
    for seed in range(40):
        s = GameState.new(V, seed=seed)
        assert s.to_act == 1 - s.dealer


def test_same_seed_same_game() -> None:
    """ARCHITECTURE (reproducibility): a match seed fixes every deal; the same seed and the same answers
    give an identical game."""
    a = GameState.new(V, seed=42)
    b = GameState.new(V, seed=42)
    for _ in range(300):
        if a.is_terminal():
            break
        assert texts(a) == texts(b)
        first_legal(a)
        first_legal(b)
    assert observe(a, None).log == observe(b, None).log
    assert observe(a, 0).hand == observe(b, 0).hand
    assert a.deal_points == b.deal_points
    c = GameState.new(V, seed=43)
    d = GameState.new(V, seed=42)
    assert (observe(c, 0).hand, observe(c, 1).hand, c.turn_up) != (
        observe(d, 0).hand,
        observe(d, 1).hand,
        d.turn_up,
    )


def test_dealer_alternates_between_deals() -> None:
    """002: when a deal is over, the non-dealer in the previous hand deals, and so on alternately."""
    second = arrange_deck(
        V, dealer=1, hands=[["AS", "AS", "AH", "AH", "AD", "AD", "AC", "AC"], []], turn_up="KD"
    )
    s = GameState.new(V, seed=3, dealer=0, decks=[list(range(32)) * 2, second])
    play_deal(s)
    assert s.deal_index == 1
    assert s.dealer == 1
    assert s.deals[0].dealer == 0
    assert s.to_act == 0  # the new non-dealer leads
    assert hand_kinds(s, 0) == ["AC", "AC", "AD", "AD", "AH", "AH", "AS", "AS"]
    assert card_text(s.turn_up) == "KD.1"


def test_dealer_alternates_through_a_whole_game() -> None:
    """002: the deal alternates until the game is won; each new deal is led by the non-dealer."""
    s = GameState.new(V, seed=8)
    first = s.dealer
    while not s.is_terminal():
        index = s.deal_index
        first_legal(s)
        if s.deal_index != index and not s.is_terminal():
            assert s.tricks_done == 0
            assert s.to_act == 1 - s.dealer
    assert len(s.deals) >= 2
    assert [d.dealer for d in s.deals] == [(first + i) % 2 for i in range(len(s.deals))]


# ---------------------------------------------------------------- tricks in the stock phase

SEAT0_REST = ["8D", "9D", "7D", "8C", "9C", "7C", "TD"]
SEAT1_REST = ["8D", "9D", "7D", "8C", "9C", "7C", "TD"]


@pytest.mark.parametrize(
    ("lead", "follow", "winner"),
    [
        ("AS", "7H", 1),  # a trump beats any plain card
        ("7H", "AS", 0),  # a trump led beats a higher plain card
        ("9H", "8H", 0),
        ("9H", "TH", 1),  # the higher trump wins
        ("9S", "KS", 1),  # the higher card of the suit led
        ("KS", "9S", 0),
        ("TS", "KS", 0),  # ten above king
        ("QS", "JS", 0),  # queen above knave
        ("JS", "QS", 1),
        ("8S", "9S", 1),
        ("9S", "AC", 0),  # a card of another plain suit never wins
        ("AS", "AS", 0),  # identical cards: the one played first wins
        ("7H", "7H", 0),
    ],
)
def test_trick_winner(lead: str, follow: str, winner: int) -> None:
    """002 / docs/rules.md §1: the highest trump wins, else the highest card of the suit led (A T K Q J 9 8 7);
    between identical cards the one played first wins."""
    s = deal([lead, *SEAT0_REST], [follow, *SEAT1_REST])
    act(s, f"play {lead}", f"play {follow}")
    assert winner_of_last_trick(s) == winner
    if s.phase == 2:
        act(s, "done")
    assert s.to_act == winner  # the winner leads to the next trick
    assert s.tricks_done == 1


@pytest.mark.parametrize("dealer", [0, 1])
def test_identical_cards_first_played_wins_either_seat(dealer: int) -> None:
    """002: in case of ties the leader wins (whichever seat leads)."""
    leader = 1 - dealer
    hands = [["AS", *SEAT0_REST], ["AS", *SEAT1_REST]]
    deck = arrange_deck(V, dealer=dealer, hands=hands, turn_up="9H")
    s = GameState.new(V, seed=0, dealer=dealer, decks=[deck])
    act(s, "play AS", "play AS")
    assert winner_of_last_trick(s) == leader


def test_follower_may_play_any_card_in_the_stock_phase() -> None:
    """002: there is no restriction as to the card to be played; the second player need not follow suit,
    nor win the trick (nor trump)."""
    s = deal(
        ["AS", "8D", "9D", "7D", "8C", "9C", "7C", "TD"],
        ["TS", "9S", "8H", "AC", "KD", "QC", "7C", "8C"],
    )
    act(s, "play AS")
    assert texts(s) == sorted(texts(s), key=lambda t: Action.parse(t))
    assert sorted(t.split()[1] for t in texts(s)) == sorted(
        ["TS", "9S", "8H", "AC", "KD", "QC", "7C", "8C"]
    )
    act(s, "play 7C")  # neither follows, nor trumps, nor wins
    assert winner_of_last_trick(s) == 0


def test_leader_may_lead_any_card() -> None:
    """002: the non-dealer plays any card out of his hand."""
    hand = ["AS", "KH", "QD", "JC", "7S", "8H", "9D", "TC"]
    s = deal(hand, [*SEAT1_REST, "7S"])
    assert sorted(t.split()[1] for t in texts(s)) == sorted(hand)


# ---------------------------------------------------------------- drawing


@pytest.mark.parametrize("winner", [0, 1])
def test_winner_draws_the_top_card_loser_the_next(winner: int) -> None:
    """002: the winner of the trick takes the top card of the stock, his adversary the next."""
    s = deal(
        ["9S", *SEAT0_REST],
        ["TS", "8S", *SEAT1_REST[:6]],
        stock=["AD", "JC"],
    )
    act(s, "play 9S", "play TS" if winner == 1 else "play 8S")
    if s.phase == 2:
        act(s, "done")
    loser = 1 - winner
    assert winner_of_last_trick(s) == winner
    assert hand_kinds(s, winner).count("AD") == 1
    assert hand_kinds(s, loser).count("JC") == 1
    assert "AD" not in hand_kinds(s, loser)
    assert s.stock_size == 46


def test_stock_size_and_hand_sizes_through_a_deal() -> None:
    """002: after each of the 24 stock tricks both draw (47 face down + the turn-up = 48); then eight
    tricks are played out of the hands with nothing drawn."""
    s = GameState.new(V, seed=21)
    seen = 0
    while s.deal_index == 0:
        if s.phase == 1 and not s.trick:
            done = s.tricks_done
            expected_stock = max(0, 48 - 2 * done)
            assert s.stock_size == expected_stock
            assert observe(s, 0).stock_size == expected_stock
            size = 8 if done <= 24 else 32 - done
            assert len(observe(s, 0).hand) == len(observe(s, 1).hand) == size
            seen += 1
        first_legal(s)
    assert seen == 32


def test_last_draw_winner_takes_last_card_loser_the_turn_up() -> None:
    """002: the winner of the last stock trick takes the last card of the stock, and the loser the
    turn-up card."""
    final0 = ["AS", "9S", "JS", "AD", "JH", "AH", "KC", "QD"]
    final1 = ["TS", "KS", "8S", "QH", "KH", "8C", "7C", "9H"]
    s = GameState.new(V, seed=0, dealer=1, decks=[leader_wins_deck(final0, final1)])
    keep_playing(s, [final0[:-1], final1[:-1]], 23)
    assert s.stock_size == 2
    turn_up = s.turn_up
    assert card_text(turn_up) == "9H.1"
    keep_playing(s, [final0[:-1], final1[:-1]], 24)
    assert winner_of_last_trick(s) == 0
    assert s.stock_size == 0
    assert hand_kinds(s, 0) == sorted(final0)  # QD was the last face-down card
    assert turn_up in s.hands[1]
    assert "seat 1 draws the turn-up 9H.1" in observe(s, 0).log


def test_last_draw_gives_the_loser_the_seven_exchanged_for_the_turn_up() -> None:
    """002: the loser of the last stock trick takes the turn-up card, or the seven exchanged for it."""
    final0 = ["AS", "9S", "JS", "AD", "JH", "7H", "KC", "QD"]
    final1 = ["TS", "KS", "8S", "QH", "KH", "8C", "7C", "9H"]
    s = GameState.new(V, seed=0, dealer=1, decks=[leader_wins_deck(final0, final1)])
    keeps0 = final0[:-1]
    lead = (Counter(hand_kinds(s, 0)) - Counter(keeps0)).most_common(1)[0][0]
    follow = (Counter(hand_kinds(s, 1)) - Counter(final1[:-1])).most_common(1)[0][0]
    act(s, f"play {lead}", f"play {follow}", "exchange 7H")
    seven = s.turn_up
    assert card_text(seven)[:2] == "7H"
    keeps0 = [c if c != "7H" else "9H" for c in keeps0]
    keep_playing(s, [keeps0, final1[:-1]], 24)
    assert winner_of_last_trick(s) == 0
    assert seven in s.hands[1]
    assert f"seat 1 draws the turn-up {card_text(seven)}" in observe(s, 0).log
    assert hand_kinds(s, 1) == sorted([*final1[:-1], "7H"])


# ---------------------------------------------------------------- scores


def test_table_of_scores() -> None:
    """002 (docs/rules.md §2): marriage 20, royal marriage 40, bezique 40, four knaves 40, four queens 60, four
    kings 80, four aces 100, sequence 250, double bezique 500, seven of trumps 10, last trick 10; 1000."""
    scores = {c.text: p for c, p in V.scores.items()}
    assert scores["marriage"] == 20
    assert scores["royal-marriage"] == 40
    assert scores["bezique"] == 40
    assert scores["four-knaves"] == 40
    assert scores["four-queens"] == 60
    assert scores["four-kings"] == 80
    assert scores["four-aces"] == 100
    assert scores["sequence"] == 250
    assert scores["double-bezique"] == 500
    assert scores["seven-of-trumps"] == 10
    assert "carte-blanche" not in scores
    assert "plain-sequence" not in scores
    assert V.last_trick == 10
    assert V.target == 1000


LEADS = ["8S", "9S", "7S", "8D", "9D", "7D"]


@pytest.mark.parametrize(
    ("cards", "action", "points"),
    [
        (["KS", "QS"], "declare marriage KS QS", 20),
        (["KH", "QH"], "declare royal-marriage KH QH", 40),
        (["QS", "JD"], "declare bezique QS JD", 40),
        (["JS", "JH", "JD", "JC"], "declare four-knaves JS JH JD JC", 40),
        (["QS", "QH", "QD", "QC"], "declare four-queens QS QH QD QC", 60),
        (["KS", "KH", "KD", "KC"], "declare four-kings KS KH KD KC", 80),
        (["AS", "AH", "AD", "AC"], "declare four-aces AS AH AD AC", 100),
        (["AH", "TH", "KH", "QH", "JH"], "declare sequence AH TH KH QH JH", 250),
        (["QS", "QS", "JD", "JD"], "declare double-bezique QS QS JD JD", 500),
        (["7H"], "declare seven-of-trumps 7H", 10),
    ],
)
def test_each_declaration_scores_its_table_value(
    cards: list[str], action: str, points: int
) -> None:
    """002 table of scores, hearts trumps: each declaration is offered and scores its value at once."""
    s = deal([*cards, *LEADS[: 8 - len(cards)]], ["7C", "7C", "8C", "8C", "9C", "9C", "TC", "TC"])
    act(s, "play 8S", "play 7C")
    assert action in texts(s)
    act(s, action)
    assert s.deal_points == [points, 0]
    assert (s.items[-1].seat, s.items[-1].points) == (0, points)
    assert observe(s, 1).seats[0].deal_points == points


def _won_from_log(log: Sequence[str]) -> list[list[str]]:
    """Cards each seat took in tricks, rebuilt from the public log of one deal."""
    won: list[list[str]] = [[], []]
    trick: list[str] = []
    for line in log:
        words = line.split()
        if len(words) == 4 and words[2] == "plays":
            trick.append(words[3])
        elif len(words) == 5 and words[2] == "wins" and words[3] == "trick":
            won[int(words[1])].extend(trick)
            trick = []
    return won


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_brisques_and_last_trick_scored_at_end_of_hand(seed: int) -> None:
    """002 / docs/rules.md §2: aces and tens taken score 10 each, counted at the end of the hand; the last (32nd)
    trick scores 10; all 160 brisque points and the 10 for the last trick are always awarded."""
    s = GameState.new(V, seed=seed)
    while s.tricks_done < 32 and s.deal_index == 0:
        assert not any(i.reason in ("brisques", "last-trick") for i in s.items)
        first_legal(s)
    assert s.deal_index == 1
    d = s.deals[0]
    assert d.completed
    log = list(observe(s, None).log)
    log = log[: max(i for i, line in enumerate(log) if line.startswith("deal 2"))]
    won = _won_from_log(log)
    assert sum(len(w) for w in won) == 64
    counted = [10 * sum(1 for c in w if c[0] in "AT") for w in won]
    assert sum(counted) == 160
    assert list(d.brisques) == counted
    brisque_items = {i.seat: i.points for i in d.items if i.reason == "brisques"}
    assert brisque_items == {seat: p for seat, p in enumerate(counted) if p}
    last = [i for i in d.items if i.reason == "last-trick"]
    assert len(last) == 1
    assert last[0].points == 10
    last_trick_line = next(line for line in reversed(log) if "wins trick 32" in line)
    assert last[0].seat == int(last_trick_line.split()[1])
    assert sum(i.points for i in d.items) == sum(d.points)
    assert list(d.totals) == list(d.points)
