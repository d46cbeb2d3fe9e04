"""Bots that simulate: :class:`EngineBot` hands ``decide`` the rules engine's own values, an
:class:`arena.game.Observation` and the legal :class:`arena.game.Action` list, so that the bot can
build states, enumerate legal actions and play games out with :mod:`arena.game`.

The engine is not part of the SDK's own install (``pip install ./clients/python`` brings grpcio,
protobuf and the protocol only): it is the package ``arena-bot-engine``
(``pip install ./clients/python/engine``), which ships the arena's rules engine ``arena.game`` and its
conversion from the protocol's messages (``arena.wire.serde``). The project's own environment
(``make .venv``) has both.

>>> from arena_bot.engine import EngineBot
>>> from arena.game import Action, Observation, Verb
>>> class MyBot(EngineBot):
...     def decide(self, view: Observation, legal: list[Action], clock):
...         return next((a for a in legal if a.verb is Verb.DECLARE), legal[0])
"""

from __future__ import annotations

from collections.abc import Sequence

try:
    from arena.game import Action, Observation
    from arena.game.cards import ref_text
    from arena.wire.serde import observation_from_pb
except ModuleNotFoundError as exc:  # the SDK alone: say what is missing and how to get it
    if not (exc.name or "").startswith("arena"):
        raise
    raise ModuleNotFoundError(
        f"arena_bot.engine needs the rules engine, which is not installed ({exc.name} is missing): "
        "pip install ./clients/python/engine (the package arena-bot-engine)",
        name=exc.name,
    ) from None

from arena.wire.v1 import game_pb2
from arena_bot.sdk import BotBase, game_seed


class EngineBot(BotBase[Observation, Action]):
    """A bot whose ``decide`` receives the engine's :class:`arena.game.Observation` (cards as
    numbers: see :mod:`arena.game.cards`) and :class:`arena.game.Action` values. Everything else is
    as for :class:`arena_bot.Bot`."""

    def view_from(self, observation: game_pb2.Observation, log: Sequence[str]) -> Observation:
        return observation_from_pb(observation, tuple(log))

    def legal_from(self, actions: Sequence[game_pb2.Action]) -> list[Action]:
        return [Action.parse(a.text) for a in actions]  # each distinct text parsed once


def view_seed(view: Observation, game: int) -> int:
    """:func:`arena_bot.game_seed` from the engine's observation (for a bot played in-process: a
    benchmark, a test); equal to the seed the SDK computes from the wire for the same observation."""
    seat = view.seat if view.seat is not None else view.to_act
    turn_up = ref_text(view.turn_up) if view.turn_up is not None else ""
    return game_seed(
        view.variant, seat, game, view.dealer, turn_up, (ref_text(r) for r in view.hand)
    )
