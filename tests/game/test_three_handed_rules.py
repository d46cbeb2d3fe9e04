"""Three-handed Bezique, all against all (RULES.md section 3; sources 000 and EB9-643): three packs, the
deal to the left, three draws per stock trick, triple bezique and the second double bezique, target
2000, and the obligations of the second and third players in the last eight tricks.

Unless a test says otherwise seat 2 deals, so seat 0 (left of the dealer) leads, and hearts are trumps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest
from engine_helpers import act, finish_turn, first_legal, hand_kinds, last_winner, plays, texts

from arena.game import (
    Action,
    GameState,
    IllegalActionError,
    Variant,
    arrange_deck,
    card_text,
    kind_text,
    observe,
    ref_text,
    variant,
)

V = variant("three-handed")
RANKS = "789JQKTA"


# ---------------------------------------------------------------- helpers


def play_deal(state: GameState) -> None:
    """Play the first legal action until the current deal is over."""
    index = state.deal_index
    while not state.is_terminal() and state.deal_index == index:
        first_legal(state)


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
    rest = sorted(left.elements(), key=lambda c: (c[1] == trump, RANKS.index(c[0])), reverse=True)
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


def last_eight(finals: Sequence[Sequence[str]], dealer: int = 2, v: Variant = V) -> GameState:
    """The state after the 24th trick: the player left of the dealer (its winner) to lead, the hands as
    given."""
    state = GameState.new(v, seed=0, dealer=dealer, decks=[stock_end_deck(v, dealer, finals)])
    play_out_stock(state, finals)
    assert state.tricks_done == 24
    assert state.stock_size == 0
    for seat in range(v.seats):
        assert hand_kinds(state, seat) == sorted(finals[seat]), seat
    assert state.to_act == (dealer + 1) % v.seats
    return state


# ---------------------------------------------------------------- the variant


def test_three_packs_three_seats_target_2000_and_triple_bezique() -> None:
    """RULES 3 (000, EB9-643): three packs (96 cards), all against all, 8 cards each, game 2000 up,
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
    """EB9-643: the dealer deals to his left (3, 2, 3 cards, 8 each; RULES 3); the player first dealt to
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
    """RULES 1: the first dealer is drawn from the match seed; every seat can deal first."""
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
    """RULES 1 (002): the highest trump wins, else the highest card of the suit led; between
    identical cards the one played first wins."""
    s = deal([[c, *LOW[i]] for i, c in enumerate(cards)])
    act(s, *(f"play {c}" for c in cards))
    assert last_winner(s) == winner
    assert s.tricks_done == 1
    finish_turn(s)
    assert s.to_act == winner


def test_second_and_third_players_may_play_any_card_in_the_stock_phase() -> None:
    """002 (RULES 2, 3): while there is a stock, no player need follow suit, trump or win."""
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
    """RULES 3 (000): each stock trick is followed by three draws in playing order from the winner: the
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
    """RULES 3 (000): the draws start with the winner even when he played last to the trick; the
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
    """RULES 3 (000): 72 cards in the stock, three drawn after each trick: 24 stock tricks with 8
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
    """002 / RULES 3: on the last draw the winner takes a face-down card, the next player the last
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
    """002 / RULES 2: the winner of the last stock trick may still declare; in the last eight tricks
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
    """RULES 3 (EB9-643): triple bezique scores 1500; all three béziques may be declared together."""
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
    """EB9-643 (RULES 3: "a second double bezique may be scored"): a second double bezique, counting 500,
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


# ---------------------------------------------------------------- the last eight tricks

# Hearts trumps (seat 2's last card, the turn-up, is a heart). Seat 0 leads.
LEADER = ["9S", "AS", "9C", "AC", "8H", "KH", "AH", "9D"]
SEAT2 = ["7D", "8D", "9D", "TD", "KD", "QD", "JD", "JH"]
SPADES_TRUMPS = ["QS", "JS", "8S", "7D", "8D", "TH", "7H", "9H"]  # void in clubs
SPADES_CLUBS = ["QS", "JS", "8S", "7D", "8D", "9C", "TC", "7H"]
NO_TRUMPS = ["QS", "JS", "8S", "7D", "8D", "9D", "TS", "KD"]  # void in clubs and hearts
TRUMPS = ["7H", "9H", "TH", "QS", "JS", "8S", "7D", "8D"]
ACE_SPADES = ["AS", "QS", "8S", "7D", "8D", "9C", "TC", "7H"]


def test_last_eight_leader_may_lead_any_card() -> None:
    """002 / RULES 3: the winner of the last stock trick leads, any card."""
    s = last_eight([LEADER, SPADES_CLUBS, SEAT2])
    assert s.to_act == 0
    assert plays(s) == set(LEADER)


@pytest.mark.parametrize(
    ("seat1", "lead", "legal"),
    [
        (SPADES_CLUBS, "9S", {"JS", "QS"}),  # follow suit and head the trick
        (SPADES_CLUBS, "AS", {"8S", "JS", "QS"}),  # cannot head it: any card of the suit
        (ACE_SPADES, "AS", {"AS", "QS", "8S"}),  # an identical ace does not head it
        (SPADES_TRUMPS, "9C", {"7H", "9H", "TH"}),  # void: must win by trumping
        (SPADES_TRUMPS, "AC", {"7H", "9H", "TH"}),
        (NO_TRUMPS, "9C", set(NO_TRUMPS)),  # void, no trump: any card
        (TRUMPS, "8H", {"9H", "TH"}),  # trumps led: head with a higher trump
        (TRUMPS, "AH", {"7H", "9H", "TH"}),  # cannot head: any trump
        (NO_TRUMPS, "KH", set(NO_TRUMPS)),  # trumps led, none held: any card
    ],
)
def test_last_eight_second_player(seat1: list[str], lead: str, legal: set[str]) -> None:
    """RULES 3 (000, EB9-643): in the last eight tricks each later player must follow suit and head the
    trick if able; if void, must win by trumping if able; otherwise he may play any card. The
    referee offers exactly those cards and refuses any other."""
    s = last_eight([LEADER, seat1, SEAT2])
    act(s, f"play {lead}")
    assert s.to_act == 1
    assert plays(s) == legal
    for card in set(seat1) - legal:
        with pytest.raises(IllegalActionError):
            s.apply(Action.parse(f"play {card}"))
    act(s, f"play {sorted(legal)[0]}")
    assert s.to_act == 2


@pytest.mark.parametrize(
    ("seat1", "seat2", "trick", "legal"),
    [
        # Second player headed the lead: the third must head the second's card if able.
        (SPADES_CLUBS, ["KS", "JS", "8S", "7D", "8D", "9D", "TD", "JH"], ("9S", "QS"), {"KS"}),
        # ... and if unable, play any card of the suit (not a trump).
        (
            SPADES_CLUBS,
            ["JS", "8S", "7S", "7D", "8D", "9D", "TD", "JH"],
            ("9S", "QS"),
            {"7S", "8S", "JS"},
        ),
        # Second player trumped; the third follows suit with any card of the suit.
        (
            SPADES_TRUMPS,
            ["KC", "8C", "AH", "7D", "8D", "9D", "TD", "JH"],
            ("9C", "9H"),
            {"8C", "KC"},
        ),
        # Second player trumped; the third is void: he must over-trump if able ...
        (
            SPADES_TRUMPS,
            ["AH", "JH", "7H", "7D", "8D", "9D", "TD", "8H"],
            ("9C", "TH"),
            {"AH"},
        ),
        # ... and is never forced to under-trump: unable to over-trump, any card.
        (
            SPADES_TRUMPS,
            ["7H", "JH", "8D", "7D", "9D", "TD", "QD", "8H"],
            ("9C", "TH"),
            {"7H", "JH", "8D", "7D", "9D", "TD", "QD", "8H"},
        ),
        # An identical trump does not over-trump (the first played wins): any card.
        (
            SPADES_TRUMPS,
            ["7H", "8D", "7D", "9D", "TD", "QD", "KD", "9H"],
            ("9C", "9H"),
            {"7H", "8D", "7D", "9D", "TD", "QD", "KD", "9H"},
        ),
        # Second player could neither follow nor trump: the third must head the card led ...
        (
            ["7D", "8D", "9D", "TD", "KD", "QD", "JD", "7C"],
            ["QS", "8S", "9D", "TD", "KD", "QD", "JD", "JH"],
            ("9S", "7D"),
            {"QS"},
        ),
        # ... or, void, win by trumping (any trump).
        (
            ["7D", "8D", "9D", "TD", "KD", "QD", "JD", "7C"],
            ["7H", "JH", "7D", "8D", "9C", "TC", "KC", "8H"],
            ("9S", "7D"),
            {"7H", "JH", "8H"},
        ),
        # Trumps led and headed by the second: unable to head, any trump.
        (
            ["AH", "7H", "QS", "JS", "8S", "7D", "8D", "9D"],
            ["TH", "9H", "7D", "8D", "9D", "TD", "QD", "JH"],
            ("KH", "AH"),
            {"9H", "TH", "JH"},
        ),
    ],
)
def test_last_eight_third_player(
    seat1: list[str], seat2: list[str], trick: tuple[str, str], legal: set[str]
) -> None:
    """RULES 3 (000, EB9-643): the third player must follow suit and head the trick (the best card so
    far) if able; if void he must win by trumping if able, over-trumping a trump already played; the
    third hand, if not able to follow suit nor to win the trick by trumping, may throw away any card he
    pleases (no obligation to under-trump)."""
    s = last_eight([LEADER, seat1, seat2])
    act(s, f"play {trick[0]}")
    act(s, f"play {trick[1]}")
    assert s.to_act == 2
    assert plays(s) == legal
    for card in set(seat2) - legal:
        with pytest.raises(IllegalActionError):
            s.apply(Action.parse(f"play {card}"))
    act(s, f"play {sorted(legal)[0]}")
    assert s.tricks_done == 25


def test_last_eight_third_player_void_without_trumps_plays_any_card() -> None:
    """EB9-643: the third hand, not able to follow suit nor to trump, may throw away any card (his only
    trump, the turn-up, is played first to a trump lead that he must follow)."""
    seat2 = ["QS", "8S", "7D", "8D", "9D", "TD", "KD", "JH"]
    s = last_eight([LEADER, SPADES_TRUMPS, seat2])
    act(s, "play AH", "play 7H")
    assert plays(s) == {"JH"}  # trumps led: follow suit with the only trump
    act(s, "play JH")
    assert last_winner(s) == 0
    act(s, "play 9C", "play 9H")
    assert plays(s) == {"QS", "8S", "7D", "8D", "9D", "TD", "KD"}


def test_last_eight_winner_leads_and_the_hand_ends_after_32_tricks() -> None:
    """002 / RULES 3: the winner of each trick leads to the next; after 8 tricks of three the hand is
    over, the last trick scoring 10 to its winner and each seat's brisques counted."""
    s = last_eight([LEADER, SPADES_CLUBS, ["KS", "JS", "8S", "7D", "8D", "9D", "TD", "JH"]])
    act(s, "play 9S", "play QS", "play KS")
    assert last_winner(s) == 2
    assert s.to_act == 2
    play_deal(s)
    d = s.deals[0]
    last = [i for i in d.items if i.reason == "last-trick"]
    assert len(last) == 1 and last[0].points == 10
    log = list(observe(s, None).log)
    line = next(x for x in log if "wins trick 32" in x)
    assert last[0].seat == int(line.split()[1])
    assert sum(d.brisques) == 240


# ---------------------------------------------------------------- brisques and the end of the game


@pytest.mark.parametrize("seed", [1, 2])
def test_brisques_counted_at_the_end_of_the_hand_for_each_seat(seed: int) -> None:
    """RULES 1, 2 (002): aces and tens taken in tricks score 10 each at the end of the hand; with three
    packs all 240 brisque points are awarded, each seat credited once for its own tricks."""
    s = GameState.new(V, seed=seed)
    while s.deal_index == 0 and not s.is_terminal():
        assert not any(i.reason == "brisques" for i in s.items)
        first_legal(s)
    d = s.deals[0]
    log = list(observe(s, None).log)
    end = next(i for i, line in enumerate(log) if line.startswith("deal 2"))
    won: list[list[str]] = [[], [], []]
    trick: list[str] = []
    for line in log[:end]:
        words = line.split()
        if len(words) == 4 and words[2] == "plays":
            trick.append(words[3])
        elif len(words) == 5 and words[2:4] == ["wins", "trick"]:
            won[int(words[1])].extend(trick)
            trick = []
    assert sum(len(w) for w in won) == 96
    counted = [10 * sum(1 for c in w if c[0] in "AT") for w in won]
    assert sum(counted) == 240
    assert list(d.brisques) == counted
    items = {i.seat: i.points for i in d.items if i.reason == "brisques"}
    assert items == {seat: p for seat, p in enumerate(counted) if p}


SEED = 5


def _dry_run(seed: int = SEED) -> list[int]:
    s = GameState.new(V, seed=seed, dealer=0)
    play_deal(s)
    return list(s.deals[0].points)


def _with_totals(totals: list[int]) -> GameState:
    s = GameState.new(V, seed=SEED, dealer=0)
    s.totals[:] = totals
    return s


def test_game_is_2000_up_not_1000() -> None:
    """EB9-643: the game is 2000 up: totals of 1500 and more at the end of a deal do not end it."""
    p = _dry_run()
    s = _with_totals([1990 - p[0], 1500 - p[1], 1200 - p[2]])
    play_deal(s)
    assert not s.is_terminal()
    assert list(s.totals) == [1990, 1500, 1200]
    assert s.dealer == 1
    assert s.to_act == 2


def test_highest_total_at_or_above_2000_wins_and_sides_are_ranked() -> None:
    """RULES 1, 3: at the end of a deal the higher total at or above the target wins; the result ranks
    every seat (a side of one) by its score."""
    p = _dry_run()
    s = _with_totals([2010 - p[0], 2000 - p[1], 300 - p[2]])
    play_deal(s)
    assert s.is_terminal()
    result = s.result()
    assert result.sides == ((0,), (1,), (2,))
    assert result.scores == (2010, 2000, 300)
    assert result.side_scores == (2010, 2000, 300)
    assert result.ranking == (0, 1, 2)
    assert result.winners == (0,)
    assert result.team_sizes == (1, 1, 1)


def test_equal_losers_share_a_place() -> None:
    """RULES 1: ranking by score; equal totals share a place (a draw between those sides)."""
    p = _dry_run()
    s = _with_totals([1500 - p[0], 2100 - p[1], 1500 - p[2]])
    play_deal(s)
    result = s.result()
    assert result.ranking == (1, 0, 1)
    assert result.winners == (1,)


def test_equal_highest_totals_above_target_play_another_deal() -> None:
    """RULES 1: equal highest totals at or above the target play another deal, even if the third seat
    is lower."""
    p = _dry_run()
    s = _with_totals([2100 - p[0], 2100 - p[1], 400 - p[2]])
    play_deal(s)
    assert not s.is_terminal()
    assert s.deal_index == 1


def test_whole_game_under_random_legal_play_ends_at_2000() -> None:
    """RULES 1, 3: a game is a series of deals until one seat alone has the highest total at or above
    2000 when a deal ends."""
    s = GameState.new(V, seed=3)
    while not s.is_terminal():
        first_legal(s)
    for d in s.deals[:-1]:
        best = max(d.totals)
        assert best < 2000 or list(d.totals).count(best) > 1
    final = s.deals[-1].totals
    best = max(final)
    assert best >= 2000 and list(final).count(best) == 1
    assert s.result().winners == (final.index(best),)
