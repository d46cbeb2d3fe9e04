"""Issue 48: the four-handed partners' ``inquire`` travels as its text with VERB_INQUIRE beside it, and
reads back as the engine's action (what the Python SDK does with every legal action)."""

from __future__ import annotations

from arena.game import Action, Verb
from arena.wire import serde
from arena.wire.v1 import game_pb2


def test_inquire_on_the_wire() -> None:
    pb = serde.action_to_pb(Action.parse("inquire"))
    assert pb.text == "inquire" and pb.verb == game_pb2.VERB_INQUIRE == int(Verb.INQUIRE)
    assert list(pb.cards) == [] and pb.combination == game_pb2.COMBINATION_UNSPECIFIED
    assert (
        Action.parse(game_pb2.Action.FromString(pb.SerializeToString()).text).verb is Verb.INQUIRE
    )
