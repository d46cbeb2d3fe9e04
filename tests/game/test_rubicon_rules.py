"""Rubicon Bezique, docs/rules.md §6, from seeds 000 and 004.

Scripted tests lay out a deck with ``arrange_deck``: seat 1 deals, so seat 0 leads the first trick. The
stock holds 110 cards, so scripts look only at the first tricks; the last nine tricks are checked by random
legal play. A seat dealt no king, queen or knave is offered carte blanche before the first lead, so the
scripts give seat 1 a knave unless carte blanche is the point.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine_helpers import act as run
from engine_helpers import declarations, texts

from arena.game import (
    Combo,
    GameState,
    arrange_deck,
    observe,
    variant,
)

RUBICON = variant("rubicon")

PLAY, DECLARE, CARTE_BLANCHE = 1, 2, 3  # state.phase values
HEARTS, CLUBS = 1, 3  # suits are numbered S, H, D, C
ANY_COPY = 128  # a card reference: ANY_COPY + kind = "a copy of that kind"


def quiet_stock(hands: Sequence[Sequence[str]], size: int = 20) -> list[str]:
    """Sevens, eights and nines not placed in the hands: draws that form nothing."""
    placed = [c for hand in hands for c in hand]
    out: list[str] = []
    for rank in "987":
        for suit in "SDCH":
            card = rank + suit
            out.extend([card] * (RUBICON.packs - placed.count(card)))
    return out[:size]


def deal(hands: Sequence[Sequence[str]], stock: Sequence[str] | None = None) -> GameState:
    """A Rubicon game whose deal gives these hands (seat 1 deals, seat 0 leads); unless a stock is given,
    harmless sevens, eights and nines lie on top of it."""
    top = quiet_stock(hands) if stock is None else stock
    deck = arrange_deck(RUBICON, 1, hands=hands, stock=top)
    return GameState.new(RUBICON, seed=0, dealer=1, decks=[deck])


def new_items(state: GameState, before: int) -> list[tuple[int, str, int]]:
    return [(i.seat, i.reason, i.points) for i in state.items[before:]]


# Seat 1's hand in most scripts: low cards of every suit and a knave (so no carte blanche).
FOLLOWER = ["7S", "7S", "7D", "7D", "7C", "7C", "8C", "8D", "JC"]


# ---------------------------------------------------------------------------- the deal


def test_000_four_packs_nine_cards_each_dealt_in_threes_no_turn_up() -> None:
    """000: "Four packs are used. Nine cards are dealt by three to each player"; docs/rules.md §6: no turn-up
    and no trumps at the start; 128 - 18 = 110 cards in the stock. With a known deck order the
    non-dealer gets cards 1-3, 7-9 and 13-15, the dealer 4-6, 10-12 and 16-18."""
    assert RUBICON.packs == 4 and RUBICON.deck_size == 128 and RUBICON.seats == 2
    deck = [k for _ in range(4) for k in range(32)]
    s = GameState.new(RUBICON, seed=0, dealer=1, decks=[deck])
    assert sorted(c & 31 for c in s.hands[0]) == sorted(deck[0:3] + deck[6:9] + deck[12:15])
    assert sorted(c & 31 for c in s.hands[1]) == sorted(deck[3:6] + deck[9:12] + deck[15:18])
    assert s.turn_up == -1
    assert s.trump == -1
    assert s.stock_size == 110
    assert s.to_act == 0


def test_000_no_turn_up_is_accepted_by_arrange_deck() -> None:
    """docs/rules.md §6: Rubicon has no turn-up; the engine's deck tool refuses one."""
    try:
        arrange_deck(RUBICON, 1, hands=[[], []], turn_up="7H")
    except ValueError:
        return
    raise AssertionError("a Rubicon deck was given a turn-up")


def test_000_before_trumps_the_highest_card_of_the_suit_led_wins() -> None:
    """000: "The trump suit is decided by the first sequence or marriage declared": until then no suit
    is trumps, and a trick goes to the highest card of the suit led, whatever else is played."""
    s = deal([["9H", "8H", "9D", "9C", "8C", "TD", "JS", "JH", "8S"], ["TH", *FOLLOWER[1:]]])
    run(s, "play 9H", "play 7S")  # a seven of another suit does not trump
    assert s.last_trick[2] == 0
    run(s, "play 8H", "play TH")  # a higher card of the suit led wins
    assert s.last_trick[2] == 1
    assert s.trump == -1


def test_000_first_marriage_fixes_trumps_and_scores_as_royal() -> None:
    """000: "The trump suit is decided by the first sequence or marriage declared." The first marriage
    (clubs here) is a royal marriage, 40; trumps are then clubs: a seven of clubs wins an ace of hearts,
    and a later marriage in another suit is a common marriage, 20."""
    s = deal(
        [
            ["KC", "QC", "TC", "KH", "QH", "TH", "9D", "AH", "8D"],
            ["7C", "7C", "7D", "7D", "7S", "7S", "8S", "9S", "JS"],
        ]
    )
    run(s, "play 9D", "play 7D")
    assert s.phase == DECLARE and s.to_act == 0
    decls = declarations(s)
    assert "declare royal-marriage KC QC" in decls
    assert "declare royal-marriage KH QH" in decls  # any suit may become trumps
    run(s, "declare royal-marriage KC QC")
    assert new_items(s, 0) == [(0, "royal-marriage", 40)]
    assert s.trump == CLUBS
    run(s, "play 8D", "play 7D")
    assert declarations(s) == ["declare marriage KH QH"]
    run(s, "declare marriage KH QH")
    assert new_items(s, 1) == [(0, "marriage", 20)]
    run(s, "play AH", "play 7C")  # now the seven of trumps takes the ace
    assert s.last_trick[2] == 1


def test_004_a_marriage_may_be_declared_without_the_ten_of_its_suit() -> None:
    """004: a marriage (king and queen of a suit) may be declared by the winner of a trick; the first
    one fixes trumps (000). Seat 0 holds KH and QH and no ten of hearts: winning a trick must offer the
    marriage. (The engine's quick "can this hand combine at all?" test looks for a king with the ten of
    its suit instead of the queen, so here it offers nothing.)"""
    s = deal([["KH", "QH", "9D", "9C", "8C", "8D", "9S", "8S", "7H"], FOLLOWER])
    run(s, "play 9D", "play 7D")
    assert s.phase == DECLARE and s.to_act == 0
    assert declarations(s) == ["declare royal-marriage KH QH"]


def test_000_first_sequence_fixes_trumps_and_scores_250() -> None:
    """000: trumps are decided by "the first sequence or marriage declared"; docs/rules.md §6: a sequence
    declared before trumps are fixed counts as the trump sequence, 250."""
    s = deal([["AH", "TH", "KH", "QH", "JH", "9D", "8D", "9C", "8C"], FOLLOWER])
    run(s, "play 9D", "play 7D")
    assert "declare sequence AH TH KH QH JH" in declarations(s)
    run(s, "declare sequence AH TH KH QH JH")
    assert new_items(s, 0) == [(0, "sequence", 250)]
    assert s.trump == HEARTS


def test_000_sequence_in_a_plain_suit_scores_150() -> None:
    """000: "In addition to the ordinary bézique declarations, sequence, counting 150, can be made in
    plain suits" (004's table: sequence in plain suits 150). Hearts become trumps by a marriage; then the
    spade sequence is a plain sequence."""
    s = deal([["KH", "QH", "TH", "AS", "TS", "KS", "QS", "JS", "9D"], FOLLOWER])
    run(s, "play 9D", "play 7D", "declare royal-marriage KH QH")
    assert s.trump == HEARTS
    run(s, "play 9S", "play 8D")  # seat 0 drew a nine of spades; the follower plays off suit
    assert s.last_trick[2] == 0
    assert "declare plain-sequence AS TS KS QS JS" in declarations(s)
    assert "declare sequence AS TS KS QS JS" not in declarations(s)
    run(s, "declare plain-sequence AS TS KS QS JS")
    assert new_items(s, 1) == [(0, "plain-sequence", 150)]


# ---------------------------------------------------------------------------- declarations


def test_004_only_one_declaration_scores_per_trick() -> None:
    """004: "Only one declaration can be scored at a time ... if, on the cards exposed, the player has
    more than one combination to score, he may score whichever he prefers"; the other may be scored on
    a later trick. Seat 0 holds a marriage and a bezique: after scoring the bezique the turn ends."""
    s = deal([["KH", "QH", "TH", "QS", "JD", "9D", "8D", "9C", "8C"], FOLLOWER])
    run(s, "play 9D", "play 7D")
    decls = declarations(s)
    assert "declare bezique QS JD" in decls and "declare royal-marriage KH QH" in decls
    stock = s.stock_size
    run(s, "declare bezique QS JD")
    assert new_items(s, 0) == [(0, "bezique", 40)]
    assert s.phase == PLAY and s.to_act == 0  # no second declaration: both have drawn
    assert s.stock_size == stock - 2
    run(s, "play 8D", "play 7D")
    assert "declare royal-marriage KH QH" in declarations(s)
    run(s, "declare royal-marriage KH QH")
    assert new_items(s, 1) == [(0, "royal-marriage", 40)]


def test_000_triple_bezique_scores_1500() -> None:
    """000: "As four packs are used, triple and quadruple bézique may be made. Triple bézique counts
    1500." """
    s = deal([["QS", "QS", "QS", "JD", "JD", "JD", "9H", "9C", "8C"], FOLLOWER])
    run(s, "play 9H", "play 7D")
    assert "declare triple-bezique QS QS QS JD JD JD" in declarations(s)
    run(s, "declare triple-bezique QS QS QS JD JD JD")
    assert new_items(s, 0) == [(0, "triple-bezique", 1500)]


def test_000_quadruple_bezique_scores_4500() -> None:
    """000: "... quadruple 4500." All four queens of spades and knaves of diamonds in one hand."""
    s = deal([["QS", "QS", "QS", "QS", "JD", "JD", "JD", "JD", "9H"], FOLLOWER])
    run(s, "play 9H", "play 7D")
    action = "declare quadruple-bezique QS QS QS QS JD JD JD JD"
    assert action in declarations(s)
    run(s, action)
    assert new_items(s, 0) == [(0, "quadruple-bezique", 4500)]


def test_004_four_queens_broken_and_reformed_with_a_fifth_score_again() -> None:
    """004: "if Four Queens have been declared, the player may play one of them, and, when he next wins
    a trick, add a fifth queen to the three left on the table, and again score four queens." """
    s = deal([["QS", "QH", "QD", "QC", "QS", "9H", "9D", "8C", "8D"], FOLLOWER])
    run(s, "play 9H", "play 7C", "declare four-queens QS QH QD QC")
    assert new_items(s, 0) == [(0, "four-queens", 60)]
    run(s, "play QH.1", "play 7D")  # one of the four is played (and wins)
    decls = [t for t in declarations(s) if "four-queens" in t]
    assert decls == ["declare four-queens QS.1 QS QD.1 QC.1"]
    run(s, decls[0])
    assert new_items(s, 1) == [(0, "four-queens", 60)]


def test_004_two_marriages_in_one_suit_remarried_crosswise() -> None:
    """004: "if a player has declared two independent marriages in the same suit, and all four cards
    are on the table simultaneously, he may make two more declarations of marriage with the same cards.
    ... King 1 (already 'married' to queen 1) may again be married to queen 2; and king 2 ... to queen 1."
    Four marriages in all, then no fifth."""
    s = deal(
        [["KH", "KH", "QH", "QH", "TH", "9S", "9D", "9C", "8S"], FOLLOWER],
        stock=["8D", "7H"],
    )
    run(s, "play 9S", "play 7S", "declare royal-marriage KH QH")  # KH.1 QH.1, hearts trumps
    run(s, "play 9D", "play 7D", "declare royal-marriage KH QH")  # KH.2 QH.2
    run(s, "play 9C", "play 7C")
    crosswise = {"declare royal-marriage KH.1 QH.2", "declare royal-marriage KH.2 QH.1"}
    assert set(declarations(s)) == crosswise
    run(s, "declare royal-marriage KH.1 QH.2")
    run(s, "play 8S", "play 7S")
    assert declarations(s) == ["declare royal-marriage KH.2 QH.1"]
    run(s, "declare royal-marriage KH.2 QH.1")
    marriages = [i for i in s.items if i.reason == "royal-marriage"]
    assert [i.points for i in marriages] == [40, 40, 40, 40]
    assert len({i.cards for i in marriages}) == 4
    run(s, "play 8D", "play 7D")  # the four cards are still on the table
    assert not any("marriage" in t for t in declarations(s))


def test_004_never_down_a_class_king_and_queen_of_a_sequence_never_marry() -> None:
    """004: "A card declared in a given combination may not again be declared in an inferior combination
    of the same class -- e.g. a king and queen declared in Sequence cannot be afterwards made available
    to score a Royal Marriage." Neither together nor with a new queen; the bezique held beside them is
    offered, so the turn is there to inspect."""
    s = deal(
        [["AH", "TH", "KH", "QH", "JH", "QH", "QS", "JD", "9S"], FOLLOWER],
        stock=["9D", "7H"],
    )
    run(s, "play 9S", "play 7S", "declare sequence AH TH KH QH JH")
    run(s, "play 9D", "play 7D")
    assert s.phase == DECLARE
    decls = declarations(s)
    assert "declare bezique QS JD" in decls
    assert not any("marriage" in t for t in decls)


def test_004_no_seven_of_trumps_score() -> None:
    """004's table has no score for the seven of trumps (docs/rules.md §6.1: "There is no score for the seven of
    trumps"):
    holding it, or winning a trick with it, offers nothing and scores nothing."""
    assert Combo.SEVEN_OF_TRUMPS not in RUBICON.scores
    s = deal([["KH", "QH", "TH", "7H", "7H", "9D", "8D", "9C", "8C"], FOLLOWER])
    run(s, "play 9D", "play 7D", "declare royal-marriage KH QH")
    assert s.trump == HEARTS
    run(s, "play 8D", "play 7D")
    assert s.phase == PLAY  # the seven of trumps in hand gives nothing to decide
    run(s, "play 7H", "play 7C")  # and winning with it scores nothing
    assert s.last_trick[2] == 0
    assert not any(i.reason in ("seven-of-trumps", "exchange") for i in s.items)
    assert not any("seven" in t or "exchange" in t for t in texts(s))


# ---------------------------------------------------------------------------- carte blanche


def test_000_carte_blanche_is_shown_for_50_and_stays_in_the_hand() -> None:
    """000: "a player who receives a hand containing no picture-card (king, queen, or knave) scores 50
    for carte blanche, which he shows"; "Declared cards, except carte blanche, remain on the table": the
    cards shown go back into the hand and can be played as usual."""
    hand = ["AS", "TS", "9H", "8H", "7D", "9D", "8C", "7C", "TC"]
    s = deal([hand, FOLLOWER], stock=["KS", "QD"])
    assert s.phase == CARTE_BLANCHE and s.to_act == 0
    assert texts(s) == ["declare carte-blanche", "done"]
    run(s, "declare carte-blanche")
    assert new_items(s, 0) == [(0, "carte-blanche", 50)]
    assert s.phase == PLAY and s.to_act == 0
    assert len(s.hands[0]) == 9
    assert sorted(texts(s)) == sorted(f"play {c}" for c in set(hand))
    assert observe(s, 1).seats[0].table == ()


def test_000_hand_with_a_court_card_has_no_carte_blanche() -> None:
    """000: carte blanche is a hand "containing no picture-card": one knave is enough to lose it."""
    s = deal([["AS", "TS", "9H", "8H", "7D", "9D", "8C", "7C", "JC"], FOLLOWER])
    assert s.phase == PLAY and s.to_act == 0
    assert "declare carte-blanche" not in texts(s)


def test_000_either_player_may_hold_carte_blanche() -> None:
    """000: "a player who receives a hand containing no picture-card ... scores 50 for carte blanche":
    both seats dealt one are offered it before the first lead, the leader first; declining scores
    nothing."""
    blank = ["AS", "TS", "9H", "8H", "7D", "9D", "8C", "7C", "TC"]
    s = deal([blank, ["AH", "TH", "9S", "8S", "7H", "9C", "8D", "7S", "TD"]], stock=["KS", "QD"])
    assert s.phase == CARTE_BLANCHE and s.to_act == 0
    run(s, "done")
    assert s.phase == CARTE_BLANCHE and s.to_act == 1
    run(s, "declare carte-blanche")
    assert new_items(s, 0) == [(1, "carte-blanche", 50)]
    assert s.phase == PLAY and s.to_act == 0


def test_000_carte_blanche_scores_again_for_each_draw_without_a_court_card() -> None:
    """000: "If he does not draw a picture-card, he can again score for carte blanche"; docs/rules.md §6.2:
    "Each later draw that brings no court card may be shown for 50 again". Seat 0 draws
    9S (50 again), then KH (no more), then a nine (the chain has ended)."""
    hand = ["AS", "TS", "9H", "8H", "7D", "9D", "8C", "7C", "TC"]
    s = deal([hand, FOLLOWER], stock=["9S", "7S", "KH", "7S", "9C", "7D"])
    run(s, "declare carte-blanche")
    run(s, "play 9H", "play 7S")  # seat 0 wins and draws 9S first
    assert s.phase == CARTE_BLANCHE and s.to_act == 0
    run(s, "declare carte-blanche")
    assert [i.reason for i in s.items] == ["carte-blanche", "carte-blanche"]
    assert s.deal_points == [100, 0]
    run(s, "play 8H", "play 7D")  # draws KH: the carte blanche is over
    assert s.phase == PLAY
    run(s, "play 9D", "play 7D")  # draws 9C: not offered again
    assert s.phase == PLAY
    assert s.deal_points == [100, 0]


def test_000_carte_blanche_holder_with_four_aces_may_declare_them() -> None:
    """000: "If the holder of carte blanche hold four aces and wins the first trick, he can declare his
    aces." """
    hand = ["AS", "AH", "AD", "AC", "TS", "9H", "8D", "7C", "7H"]
    s = deal([hand, FOLLOWER], stock=["KS", "8H"])
    run(s, "declare carte-blanche", "play TS", "play 7S")
    assert s.last_trick[2] == 0
    assert "declare four-aces AS AH AD AC" in declarations(s)
    run(s, "declare four-aces AS AH AD AC")
    assert new_items(s, 1) == [(0, "four-aces", 100)]


# ---------------------------------------------------------------------------- the heap


def test_004_tricks_lie_in_a_heap_until_a_brisque_is_played() -> None:
    """004: "the tricks are left face upwards in a heap between the players until a brisque is played,
    when the winner of the trick takes them up". Two brisque-free tricks lie in the heap (four cards);
    the third holds an ace, and the heap is taken up."""
    s = deal([["9H", "8C", "AD", "9D", "8D", "9C", "9S", "8S", "JS"], ["8H", *FOLLOWER[1:]]])
    assert s.heap == []
    run(s, "play 9H", "play 8H")
    assert sorted(s.heap) == sorted(s.last_trick[1])
    run(s, "play 8C", "play 7C")
    assert len(s.heap) == 4
    assert set(s.last_trick[1]) <= set(s.heap)
    run(s, "play AD", "play 7D")
    assert s.heap == []
    assert observe(s, 1).heap == ()


def test_004_the_winner_of_the_brisque_trick_takes_the_whole_heap() -> None:
    """004: tricks stay face up in one heap "until a brisque is played, when the winner of the trick
    takes them up, and turns them face downwards, near himself". Seat 0 wins a brisque-free trick, seat
    1 a second one; seat 0 wins the third, which holds an ace: all six cards are his, none seat 1's."""
    s = deal([["9H", "7C", "AD", "9D", "8D", "9C", "9S", "8S", "JS"], ["8H", *FOLLOWER[1:]]])
    run(s, "play 9H", "play 8H")  # seat 0 wins
    heap = list(s.last_trick[1])
    assert sorted(s.heap) == sorted(heap)
    run(s, "play 7C", "play 8C")  # seat 1 wins, still no brisque
    assert s.last_trick[2] == 1
    heap += s.last_trick[1]
    assert sorted(s.heap) == sorted(heap)
    run(s, "play 7D", "play AD")  # seat 1 leads, seat 0 wins with the ace
    assert s.last_trick[2] == 0
    heap += s.last_trick[1]
    assert s.heap == []
    assert sorted(c for c in s.won[0]) == sorted(heap)
    assert s.won[1] == []


# ---------------------------------------------------------------------------- the last nine tricks


def _obligatory(hand: list[int], led: int, trump: int) -> set[int]:
    """000/004: to the last nine tricks the second player "must follow suit and win the trick by
    trumping or over-playing, if he can" -- the kinds he may play."""
    kinds = {c & 31 for c in hand}
    led = led & 31
    same = {k for k in kinds if k >> 3 == led >> 3}
    if same:
        return {k for k in same if k & 7 > led & 7} or same
    trumps = {k for k in kinds if k >> 3 == trump} if trump >= 0 else set()
    return trumps or kinds


def _random_game(seed: int) -> tuple[GameState, int]:
    """Random legal play of a whole Rubicon game; checks the last nine tricks on the way and returns the
    final state and how many follower decisions of the last nine tricks it checked."""
    rng = random.Random(seed)
    s = GameState.new(RUBICON, seed=seed)
    checked = 0
    while not s.is_terminal():
        legal = s.legal_actions()
        if s.stock_size == 0 and not s.is_terminal():
            assert s.phase == PLAY, "no declaring once the stock is exhausted"
            if len(s.trick) == 1:
                allowed = _obligatory(s.hands[s.to_act], s.trick[0], s.trump)
                assert {a.refs[0] - ANY_COPY for a in legal} == allowed
                checked += 1
        s.apply(rng.choice(legal))
    return s, checked


def test_000_last_nine_tricks_follow_suit_and_win_if_able() -> None:
    """000: "To the last nine tricks, after the stock is exhausted, the second player must follow suit
    and win the trick by trumping or over-playing, if he can"; nothing is declared then. Random games,
    every follower's choice compared with the rule."""
    total = 0
    for seed in (1, 2, 3):
        s, checked = _random_game(seed)
        assert s.is_terminal()
        total += checked
    assert total == 27  # nine tricks in each of three games


def test_000_one_deal_is_the_game_and_the_last_trick_scores_50() -> None:
    """000: "The winner of the odd trick scores 50. The game consists of one deal." (004: "the winner of
    the last trick, instead of 10, scores 50.") Brisques are not scored as points during the deal."""
    s, _ = _random_game(4)
    assert len(s.deals) == 1
    d = s.deals[0]
    assert d.completed
    last = [i for i in d.items if i.reason == "last-trick"]
    assert len(last) == 1 and last[0].points == 50 and last[0].seat == s.last_trick[2]
    assert not any(i.reason.startswith("brisque") for i in d.items)
    assert sum(d.brisques) == 320
    assert s.tricks_done == 64
    assert len(s.result().deals) == 1


# ---------------------------------------------------------------------------- re-forming a combination


def _four_queens_and_a_married_fifth() -> GameState:
    """Seat 0 declares four queens (QS.1 QH.1 QD.1 QC.1), then a royal marriage with a fifth queen
    (KH QH.2, hearts trumps): five queens declared, none played."""
    s = deal([["QS", "QH", "QD", "QC", "QH", "KH", "9D", "9C", "9S"], FOLLOWER])
    run(s, "play 9D", "play 7D", "declare four-queens QS QH QD QC")
    run(s, "play 9C", "play 7C", "declare royal-marriage KH QH")
    assert [i.reason for i in s.items] == ["four-queens", "royal-marriage"]
    return s


def test_004_five_declared_queens_none_played_never_score_four_queens_again() -> None:
    """000: "If a card of a declared combination be played to a trick, another card of the same rank may
    be used to form a second similar combination"; 004: "If a combination, duly scored, is broken up, one
    or more cards must be substituted ... to entitle him to a fresh score." With five queens on the table
    and none played, putting the fifth in place of any of the four is a regrouping, not a substitution:
    four queens must not score again (five tricks could otherwise score 5 x 60)."""
    s = _four_queens_and_a_married_fifth()
    run(s, "play 9S", "play 7S")
    assert s.last_trick[2] == 0
    assert not any("four-queens" in t for t in declarations(s))


def test_004_an_undeclared_fifth_queen_does_not_re_form_unplayed_four_queens() -> None:
    """004: a fresh score needs a combination "broken up" (a card of it played to a trick) and a card
    substituted; docs/rules.md §6.4: "a fifth queen added to four declared and unplayed queens scores
    nothing"."""
    s = deal([["QS", "QH", "QD", "QC", "QS", "9D", "9C", "9S", "8S"], FOLLOWER])
    run(s, "play 9D", "play 7D", "declare four-queens QS QH QD QC")
    run(s, "play 9C", "play 7C")
    assert s.last_trick[2] == 0
    assert not any("four-queens" in t for t in declarations(s))


def test_004_a_broken_four_queens_is_re_formed_once_per_card_played() -> None:
    """004: four queens, one played, "add a fifth queen to the three left on the table, and again score
    four queens". The re-formed four cannot then be regrouped with a sixth queen while none of its cards
    is played; once one of them is played, the sixth re-forms it again (60 more)."""
    s = deal([["QS", "QH", "QD", "QC", "QS", "QD", "9H", "9D", "8C"], FOLLOWER])
    run(s, "play 9H", "play 7C", "declare four-queens QS QH QD QC")
    run(s, "play QH.1", "play 7D")  # a queen of the four is played (and wins)
    four = [t for t in declarations(s) if "four-queens" in t]
    # The three left, and the fifth or the sixth queen.
    assert four == [
        "declare four-queens QS.1 QD.1 QD QC.1",
        "declare four-queens QS.1 QS QD.1 QC.1",
    ]
    run(s, "declare four-queens QS.1 QS QD.1 QC.1")
    run(s, "play 9D", "play 7D")
    assert s.last_trick[2] == 0
    assert not any("four-queens" in t for t in declarations(s))  # the sixth queen: a regrouping
    run(s, "play QS.1", "play 7S")  # a queen of the re-formed four is played
    assert s.last_trick[2] == 0
    four = [t for t in declarations(s) if "four-queens" in t]
    assert four == ["declare four-queens QS.2 QD.1 QD QC.1"]
    run(s, four[0])
    assert [i.points for i in s.items if i.reason == "four-queens"] == [60, 60, 60]


def test_004_a_substitute_may_come_from_the_table() -> None:
    """004: the card substituted in a broken combination comes "either from the cards upon the table or
    from the hand of the player": four queens, one of them played, re-formed with the queen of a declared
    marriage."""
    s = _four_queens_and_a_married_fifth()
    run(s, "play QS.1", "play 7S")  # one of the four queens is played (and wins)
    assert s.last_trick[2] == 0
    assert "declare four-queens QH.1 QH.2 QD.1 QC.1" in declarations(s)


# ---------------------------------------------------------------------------- "to score"


def test_004_other_combinations_are_held_to_score_and_the_seat_sees_its_list() -> None:
    """004 (the Rubicon text): "if, on the cards exposed, the player has more than one combination to
    score, he may score whichever he prefers, at the same time calling attention to his further claim
    by saying, 'And ---- to score'"; docs/rules.md §6: the others available are held "to score", and a seat
    sees its own list. Seat 0 scores the bezique; the royal marriage is held to score and scored on the
    next trick won. The other seat is not shown cards still hidden in seat 0's hand."""
    s = deal([["KH", "QH", "TH", "QS", "JD", "9D", "8D", "9C", "8C"], FOLLOWER])
    run(s, "play 9D", "play 7D", "declare bezique QS JD")
    assert observe(s, 0).seats[0].to_score == ("declare royal-marriage KH QH",)
    assert observe(s, 1).seats[0].to_score == ()
    assert observe(s, None).seats[0].to_score == ()
    run(s, "play 8D", "play 7D", "declare royal-marriage KH QH")
    assert observe(s, 0).seats[0].to_score == ()


def test_004_a_claim_to_score_lapses_when_one_of_its_cards_is_played() -> None:
    """004: "The mere fact of having declared a given combination 'to score' does not preserve the right
    to score it, if in the meantime the declarant ... plays one of the cards composing it"."""
    s = deal([["KH", "QH", "TH", "QS", "JD", "9D", "8D", "9C", "8C"], FOLLOWER])
    run(s, "play 9D", "play 7D", "declare bezique QS JD")
    assert observe(s, 0).seats[0].to_score == ("declare royal-marriage KH QH",)
    run(s, "play KH")
    assert observe(s, 0).seats[0].to_score == ()


# ---------------------------------------------------------------------------- counting brisques (issue 48)


def test_000_brisques_may_be_counted_once_the_stock_holds_twelve_cards_or_fewer() -> None:
    """000: the brisques "may be counted during the play, provided there are not more than twelve
    cards in the stock." Never before: while the stock holds more than twelve cards no view shows a
    count; from then on every view (each seat's and a spectator's) shows both seats' counts, which are
    the brisques each has won (docs/rules.md §6.3: both, as the text does not restrict the counting to
    one's own heap and every card in the heaps was played face up)."""
    for seed in (1, 2, 543):
        rng = random.Random(seed)
        s = GameState.new(RUBICON, seed=seed)
        shown_at = None
        while True:
            views = [observe(s, 0), observe(s, 1), observe(s, None)]
            for view in views:
                counts = [si.brisques for si in view.seats]
                if s.stock_size > 12:
                    assert counts == [None, None]
                    assert all("brisques" not in si for si in view.to_dict()["seats"])
                else:
                    assert counts == s.brisques()
                    assert [si["brisques"] for si in view.to_dict()["seats"]] == counts
            if s.stock_size <= 12 and shown_at is None:
                shown_at = s.stock_size
            if s.is_terminal():
                break
            s.apply(rng.choice(s.legal_actions()))
        assert shown_at == 12  # two draws a trick from 110: the stock passes through 12
        final = [si.brisques for si in observe(s, None).seats]
        assert final == list(s.deals[-1].brisques)
        assert sum(final) == 320  # all 32 brisques, once the hand is played out


def test_000_brisque_counts_are_rubicon_only() -> None:
    """The other variants score their brisques as points (at the end of the hand, or as won in
    Polish): no separate count is shown, however small the stock."""
    for name in ("two-handed", "polish", "three-handed"):
        rng = random.Random(3)
        s = GameState.new(variant(name), seed=3)
        while not s.is_terminal():
            assert all(si.brisques is None for si in observe(s, 0).seats)
            s.apply(rng.choice(s.legal_actions()))
