"""Issue 48: three-handed consultation played as a series (000: the single player "continues to do so
till the allies win a game, when the two cut as before to see who shall be the single player"; docs/
rules.md §3.2). The referee seats the three players game by game, from cuts it draws and records."""

from __future__ import annotations

import itertools

from fake_ports import GENEROUS, FakePort, play, seeded

from arena.game.cutting import draw_cut, parse_cut
from arena.referee import MatchConfig
from arena.referee.record import MatchRecord, replay

SERIES = (("consultation", "series"),)


def _players() -> list[FakePort]:
    return [FakePort(name, seeded(i)) for i, name in enumerate(("ann", "bob", "cy"))]


def test_000_the_single_player_continues_till_the_allies_win_a_game() -> None:
    """000: "the three players cut, the one who cuts the highest card plays against the other two in
    consultation, and continues to do so till the allies win a game, when the two cut as before to
    see who shall be the single player"."""
    ann, bob, cy = roster = _players()
    config = MatchConfig(
        variant="three-handed-consultation",
        options=SERIES,
        seed=31,
        games=6,
        time_control=GENEROUS,
        deal_key=b"k",
    )
    record = play(config, [[ann], [bob, cy]])
    games = record.games
    # The three cut before the first game; the highest plays alone.
    first = parse_cut(games[0].single_cut)
    assert [c for c, _ in first.rounds[0]] == [0, 1, 2]
    assert first == draw_cut(config.deal_seed(0), (0, 1, 2), 2, "single player")
    assert games[0].seating == [[first.winner], [p for p in range(3) if p != first.winner]]
    allies_won_once = kept_once = False
    for before, game in itertools.pairwise(games):
        allies_won = before.result["ranking"] == [1, 0]
        if allies_won:
            allies_won_once = True
            cut = parse_cut(game.single_cut)
            # "the two cut": the allies of the game they won, and the highest plays alone.
            assert sorted(c for c, _ in cut.rounds[0]) == before.seating[1]
            assert cut == draw_cut(
                config.deal_seed(game.index), before.seating[1], 2, "single player"
            )
            assert game.seating[0] == [cut.winner]
            assert sorted(game.seating[1]) == sorted({0, 1, 2} - {cut.winner})
        else:
            kept_once = True
            assert game.single_cut == "" and game.seating == before.seating
    assert allies_won_once and kept_once  # the seed shows both
    # Each player was asked for the seat the seating gives it, and only then.
    for game in games:
        asked = [d for p in roster for d in p.decisions if d.game == game.index]
        for d in asked:
            player = next(i for i, p in enumerate(roster) if d in p.decisions)
            assert player in game.seating[d.seat]
            assert game.seating[d.seat].index(player) == d.deciding_member
    # Every game's end tells its seating; the record keeps it and replays without the secret.
    assert [list(map(list, e.seating)) for e in ann.ends] == [g.seating for g in games]
    copy = MatchRecord.from_dict(record.to_dict())
    assert [g.seating for g in copy.games] == [g.seating for g in games]
    assert replay(copy, copy.games[2]).log[:1] == replay(record, games[2]).log[:1]


def test_per_game_consultation_keeps_the_seats_as_given() -> None:
    """The per-game format (the default) stays: the schedule says who sits alone in every game."""
    ann, bob, cy = _players()
    record = play(
        MatchConfig(variant="three-handed-consultation", seed=32, games=2, time_control=GENEROUS),
        [[ann], [bob, cy]],
    )
    assert all(g.seating == [] and g.single_cut == "" for g in record.games)
    assert {d.seat for d in ann.decisions} == {0} and {d.seat for d in bob.decisions} == {1}
    assert record.games[0].to_dict()["seating"] == []


def test_a_match_played_on_from_a_game_before_seats_as_the_series_would() -> None:
    """A tournament plays a series game by game, each a match of its own told the seating and result
    of the game before (MatchConfig.series_before): it seats and cuts exactly as the next game of
    one match of several games does (the cut drawn from the seed of the game it comes before)."""
    config = MatchConfig(
        variant="three-handed-consultation",
        options=SERIES,
        seed=31,
        games=6,
        time_control=GENEROUS,
        deal_key=b"k",
    )
    ann, bob, cy = _players()
    games = play(config, [[ann], [bob, cy]]).games
    cuts = 0
    for before, game in itertools.pairwise(games):
        seating = tuple(tuple(seat) for seat in before.seating)
        alone = MatchConfig(
            variant="three-handed-consultation",
            options=SERIES,
            games=1,
            time_control=GENEROUS,
            game_seeds=(config.game_seed(game.index),),
            deal_key=b"k",
            series_before=(seating, before.result["ranking"] == [1, 0]),
        )
        ann, bob, cy = _players()
        (one,) = play(alone, [[ann], [bob, cy]]).games
        assert one.seating == game.seating and one.single_cut == game.single_cut
        cuts += one.single_cut != ""
        # each player was asked for the seat this seating gives it
        assert all(0 in one.seating[d.seat] for d in ann.decisions)
    assert cuts > 0  # the seed shows a cut after a game the allies won
