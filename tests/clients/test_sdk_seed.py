"""The per-game seed the SDKs hand a bot (issue 14 item 6): a pure function of what the bot is told
about the game. The same deal gives the same seed, in Python and JavaScript alike, and a random bot
process that has played other games plays a deal exactly as a fresh process does."""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sdk_helpers import JS_SDK, TC, WAIT, javascript_against_first, node_executable

from arena.game import GameState, observe, variant
from arena.referee import MatchConfig
from arena.referee.record import MatchRecord
from arena.service.match_manager import MatchEntry, PlayerSpec
from arena.service.server import create_server
from arena.wire.serde import observation_to_pb
from arena_bot import sdk
from arena_bot.engine import view_seed
from arena_bot.random_bot import RandomBot
from arena_bot.sdk import GameStart, game_seed, game_seed_text


def _first_views(name: str, seed: int, **options: str) -> dict[int, Any]:
    """Each seat's first observation of a game dealt from ``seed``, the seats playing first-legal."""
    state = GameState.new(variant(name, **options), seed=seed)
    views: dict[int, Any] = {}
    while not state.is_terminal() and len(views) < state.variant.seats:
        views.setdefault(state.to_act, observe(state, state.to_act))
        state.apply(state.legal_actions()[0])
    return views


def test_the_game_seed_is_pinned() -> None:
    """The documented function: SHA-256 of the documented text, first 8 bytes big-endian. A change
    here changes every bot's play: bump the text's version instead."""
    args = ("two-handed", 0, 0, 1, "AD.1", ["QS", "7C", "TS.1", "QS"])
    assert game_seed_text(*args) == "arena-game-seed/1|two-handed|0|0|1|AD|7C QS QS TS"
    assert game_seed(*args) == 713393136448822412
    assert game_seed("rubicon", 1, 3, 0, "", ["AS"]) == game_seed("rubicon", 1, 3, 0, "", ["AS.2"])


@pytest.mark.parametrize("name", ["two-handed", "rubicon", "polish", "three-handed", "four-handed"])
def test_the_same_deal_gives_the_same_seed(name: str) -> None:
    """Same deal, seat and game number: the same seed, however the observation came; another deal,
    seat or game number: another seed."""
    a, b, other = _first_views(name, 11), _first_views(name, 11), _first_views(name, 12)
    seeds = {view_seed(a[s], 0) for s in a}
    assert len(seeds) == len(a), "two seats of one deal share a seed"
    for seat in a:
        assert view_seed(a[seat], 0) == view_seed(b[seat], 0)
        assert view_seed(a[seat], 0) != view_seed(other[seat], 0)
        assert view_seed(a[seat], 0) != view_seed(a[seat], 1)
        # What the SDK computes from the wire is the same number.
        pb = observation_to_pb(a[seat])
        wire = game_seed(pb.variant, seat, 0, pb.dealer, pb.turn_up, pb.hand)
        assert wire == view_seed(a[seat], 0)


def test_javascript_computes_the_same_seed_as_python() -> None:
    node = node_executable()
    cases = []
    for name in ("two-handed", "rubicon", "four-handed-consultation"):
        for seat, view in _first_views(name, 3).items():
            pb = observation_to_pb(view)
            cases.append(
                {
                    "variant": pb.variant,
                    "seat": seat,
                    "game": seat + 1,
                    "dealer": pb.dealer,
                    "turnUp": pb.turn_up,
                    "hand": list(pb.hand),
                }
            )
    script = (
        f"const sdk = require({json.dumps(str(JS_SDK))});"
        "const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(cases.map((c) => sdk.gameSeed(c).toString())));"
    )
    done = subprocess.run(
        [node, "-e", script],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=True,
    )
    js = [int(s) for s in json.loads(done.stdout)]
    py = [
        game_seed(c["variant"], c["seat"], c["game"], c["dealer"], c["turnUp"], c["hand"])
        for c in cases
    ]
    assert js == py and len(set(py)) == len(py)


# A JavaScript bot that seeds a generator of its own in onGameStart and does not call super (as the
# SDK's README allows): each turn prints the seed it was given at the start and the turn's gameSeed.
JS_OWN_SEED = """\
'use strict';
const { Bot, main } = require(SDK_PATH);

class OwnSeed extends Bot {
  constructor() {
    super('js-own-seed', '1');
  }

  onGameStart(start) {
    this.started = start.seed;
  }

  decide(turn) {
    process.stdout.write(`${this.started} ${turn.gameSeed}\\n`);
    return turn.legal[0].text;
  }
}

main(new OwnSeed());
"""


@pytest.mark.slow
def test_javascript_turns_carry_the_games_seed_whatever_on_game_start_does(
    tmp_path: Path,
) -> None:
    """``turn.gameSeed`` is the game's seed at every turn even when the bot overrides
    ``onGameStart`` without calling ``super`` (it used to be ``this.gameSeed``, then still 0)."""
    exited = javascript_against_first(tmp_path, "own_seed.js", JS_OWN_SEED, seed=4)
    assert exited.code == 0, exited
    turns = [line.split() for line in exited.stdout.splitlines()]
    assert turns, exited
    for started, given in turns:
        assert given == started != "0", exited.stdout


def test_a_random_bot_plays_a_deal_the_same_whatever_it_played_before() -> None:
    """Reseeded by ``on_game_start``, a random bot that has played other games chooses exactly as a
    fresh one on the same deal; played without the hook (in-process harnesses) it keeps its seed."""

    def choices(bot: RandomBot, seed: int, game: int, seat: int = 0) -> list[str]:
        state = GameState.new(variant("two-handed"), seed=seed)
        picked: list[str] = []
        started = False
        while not state.is_terminal():
            legal = state.legal_actions()
            action = legal[0]
            if state.to_act == seat:
                view = observe(state, seat)
                if not started:
                    bot.on_game_start(GameStart("m", game, seat, view_seed(view, game), view))
                    started = True
                action = bot.decide(view, list(legal), sdk.Clock(1000, 1000))
                picked.append(action.text)
            state.apply(action)
        return picked

    used = RandomBot(seed=0)
    choices(used, 1, 0)
    choices(used, 2, 1)
    fresh = RandomBot(seed=0)
    assert choices(used, 3, 0) == choices(fresh, 3, 0)
    assert used.game_seed == fresh.game_seed != 0
    # BOT_SEED (the salt) still changes the play.
    assert choices(RandomBot(seed=5), 3, 0) != choices(RandomBot(seed=0), 3, 0)


def _decisions(record: MatchRecord) -> list[list[tuple[int, str]]]:
    return [[(d.seat, d.action) for d in g.decisions] for g in record.games]


@pytest.mark.slow
def test_a_random_bot_process_reseeds_per_game_across_matches(tmp_path: Path) -> None:
    """issue 14: two random bot processes play a match of two games and then, on the same streams,
    a second match (matches_per_process = 2); fresh processes then play that second match alone.
    Both plays of the second match are move for move the same, and so is a repeat of the first."""
    command = f"{shlex.quote(sys.executable)} -m arena_bot.random_bot"
    specs = [[PlayerSpec("r0", command)], [PlayerSpec("r1", command)]]

    async def play_matches(seeds: Sequence[int], per_process: int) -> list[MatchEntry]:
        server, _, manager = await create_server(logs_dir=tmp_path / "logs")
        try:
            entries = []
            for seed in seeds:
                # Rubicon: one deal a game, enough to tell one play of a game from another.
                config = MatchConfig(variant="rubicon", seed=seed, games=2, time_control=TC)
                entry = manager.create(config, specs, WAIT, matches_per_process=per_process)
                await manager.start(entry)
                await asyncio.wait_for(entry.done.wait(), WAIT)
                entries.append(entry)
            return entries
        finally:
            await manager.close()
            await server.stop(None)

    first, second = asyncio.run(play_matches([21, 22], per_process=2))
    (alone,) = asyncio.run(play_matches([22], per_process=1))
    (again,) = asyncio.run(play_matches([21], per_process=1))
    for entry in (first, second, alone, again):
        assert entry.record is not None, entry.error
        assert [g.outcome for g in entry.record.games] == ["normal", "normal"]
    assert second.processes == [], "the second match did not reuse the processes"
    assert first.record is not None and second.record is not None
    assert alone.record is not None and again.record is not None
    assert _decisions(second.record) == _decisions(alone.record)
    assert _decisions(first.record) == _decisions(again.record)
    assert _decisions(first.record) != _decisions(second.record)
