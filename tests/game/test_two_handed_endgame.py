"""Ordinary two-handed Bezique (docs/rules.md §2, source 002): the end of the stock, the last eight
tricks and the end of the game.
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
    IllegalActionError,
    Variant,
    observe,
    ref_text,
    variant,
)

# ---------------------------------------------------------------- constructing the last eight tricks


def last_eight(final0: Sequence[str], final1: Sequence[str]) -> GameState:
    """The state after the 24th trick, seat 0 (its winner) to lead, hands as given."""
    state = GameState.new(V, seed=0, dealer=1, decks=[leader_wins_deck(final0, final1)])
    keep_playing(state, [final0[:-1], final1[:-1]], 24)
    assert state.tricks_done == 24
    assert hand_kinds(state, 0) == sorted(final0)
    assert hand_kinds(state, 1) == sorted(final1)
    return state


# ---------------------------------------------------------------- the end of the stock

FINAL0 = ["QS", "JD", "AS", "9S", "AD", "AH", "KC", "7D"]
FINAL1 = ["TS", "KS", "8S", "QH", "KH", "8C", "7C", "9H"]


def test_winner_of_the_24th_trick_may_still_declare_then_table_cards_return() -> None:
    """002: the winner of the last stock trick can declare anything in his hand; after this all
    declarations cease, and all cards on the table, declared and not played, are taken up by their
    owners."""
    s = GameState.new(V, seed=0, dealer=1, decks=[leader_wins_deck(FINAL0, FINAL1)])
    keeps = [FINAL0[:-1], FINAL1[:-1]]
    keep_playing(s, keeps, 23)
    assert s.stock_size == 2
    act(s, "play " + sorted(Counter(hand_kinds(s, 0)) - Counter(keeps[0]))[0])
    act(s, "play " + sorted(Counter(hand_kinds(s, 1)) - Counter(keeps[1]))[0])
    assert s.tricks_done == 24
    assert s.phase == 2
    assert s.to_act == 0
    assert s.stock_size == 2  # before drawing
    assert "declare bezique QS JD" in texts(s)
    act(s, "declare bezique QS JD")
    assert s.deal_points[0] == 40
    if s.phase == 2:
        act(s, "done")
    assert s.stock_size == 0
    assert observe(s, 0).seats[0].table == ()
    assert observe(s, 1).seats[0].table == ()
    assert "QS" in [
        ref_text(r) for r in observe(s, 0).hand
    ]  # back in the hand, no longer on the table
    assert "QS.1" not in [ref_text(r) for r in observe(s, 0).hand]
    assert s.to_act == 0  # the winner of the last stock trick leads
    assert s.phase == 1
    assert all(t.startswith("play") for t in texts(s))


def test_no_declaring_in_the_last_eight_tricks() -> None:
    """002: after the last stock trick all declarations cease (QS + JD back in the hand, a trick won:
    no declaring turn)."""
    s = last_eight(FINAL0, FINAL1)
    points = list(s.deal_points)
    act(s, "play AS", "play 8S")
    assert winner_of_last_trick(s) == 0
    assert s.phase == 1
    assert s.to_act == 0
    assert all(t.startswith("play") for t in texts(s))
    assert s.deal_points == points


def test_leader_of_the_last_eight_may_lead_any_card() -> None:
    """002: the winner of the last stock trick leads (any card)."""
    s = last_eight(FINAL0, FINAL1)
    assert s.to_act == 0
    assert s.in_stock_phase is False
    assert sorted(t.split()[1] for t in texts(s)) == sorted(set(FINAL0))


# Seat 1: spades TS KS 8S, trumps QH KH 9H (9H the turn-up), clubs 8C 7C, no diamonds.
LAST8_0 = ["AS", "9S", "TS", "JH", "AH", "KC", "AD", "7D"]
LAST8_1 = ["TS", "KS", "8S", "QH", "KH", "8C", "7C", "9H"]


@pytest.mark.parametrize(
    ("lead", "legal"),
    [
        ("9S", ["TS", "KS"]),  # follow suit and win if able
        ("AS", ["8S", "TS", "KS"]),  # must follow suit even when unable to win; no trumping
        ("TS", ["8S", "TS", "KS"]),  # an identical ten does not win: any spade
        ("AD", ["9H", "QH", "KH"]),  # void in the suit led: must win by trumping
        ("7D", ["9H", "QH", "KH"]),
        ("JH", ["QH", "KH"]),  # trumps led: a higher trump if able
        ("AH", ["9H", "QH", "KH"]),  # trumps led, cannot win: any trump
        ("KC", ["8C", "7C"]),  # follow suit, cannot win
    ],
)
def test_last_eight_follower_obligations(lead: str, legal: list[str]) -> None:
    """002: in the last eight tricks the second player must follow suit if able, and must win the trick
    if able; if not able to follow suit, he must win the trick if he can by trumping. The referee never
    offers an illegal card, and refuses one."""
    s = last_eight(LAST8_0, LAST8_1)
    act(s, f"play {lead}")
    assert s.to_act == 1
    assert sorted(texts(s)) == sorted(f"play {c}" for c in legal)
    for card in set(LAST8_1) - set(legal):
        with pytest.raises(IllegalActionError):
            s.apply(Action.parse(f"play {card}"))
    act(s, f"play {legal[0]}")
    assert s.tricks_done == 25


def test_last_eight_void_without_trumps_plays_any_card() -> None:
    """002: a follower who can neither follow suit nor trump plays any card; a trump lead with no trump
    to answer also leaves him free."""
    s = last_eight(
        ["AH", "AH", "AD", "AS", "9S", "KC", "JS", "7D"],
        ["TS", "KS", "8S", "QC", "JC", "8C", "7C", "9H"],
    )
    act(s, "play AH")
    assert texts(s) == ["play 9H"]  # his only trump must follow, though it cannot win
    act(s, "play 9H")
    assert winner_of_last_trick(s) == 0
    play_ah = s.clone()
    act(play_ah, "play AH")
    assert sorted(t.split()[1] for t in texts(play_ah)) == sorted(
        ["TS", "KS", "8S", "QC", "JC", "8C", "7C"]
    )
    act(s, "play AD")
    assert sorted(t.split()[1] for t in texts(s)) == sorted(
        ["TS", "KS", "8S", "QC", "JC", "8C", "7C"]
    )


def test_last_eight_winner_leads_next_and_the_hand_ends_after_32_tricks() -> None:
    """002: the winner of each trick leads to the next; the hand ends after the 32nd trick with the
    last trick (10) to its winner."""
    s = last_eight(LAST8_0, LAST8_1)
    act(s, "play 9S", "play KS")
    assert winner_of_last_trick(s) == 1
    assert s.to_act == 1
    play_deal(s)
    last = [i for i in s.deals[0].items if i.reason == "last-trick"]
    assert len(last) == 1
    assert last[0].points == 10


# ---------------------------------------------------------------- the end of the game


def _dry_run(seed: int) -> list[int]:
    """Deal points of the first deal of ``seed`` (dealer 0) under the first-legal policy."""
    s = GameState.new(V, seed=seed, dealer=0)
    play_deal(s)
    return list(s.deals[0].points)


SEED = 5


def _game_with_totals(totals: list[int], v: Variant = V) -> GameState:
    s = GameState.new(v, seed=SEED, dealer=0)
    s.totals[:] = totals
    return s


def test_end_of_deal_the_game_is_not_won_mid_hand() -> None:
    """docs/rules.md §1 (game_end = end-of-deal, default): totals are compared when a deal ends, even if a seat
    passes 1000 during the hand."""
    s = _game_with_totals([990, 990])
    passed_mid_hand = False
    while s.deal_index == 0 and not s.is_terminal():
        first_legal(s)
        if s.tricks_done < 32 and max(s.deal_points) >= 10 and not s.is_terminal():
            passed_mid_hand = True
    assert passed_mid_hand
    assert s.deals[0].completed
    assert len(s.deals) == 1
    final = s.deals[0].totals
    assert final[0] != final[1]  # this seed: a unique leader, so the game ends with the deal
    assert s.is_terminal()
    assert s.result().winners == ((0,) if final[0] > final[1] else (1,))


def test_end_of_deal_higher_total_at_or_above_target_wins() -> None:
    """docs/rules.md §1: when a deal ends, the higher total at or above the target wins (both may be above)."""
    p = _dry_run(SEED)
    s = _game_with_totals([1000 - p[0] + 5, 1000 - p[1]])
    play_deal(s)
    assert s.is_terminal()
    assert list(s.deals[-1].totals) == [1005, 1000]
    result = s.result()
    assert result.winners == (0,)
    assert result.ranking == (0, 1)
    assert observe(s, None).phase == "over"


def test_end_of_deal_exactly_the_target_wins() -> None:
    """docs/rules.md §2: the game is won by reaching 1000 (at or above)."""
    p = _dry_run(SEED)
    s = _game_with_totals([0, 1000 - p[1]])
    play_deal(s)
    assert list(s.deals[-1].totals) == [p[0], 1000]
    assert p[0] < 1000
    assert s.is_terminal()
    assert s.result().winners == (1,)


def test_end_of_deal_below_target_plays_on() -> None:
    """002: deals alternate until the game is won by one of the players reaching 1000."""
    p = _dry_run(SEED)
    s = _game_with_totals([999 - p[0], 999 - p[1]])
    play_deal(s)
    assert not s.is_terminal()
    assert s.deal_index == 1
    assert list(s.totals) == [999, 999]


def test_end_of_deal_equal_totals_play_another_deal() -> None:
    """docs/rules.md §1: equal totals (at or above the target) play another deal."""
    p = _dry_run(SEED)
    s = _game_with_totals([1100 - p[0], 1100 - p[1]])
    play_deal(s)
    assert not s.is_terminal()
    assert s.deal_index == 1
    assert list(s.deals[0].totals) == [1100, 1100]
    assert s.dealer == 1
    play_deal(s)
    assert s.deal_index == 2 or s.is_terminal()


def test_whole_game_ends_when_a_deal_leaves_a_unique_leader_at_1000() -> None:
    """002 / docs/rules.md §1: a game is a series of deals until a player reaches 1000 at the end of a deal."""
    s = GameState.new(V, seed=13)
    while not s.is_terminal():
        first_legal(s)
    for d in s.deals[:-1]:
        assert d.completed
        assert max(d.totals) < 1000 or d.totals[0] == d.totals[1]
    final = s.deals[-1].totals
    assert max(final) >= 1000
    assert final[0] != final[1]
    assert s.deals[-1].completed
    winner = 0 if final[0] > final[1] else 1
    result = s.result()
    assert result.winners == (winner,)
    assert list(result.scores) == list(final)
    assert s.legal_actions() == []
    assert s.to_act == -1


IMMEDIATE = variant("two-handed", game_end="immediate")


def test_immediate_the_first_to_reach_the_target_wins_at_once() -> None:
    """docs/rules.md §1 (game_end = immediate): scores are credited as they happen and the first to reach the
    target wins at once, mid-hand."""
    s = deal(
        ["QS", "JD", "8S", "9S", "7S", "8D", "9D", "7D"],
        ["7C", "7C", "8C", "8C", "9C", "9C", "JC", "JC"],
        v=IMMEDIATE,
    )
    s.totals[:] = [970, 999]
    act(s, "play 8S", "play 7C", "declare bezique QS JD")
    assert s.is_terminal()
    assert s.to_act == -1
    assert s.legal_actions() == []
    result = s.result()
    assert result.winners == (0,)
    assert list(result.scores) == [1010, 999]
    assert s.deals[-1].completed is False
    with pytest.raises(IllegalActionError):
        s.apply(Action.parse("done"))


def test_immediate_reaching_exactly_the_target_wins() -> None:
    """docs/rules.md §1 (immediate): reaching the target (1000) exactly wins, here by exchanging the seven."""
    s = deal(
        ["7H", "8S", "9S", "7S", "8D", "9D", "7D", "AS"],
        ["7C", "7C", "8C", "8C", "9C", "9C", "JC", "JC"],
        v=IMMEDIATE,
    )
    s.totals[:] = [990, 0]
    act(s, "play 8S", "play 7C", "exchange 7H")
    assert s.is_terminal()
    assert s.result().winners == (0,)


def test_end_of_deal_does_not_stop_at_the_same_declaration() -> None:
    """docs/rules.md §1: under the default the same declaration that would win at once under "immediate" does not
    end the game mid-hand."""
    s = deal(
        ["QS", "JD", "8S", "9S", "7S", "8D", "9D", "7D"],
        ["7C", "7C", "8C", "8C", "9C", "9C", "JC", "JC"],
    )
    s.totals[:] = [970, 0]
    act(s, "play 8S", "play 7C", "declare bezique QS JD")
    assert not s.is_terminal()
    assert observe(s, 0).seats[0].total == 1010
    assert s.to_act == 0


def test_immediate_game_below_target_continues_across_deals() -> None:
    """docs/rules.md §1 (immediate): with nobody at the target the deals go on, alternating the dealer."""
    s = GameState.new(IMMEDIATE, seed=SEED, dealer=0)
    play_deal(s)
    assert not s.is_terminal()
    assert s.deal_index == 1
    assert s.dealer == 1
    while not s.is_terminal():
        first_legal(s)
    result = s.result()
    assert max(result.scores) >= 1000
    assert sum(1 for t in result.scores if t >= 1000) == 1


def test_immediate_the_dealers_seven_turn_up_can_win_at_the_start_of_a_deal() -> None:
    """docs/rules.md §1 (immediate) with 002's 10 to the dealer for a seven turned up: the points are credited
    when the deal is made, and reaching the target with them wins at once."""
    p = _dry_run(SEED)
    sevens = list(range(32)) * 2  # the turn-up (17th card) is the seven of diamonds
    s = GameState.new(IMMEDIATE, seed=SEED, dealer=0)
    s = GameState.new(IMMEDIATE, seed=SEED, dealer=0, decks=[s.deck_for(0), sevens])
    s.totals[:] = [0, 990 - p[1]]
    play_deal(s)
    assert s.is_terminal()
    assert len(s.deals) == 2
    assert s.deals[0].totals[1] == 990
    assert s.deals[1].dealer == 1
    assert s.deals[1].items[0].reason == "seven-turn-up"
    assert s.result().winners == (1,)
    assert s.result().scores[1] == 1000
