"""Deal suites: the file format round-trips, every mistake is named with its file and line, and a deal
gives a match config that the engine deals exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.game import GameState, variant
from arena.play import deals
from arena.play.deals import (
    Deal,
    DealFileError,
    fresh_deals,
    load_deals,
    parse_deals,
    seeded_deals,
)
from arena.referee import MatchConfig
from arena.referee.record import deck_texts

HEADER = "bezique-arena-deals 1\nvariant two-handed\n"


def a_deck(name: str = "two-handed", seed: int = 5) -> str:
    return ",".join(deck_texts(GameState.new(variant(name), seed)))


def test_a_suite_round_trips_through_its_file(tmp_path: Path) -> None:
    deck = a_deck()
    text = (
        HEADER
        + f"# a comment\n\ndeal 12\ndeal 34 dealer=1  # trailing comment\ndeal 56 dealer=0 deck={deck} deck={deck}\n"
    )
    suite = parse_deals(text, "suite.txt")
    assert suite.variant == "two-handed" and len(suite) == 3
    assert suite.deal(0) == Deal(12)
    assert suite.deal(1) == Deal(34, 1)
    assert suite.deal(2).dealer == 0 and len(suite.deal(2).decks) == 2
    path = tmp_path / "suite.txt"
    suite.save(path)
    assert load_deals(path).deals == suite.deals
    assert load_deals(path, "two-handed").source == str(path)


def test_fresh_deals_differ_and_seeded_deals_repeat() -> None:
    a, b = fresh_deals(50, "three-handed"), fresh_deals(50, "three-handed")
    assert a.variant == "three-handed"
    assert len({d.seed for d in a.deals + b.deals}) == 100
    assert seeded_deals(7, 20).deals == seeded_deals(7, 20).deals
    assert seeded_deals(7, 20).deals != seeded_deals(8, 20).deals
    with pytest.raises(ValueError, match="at least one deal"):
        fresh_deals(0)
    with pytest.raises(ValueError, match="unknown variant"):
        fresh_deals(3, "five-handed")


def test_a_deal_configures_every_game_of_a_match() -> None:
    deck = a_deck(seed=9)
    suite = parse_deals(HEADER + f"deal 77 dealer=1 deck={deck}\ndeal 78\n")
    config = suite.deal(0).configure(MatchConfig(games=2, seed=3))
    assert config.seeds() == (77, 77)
    assert config.dealers == (1, 1)
    assert config.game_decks(1) == suite.deal(0).decks
    state = GameState.new(
        config.build_variant(),
        config.game_seed(1),
        dealer=config.dealer(1),
        decks=config.game_decks(1),
    )
    assert ",".join(deck_texts(state)) == deck  # the first deal is the explicit one
    plain = suite.deal(1).settings(2)
    assert plain == {"seed": 78, "game_seeds": (78, 78), "dealers": (), "decks": ()}
    with pytest.raises(IndexError, match="has 2 deals, no deal 2"):
        suite.deal(2)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "s.txt: empty"),
        ("# only a comment\n", "s.txt: empty"),
        ("deals 1\n", "s.txt:1: not a deal suite"),
        ("bezique-arena-deals 2\n", "s.txt:1: unsupported deal suite version '2'"),
        ("bezique-arena-deals\n", "s.txt:1: unsupported deal suite version ''"),
        ("bezique-arena-deals 1\ndeal 3\n", "s.txt:2: expected 'variant NAME'"),
        ("bezique-arena-deals 1\nvariant\n", "s.txt:2: expected 'variant NAME'"),
        ("bezique-arena-deals 1\nvariant six-handed\n", "s.txt:2: unknown variant 'six-handed'"),
        (HEADER, "s.txt: no deals"),
        (HEADER + "deal\n", "s.txt:3: a deal needs its seed"),
        (HEADER + "seed 5\n", "s.txt:3: expected 'deal SEED"),
        (HEADER + "deal 1\ndeal -5\n", "s.txt:4: the seed must be a whole number from 0"),
        (HEADER + "deal 99999999999999999999\n", "s.txt:3: the seed must be a whole number"),
        # Digits other than ASCII's: "²" gave int()'s message, "١٢" was read as twelve.
        (HEADER + "deal \u00b2\n", "s.txt:3: the seed must be a whole number from 0"),
        (HEADER + "deal \u0661\u0662\n", "s.txt:3: the seed must be a whole number from 0"),
        (HEADER + "deal 5 dealer=\u0661\n", "s.txt:3: dealer must be a whole number from 0"),
        (HEADER + "deal 5 dealer=2\n", "s.txt:3: dealer must be a seat 0..1, got 2"),
        (HEADER + "deal 5 dealer=0 dealer=1\n", "s.txt:3: dealer is given twice"),
        (HEADER + "deal 5 dealer\n", "s.txt:3: expected dealer=N or deck=CARDS"),
        (HEADER + "deal 5 hand=QS\n", "s.txt:3: unknown field 'hand'"),
        (HEADER + "deal 5 deck=QS,JD\n", "s.txt:3: deck 0 must hold 64 cards, got 2"),
        (HEADER + "deal 5 deck=QS,,JD\n", "s.txt:3: deck 0: empty card"),
        (HEADER + "deal 5 deck=QS,ZZ\n", "s.txt:3: deck 0: expected a card such as QS"),
    ],
)
def test_mistakes_are_named_with_file_and_line(text: str, message: str) -> None:
    with pytest.raises(DealFileError) as info:
        parse_deals(text, "s.txt")
    assert message in str(info.value)


def test_a_deck_with_the_wrong_cards_is_refused() -> None:
    cards = a_deck().split(",")
    cards[0] = "AS" if cards[0] != "AS" else "KS"  # one kind three times, another once
    with pytest.raises(DealFileError, match=r"s\.txt:3: deck 0 must hold each card 2 times"):
        parse_deals(HEADER + "deal 5 deck=" + ",".join(cards) + "\n", "s.txt")


def test_a_suite_is_for_its_variant(tmp_path: Path) -> None:
    path = tmp_path / "three.txt"
    fresh_deals(3, "three-handed").save(path)
    assert len(load_deals(path, "three-handed")) == 3
    with pytest.raises(DealFileError, match="made for three-handed, not two-handed"):
        load_deals(path, "two-handed")
    with pytest.raises(DealFileError, match="cannot read the deal suite"):
        load_deals(tmp_path / "missing.txt")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DealFileError, match=r"binary\.txt"):
        load_deals(tmp_path / "binary.txt")


def test_a_suite_file_past_the_bound_is_not_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was read whole: deals = "/dev/zero" grew until a MemoryError traceback.
    path = tmp_path / "s.txt"
    path.write_text(HEADER + "deal 1\n" * 100)
    monkeypatch.setattr(deals, "MAX_SUITE_BYTES", 200, raising=False)
    with pytest.raises(DealFileError, match=r"s\.txt: larger than a deal suite may be"):
        load_deals(path)
