"""Cutting for the deal (issue 48; docs/rules.md §1.6): a chance event drawn from a seed, recorded as
text, and played by the engine where the books describe it."""

from __future__ import annotations

import pytest

from arena.game import VARIANT_NAMES, GameState, ParseError, observe, variant
from arena.game.cutting import Cut, draw_cut, highest, parse_cut

KS, NINE_H, AS, AD, TD = 5 + 0, 2 + 8, 7 + 0, 7 + 16, 6 + 16  # kinds: rank (7 = ace) + 8 * suit


def test_002_the_highest_bezique_card_deals() -> None:
    """002: "The players cut for deal, and the highest bezique card deals." Cards rank for cutting
    as for play (A T K Q J 9 8 7) and suits are equal."""
    cut = parse_cut("0:9H 1:KS")
    assert cut == Cut((((0, NINE_H), (1, KS)),), 1)
    s = GameState.new(variant("two-handed"), seed=3, cut=cut)
    assert s.dealer == s.first_dealer == 1
    assert s.to_act == 0  # the non-dealer leads
    assert observe(s, 0).log[:3] == (
        "seat 0 cuts 9H for the deal",
        "seat 1 cuts KS for the deal",
        f"deal 1: seat 1 deals, turn-up {observe(s, 0).log[2].split()[-1]}",
    )


def test_players_who_tie_cut_again() -> None:
    """A tie for the highest card (two aces of two suits: suits are equal) is cut again by those who
    tied; the cut's text keeps every round."""
    cut = parse_cut("0:AS 1:AD; 0:TD 1:KS")
    assert cut.winner == 0 and cut.text == "0:AS 1:AD; 0:TD 1:KS"
    assert highest(cut.rounds[0]) == [0, 1]
    with pytest.raises(ParseError, match="one highest card"):
        parse_cut("0:AS 1:AD")
    with pytest.raises(ParseError, match="only those tied"):
        parse_cut("0:AS 1:KD; 0:TD 1:KS")
    with pytest.raises(ParseError, match="two or more cutters"):
        parse_cut("0:AS")
    with pytest.raises(ParseError, match="CUTTER:CARD"):
        parse_cut("0-AS 1:KD")


def test_a_drawn_cut_is_reproducible_and_reads_back() -> None:
    """The same seed draws the same cut; the text form reads back to it; over many seeds both seats
    deal, ties are cut again, and the cards cut are cards of the packs."""
    winners = set()
    ties = 0
    for seed in range(400):
        cut = draw_cut(seed, (0, 1), packs=2)
        assert cut == draw_cut(seed, (0, 1), packs=2)
        assert parse_cut(cut.text) == cut
        assert highest(cut.rounds[-1]) == [cut.winner]
        winners.add(cut.winner)
        ties += len(cut.rounds) > 1
    assert winners == {0, 1} and ties > 0
    three = draw_cut(7, (4, 9, 2), packs=2, purpose="single player")
    assert three.winner in (4, 9, 2) and three != draw_cut(7, (4, 9, 2), packs=2)


def test_a_cut_is_refused_where_the_books_describe_none() -> None:
    """Only two-handed (002), Polish and Rubicon (000: they deal as ordinary bezique) cut for the
    deal; the others keep the dealer drawn from the seed."""
    cutting = {n for n in VARIANT_NAMES if variant(n).cut_for_deal}
    assert cutting == {"two-handed", "polish", "rubicon"}
    with pytest.raises(ValueError, match="no cut for the deal"):
        GameState.new(variant("three-handed"), seed=1, cut=parse_cut("0:AS 1:KD 2:9C"))
    with pytest.raises(ValueError, match="every seat"):
        GameState.new(variant("two-handed"), seed=1, cut=parse_cut("0:AS 2:KD"))
    with pytest.raises(ValueError, match="seat 0 cut highest and deals, not seat 1"):
        GameState.new(variant("two-handed"), seed=1, dealer=1, cut=parse_cut("0:AS 1:KD"))


@pytest.mark.parametrize("name", ["polish", "rubicon"])
def test_000_polish_and_rubicon_cut_as_ordinary_bezique(name: str) -> None:
    """000: Polish "differs from ordinary bézique" in other particulars than the deal; Rubicon: "The
    rules of Polish bézique hold good in regard to dealing"."""
    s = GameState.new(variant(name), seed=2, cut=parse_cut("0:7S 1:8S"))
    assert s.dealer == 1 and observe(s, None).log[0] == "seat 0 cuts 7S for the deal"


def test_without_a_cut_the_engine_keeps_the_seeded_dealer() -> None:
    """GameState.new without a cut (tests, searching bots, perft and golden games) draws the dealer
    from the seed as before: the cut is the referee's chance event."""
    s = GameState.new(variant("two-handed"), seed=1)
    assert s.dealer == 1 and observe(s, None).log[0].startswith("deal 1: seat 1 deals")
