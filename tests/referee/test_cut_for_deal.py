"""Issue 48: the referee cuts for the deal where the books describe it (002: "The players cut for deal,
and the highest bezique card deals"), drawn from the game's secret seed, recorded and replayed."""

from __future__ import annotations

from fake_ports import GENEROUS, FakePort, play, seeded, two

from arena.game.cutting import draw_cut, parse_cut
from arena.referee import MatchConfig
from arena.referee.record import MatchRecord, replay


def test_002_a_two_handed_match_cuts_for_the_deal() -> None:
    config = MatchConfig(seed=21, games=2, time_control=GENEROUS, deal_key=b"secret")
    record = play(config, two(FakePort("a", seeded(1)), FakePort("b", seeded(2))))
    for g, game in enumerate(record.games):
        cut = parse_cut(game.cut)
        assert cut == draw_cut(config.deal_seed(g), (0, 1), packs=2)  # from the secret seed
        assert game.dealer == cut.winner  # the highest cutter deals
        cards = [event for event in game.events if " cuts " in event]
        assert cards == game.events[: len(cards)] and len(cards) == 2 * len(cut.rounds)
        assert game.events[len(cards)].startswith(f"deal 1: seat {cut.winner} deals")
        assert game.to_dict()["cut"] == game.cut
    # The secret, not the public seed, draws the cut: replays need the record only.
    state = replay(record, record.games[0])
    assert state.first_dealer == record.games[0].dealer
    copy = MatchRecord.from_dict(record.to_dict())
    assert replay(copy, copy.games[1]).log == replay(record, record.games[1]).log


def test_no_cut_where_a_dealer_is_set_or_the_books_describe_none() -> None:
    fixed = play(
        MatchConfig(seed=22, dealers=(1,), time_control=GENEROUS),
        two(FakePort("a", seeded(1)), FakePort("b", seeded(2))),
    )
    assert fixed.games[0].cut == "" == fixed.games[0].to_dict()["cut"]
    assert fixed.games[0].dealer == 1
    three = play(
        MatchConfig(variant="three-handed", seed=23, time_control=GENEROUS),
        [[FakePort(f"p{s}", seeded(s))] for s in range(3)],
    )
    assert three.games[0].cut == ""
    assert not any(" cuts " in e for e in three.games[0].events)
