"""Three-handed Bezique (docs/rules.md §3; sources 000 and EB9-643): the obligations of the second
and third players in the last eight tricks, brisques and the end of the game.

Unless a test says otherwise seat 2 deals, so seat 0 (left of the dealer) leads, and hearts are trumps.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from engine_helpers import (
    act,
    first_legal,
    hand_kinds,
    last_winner,
    play_out_stock,
    plays,
    stock_end_deck,
)
from three_handed_helpers import V

from arena.game import (
    Action,
    GameState,
    IllegalActionError,
    Variant,
    observe,
)

# ---------------------------------------------------------------- helpers


def play_deal(state: GameState) -> None:
    """Play the first legal action until the current deal is over."""
    index = state.deal_index
    while not state.is_terminal() and state.deal_index == index:
        first_legal(state)


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
    """002 / docs/rules.md §3: the winner of the last stock trick leads, any card."""
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
    """docs/rules.md §3 (000, EB9-643): in the last eight tricks each later player must follow suit and head the
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
    """docs/rules.md §3 (000, EB9-643): the third player must follow suit and head the trick (the best card so
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
    """002 / docs/rules.md §3: the winner of each trick leads to the next; after 8 tricks of three the hand is
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
    """docs/rules.md §1, §2 (002): aces and tens taken in tricks score 10 each at the end of the hand; with three
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
    """docs/rules.md §1, §3: at the end of a deal the higher total at or above the target wins; the result ranks
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
    """docs/rules.md §1: ranking by score; equal totals share a place (a draw between those sides)."""
    p = _dry_run()
    s = _with_totals([1500 - p[0], 2100 - p[1], 1500 - p[2]])
    play_deal(s)
    result = s.result()
    assert result.ranking == (1, 0, 1)
    assert result.winners == (1,)


def test_equal_highest_totals_above_target_play_another_deal() -> None:
    """docs/rules.md §1: equal highest totals at or above the target play another deal, even if the third seat
    is lower."""
    p = _dry_run()
    s = _with_totals([2100 - p[0], 2100 - p[1], 400 - p[2]])
    play_deal(s)
    assert not s.is_terminal()
    assert s.deal_index == 1


def test_whole_game_under_random_legal_play_ends_at_2000() -> None:
    """docs/rules.md §1, §3: a game is a series of deals until one seat alone has the highest total at or above
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
