"""The Python SDK's example bots: every bot answers a legal action in every variant, the greedy bot
beats the random bot clearly and plays by its stated policy, and the SDK's ``run`` plays a whole match
against a real server."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence

import pytest

from arena.game import (
    VARIANT_NAMES,
    Action,
    Combo,
    GameState,
    Observation,
    Verb,
    observe,
    variant,
)
from arena.game.cards import SUIT_CHARS, TEN, parse_card
from arena.referee import MatchConfig, TimeControl
from arena.service.match_manager import PlayerSpec
from arena.service.server import create_server
from arena_bot import EXIT_USAGE, Bot, Clock, run
from arena_bot.first_bot import FirstBot
from arena_bot.greedy_bot import GreedyBot, _unseen_counts
from arena_bot.random_bot import RandomBot

CLOCK = Clock(budget_ms=1_000, bank_ms=10_000)
OPTIONS: list[tuple[str, dict[str, str]]] = [(name, {}) for name in VARIANT_NAMES] + [
    ("two-handed", {"declarations_per_trick": "one", "bezique_cards": "trump-dependent"}),
    ("two-handed", {"game_end": "immediate"}),
    ("polish", {"game_end": "immediate"}),
]


def play_game(
    name: str, options: dict[str, str], seed: int, bots: list[Bot]
) -> Iterator[tuple[GameState, Observation, list[Action], Action]]:
    """Play one game in-process, ``bots[seat]`` deciding for each seat; yields every decision (the
    state before the action, the seat's view, the legal actions and the chosen action)."""
    state = GameState.new(variant(name, **options), seed=seed)
    while not state.is_terminal():
        seat = state.to_act
        legal = state.legal_actions()
        view = observe(state, seat)
        choice = bots[seat].decide(view, list(legal), CLOCK)
        action = choice if isinstance(choice, Action) else Action.parse(choice)
        yield state, view, legal, action
        state.apply(action)


def greedy_wins(games: int, first_seed: int) -> int:
    """Two-handed games of greedy against random, seats alternating; greedy's outright wins."""
    wins = 0
    for i in range(games):
        seat = i % 2
        bots: list[Bot] = [RandomBot(seed=i), RandomBot(seed=i)]
        bots[seat] = GreedyBot()
        states = [s for s, *_ in play_game("two-handed", {}, first_seed + i, bots)]
        final = states[-1]  # the game's one state object, played to the end
        assert final.is_terminal()
        ranking = final.result().ranking
        wins += ranking[seat] == 0 and ranking.count(0) == 1
    return wins


def test_greedy_beats_random_clearly() -> None:
    """Greedy wins at least 75% of 40 two-handed games against random, seats alternating (it wins
    about every game; the threshold leaves room)."""
    wins = greedy_wins(40, first_seed=1000)
    assert wins >= 30, f"greedy won {wins} of 40"


@pytest.mark.parametrize(
    ("name", "options"), OPTIONS, ids=[f"{n}{'-opt' * len(o)}" for n, o in OPTIONS]
)
def test_every_bot_always_answers_a_legal_action(name: str, options: dict[str, str]) -> None:
    """Random, first and greedy bots, mixed at the seats, answer one of the legal actions at every
    decision of seeded games of every variant; greedy never needs its fallback to do so."""
    v = variant(name, **options)
    line_ups: list[list[Bot]] = [
        [GreedyBot() for _ in range(v.seats)],
        [[GreedyBot(), RandomBot(seed=5), FirstBot()][s % 3] for s in range(v.seats)],
    ]
    for seed, bots in enumerate(line_ups, start=1):
        decisions = 0
        for _, view, legal, action in play_game(name, options, seed, bots):
            assert action in legal
            greedy = bots[view.seat or 0]
            if isinstance(greedy, GreedyBot):
                assert greedy._choose(view, legal) in legal, (view, legal)
            decisions += 1
        assert decisions > 50


def test_greedy_declares_the_best_and_exchanges_the_seven() -> None:
    """At every declaring turn the greedy bot takes the highest-scoring declaration when one beats
    the seven of trumps, else exchanges the seven when it may, and is never done while something
    scores."""
    seen = {"declare": 0, "exchange": 0}
    for seed in range(6):
        bots: list[Bot] = [GreedyBot(), GreedyBot()]
        scores = variant("two-handed").scores
        for _, _, legal, action in play_game("two-handed", {}, seed, bots):
            declarations = [a for a in legal if a.verb is Verb.DECLARE]
            exchanges = [a for a in legal if a.verb is Verb.EXCHANGE]
            if not declarations and not exchanges:
                continue
            best = max((scores[Combo(a.combo)] for a in declarations), default=0)
            if best > scores[Combo.SEVEN_OF_TRUMPS]:
                assert action.verb is Verb.DECLARE and scores[Combo(action.combo)] == best
                seen["declare"] += 1
            elif exchanges:
                assert action.verb is Verb.EXCHANGE
                seen["exchange"] += 1
            else:
                assert action.verb is Verb.DECLARE
    assert seen["declare"] > 20 and seen["exchange"] > 0


def test_greedy_keeps_its_brisques_and_wins_the_last_tricks_when_it_can() -> None:
    """Stock phase: greedy leads no ace or ten while it holds a plain card below ten; last eight
    tricks: as follower, it wins the trick whenever a legal card would."""
    checked = {"lead": 0, "follow": 0}
    for seed in range(6):
        bots: list[Bot] = [GreedyBot(), RandomBot(seed)]
        for _, view, legal, action in play_game("two-handed", {}, seed, bots):
            if view.seat != 0 or action.verb is not Verb.PLAY:
                continue
            trump = SUIT_CHARS.index(view.trump) if view.trump else -1
            card = action.refs[0]
            if view.stock_size > 0 and not view.trick:
                low_plain = [
                    a for a in legal if a.refs[0] & 7 < TEN and (a.refs[0] >> 3) & 3 != trump
                ]
                if low_plain:
                    assert card & 7 < TEN, (view.hand, action)
                    checked["lead"] += 1
            if view.stock_size == 0 and view.trick:
                led = view.trick[0][1]
                if any(_beats(a.refs[0], led, trump) for a in legal):
                    assert _beats(card, led, trump), (view.trick, action, legal)
                    checked["follow"] += 1
    assert checked["lead"] > 50 and checked["follow"] > 10


def _beats(card: int, led: int, trump: int) -> bool:
    if (card >> 3) & 3 == (led >> 3) & 3:
        return card & 7 > led & 7
    return (card >> 3) & 3 == trump


def test_the_greedy_bot_has_a_command_line() -> None:
    run_ = subprocess.run(
        [sys.executable, "-m", "arena_bot.greedy_bot", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run_.returncode == 0 and "greedy" in run_.stdout


def test_the_random_bot_refuses_a_bot_seed_that_is_no_integer() -> None:
    """A BOT_SEED that is not an integer is a usage error by the SDK's rule: one line naming the bot,
    status 2 (it used to exit 1, the status of a bot whose own code failed, without its name)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "BOT_"))}
    env.update(BOT_SEED="abc", ARENA_ADDRESS="127.0.0.1:1", ARENA_TOKEN="t")
    run_ = subprocess.run(
        [sys.executable, "-m", "arena_bot.random_bot"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert run_.returncode == EXIT_USAGE, run_
    assert run_.stderr == "random: BOT_SEED must be an integer, got 'abc'\n"


@pytest.mark.slow
def test_sdk_run_plays_a_whole_match_against_a_real_server() -> None:
    """The SDK's run() dials a real referee with a seat's token and plays random against greedy, one
    game, to a normal end."""

    async def go() -> tuple[str, object]:
        server, port, manager = await create_server("127.0.0.1:0")
        try:
            entry = manager.create(
                MatchConfig(seed=41, time_control=TimeControl(5_000, 20_000, 1_000)),
                [[PlayerSpec("random")], [PlayerSpec("greedy")]],
                30.0,
            )
            await manager.start(entry)
            address = f"127.0.0.1:{port}"
            (t0,), (t1,) = ([p.token for p in seat] for seat in entry.players)
            await asyncio.wait_for(
                asyncio.gather(
                    asyncio.to_thread(run, RandomBot(seed=3), address, t0),
                    asyncio.to_thread(run, GreedyBot(), address, t1),
                ),
                timeout=90,
            )
            await asyncio.wait_for(entry.done.wait(), timeout=30)
            assert entry.record is not None, entry.error
            return entry.record.games[0].outcome, entry.record.games[0].result
        finally:
            await manager.close()
            await server.stop(None)

    outcome, result = asyncio.run(go())
    assert outcome == "normal"
    assert isinstance(result, dict) and sorted(result["ranking"]) in ([0, 1], [0, 0])


def test_greedy_counts_only_the_current_deals_plays_as_seen() -> None:
    """The greedy bot's unseen copies: the packs less its hand and the cards played in this deal (the
    log's entries from its last "deal" line), never those of an earlier deal."""
    state = GameState.new(variant("two-handed"), seed=4)
    while not state.is_terminal() and state.deal_index < 1:
        state.apply(state.legal_actions()[0])
    for _ in range(9):  # into the second deal: plays of it and of the first in the log
        state.apply(state.legal_actions()[0])
    view = observe(state, state.to_act)
    bot = GreedyBot()
    got = _unseen_counts(view, bot._context(view))
    deal_start = max(i for i, text in enumerate(view.log) if text.startswith("deal "))
    assert deal_start > 0 and any(" plays " in t for t in view.log[:deal_start])
    expected = [state.variant.packs] * 32
    for ref in view.hand:
        expected[ref & 31] -= 1

    def less_plays(texts: Sequence[str]) -> list[int]:
        for text in texts:
            words = text.split()
            if len(words) == 4 and words[2] == "plays":
                expected[parse_card(words[3]) & 31] -= 1
        return [max(0, n) for n in expected]

    assert got == less_plays(view.log[deal_start:])
    # Counting the first deal's plays too would give other figures: the test tells the two apart.
    assert got != less_plays(view.log[:deal_start])
