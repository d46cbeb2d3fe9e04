"""Sampling worlds consistent with one seat's knowledge (issue 7, docs/rules.md §7: a seat sees its own
hand and the public information only): every sampled state shows the seat exactly what the real game
shows it, offers the same legal actions, and depends on nothing the seat cannot see."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from arena.game import Action, GameState, Observation, Verb, arrange_deck, observe, variant
from arena.game.sampling import SampleError, Tracker, deal_start, parse_event, sample_world


def choose(legal: list[Action], rng: random.Random) -> Action:
    """A random player that declares and exchanges often (so that cards get revealed)."""
    shows = [a for a in legal if a.verb in (Verb.DECLARE, Verb.EXCHANGE)]
    if shows and rng.random() < 0.8:
        return rng.choice(shows)
    return rng.choice(legal)


def decisions(
    name: str, seed: int, options: dict[str, str] | None = None
) -> Iterator[tuple[GameState, Observation]]:
    """Every decision of one game between two such players: the true state and the view of the
    seat to act."""
    state = GameState.new(variant(name, **(options or {})), seed=seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        yield state, observe(state, state.to_act)
        state.apply(choose(state.legal_actions(), rng))


def same_view(real: Observation, sampled: Observation) -> None:
    """The sampled view equals the real one; the sampled log holds the current deal only."""
    a, b = real.to_dict(), sampled.to_dict()
    a["log"] = a["log"][deal_start(real.log) :]
    diff = {k: (a[k], b[k]) for k in a if a[k] != b[k]}
    assert not diff


def check_game(
    name: str, seed: int, options: dict[str, str] | None = None, samples: int = 2
) -> int:
    v = variant(name, **(options or {}))
    trackers = [Tracker(v, 0), Tracker(v, 1)]
    rng = random.Random(1000 + seed)
    checked = 0
    for state, view in decisions(name, seed, options):
        seat = state.to_act
        tracker = trackers[seat]
        tracker.update(view)
        assert tracker.supported, tracker.reason
        for _ in range(samples):
            world = tracker.sample(rng, check=True)
            same_view(view, observe(world, seat))
            assert world.legal_actions() == state.legal_actions()
            assert world.stock_size == state.stock_size
            checked += 1
    return checked


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_two_handed_samples_show_the_seat_what_the_game_shows(seed: int) -> None:
    """002 / docs/rules.md §7: at every decision of a two-handed game, each sampled world gives the seat the
    same observation (hand, table, trick, scores, stock, log) and the same legal actions."""
    assert check_game("two-handed", seed) > 200


def test_two_handed_options_samples_are_consistent() -> None:
    """004 (Portland Club: one declaration per trick, cards held "to score") and trump-dependent
    bezique: sampled worlds stay consistent."""
    options = {"declarations_per_trick": "one", "bezique_cards": "trump-dependent"}
    assert check_game("two-handed", 5, options, samples=1) > 100


def test_polish_samples_are_consistent() -> None:
    """000 (Polish: open cards, compound declarations, the seven exchanged from a trick)."""
    assert check_game("polish", 6, samples=1) > 100


def test_rubicon_samples_are_consistent() -> None:
    """000/004 (Rubicon: four packs, no turn-up, the last nine tricks)."""
    assert check_game("rubicon", 7, samples=1) > 100


def test_sample_depends_only_on_what_the_seat_sees() -> None:
    """docs/rules.md §7: two deals that give seat 0 the same cards and differ only in the opponent's hand
    and the stock give the same samples (the sampler sees views, never the state)."""
    v = variant("two-handed")
    mine = ["QS", "JD", "AH", "TH", "7C", "8C", "9D", "KS"]
    a = arrange_deck(v, dealer=1, hands=[mine, ["AS", "AS", "AD", "AD"]], turn_up="9H")
    b = arrange_deck(v, dealer=1, hands=[mine, ["KH", "QH", "KC", "QC"]], turn_up="9H")
    worlds = []
    for deck in (a, b):
        state = GameState.new(v, seed=0, dealer=1, decks=[deck])
        worlds.append(sample_world(v, 0, [observe(state, 0)], random.Random(9)))
    assert worlds[0].hands == worlds[1].hands
    assert worlds[0].stock == worlds[1].stock
    # and samples do vary: the opponent's hand is not fixed
    tracker = Tracker(v, 0)
    tracker.update(observe(GameState.new(v, seed=0, dealer=1, decks=[a]), 0))
    hands = {tuple(sorted(tracker.sample(random.Random(s)).hands[1])) for s in range(10)}
    assert len(hands) > 5


def test_sampled_opponent_holds_every_card_it_revealed_in_time() -> None:
    """A card the opponent declares was in its hand when it declared it: after seat 1 declares a
    bezique, every sample deals or draws it QS and JD before that declaration."""
    v = variant("two-handed")
    deck = arrange_deck(
        v, dealer=0, hands=[["7C"], ["QS", "JD", "AS", "AD", "AC", "AH", "TS", "TD"]], turn_up="8H"
    )
    state = GameState.new(v, seed=0, dealer=0, decks=[deck])
    tracker = Tracker(v, 0)
    # seat 1 leads; seat 0 follows with a low card, seat 1 wins and declares its bezique
    state.apply(Action.parse("play AS"))
    tracker.update(observe(state, 0))
    state.apply(state.legal_actions()[0])
    assert state.to_act == 1
    state.apply(Action.parse("declare bezique QS JD"))
    while state.to_act != 0:
        state.apply(state.legal_actions()[-1])
    tracker.update(observe(state, 0))
    for s in range(20):
        world = tracker.sample(random.Random(s), check=True)
        kinds = [c & 31 for c in world.dealt[1]]
        assert 4 in kinds and 19 in kinds  # QS (kind 4) and JD (kind 19) were dealt to seat 1


def test_a_tracker_that_missed_the_start_of_the_deal_declines() -> None:
    """A tracker first fed in the middle of a deal cannot know the seat's draws: not supported."""
    v = variant("two-handed")
    state = GameState.new(v, seed=3)
    rng = random.Random(3)
    while state.tricks_done < 3 or state.to_act != 0:
        state.apply(choose(state.legal_actions(), rng))
    tracker = Tracker(v, 0)
    tracker.update(observe(state, 0))
    assert not tracker.supported
    assert "began" in tracker.reason
    with pytest.raises(SampleError):
        tracker.sample(rng)


def test_tracker_rejects_more_than_two_seats() -> None:
    """Sampling is for two-seat variants: three-handed and partners are refused."""
    with pytest.raises(SampleError):
        Tracker(variant("three-handed"), 0)
    with pytest.raises(SampleError):
        Tracker(variant("four-handed-partners"), 0)


def test_parse_event_reads_every_replayed_log_form() -> None:
    """The log's texts (events.event_text) that replay needs are parsed back to cards."""
    assert parse_event("seat 1 plays QS.2") is not None
    e = parse_event("seat 0 declares bezique QS.1 JD.1 for 40")
    assert e is not None and len(e.cards) == 2
    e = parse_event("seat 1 exchanges 7H.1 for the turn-up KH.1")
    assert e is not None and e.cards == (0 * 32 + 8, 0 * 32 + 13)
    assert parse_event("seat 0 scores 10 for last-trick") is None
    e = parse_event("seat 0 shows carte blanche: 7S 8S AH")
    assert e is not None and len(e.cards) == 3
