"""Three-handed Bezique, all against all (docs/rules.md §3; sources 000 and EB9-643): three packs, the
deal to the left, three draws per stock trick, triple bezique and the second double bezique. The last
eight tricks and the end of the game are in test_three_handed_endgame.py.

Unless a test says otherwise seat 2 deals, so seat 0 (left of the dealer) leads, and hearts are trumps.
"""

from __future__ import annotations

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
    texts,
)
from three_handed_helpers import RANKS, V

from arena.game import (
    GameState,
    Variant,
    arrange_deck,
    card_text,
    kind_text,
    observe,
    ref_text,
)

# ---------------------------------------------------------------- helpers


def deal(
    hands: Sequence[Sequence[str]],
    *,
    turn_up: str = "9H",
    stock: Sequence[str] = (),
    dealer: int = 2,
    v: Variant = V,
) -> GameState:
    deck = arrange_deck(v, dealer=dealer, hands=hands, turn_up=turn_up, stock=stock)
    return GameState.new(v, seed=0, dealer=dealer, decks=[deck])


# ---------------------------------------------------------------- the variant


def test_three_packs_three_seats_target_2000_and_triple_bezique() -> None:
    """docs/rules.md §3 (000, EB9-643): three packs (96 cards), all against all, 8 cards each, game 2000 up,
    triple bezique 1500; the other scores as in two-handed (002)."""
    assert V.packs == 3
    assert V.deck_size == 96
    assert V.seats == 3
    assert V.hand_size == 8
    assert V.target == 2000
    assert V.sides == ((0,), (1,), (2,))
    assert V.partnerships == ()
    assert not V.last_duels
    scores = {c.text: p for c, p in V.scores.items()}
    assert scores["triple-bezique"] == 1500
    assert scores["double-bezique"] == 500
    assert scores["bezique"] == 40
    assert scores["sequence"] == 250
    assert scores["four-aces"] == 100
    assert scores["seven-of-trumps"] == 10
    assert V.last_trick == 10
    s = GameState.new(V, seed=1)
    assert len(s.hands) == 3


# ---------------------------------------------------------------- the deal

# Positions 0..31 hold kinds 1..31, 0; the turn-up (position 24) is kind 25 = 8C.
PLAIN_DECK = [(i + 1) % 32 for i in range(32)] + list(range(32)) * 2


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_deal_three_two_three_to_the_left_of_the_dealer(dealer: int) -> None:
    """EB9-643: the dealer deals to his left (3, 2, 3 cards, 8 each; docs/rules.md §3); the player first dealt to
    has the first lead. The 25th card is turned up for trumps; 72 cards are left in the stock, the
    turn-up included."""
    s = GameState.new(V, seed=0, dealer=dealer, decks=[PLAIN_DECK])
    first = (dealer + 1) % 3
    packets = {
        first: [0, 1, 2, 9, 10, 15, 16, 17],
        (first + 1) % 3: [3, 4, 5, 11, 12, 18, 19, 20],
        dealer: [6, 7, 8, 13, 14, 21, 22, 23],
    }
    for seat, positions in packets.items():
        assert hand_kinds(s, seat) == sorted(kind_text(PLAIN_DECK[i]) for i in positions), seat
    assert card_text(s.turn_up) == "8C.1"
    assert s.trump == 3
    assert s.stock_size == 72
    assert observe(s, first).stock_size == 72
    assert s.to_act == first
    assert s.phase == 1


def test_dealer_rotates_to_the_left_and_the_player_left_of_him_leads() -> None:
    """EB9-643: the rotation of dealing goes to the left; each deal the player left of the dealer
    leads."""
    s = GameState.new(V, seed=4, dealer=1)
    dealers = [s.dealer]
    while len(s.deals) < 4 and not s.is_terminal():
        index = s.deal_index
        first_legal(s)
        if s.deal_index != index:
            dealers.append(s.dealer)
            assert s.tricks_done == 0
            assert s.to_act == (s.dealer + 1) % 3
    assert dealers[:5] == [1, 2, 0, 1, 2][: len(dealers)]
    assert len(dealers) >= 4


def test_first_dealer_is_drawn_from_the_seed_among_three() -> None:
    """docs/rules.md §1: the first dealer is drawn from the match seed; every seat can deal first."""
    dealers = [GameState.new(V, seed=seed).dealer for seed in range(60)]
    assert set(dealers) == {0, 1, 2}
    assert dealers == [GameState.new(V, seed=seed).dealer for seed in range(60)]


# ---------------------------------------------------------------- tricks and draws in the stock phase

LOW = [
    ["8D", "9D", "7D", "8C", "9C", "7C", "TD"],
    ["8D", "9D", "7D", "8C", "9C", "7C", "TD"],
    ["8D", "9D", "7D", "8C", "9C", "7C", "TD"],
]


@pytest.mark.parametrize(
    ("cards", "winner"),
    [
        (("9S", "AS", "TS"), 1),  # the highest card of the suit led
        (("9S", "TS", "AS"), 2),
        (("AS", "AS", "AS"), 0),  # identical cards: the one played first wins
        (("9S", "AS", "AS"), 1),
        (("9S", "AD", "KC"), 0),  # cards of other plain suits never win
        (("AS", "7H", "AS"), 1),  # a trump wins
        (("AS", "7H", "8H"), 2),  # the higher trump wins
        (("AS", "8H", "8H"), 1),  # identical trumps: the first played
        (("7H", "AS", "AS"), 0),  # trumps led
    ],
)
def test_trick_winner_among_three(cards: tuple[str, str, str], winner: int) -> None:
    """docs/rules.md §1 (002): the highest trump wins, else the highest card of the suit led; between
    identical cards the one played first wins."""
    s = deal([[c, *LOW[i]] for i, c in enumerate(cards)])
    act(s, *(f"play {c}" for c in cards))
    assert last_winner(s) == winner
    assert s.tricks_done == 1
    finish_turn(s)
    assert s.to_act == winner


def test_second_and_third_players_may_play_any_card_in_the_stock_phase() -> None:
    """002 (docs/rules.md §2, §3): while there is a stock, no player need follow suit, trump or win."""
    hand1 = ["TS", "9S", "8H", "AC", "KD", "QC", "7C", "8C"]
    hand2 = ["KS", "7S", "9H", "AD", "QD", "JC", "7D", "8D"]
    s = deal([["9S", *LOW[0]], hand1, hand2])
    act(s, "play 9S")
    assert plays(s) == set(hand1)
    act(s, "play 8C")
    assert plays(s) == set(hand2)
    act(s, "play 7D")
    assert last_winner(s) == 0


@pytest.mark.parametrize(("winner", "second", "third"), [(0, "8S", "7S"), (1, "AS", "7S")])
def test_three_draws_in_playing_order_from_the_winner(winner: int, second: str, third: str) -> None:
    """docs/rules.md §3 (000): each stock trick is followed by three draws in playing order from the winner: the
    winner takes the top card, the player on his left the next, and the third player the next."""
    s = deal(
        [["9S", *LOW[0]], [second, *LOW[1]], [third, *LOW[2]]],
        stock=["AH", "KH", "QH"],
    )
    before = [Counter(hand_kinds(s, seat)) for seat in range(3)]
    act(s, "play 9S", f"play {second}", f"play {third}")
    assert last_winner(s) == winner
    finish_turn(s)
    expected = {winner: "AH", (winner + 1) % 3: "KH", (winner + 2) % 3: "QH"}
    for seat in range(3):
        played = {0: "9S", 1: second, 2: third}[seat]
        drawn = Counter(hand_kinds(s, seat)) - (before[seat] - Counter([played]))
        assert list(drawn.elements()) == [expected[seat]], seat
    assert s.stock_size == 69


def test_third_player_wins_and_draws_first() -> None:
    """docs/rules.md §3 (000): the draws start with the winner even when he played last to the trick; the
    player who led draws last."""
    s = deal([["9S", *LOW[0]], ["8S", *LOW[1]], ["AS", *LOW[2]]], stock=["AH", "KH", "QH"])
    act(s, "play 9S", "play 8S", "play AS")
    assert last_winner(s) == 2
    finish_turn(s)
    assert "AH" in hand_kinds(s, 2)
    assert "KH" in hand_kinds(s, 0)
    assert "QH" in hand_kinds(s, 1)
    assert s.to_act == 2


def test_24_stock_tricks_then_eight_tricks_of_three() -> None:
    """docs/rules.md §3 (000): 72 cards in the stock, three drawn after each trick: 24 stock tricks with 8
    cards in every hand, then 8 tricks of three played out of the hands, nothing drawn."""
    s = GameState.new(V, seed=11)
    starts = 0
    while s.deal_index == 0 and not s.is_terminal():
        if s.phase == 1 and not s.trick:
            done = s.tricks_done
            assert s.stock_size == max(0, 72 - 3 * done)
            size = 8 if done <= 24 else 32 - done
            assert [len(observe(s, seat).hand) for seat in range(3)] == [size] * 3
            assert s.in_stock_phase == (done < 24)
            starts += 1
        first_legal(s)
    assert starts == 32
    log = list(observe(s, None).log)
    end = next(i for i, line in enumerate(log) if line.startswith("deal 2"))
    tricks = [line for line in log[:end] if " wins trick " in line]
    assert len(tricks) == 32
    plays_per_trick = []
    count = 0
    for line in log[:end]:
        if " plays " in line:
            count += 1
        elif " wins trick " in line:
            plays_per_trick.append(count)
            count = 0
    assert plays_per_trick == [3] * 32


FINALS = [
    ["AS", "9S", "KH", "QH", "AD", "9D", "AC", "9C"],
    ["QS", "JS", "8S", "7D", "8D", "9C", "TC", "7H"],
    ["KS", "JS", "8S", "7D", "8D", "TD", "QD", "JH"],
]


def test_last_draw_the_third_player_takes_the_turn_up() -> None:
    """002 / docs/rules.md §3: on the last draw the winner takes a face-down card, the next player the last
    face-down card, and the third player (here the dealer) the turn-up."""
    s = GameState.new(V, seed=0, dealer=2, decks=[stock_end_deck(V, 2, FINALS)])
    turn_up = s.turn_up
    assert card_text(turn_up) == "JH.1"
    play_out_stock(s, FINALS, tricks=23)
    assert s.stock_size == 3
    play_out_stock(s, FINALS, tricks=24)
    assert s.stock_size == 0
    assert last_winner(s) == 0
    assert turn_up in s.hands[2]
    assert "seat 2 draws the turn-up JH.1" in observe(s, 0).log
    for seat in range(3):
        assert hand_kinds(s, seat) == sorted(FINALS[seat])


def test_winner_of_the_24th_trick_may_declare_then_declarations_cease() -> None:
    """002 / docs/rules.md §2: the winner of the last stock trick may still declare; in the last eight tricks
    nobody declares (a marriage in hand, a trick won: no declaring turn)."""
    s = GameState.new(V, seed=0, dealer=2, decks=[stock_end_deck(V, 2, FINALS)])
    play_out_stock(s, FINALS, tricks=23)
    keeps = [f[:-1] for f in FINALS]
    for seat in (0, 1, 2):
        extra = Counter(hand_kinds(s, seat)) - Counter(keeps[seat])
        act(s, "play " + sorted(extra)[0])
    assert s.tricks_done == 24
    assert s.phase == 2
    assert s.to_act == 0
    assert "declare royal-marriage KH QH" in texts(s)
    act(s, "declare royal-marriage KH QH")
    assert s.deal_points[0] == 40
    finish_turn(s)
    assert s.stock_size == 0
    assert observe(s, 1).seats[0].table == ()  # the declared cards are taken back into the hand
    act(s, "play AS", "play QS", "play KS")
    assert last_winner(s) == 0
    assert s.phase == 1
    assert s.to_act == 0
    assert all(t.startswith("play") for t in texts(s))
    assert s.deal_points[0] == 40


# ---------------------------------------------------------------- triple and second double bezique

BEZ_LOW = [["7C", "8C", "9C", "7C", "8C", "9C", "7D", "8D"], ["7C", "8D", "9D", "9D", "8D", "7D"]]
QUIET_STOCK = ["8S", "9S", "7S", "8S", "9S", "7S", "7S", "TC", "TC", "TD", "TD", "TD"]


def _bezique_deal(seat0: Sequence[str], stock: Sequence[str] = QUIET_STOCK) -> GameState:
    """Seat 0 leads and wins with its aces (seats 1 and 2 throw low clubs and diamonds)."""
    return deal([list(seat0), BEZ_LOW[0], [*BEZ_LOW[1], "9S", "8S"]], stock=stock)


def _win_trick(s: GameState, lead: str) -> None:
    """Seat 0 leads ``lead`` and seats 1 and 2 throw their lowest card; seat 0 wins."""
    act(s, f"play {lead}")
    act(s, f"play {sorted(plays(s), key=lambda c: RANKS.index(c[0]))[0]}")
    act(s, f"play {sorted(plays(s), key=lambda c: RANKS.index(c[0]))[0]}")
    assert last_winner(s) == 0


def test_triple_bezique_declared_at_once_scores_1500() -> None:
    """docs/rules.md §3 (EB9-643): triple bezique scores 1500; all three béziques may be declared together."""
    s = _bezique_deal(["QS", "QS", "QS", "JD", "JD", "JD", "AS", "AC"])
    _win_trick(s, "AS")
    assert s.phase == 2
    assert "declare triple-bezique QS QS QS JD JD JD" in texts(s)
    act(s, "declare triple-bezique QS QS QS JD JD JD")
    assert s.deal_points[0] == 1500
    assert s.items[-1].reason == "triple-bezique"
    assert len(observe(s, 1).seats[0].table) == 6


def test_third_bezique_added_to_a_declared_double_scores_1500() -> None:
    """EB9-643: a third bezique may be added to a double bezique already declared (1500); all its cards
    are on the table at the same time, none played."""
    s = _bezique_deal(["QS", "QS", "QS", "JD", "JD", "JD", "AS", "AC"])
    _win_trick(s, "AS")
    act(s, "declare double-bezique QS QS JD JD")
    assert s.deal_points[0] == 500
    finish_turn(s)
    _win_trick(s, "AC")
    action = "declare triple-bezique QS.1 QS.2 QS JD.1 JD.2 JD"
    assert action in texts(s)
    act(s, action)
    assert s.deal_points[0] == 2000


def test_double_bezique_added_to_a_declared_single_makes_a_triple() -> None:
    """EB9-643: a double bezique may be added to a single one already declared: triple bezique
    (1500)."""
    s = _bezique_deal(["QS", "QS", "QS", "JD", "JD", "JD", "AS", "AC"])
    _win_trick(s, "AS")
    act(s, "declare bezique QS JD")
    finish_turn(s)
    _win_trick(s, "AC")
    action = "declare triple-bezique QS.1 QS QS JD.1 JD JD"
    assert action in texts(s)
    act(s, action)
    assert s.deal_points[0] == 40 + 1500


def test_second_double_bezique_declared_to_a_bezique_of_the_double() -> None:
    """EB9-643 ("a second double bezique may be scored"; docs/rules.md §3.1): a second double bezique, counting 500,
    may be declared to a bezique on the table which has already been used for double bezique: the
    third queen of spades and knave of diamonds with one queen and one knave of the declared double."""
    s = _bezique_deal(["QS", "QS", "QS", "JD", "JD", "JD", "AS", "AC"])
    _win_trick(s, "AS")
    act(s, "declare double-bezique QS QS JD JD")
    finish_turn(s)
    _win_trick(s, "AC")
    seconds = [
        a
        for a in s.legal_actions()
        if a.text.startswith("declare double-bezique")
        and sorted(ref_text(r) for r in a.refs if ref_text(r) in ("QS", "JD")) == ["JD", "QS"]
        and sum(1 for r in a.refs if "." in ref_text(r)) == 2
    ]
    assert seconds, texts(s)
    s.apply(seconds[0])
    assert s.deal_points[0] == 1000
    assert s.items[-1].reason == "double-bezique"


def test_second_double_bezique_takes_one_queen_and_one_knave_of_the_double() -> None:
    """docs/rules.md §3.1 (EB9-643): the second double bezique is a new queen and knave of bezique with
    one queen and one knave of the declared double. A new queen alone, with both knaves of the double
    (or two of its cards of one kind), makes no second double."""
    s = _bezique_deal(["QS", "QS", "QS", "JD", "JD", "AS", "AC", "AH"])
    _win_trick(s, "AS")
    act(s, "declare double-bezique QS QS JD JD")
    finish_turn(s)
    _win_trick(s, "AC")
    assert not [t for t in texts(s) if "bezique" in t]
