"""The searching bot (issues 7 and 20): always a legal action within the referee's budget; its worlds
are consistent with what its seat knows (reshuffled and enumerated worlds against the sampler's);
it searches the stock and solves the last tricks exactly on the views the SDK builds; it falls back
to the expert where sampling does not apply; it beats the random bot."""

from __future__ import annotations

import random

import pytest

from arena.game import Action, GameState, observe, variant
from arena.game.sampling import Tracker
from arena.wire.serde import observation_from_pb, observation_to_pb
from arena_bot import endgame, search_bot
from arena_bot.expert_bot import Expert, choose_in_state
from arena_bot.random_bot import RandomBot
from arena_bot.sdk import Bot, Clock
from arena_bot.search_bot import SearchBot, decision_seed, enumerate_worlds, reshuffled
from arena_bot.tracking import Knowledge

CLOCK = Clock(budget_ms=2_000, bank_ms=20_000)


def play(bots: list[Bot], seed: int, name: str = "two-handed") -> GameState:
    """One in-process game; each action is checked legal."""
    state = GameState.new(variant(name), seed=seed, dealer=0)
    while not state.is_terminal():
        seat = state.to_act
        legal = state.legal_actions()
        choice = bots[seat].decide(observe(state, seat), list(legal), CLOCK)
        action = choice if isinstance(choice, Action) else Action.parse(choice)
        assert action in legal
        state.apply(action)
    return state


def tracked_position(name: str, seed: int, tricks: int) -> tuple[GameState, Tracker]:
    """A position of a game between two experts after ``tricks`` tricks, seat 0 to play, and the
    tracker that followed seat 0 through it."""
    v = variant(name)
    state = GameState.new(v, seed=seed, dealer=0)
    tracker = Tracker(v, 0)
    expert = Expert()
    while not (state.tricks_done >= tricks and state.to_act == 0 and state.phase == 1):
        if state.to_act == 0:
            tracker.update(observe(state, 0))
        state.apply(choose_in_state(expert, state))
    tracker.update(observe(state, 0))
    return state, tracker


def other_hand_counts(world: GameState) -> list[int]:
    counts = [0] * 32
    for c in world.hands[1]:
        counts[c & 31] += 1
    return counts


@pytest.mark.parametrize("name", ["two-handed", "polish", "rubicon"])
def test_reshuffled_worlds_are_the_samplers_worlds(name: str) -> None:
    """A world reshuffled from one replayed sample keeps everything the seat knows (its hand, the
    public cards, the legal actions) and deals the unseen cards afresh: the other hand's expected
    content matches the sampler's within sampling error."""
    state, tracker = tracked_position(name, seed=9, tricks=10)
    rng = random.Random(1)
    template = tracker.sample(rng)
    n = 600
    a = [0.0] * 32
    b = [0.0] * 32
    for _ in range(n):
        world = reshuffled(template, 0, rng)
        assert sorted(world.hands[0]) == sorted(state.hands[0])
        assert world.legal_actions() == state.legal_actions()
        assert [c for c in world.hands[1] if c < 128] == [c for c in state.hands[1] if c < 128]
        assert len(world.stock) - world.stock_pos == len(state.stock) - state.stock_pos
        for k, count in enumerate(other_hand_counts(world)):
            a[k] += count / n
        for k, count in enumerate(other_hand_counts(tracker.sample(rng))):
            b[k] += count / n
    assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 0.15


def test_the_last_stock_trick_enumerates_every_world() -> None:
    """With one face-down card left, each distinct kind it may be is one world, weighted by its
    copies among the unseen; the other hand holds the rest."""
    state, tracker = tracked_position("two-handed", seed=4, tricks=23)
    assert state.stock_size == 2  # one face-down card and the turn-up
    template = tracker.sample(random.Random(2))
    worlds = enumerate_worlds(template, 0, 40)
    assert worlds is not None
    unseen = sorted(
        [c & 31 for c in state.hands[1] if c >= 128] + list(state.stock[state.stock_pos :])
    )
    assert sum(w for w, _ in worlds) == len(unseen)
    assert len({world.stock[-1] for _, world in worlds}) == len(worlds)
    for weight, world in worlds:
        assert weight == unseen.count(world.stock[-1])
        rest = sorted([c & 31 for c in world.hands[1] if c >= 128] + [world.stock[-1]])
        assert rest == unseen
        assert world.legal_actions() == state.legal_actions()
    assert enumerate_worlds(tracker.sample(random.Random(2)), 0, 3) is None  # too many


def test_the_decision_seed_comes_from_the_game() -> None:
    """The same game seed and view give the same seed; another game seed or another position of
    the game gives another."""
    state = GameState.new(variant("two-handed"), seed=3)
    view = observe(state, state.to_act)
    base = decision_seed(7, view)
    assert base == decision_seed(7, view)
    assert decision_seed(8, view) != base
    state.apply(state.legal_actions()[0])
    assert decision_seed(7, observe(state, 0)) != base


def test_searches_on_the_views_the_sdk_builds() -> None:
    """Through the wire (observation_to_pb, then the SDK's observation_from_pb with the accumulated
    log) the bot follows a whole game: it searches the last stock tricks of every deal (several
    worlds each), solves the last eight exactly, and plays the expert's choice elsewhere."""
    v = variant("two-handed")
    state = GameState.new(v, seed=12, dealer=1)
    bot = SearchBot(ms=5_000, seed=1, max_worlds=3)  # the same search on any machine
    bots: list[Bot] = [bot, RandomBot(3)]
    sent = [0, 0]
    logs: list[list[str]] = [[], []]
    while not state.is_terminal():
        seat = state.to_act
        obs = observe(state, seat, log_from=sent[seat])
        sent[seat] = len(state.log)
        logs[seat].extend(obs.log)
        view = observation_from_pb(observation_to_pb(obs), tuple(logs[seat]))
        legal = list(state.legal_actions())
        action = bots[seat].decide(view, legal, CLOCK)
        assert action in legal
        state.apply(Action.parse(action) if isinstance(action, str) else action)
    deals = len(state.deals)
    assert bot.modes["search"] >= 2 * deals and bot.modes["endgame"] >= 3 * deals
    assert bot.worlds["search"] >= 2 * bot.modes["search"]
    assert bot.modes["expert"] > bot.modes["search"]  # the long stock is the expert's


class FakeTime:
    """A clock that advances one millisecond each time it is read: the search's deadlines are then
    checked the same way on any machine, however loaded."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def perf_counter(self) -> float:
        self.now += 0.001
        return self.now


def test_honours_the_referees_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a referee budget below its own setting the bot stops each decision, its searches and
    their exact endgames included, by the referee's budget less the margin (on a clock that ticks a
    millisecond per reading, so no test depends on the machine's speed)."""
    fake = FakeTime()
    monkeypatch.setattr(search_bot, "time", fake)
    monkeypatch.setattr(endgame, "time", fake)
    state = GameState.new(variant("two-handed"), seed=5, dealer=0)
    bot = SearchBot(ms=5_000, seed=1)
    rng = random.Random(5)
    clock = Clock(budget_ms=150, bank_ms=0)
    while not state.deals:
        legal = state.legal_actions()
        if state.to_act == 0:
            start = fake.now
            action = bot.decide(observe(state, 0), list(legal), clock)
            assert fake.now - start <= (150 - 60 + 10) / 1000, bot.last_mode
        else:
            action = rng.choice(legal)
        state.apply(action)
    assert bot.modes["search"] > 0
    assert bot.worlds["search"] > 0


def test_plays_every_variant() -> None:
    """Polish and Rubicon are searched at the end of the stock (Polish through its last tricks too);
    with three seats it plays as the expert; always legal."""
    for name in ("polish", "rubicon"):
        bot = SearchBot(ms=5_000, seed=1, max_worlds=2)
        state = GameState.new(variant(name), seed=2, dealer=0)
        while not state.is_terminal() and not state.deals:
            legal = state.legal_actions()
            action = (
                bot.decide(observe(state, 0), list(legal), CLOCK) if state.to_act == 0 else legal[0]
            )
            assert action in legal
            state.apply(action)
        assert bot.modes["search"] > 0, name
    state = GameState.new(variant("three-handed"), seed=2)
    bots = [SearchBot(ms=5), RandomBot(1), RandomBot(2)]
    for _ in range(60):
        legal = state.legal_actions()
        action = bots[state.to_act].decide(observe(state, state.to_act), list(legal), CLOCK)
        assert action in legal
        state.apply(action)
    assert bots[0].modes["search"] == 0 and bots[0].modes["expert"] > 0


def test_the_time_saved_is_spent_on_the_last_stock_tricks() -> None:
    """A quick decision (a forced play) saves the rest of its --ms; the searched decisions (the last
    tricks of the stock) may spend what was saved, up to three times --ms more; other decisions get
    --ms; none gets more than the referee's budget less the margin."""
    bot = SearchBot(ms=200, seed=1)
    state, _ = tracked_position("two-handed", seed=3, tricks=2)
    while len(state.legal_actions()) > 1 or state.to_act != 0:
        state.apply(state.legal_actions()[0])
    bot.decide(observe(state, 0), list(state.legal_actions()), CLOCK)  # a forced play
    assert bot.last_mode == "forced" and 0 < bot._saved_ms <= 200
    bot._saved_ms = 1_500.0
    mid, _ = tracked_position("two-handed", seed=3, tricks=5)
    late, _ = tracked_position("two-handed", seed=3, tricks=22)
    kn_mid = Knowledge.from_view(observe(mid, 0))
    kn_late = Knowledge.from_view(observe(late, 0))
    assert bot.budget_ms(kn_mid, CLOCK) == 200
    assert bot.budget_ms(kn_late, CLOCK) == 200 + 3 * 200
    assert bot.budget_ms(kn_late, Clock(budget_ms=500, bank_ms=0)) == 500 - 60
    bot._saved_ms = 100.0
    assert bot.budget_ms(kn_late, CLOCK) == 300


@pytest.mark.slow
def test_beats_random() -> None:
    """A short duplicate match: the searching bot (four worlds a decision) against the random bot,
    each deal played from both seats; it wins clearly."""
    wins = 0
    margin = 0
    for seed in (31, 32):
        for seat in (0, 1):
            bots: list[Bot] = [RandomBot(seed), RandomBot(seed)]
            bots[seat] = SearchBot(ms=5_000, seed=seed, max_worlds=4)
            scores = play(bots, seed).result().scores
            wins += scores[seat] > scores[1 - seat]
            margin += scores[seat] - scores[1 - seat]
    assert wins >= 3
    assert margin > 0
