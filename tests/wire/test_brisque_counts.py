"""Issue 48: Rubicon's brisque counts travel in SeatView.brisques, an optional field: absent until the
brisques may be counted (docs/rules.md §6.3), then present even when a count is 0."""

from __future__ import annotations

import random

from arena.game import GameState, observe, variant
from arena.wire import encode, serde
from arena.wire.v1 import game_pb2


def _late_rubicon() -> GameState:
    """A Rubicon game played at random until the stock holds twelve cards."""
    rng = random.Random(8)
    s = GameState.new(variant("rubicon"), seed=8)
    while s.stock_size > 12:
        s.apply(rng.choice(s.legal_actions()))
    return s


def test_the_count_is_absent_before_and_present_after() -> None:
    s = GameState.new(variant("rubicon"), seed=8)
    pb = serde.observation_to_pb(observe(s, 0))
    assert not any(v.HasField("brisques") for v in pb.seats)
    s = _late_rubicon()
    obs = observe(s, 1)
    pb = serde.observation_to_pb(obs)
    assert [v.brisques for v in pb.seats] == s.brisques()
    assert all(v.HasField("brisques") for v in pb.seats)
    back = serde.observation_from_pb(pb, obs.log)
    assert back == obs


def test_a_count_of_zero_is_present_on_the_wire() -> None:
    s = _late_rubicon()
    obs = observe(s, 0)
    zero = obs._replace(seats=tuple(si._replace(brisques=0) for si in obs.seats))
    data = encode.observation_bytes(zero)
    parsed = game_pb2.Observation.FromString(data)
    assert all(v.HasField("brisques") and v.brisques == 0 for v in parsed.seats)
    assert serde.observation_from_pb(parsed, zero.log) == zero
    hidden = obs._replace(seats=tuple(si._replace(brisques=None) for si in obs.seats))
    parsed = game_pb2.Observation.FromString(encode.observation_bytes(hidden))
    assert not any(v.HasField("brisques") for v in parsed.seats)
