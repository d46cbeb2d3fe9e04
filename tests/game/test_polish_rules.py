"""Polish (Open) Bezique, docs/rules.md §5, from seed 000: open cards, brisques scored when won, the
seven of trumps and the game (its declarations: test_polish_declaring.py).

Most tests lay out a deck with ``arrange_deck`` and play a scripted run of tricks: the dealer is seat 1,
so seat 0 leads the first trick; hands are given in full so that every card played is known. The turn-up
fixes trumps (spades unless said otherwise).
"""

from __future__ import annotations

import random

import pytest
from engine_helpers import act as run
from engine_helpers import texts
from polish_helpers import (
    DECLARE,
    PLAY,
    POLISH,
    cards,
    deal,
    is_scoring,
    new_items,
)

from arena.game import (
    VARIANT_NAMES,
    GameState,
    VariantError,
    card_text,
    observe,
    parse_card,
    variant,
    variant_options,
)

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


# ---------------------------------------------------------------------------- the target (issue 48)


def test_000_polish_target_is_an_option_of_the_variant() -> None:
    """000: "The game is not less than 2000 up": 2000 is the least, so the option ``target`` takes
    2000 (the default), 2500, 3000, 4000 or 5000; it is recorded among the variant's options and so
    shown in every observation."""
    assert variant_options("polish")["target"] == ("2000", "2500", "3000", "4000", "5000")
    assert POLISH.target == 2000 and ("target", "2000") in POLISH.options
    for value in ("2500", "3000", "4000", "5000"):
        v = variant("polish", target=value)
        assert v.target == int(value)
        assert dict(v.options) == {"game_end": "end-of-deal", "target": value}
    s = GameState.new(variant("polish", target="3000"), seed=3)
    assert observe(s, 0).to_dict()["options"]["target"] == "3000"
    assert observe(s, None).options == (("game_end", "end-of-deal"), ("target", "3000"))


@pytest.mark.parametrize("value", ["1000", "1999", "2600", "", "2000 ", "two thousand"])
def test_000_polish_target_refuses_other_values(value: str) -> None:
    """000: not less than 2000 up, and only the listed lengths: anything else is refused with one
    line naming the option, the accepted values and the value given."""
    with pytest.raises(VariantError) as err:
        variant("polish", target=value)
    message = str(err.value)
    assert "\n" not in message
    assert "'target'" in message and "2000, 2500, 3000, 4000, 5000" in message
    assert repr(value) in message


def test_000_target_is_an_option_of_polish_only() -> None:
    """The other variants keep their books' fixed targets (002's 1000; three and four players 2000;
    Rubicon one deal): ``target`` is no option of theirs."""
    for name in VARIANT_NAMES:
        if name != "polish":
            assert "target" not in variant_options(name)
            with pytest.raises(VariantError, match="has no option 'target'"):
                variant(name, target="2500")


@pytest.mark.parametrize(("target", "seed"), [(2500, 11), (3000, 12), (5000, 13)])
def test_000_polish_game_is_played_to_the_chosen_target(target: int, seed: int) -> None:
    """000: "The game is not less than 2000 up", played here further up: no deal before the last
    leaves a single seat at the target or more; the last does, and that seat wins."""
    v = variant("polish", target=str(target))
    rng = random.Random(seed)
    s = GameState.new(v, seed=seed)
    while not s.is_terminal():
        s.apply(rng.choice(s.legal_actions()))
    for d in s.deals[:-1]:
        best = max(d.totals)
        assert best < target or list(d.totals).count(best) > 1
    final = s.deals[-1].totals
    winner = max(range(2), key=lambda i: final[i])
    assert final[winner] >= target and final[winner] > final[1 - winner]
    assert s.result().winners == (winner,)
    if target > 2000:  # a game to 2000 on the same cards would have stopped earlier
        assert any(2000 <= max(d.totals) < target for d in s.deals[:-1])


def test_000_polish_target_with_immediate_game_end() -> None:
    """The target applies to game_end = "immediate" too: the game stops the moment a seat reaches
    it, and not before."""
    v = variant("polish", target="2500", game_end="immediate")
    rng = random.Random(5)
    s = GameState.new(v, seed=5)
    while not s.is_terminal():
        assert max(s.totals[i] + s.deal_points[i] for i in range(2)) < 2500
        s.apply(rng.choice(s.legal_actions()))
    assert max(s.deals[-1].totals) >= 2500
