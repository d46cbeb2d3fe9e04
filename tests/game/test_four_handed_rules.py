"""Four-handed Bezique, individual and in partnerships (docs/rules.md §4; sources 000, 003 and
EB9-643): four packs, four draws per stock trick, the last eight tricks as two duels. Declaring with
partners, what a seat sees and side scores are in test_four_handed_partners.py.

Unless a test says otherwise seat 3 deals, so seat 0 (left of the dealer) leads and hearts are trumps.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

import pytest
from engine_helpers import (
    act,
    finish_turn,
    first_legal,
    hand_kinds,
    last_winner,
    play_out_stock,
    plays,
    stock_end_deck,
)
from four_handed_helpers import P, V, deal, play_deal

from arena.game import (
    Action,
    GameState,
    IllegalActionError,
    Variant,
    kind_text,
    observe,
)

# ---------------------------------------------------------------- helpers


def last_eight(finals: Sequence[Sequence[str]], dealer: int = 3, v: Variant = V) -> GameState:
    """The state after the 24th trick, won by the player left of the dealer, hands as given."""
    state = GameState.new(v, seed=0, dealer=dealer, decks=[stock_end_deck(v, dealer, finals)])
    play_out_stock(state, finals)
    assert state.stock_size == 0
    for seat in range(v.seats):
        assert hand_kinds(state, seat) == sorted(finals[seat]), seat
    return state


def _trick_log(state: GameState) -> list[tuple[list[int], int]]:
    """(seats that played, winner) of each trick of the first deal, from the public log."""
    out: list[tuple[list[int], int]] = []
    seats: list[int] = []
    for line in observe(state, None).log:
        if line.startswith("deal 2"):
            break
        words = line.split()
        if len(words) == 4 and words[2] == "plays":
            seats.append(int(words[1]))
        elif len(words) == 5 and words[2:4] == ["wins", "trick"]:
            out.append((seats, int(words[1])))
            seats = []
    return out


# ---------------------------------------------------------------- the variants


@pytest.mark.parametrize("v", [V, P], ids=["four-handed", "four-handed-partners"])
def test_four_packs_four_seats_target_2000_quadruple_bezique(v: Variant) -> None:
    """docs/rules.md §4 (000, 003): four packs (128 cards), 8 cards each, target 2000, quadruple bezique 4500,
    triple 1500; the last eight tricks as duels."""
    assert v.packs == 4
    assert v.deck_size == 128
    assert v.seats == 4
    assert v.hand_size == 8
    assert v.target == 2000
    assert v.last_duels
    scores = {c.text: p for c, p in v.scores.items()}
    assert scores["quadruple-bezique"] == 4500
    assert scores["triple-bezique"] == 1500
    assert scores["double-bezique"] == 500
    assert v.team_sizes == () or set(v.team_sizes) == {1}


def test_sides_individual_and_partners() -> None:
    """docs/rules.md §4 (000): players score independently, or as partners sitting opposite: seats 0 and 2
    against 1 and 3."""
    assert V.sides == ((0,), (1,), (2,), (3,))
    assert V.partners(0) == ()
    assert P.partnerships == ((0, 2), (1, 3))
    assert P.sides == ((0, 2), (1, 3))
    assert P.partners(0) == (2,)
    assert P.partners(3) == (1,)
    assert P.side_of(2) == 0
    assert P.side_of(1) == 1


# ---------------------------------------------------------------- deal, draws, stock

# Positions 0..31 hold kinds 3..31, 0, 1, 2 (32 distinct cards); the turn-up (position 32) is 7S.
PLAIN_DECK = [(i + 3) % 32 for i in range(32)] + list(range(32)) * 3


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_deal_to_the_left_leader_left_of_dealer_96_in_stock(dealer: int) -> None:
    """docs/rules.md §3, §4 (EB9-643): the dealer deals to his left, 3, 2, 3 (8 cards each); the player first dealt
    to leads; four packs leave 96 in the stock, the turn-up (the 33rd card) included."""
    s = GameState.new(V, seed=0, dealer=dealer, decks=[PLAIN_DECK])
    first = (dealer + 1) % 4
    for i in range(4):
        seat = (first + i) % 4
        positions = [3 * i, 3 * i + 1, 3 * i + 2, 12 + 2 * i, 13 + 2 * i]
        positions += [20 + 3 * i, 21 + 3 * i, 22 + 3 * i]
        assert hand_kinds(s, seat) == sorted(kind_text(PLAIN_DECK[p]) for p in positions)
    assert kind_text(s.turn_up & 31) == kind_text(PLAIN_DECK[32])
    assert s.stock_size == 96
    assert s.to_act == first


LOW = ["8D", "9D", "7D", "8C", "9C", "7C", "TD"]


@pytest.mark.parametrize("v", [V, P], ids=["four-handed", "four-handed-partners"])
@pytest.mark.parametrize("winner", [0, 1, 2, 3])
def test_four_draws_in_playing_order_from_the_winner(v: Variant, winner: int) -> None:
    """docs/rules.md §4 (000): after each stock trick the four players draw in playing order, the winner
    first."""
    cards = ["9S", "8S", "7S", "8S"]
    cards[winner] = "AS"
    s = deal([[c, *LOW] for c in cards], v=v, stock=["AH", "KH", "QH", "JH"])
    before = [Counter(hand_kinds(s, seat)) for seat in range(4)]
    act(s, *(f"play {c}" for c in cards))
    assert last_winner(s) == winner
    finish_turn(s)
    for i, card in enumerate(["AH", "KH", "QH", "JH"]):
        seat = (winner + i) % 4
        drawn = Counter(hand_kinds(s, seat)) - (before[seat] - Counter([cards[seat]]))
        assert list(drawn.elements()) == [card], seat
    assert s.stock_size == 92
    assert s.to_act == winner


@pytest.mark.parametrize("v", [V, P], ids=["four-handed", "four-handed-partners"])
def test_24_stock_tricks_of_four_then_16_duel_tricks_of_two(v: Variant) -> None:
    """docs/rules.md §4 (000): 96 cards in the stock drawn four after each trick: 24 tricks of four with 8 cards
    in every hand; then the last eight cards of each player in two-card tricks (16 tricks)."""
    s = GameState.new(v, seed=7)
    while s.deal_index == 0 and not s.is_terminal():
        if s.phase == 1 and not s.trick and s.tricks_done <= 24:
            assert s.stock_size == 96 - 4 * s.tricks_done
            assert [len(observe(s, seat).hand) for seat in range(4)] == [8] * 4
        first_legal(s)
    tricks = _trick_log(s)
    assert len(tricks) == 40
    assert [len(t[0]) for t in tricks] == [4] * 24 + [2] * 16
    assert sum(s.deals[0].brisques) == 320


# ---------------------------------------------------------------- the last eight tricks as duels


@pytest.mark.parametrize("v", [V, P], ids=["four-handed", "four-handed-partners"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_last_eight_played_as_two_duels(v: Variant, seed: int) -> None:
    """000 (EB9-643): in playing the last eight tricks, the winner of the last trick and the adversary
    to his left play their cards against each other, and then the other two similarly play theirs
    (docs/rules.md §4: the player opposite the winner leads the second duel); each duel's trick winner leads
    its next trick."""
    s = GameState.new(v, seed=seed)
    play_deal(s)
    tricks = _trick_log(s)
    w = tricks[23][1]
    first, second = tricks[24:32], tricks[32:40]
    assert tricks[24][0][0] == w
    for seats, _ in first:
        assert sorted(seats) == sorted([w, (w + 1) % 4])
    assert second[0][0][0] == (w + 2) % 4
    for seats, _ in second:
        assert sorted(seats) == sorted([(w + 2) % 4, (w + 3) % 4])
    for (_, won), (seats, _) in [*itertools.pairwise(first), *itertools.pairwise(second)]:
        assert seats[0] == won
    if v is P:
        assert P.side_of(w) != P.side_of((w + 1) % 4)  # each duel is between adversaries


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_duels_follow_the_last_stock_trick_winner(dealer: int) -> None:
    """000: the duels are fixed by the winner of the last stock trick (here the player left of the
    dealer): he and the adversary to his left first, the two others after, the player opposite him
    leading; the others wait."""
    finals = [
        ["9S", "AS", "9C", "AC", "8H", "KH", "AH", "9D"],
        ["QS", "JS", "8S", "7D", "8D", "9C", "TC", "7H"],
        ["KS", "JS", "8S", "7D", "8D", "TD", "QD", "JH"],
        ["TS", "7S", "7C", "8C", "KD", "AD", "TH", "9H"],
    ]
    order = [(dealer + 1 + i) % 4 for i in range(4)]
    by_seat = [finals[order.index(seat)] for seat in range(4)]  # the dealer gets 9H, the turn-up
    s = last_eight(by_seat, dealer=dealer)
    w = (dealer + 1) % 4
    assert s.duels == ((w, (w + 1) % 4), ((w + 2) % 4, (w + 3) % 4))
    for _ in range(8):
        assert s.to_act in (w, (w + 1) % 4)
        first_legal(s)
        assert s.to_act in (w, (w + 1) % 4)
        first_legal(s)
        assert len(s.trick) == 0
    assert [len(s.hands[seat]) for seat in (w, (w + 1) % 4)] == [0, 0]
    assert s.to_act == (w + 2) % 4
    assert plays(s) == set(by_seat[(w + 2) % 4])  # the second duel's leader may lead any card


DUEL_LEADER = ["9S", "AS", "9C", "AC", "8H", "KH", "AH", "9D"]
DUEL_REST = [
    ["KS", "JS", "8S", "7D", "8D", "TD", "QD", "JH"],
    ["TS", "7S", "7C", "8C", "KD", "AD", "TH", "9H"],
]


@pytest.mark.parametrize(
    ("follower", "lead", "legal"),
    [
        (["QS", "JS", "8S", "7D", "8D", "9C", "TC", "7H"], "9S", {"JS", "QS"}),
        (["QS", "JS", "8S", "7D", "8D", "9C", "TC", "7H"], "AS", {"8S", "JS", "QS"}),
        (["QS", "JS", "8S", "7D", "8D", "TH", "7H", "9H"], "9C", {"7H", "9H", "TH"}),
        (
            ["QS", "JS", "8S", "7D", "8D", "9D", "TS", "KD"],
            "9C",
            {"QS", "JS", "8S", "7D", "8D", "9D", "TS", "KD"},
        ),
        (["7H", "9H", "TH", "QS", "JS", "8S", "7D", "8D"], "8H", {"9H", "TH"}),
    ],
)
def test_duel_tricks_under_the_last_eight_rules_of_two_handed(
    follower: list[str], lead: str, legal: set[str]
) -> None:
    """000 / docs/rules.md §4: the duels are two-card tricks under the last-eight rules of section 2 (002): follow
    suit and win if able; if void, win by trumping if able; else any card."""
    s = last_eight([DUEL_LEADER, follower, *DUEL_REST])
    assert s.trick_order == (0, 1)
    act(s, f"play {lead}")
    assert s.to_act == 1
    assert plays(s) == legal
    for card in set(follower) - legal:
        with pytest.raises(IllegalActionError):
            s.apply(Action.parse(f"play {card}"))
    act(s, f"play {sorted(legal)[0]}")
    assert s.tricks_done == 25
    assert len(s.trick) == 0  # a duel trick has two cards


def test_second_duel_follower_obligations() -> None:
    """000 / docs/rules.md §4: the other two play theirs the same way: the follower of the second duel must
    follow suit and win if able."""
    s = last_eight(
        [
            DUEL_LEADER,
            ["QS", "JS", "8S", "7D", "8D", "9C", "TC", "7H"],
            ["9S", "AS", "9C", "AC", "8D", "KH", "AH", "9D"],
            ["KS", "JS", "8S", "7D", "8D", "7C", "QC", "TH"],
        ]
    )
    while s.to_act in (0, 1):
        first_legal(s)
    assert s.to_act == 2
    assert s.tricks_done == 32
    act(s, "play 9S")
    assert s.to_act == 3
    assert plays(s) == {"JS", "KS"}
    act(s, "play KS")
    assert last_winner(s) == 3
    act(s, "play TH")
    assert plays(s) == {"AH"}  # trumps led: head the trick if able


def test_no_declaring_in_the_duels() -> None:
    """002 / docs/rules.md §2: declarations cease with the stock; a marriage held by a duel's winner gives no
    declaring turn."""
    s = last_eight(
        [
            ["AS", "KD", "QD", "AC", "8H", "KH", "QH", "9D"],
            ["QS", "JS", "8S", "7D", "8D", "9C", "TC", "7H"],
            *DUEL_REST,
        ],
        v=P,
    )
    points = list(s.deal_points)
    act(s, "play AS", "play 8S")
    assert last_winner(s) == 0
    assert s.phase == 1 and s.to_act == 0
    assert s.deal_points == points
