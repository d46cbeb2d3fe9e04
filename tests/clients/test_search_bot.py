"""The searching bot (issue 7): always a legal action, within its time per decision, an exact endgame
that agrees with brute force and with the engine's rules of the last eight tricks (002), and it beats
the random bot."""

from __future__ import annotations

import random
import time

import pytest

from arena.game import Action, GameState, Verb, observe, variant
from arena.game.cards import parse_kind
from arena.wire.serde import observation_from_pb, observation_to_pb
from arena_bot.random_bot import RandomBot
from arena_bot.sdk import Bot, Clock
from arena_bot.search_bot import EndgameSolver, SearchBot, brute_force, heuristic_play, rollout

CLOCK = Clock(budget_ms=2_000, bank_ms=20_000)


def hand(*cards: str) -> tuple[int, ...]:
    return tuple(sorted(parse_kind(c) for c in cards))


def test_endgame_solver_agrees_with_brute_force() -> None:
    """002 (last eight tricks: follow suit and win if able, else trump): the memoized solver's value
    equals a plain minimax on random positions of one to four cards a hand."""
    rng = random.Random(7)
    deck = [k for k in range(32) for _ in range(2)]
    checked = 0
    for size in (1, 2, 3, 4):
        for _ in range(25):
            rng.shuffle(deck)
            a = tuple(sorted(deck[:size]))
            b = tuple(sorted(deck[size : 2 * size]))
            trump = rng.randrange(4)
            solver = EndgameSolver(trump, 10)
            assert solver.value(a, b) == brute_force(trump, 10, a, b)
            checked += 1
    assert checked == 100


def test_endgame_solver_small_known_position() -> None:
    """002: the last trick scores 10, aces and tens 10 each. Hearts trumps; the leader holds AH and
    7S, the follower TS and 8C. Leading AH, the follower throws 8C (10 to the leader), then wins 7S
    with TS (10) and the last trick (10): -10. Leading 7S, the follower must win it with TS (10),
    leads 8C, and AH must trump it (10 + 10 for the last trick): +10, the better line."""
    solver = EndgameSolver(1, 10)  # hearts
    leader, follower = hand("AH", "7S"), hand("TS", "8C")
    assert solver.after_lead(leader, follower, parse_kind("AH")) == -10
    assert solver.after_lead(leader, follower, parse_kind("7S")) == 10
    assert solver.value(leader, follower) == 10


def test_endgame_follows_match_the_engine() -> None:
    """002: in the last eight tricks the solver's answers to a card led are exactly the engine's
    legal plays, over whole random games."""
    rng = random.Random(3)
    compared = 0
    for seed in range(6):
        state = GameState.new(variant("two-handed"), seed=seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            if not state.in_stock_phase and state.phase == 1 and state.trick:
                solver = EndgameSolver(state.trump, 10)
                mine = tuple(c & 31 for c in state.hands[state.to_act])
                kinds = solver.follows(mine, state.trick[0] & 31)
                assert kinds == sorted(a.refs[0] & 31 for a in legal)
                compared += 1
            state.apply(rng.choice(legal))
    assert compared > 30


def test_rollout_plays_to_the_end_of_the_deal() -> None:
    """A rollout ends the deal: its value is the margin of the deal's points, which add up."""
    v = variant("two-handed")
    state = GameState.new(v, seed=4)
    value = rollout(state, 0, v.scores, random.Random(1))
    assert len(state.deals) == 1
    points = state.deals[0].points
    assert value == points[0] - points[1]


def play(bots: list[Bot], seed: int, timed: int = 0) -> tuple[GameState, list[float]]:
    """One in-process two-handed game; each action is checked legal; returns the state and the times
    of seat ``timed``'s decisions."""
    state = GameState.new(variant("two-handed"), seed=seed, dealer=0)
    times: list[float] = []
    while not state.is_terminal():
        seat = state.to_act
        legal = state.legal_actions()
        start = time.perf_counter()
        choice = bots[seat].decide(observe(state, seat), list(legal), CLOCK)
        if seat == timed:
            times.append(time.perf_counter() - start)
        action = choice if isinstance(choice, Action) else Action.parse(choice)
        assert action in legal
        state.apply(action)
    return state, times


def test_search_bot_is_legal_and_within_its_time() -> None:
    """Every answer is legal and the time per decision stays near its budget (5x tolerance for a
    loaded machine; a decision's search stops at its deadline)."""
    bot = SearchBot(ms=80, seed=1)
    state, times = play([bot, RandomBot(2)], seed=11)
    assert state.is_terminal()
    assert len(times) > 50
    assert max(times) < 5 * 0.080
    assert bot.modes["search"] > 30


def test_search_bot_searches_on_the_views_the_sdk_builds() -> None:
    """Through the wire (observation_to_pb, then the SDK's observation_from_pb with the accumulated
    log) the tracker follows the game: every decision with a choice is searched or solved, none falls
    back to greedy play."""
    v = variant("two-handed")
    state = GameState.new(v, seed=12, dealer=1)
    bots: list[Bot] = [SearchBot(ms=10, seed=1), RandomBot(3)]
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
    bot = bots[0]
    assert isinstance(bot, SearchBot)
    assert bot.modes["search"] > 30 and bot.modes["endgame"] > 3
    assert bot.modes["greedy"] == 0


def test_search_bot_honours_the_referees_budget() -> None:
    """With a referee budget below its own setting the bot answers within the referee's budget."""
    v = variant("two-handed")
    state = GameState.new(v, seed=5, dealer=0)
    bot = SearchBot(ms=5_000, seed=1)
    rng = random.Random(5)
    asked = 0
    while asked < 6:
        legal = state.legal_actions()
        if state.to_act == 0 and len(legal) > 1:
            start = time.perf_counter()
            action = bot.decide(observe(state, 0), list(legal), Clock(budget_ms=150, bank_ms=0))
            assert time.perf_counter() - start < 5 * 0.150
            assert bot.last_mode == "search" and bot.last_worlds >= 1
            asked += 1
        else:
            action = rng.choice(legal)
            if state.to_act == 0:
                bot.decide(observe(state, 0), list(legal), CLOCK)
        state.apply(action)


def test_search_bot_plays_every_variant() -> None:
    """Polish and Rubicon are searched too; three-handed falls back to greedy play, always legal."""
    for name in ("polish", "rubicon"):
        state = GameState.new(variant(name), seed=2, dealer=0)
        bot = SearchBot(ms=40, seed=1)  # enough to search at all on a loaded machine
        modes = set()
        for _ in range(120):
            if state.is_terminal():
                break
            legal = state.legal_actions()
            if state.to_act == 0:
                action = bot.decide(observe(state, 0), list(legal), CLOCK)
                modes.add(bot.last_mode)
            else:
                action = legal[0]
            assert action in legal
            state.apply(action)
        assert "search" in modes
    state = GameState.new(variant("three-handed"), seed=2)
    bots = [SearchBot(ms=5), RandomBot(1), RandomBot(2)]
    for _ in range(60):
        legal = state.legal_actions()
        action = bots[state.to_act].decide(observe(state, state.to_act), list(legal), CLOCK)
        assert action in legal
        state.apply(action)
    assert bots[0].last_mode in ("greedy", "forced")


def test_search_bot_declares_when_it_must_choose() -> None:
    """In a declaring turn the bot chooses among the declarations and done, never an unlisted act."""
    bot = SearchBot(ms=20, seed=3)
    state, _ = play([bot, RandomBot(4)], seed=21)
    declared = [
        e
        for d in state.deals
        for e in d.items
        if e.seat == 0 and e.reason not in ("brisques", "last-trick", "seven-turn-up")
    ]
    assert declared  # it scored declarations during the game


@pytest.mark.slow
def test_search_bot_beats_random() -> None:
    """A short duplicate match: the searching bot (20 ms a decision) against the random bot, each
    deal played from both seats; it wins clearly."""
    wins = 0
    margin = 0
    for seed in (31, 32):
        for seat in (0, 1):
            bots: list[Bot] = [RandomBot(seed), RandomBot(seed)]
            bots[seat] = SearchBot(ms=20, seed=seed)
            state, _ = play(bots, seed, timed=seat)
            scores = state.result().scores
            wins += scores[seat] > scores[1 - seat]
            margin += scores[seat] - scores[1 - seat]
    assert wins >= 3
    assert margin > 0


def test_verbs_of_the_heuristic_are_plays() -> None:
    """The rollout's card choice is one of the legal plays (stock and last tricks)."""
    rng = random.Random(8)
    state = GameState.new(variant("two-handed"), seed=8)
    checked = 0
    while not state.is_terminal():
        legal = state.legal_actions()
        if state.phase == 1:
            a = heuristic_play(state, legal)
            assert a in legal and a.verb is Verb.PLAY
            checked += 1
        state.apply(rng.choice(legal))
    assert checked > 60
