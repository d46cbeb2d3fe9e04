"""Four-handed Bezique, individual and in partnerships (RULES.md section 4; sources 000, 003 and
EB9-643): four packs, four draws per stock trick, the last eight tricks as two duels, declaring on a
partner's trick, béziques formed from either partner's, side scores and the side's target.

Unless a test says otherwise seat 3 deals, so seat 0 (left of the dealer) leads, hearts are trumps, and
seats 0 and 2 play against seats 1 and 3 in ``four-handed-partners``.
"""

from __future__ import annotations

import itertools
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
    variant,
)

V = variant("four-handed")
P = variant("four-handed-partners")
RANKS = "789JQKTA"


# ---------------------------------------------------------------- helpers


def finish_turn_if_seat(s: GameState, seat: int) -> None:
    """End ``seat``'s declaring turn if it is still open."""
    if s.phase == 2 and s.to_act == seat:
        act(s, "done")


def play_deal(state: GameState) -> None:
    index = state.deal_index
    while not state.is_terminal() and state.deal_index == index:
        first_legal(state)


def deal(
    hands: Sequence[Sequence[str]],
    *,
    v: Variant = P,
    turn_up: str = "9H",
    stock: Sequence[str] = (),
    dealer: int = 3,
) -> GameState:
    deck = arrange_deck(v, dealer=dealer, hands=hands, turn_up=turn_up, stock=stock)
    return GameState.new(v, seed=0, dealer=dealer, decks=[deck])


def stock_end_deck(v: Variant, dealer: int, finals: Sequence[Sequence[str]]) -> list[int]:
    """A deck with which the player left of ``dealer`` wins all 24 stock tricks when every seat keeps
    the first seven cards of its ``finals`` entry and plays the other card it holds. At the end of the
    stock each seat holds its ``finals`` entry; the dealer, last in the drawing order, draws the
    turn-up (his last card), which fixes trumps."""
    n = v.seats
    leader = (dealer + 1) % n
    order = [(leader + i) % n for i in range(n)]
    trump = finals[dealer][-1][1]
    left = Counter({kind_text(k): v.packs for k in range(32)})
    left.subtract([c for f in finals for c in f])
    assert min(left.values()) >= 0, left
    rest = sorted(left.elements(), key=lambda c: (c[1] == trump, RANKS.index(c[0])), reverse=True)
    leads, follows = rest[:24], rest[24:]
    tricks = [[leads[t], *follows[t * (n - 1) : (t + 1) * (n - 1)]] for t in range(24)]
    hands: list[list[str]] = [[] for _ in range(n)]
    for i, seat in enumerate(order):
        hands[seat] = [*finals[seat][:-1], tricks[0][i]]
    stock = [tricks[t][i] for t in range(1, 24) for i in range(n)]
    stock += [finals[seat][-1] for seat in order[:-1]]
    return arrange_deck(v, dealer=dealer, hands=hands, turn_up=finals[dealer][-1], stock=stock)


def last_eight(finals: Sequence[Sequence[str]], dealer: int = 3, v: Variant = V) -> GameState:
    """The state after the 24th trick, won by the player left of the dealer, hands as given."""
    state = GameState.new(v, seed=0, dealer=dealer, decks=[stock_end_deck(v, dealer, finals)])
    keeps = [f[:-1] for f in finals]
    while state.tricks_done < 24 or state.phase == 2:
        if state.phase == 2:
            act(state, "done")
            continue
        seat = state.to_act
        extra = Counter(hand_kinds(state, seat)) - Counter(keeps[seat])
        act(state, "play " + sorted(extra)[0])
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
    """RULES 4 (000, 003): four packs (128 cards), 8 cards each, target 2000, quadruple bezique 4500,
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
    """RULES 4 (000): players score independently, or as partners sitting opposite: seats 0 and 2
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
    """RULES 3, 4 (EB9-643): the dealer deals to his left, 3, 2, 3 (8 cards each); the player first dealt
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
    """RULES 4 (000): after each stock trick the four players draw in playing order, the winner
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
    """RULES 4 (000): 96 cards in the stock drawn four after each trick: 24 tricks of four with 8 cards
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
    (RULES 4: the player opposite the winner leads the second duel); each duel's trick winner leads
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
    """000 / RULES 4: the duels are two-card tricks under the last-eight rules of section 2 (002): follow
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
    """000 / RULES 4: the other two play theirs the same way: the follower of the second duel must
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
    """002 / RULES 2: declarations cease with the stock; a marriage held by a duel's winner gives no
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


# ---------------------------------------------------------------- declaring with partners

# Seat 0 wins by leading an ace; the others throw low cards. Hearts trumps (turn-up 9H).
THROW = ["7C", "8C", "9C", "7D", "8D", "9D", "8S", "7S"]
QUIET = ["TS", "TS", "TS", "TS", "TD", "TD", "TD", "TD", "TC", "TC", "TC", "TC"]


def _win(s: GameState, lead: str) -> None:
    """Seat 0 leads ``lead``; each other seat throws its lowest card; seat 0 wins."""
    act(s, f"play {lead}")
    for _ in range(3):
        act(s, f"play {sorted(plays(s), key=lambda c: (RANKS.index(c[0]), c[1]))[0]}")
    assert last_winner(s) == 0


def test_partner_may_declare_when_his_partner_takes_a_trick() -> None:
    """000, 003 ii: a player may declare when his partner takes a trick (the winner has nothing to
    declare); the partner declares from his own hand and scores for it."""
    s = deal(
        [
            ["AS", "AC", "AD", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["KS", "QS", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
        ],
        stock=QUIET,
    )
    _win(s, "AS")
    assert s.phase == 2
    assert s.to_act == 2
    assert observe(s, 2).phase == "declare"
    assert "declare marriage KS QS" in texts(s)
    act(s, "declare marriage KS QS")
    assert s.deal_points == [0, 0, 20, 0]
    finish_turn(s)
    assert s.to_act == 0  # the winner leads the next trick
    assert s.stock_size == 92


def test_winner_declares_first_then_his_partner_each_from_his_own_hand() -> None:
    """003 iii: declarations are made by each player separately, as in two-handed; the winner of the
    trick first, then his partner (000)."""
    s = deal(
        [
            ["AS", "KC", "QC", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["KS", "QS", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
        ],
        stock=QUIET,
    )
    _win(s, "AS")
    assert s.to_act == 0 and s.phase == 2
    assert [t for t in texts(s) if t.startswith("declare")] == ["declare marriage KC QC"]
    act(s, "declare marriage KC QC")
    finish_turn_if_seat(s, 0)
    assert s.to_act == 2 and s.phase == 2
    assert [t for t in texts(s) if t.startswith("declare")] == ["declare marriage KS QS"]
    act(s, "declare marriage KS QS")
    finish_turn(s)
    assert s.deal_points == [20, 0, 20, 0]


def test_partners_hands_are_not_pooled_for_a_combination() -> None:
    """000: each declares from his own hand: a king held by one partner and the queen by the other make
    no marriage for either."""
    s = deal(
        [
            ["AS", "KD", "AC", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["QD", "9S", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
        ],
        stock=QUIET,
    )
    _win(s, "AS")
    assert s.phase == 1
    assert s.to_act == 0
    assert s.deal_points == [0, 0, 0, 0]


def test_adversaries_of_the_winner_do_not_declare() -> None:
    """000: only the winner of the trick and his partner may declare; the other side holds a marriage
    and gets no declaring turn."""
    s = deal(
        [
            ["AS", "AC", "AD", "7S", "8S", "9S", "7D", "8D"],
            ["KS", "QS", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
            ["KC", "QC", "7C", "8C", "9C", "7D", "8D", "9D"],
        ],
        stock=QUIET,
    )
    _win(s, "AS")
    assert s.phase == 1
    assert s.to_act == 0
    assert s.deal_points == [0, 0, 0, 0]


def test_individual_four_handed_only_the_winner_declares() -> None:
    """RULES 1, 4: without partners only the winner of the trick declares."""
    s = deal(
        [
            ["AS", "AC", "AD", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["KS", "QS", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
        ],
        v=V,
        stock=QUIET,
    )
    _win(s, "AS")
    assert s.phase == 1
    assert s.to_act == 0


PARTNER_BEZ = ["QS", "JD", "7C", "8C", "9C", "7D", "8D", "9D"]
PARTNER_DOUBLE = ["QS", "QS", "JD", "JD", "7C", "8C", "9C", "7D"]


def test_double_bezique_from_the_partners_declared_bezique() -> None:
    """000 (EB9-643): to form a double bezique the béziques may be declared from the hand of either
    partner: the partner's bezique on the table and one's own make a double (500)."""
    s = deal(
        [["AS", "AC", "QS", "JD", "7S", "8S", "9S", "7D"], THROW, PARTNER_BEZ, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "done")  # seat 0 keeps its bezique in hand
    assert s.to_act == 2
    act(s, "declare bezique QS JD")
    finish_turn(s)
    _win(s, "AC")
    action = "declare double-bezique QS QS.1 JD JD.1"
    assert Action.parse(action) in s.legal_actions(), texts(s)
    act(s, action)
    assert s.deal_points == [500, 0, 40, 0]
    assert s.items[-1].reason == "double-bezique"


def test_partner_adds_his_bezique_to_the_winners_in_the_same_trick() -> None:
    """000: after the winner declares a bezique, his partner may declare a double bezique with his own
    bezique and the winner's on the table."""
    s = deal(
        [["AS", "AC", "QS", "JD", "7S", "8S", "9S", "7D"], THROW, PARTNER_BEZ, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "declare bezique QS JD")
    finish_turn_if_seat(s, 0)
    assert s.to_act == 2 and s.phase == 2
    action = "declare double-bezique QS QS.1 JD JD.1"
    assert Action.parse(action) in s.legal_actions(), texts(s)
    act(s, action)
    assert s.deal_points == [40, 0, 500, 0]


def test_triple_bezique_from_the_partners_double() -> None:
    """000 (EB9-643): a triple bezique may be formed with the partner's declared double bezique and
    one's own bezique (1500)."""
    s = deal(
        [["AS", "AC", "QS", "JD", "7S", "8S", "9S", "7D"], THROW, PARTNER_DOUBLE, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "done")
    act(s, "declare double-bezique QS QS JD JD")
    finish_turn(s)
    _win(s, "AC")
    action = "declare triple-bezique QS QS.1 QS.2 JD JD.1 JD.2"
    assert Action.parse(action) in s.legal_actions(), texts(s)
    act(s, action)
    assert s.deal_points == [1500, 0, 500, 0]


def test_quadruple_bezique_scores_4500_with_the_partners_double() -> None:
    """RULES 4: quadruple bezique 4500; with partners the béziques of either partner combine (000), so
    one's own two béziques with the partner's declared double make a quadruple."""
    s = deal(
        [["AS", "AC", "QS", "QS", "JD", "JD", "9S", "7D"], THROW, PARTNER_DOUBLE, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "done")
    act(s, "declare double-bezique QS QS JD JD")
    finish_turn(s)
    _win(s, "AC")
    action = "declare quadruple-bezique QS QS QS.1 QS.2 JD JD JD.1 JD.2"
    assert Action.parse(action) in s.legal_actions(), texts(s)
    act(s, action)
    assert s.deal_points == [4500, 0, 500, 0]
    assert s.items[-1].reason == "quadruple-bezique"


def test_triple_bezique_from_each_partners_single_and_a_new_pair() -> None:
    """000 (EB9-643): a triple bezique formed from the bezique declared by each partner and a third
    bezique from the hand scores 1500."""
    s = deal(
        [["AS", "AC", "QS", "JD", "QS", "JD", "9S", "7D"], THROW, PARTNER_BEZ, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "declare bezique QS JD")
    finish_turn_if_seat(s, 0)
    act(s, "declare bezique QS JD")  # the partner's
    finish_turn(s)
    _win(s, "AC")
    action = "declare triple-bezique QS.1 QS.2 QS JD.1 JD.2 JD"
    assert Action.parse(action) in s.legal_actions(), texts(s)
    act(s, action)
    assert s.deal_points == [1540, 0, 40, 0]


def test_a_partners_queen_from_four_queens_is_not_a_bezique() -> None:
    """000: only the béziques declared by either partner combine; a queen of spades the partner declared
    in four queens does not make a double bezique with one's own bezique."""
    s = deal(
        [
            ["AS", "AC", "QS", "JD", "JD", "8S", "9S", "7D"],
            THROW,
            ["QS", "QH", "QD", "QC", "7C", "8C", "9C", "7D"],
            THROW,
        ],
        stock=QUIET,
    )
    _win(s, "AS")
    finish_turn_if_seat(s, 0)
    assert s.to_act == 2
    act(s, "declare four-queens QS QH QD QC")
    finish_turn(s)
    _win(s, "AC")
    assert [t for t in texts(s) if "bezique" in t] == ["declare bezique QS JD"]


def test_partners_beziques_need_a_new_card() -> None:
    """RULES 1 (002): a declaration needs a card not declared before: two béziques already declared,
    one by each partner, make no double bezique by themselves."""
    s = deal(
        [["AS", "AC", "QS", "JD", "7S", "8S", "9S", "7D"], THROW, PARTNER_BEZ, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "declare bezique QS JD")
    finish_turn_if_seat(s, 0)
    act(s, "declare bezique QS JD")  # the partner's own single bezique
    finish_turn(s)
    assert s.deal_points == [40, 0, 40, 0]
    _win(s, "AC")
    assert not any("bezique" in t for t in texts(s))


def test_individual_players_never_use_anothers_bezique() -> None:
    """RULES 4: only partners form béziques together; playing independently, a bezique declared by
    another player does not help make a double."""
    s = deal(
        [
            ["7S", "AD", "QS", "JD", "8S", "9S", "7D", "8D"],
            ["8S", "9D", "7C", "8C", "9C", "7D", "8D", "7S"],
            ["AS", "8D", "QS", "JD", "7C", "8C", "9C", "7D"],
            ["9S", "8D", "7C", "8C", "9C", "7D", "9D", "7S"],
        ],
        v=V,
        stock=QUIET,
    )
    act(s, "play 7S", "play 8S", "play AS", "play 9S")
    assert last_winner(s) == 2
    act(s, "declare bezique QS JD")
    finish_turn(s)
    act(s, "play 7D", "play 8D", "play AD", "play 9D")
    assert last_winner(s) == 0
    assert [t for t in texts(s) if "bezique" in t] == ["declare bezique QS JD"]


def test_second_double_bezique_as_in_three_handed() -> None:
    """EB9-643: with four players "a second double bezique or triple bezique may be scored as before",
    that is (three-handed) declared to a bezique on the table already used for a double bezique: a new
    bezique with one bezique of the declared double scores 500 again."""
    s = deal(
        [["AS", "AC", "QS", "QS", "QS", "JD", "JD", "JD"], THROW, THROW, THROW],
        v=V,
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "declare double-bezique QS QS JD JD")
    finish_turn(s)
    _win(s, "AC")
    seconds = [
        t
        for t in texts(s)
        if t.startswith("declare double-bezique") and t.count(".") == 2 and " QS " in f"{t} "
    ]
    assert seconds, texts(s)
    act(s, seconds[0])
    assert s.deal_points[0] == 1000


# ---------------------------------------------------------------- what a seat sees


def test_a_partners_hand_is_hidden() -> None:
    """RULES 7 / issue 3: in partnerships a partner's hand is hidden too: a seat sees its own hand and
    the table, never its partner's cards (all four aces of hearts here)."""
    s = deal(
        [
            ["AS", "AC", "AD", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["AH", "AH", "AH", "AH", "KS", "QS", "9C", "9D"],
            THROW,
        ],
        stock=QUIET,
    )
    for seat in (0, 1, 3, None):
        view = observe(s, seat)
        assert "AH" not in str(view.to_dict())
        assert view.seats[2].hand_size == 8
        assert view.seats[2].table == ()
    assert hand_kinds(s, 2).count("AH") == 4
    _win(s, "AS")
    assert s.to_act == 2
    act(s, "declare marriage KS QS")
    view = observe(s, 0)
    assert "AH" not in str(view.to_dict())
    assert sorted(card_text(c) for c, _ in view.seats[2].table) == ["KS.1", "QS.1"]


# ---------------------------------------------------------------- side scores and the target

SEED = 5


def _dry_run(v: Variant) -> list[int]:
    s = GameState.new(v, seed=SEED, dealer=0)
    play_deal(s)
    return list(s.deals[0].points)


def _with_totals(v: Variant, totals: list[int]) -> GameState:
    s = GameState.new(v, seed=SEED, dealer=0)
    s.totals[:] = totals
    return s


def test_partners_scores_add_and_the_target_applies_to_the_side() -> None:
    """000: partners' scores add up; RULES 4: the target (2000) applies to the side: the side reaches it
    though neither partner has 2000. The result ranks the sides."""
    p = _dry_run(P)
    s = _with_totals(P, [1000 - p[0], 100 - p[1], 1000 - p[2], 100 - p[3]])
    play_deal(s)
    assert s.is_terminal()
    result = s.result()
    assert result.sides == ((0, 2), (1, 3))
    assert result.scores == (1000, 100, 1000, 100)
    assert result.side_scores == (2000, 200)
    assert result.ranking == (0, 1)
    assert result.winners == (0, 2)
    assert result.team_sizes == (1, 1, 1, 1)


def test_same_totals_do_not_end_an_individual_game() -> None:
    """RULES 4: playing independently each player's own total must reach 2000."""
    p = _dry_run(V)
    s = _with_totals(V, [1000 - p[0], 100 - p[1], 1000 - p[2], 100 - p[3]])
    play_deal(s)
    assert not s.is_terminal()
    assert s.deal_index == 1
    assert s.dealer == 1


def test_equal_side_totals_play_another_deal() -> None:
    """RULES 1: equal (side) totals at or above the target play another deal."""
    p = _dry_run(P)
    s = _with_totals(P, [1100 - p[0], 1000 - p[1], 1000 - p[2], 1100 - p[3]])
    play_deal(s)
    assert not s.is_terminal()
    assert [d.totals for d in s.deals] == [(1100, 1000, 1000, 1100)]


def test_higher_side_at_or_above_target_wins() -> None:
    """RULES 1, 4: the higher side total at or above the target wins, even with both sides above."""
    p = _dry_run(P)
    s = _with_totals(P, [1100 - p[0], 1000 - p[1], 1000 - p[2], 1090 - p[3]])
    play_deal(s)
    assert s.is_terminal()
    result = s.result()
    assert result.side_scores == (2100, 2090)
    assert result.ranking == (0, 1)
    assert result.winners == (0, 2)


def test_immediate_a_side_reaching_the_target_wins_at_once() -> None:
    """RULES 1 (game_end = immediate) with partners: the partner's declaration brings the side to the
    target mid-hand and the side wins at once."""
    v = variant("four-handed-partners", game_end="immediate")
    s = deal(
        [
            ["AS", "AC", "AD", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["KS", "QS", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
        ],
        v=v,
        stock=QUIET,
    )
    s.totals[:] = [1500, 1990, 480, 0]
    _win(s, "AS")
    act(s, "declare marriage KS QS")
    assert s.is_terminal()
    result = s.result()
    assert result.side_scores == (2000, 1990)
    assert result.winners == (0, 2)
    assert s.deals[-1].completed is False


def test_individual_result_ranks_four_sides() -> None:
    """RULES 4: playing independently, each player is a side; the result ranks the four."""
    s = GameState.new(V, seed=2)
    while not s.is_terminal():
        first_legal(s)
    result = s.result()
    assert result.sides == ((0,), (1,), (2,), (3,))
    assert result.side_scores == result.scores
    best = max(result.scores)
    assert best >= 2000 and result.scores.count(best) == 1
    for i, score in enumerate(result.scores):
        assert result.ranking[i] == len({x for x in result.scores if x > score})
