"""The referee writes each DecisionRequest straight to bytes (arena.wire.encode): those bytes must
parse to exactly the message built field by field with the protocol buffer library, at every decision
of whole games in every variant, and for the values that travel unusually (negative numbers, large
ids, options, a spectator's view)."""

from __future__ import annotations

import random

import pytest

from arena.game import Action, GameState, Observation, observe, variant
from arena.game.cards import ANY_COPY
from arena.game.variants import VARIANT_NAMES, variant_options
from arena.wire import encode, serde
from arena.wire.v1 import bot_pb2


def built(
    request_id: int,
    match_id: str,
    game: int,
    seat: int,
    obs: Observation,
    member: int,
    legal: tuple[Action, ...],
    budget_ms: int,
    bank_ms: int,
) -> bot_pb2.RefereeMessage:
    """The request as the protocol buffer library builds it (what the bytes must equal)."""
    message = bot_pb2.RefereeMessage()
    request = message.request
    request.request_id = request_id
    request.match_id = match_id
    request.game = game
    request.seat = seat
    serde.fill_observation(request.observation, obs, member)
    request.legal_actions.extend([serde.action_to_pb(a) for a in legal])
    request.clock.budget_ms = budget_ms
    request.clock.bank_ms = max(bank_ms, 0)
    request.events.extend(obs.log)
    return message


def check(*args: object) -> None:
    data = encode.request_bytes(*args)  # type: ignore[arg-type]
    expected = built(*args)  # type: ignore[arg-type]
    parsed = bot_pb2.RefereeMessage.FromString(data)
    assert parsed == expected
    assert parsed.WhichOneof("body") == "request"
    # Fields in number order and no default written: the library's own bytes.
    assert len(data) == expected.ByteSize()


def play_and_check(name: str, options: dict[str, str], seed: int) -> int:
    state = GameState.new(variant(name, **options), seed=seed)
    rng = random.Random(seed)
    seen: dict[tuple[int, int], int] = {}
    decisions = 0
    while not state.is_terminal():
        seat, member = state.to_act, state.deciding_member()
        legal = tuple(state.legal_actions())
        obs = observe(state, seat, log_from=seen.get((seat, member), 0))
        seen[seat, member] = len(state.log)
        bank = rng.choice([10_000, 0, -5, 123_456])
        check(decisions + 1, "m7-0123abcd", seed % 5, seat, obs, member, legal, 1000, bank)
        if decisions % 97 == 0:  # a spectator's view too (seat -1 on the wire)
            spectator = observe(state, None)
            assert bot_pb2.RefereeMessage.FromString(
                encode.request_bytes(2**63 + 5, "m", 0, seat, spectator, 0, legal, 0, 0)
            ) == built(2**63 + 5, "m", 0, seat, spectator, 0, legal, 0, 0)
        state.apply(rng.choice(legal))
        decisions += 1
    return decisions


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_every_decision_of_a_game_encodes_as_built(name: str) -> None:
    assert play_and_check(name, {}, seed=11) > 50


@pytest.mark.parametrize("name", [n for n in VARIANT_NAMES if variant_options(n)])
def test_options_encode_as_built(name: str) -> None:
    options = {key: values[-1] for key, values in variant_options(name).items()}
    assert play_and_check(name, options, seed=3) > 50


def test_every_card_and_seat_number() -> None:
    """Cards of every pack in hands, tricks and tables; negative scores and a late game number."""
    state = GameState.new(variant("four-handed"), seed=5)
    obs = observe(state, 2)
    seats = tuple(
        si._replace(
            total=-17 * (si.seat + 1),
            deal_points=20_000,
            table=tuple((c, 1 + c % 7) for c in range(si.seat, ANY_COPY, 37)),
            open_cards=tuple(range(si.seat, ANY_COPY, 53)),
            to_score=("declare bezique QS.1 JD.2",),
            carte_blanche=si.seat == 1,
        )
        for si in obs.seats
    )
    odd = obs._replace(
        seats=seats,
        hand=tuple(range(0, ANY_COPY + 32, 9)),
        trick=((3, ANY_COPY - 1), (0, 0)),
        last_trick=((1, 100), (2, 5), (3, 64), (0, ANY_COPY - 3)),
        last_trick_winner=None,
        heap=(1, 2, ANY_COPY - 2),
        turn_up=None,
        trump=None,
        log=("é — a log entry in UTF-8", ""),
    )
    legal = tuple(state.legal_actions())
    check(1, "m1-ffff", 70_000, 3, odd, 1, legal, 2**31, 2**32 - 1)
