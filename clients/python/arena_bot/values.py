"""What a bot is told, as plain Python values read from the protocol's messages: the seat's view
(:class:`View`), its legal actions (:class:`Action`) and cards as their texts. Nothing here needs the
rules engine: a bot that simulates subclasses :class:`arena_bot.engine.EngineBot` instead and gets
the engine's own values.

Cards are the texts the referee sends (see ``proto/arena/wire/v1/game.proto``): a rank character
(:data:`RANKS`, lowest first: ``7 8 9 J Q K T A``) and a suit character (:data:`SUITS`: spades,
hearts, diamonds, clubs), so ``QS`` is the queen of spades and ``TD`` the ten of diamonds. Several
packs are shuffled together, so a kind has several copies. A text without a pack (``QS``, a *kind*)
stands for any copy of that kind in the seat's hand that it has not declared (such copies are
interchangeable, so the legal actions name them once); a text with one (``QS.2``, a *physical
card*) is the copy of pack 2 (1-based): a card declared on the table, the turn-up, a card played to a
trick. ``card_kind("QS.2") == "QS"`` and ``card_pack("QS.2") == 2``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from arena.wire.v1 import game_pb2

RANKS: Final = "789JQKTA"  # in the order of play, lowest first: A > T > K > Q > J > 9 > 8 > 7
SUITS: Final = "SHDC"  # spades, hearts, diamonds, clubs


def card_kind(card: str) -> str:
    """The kind of a card text: ``QS.2`` -> ``QS``; a kind is its own kind (``QS`` -> ``QS``)."""
    return card.partition(".")[0]


def card_pack(card: str) -> int | None:
    """The pack (1-based) of a physical card (``QS.2`` -> 2); None for a kind (``QS``: any copy of
    the queen of spades the seat holds and has not declared)."""
    _, dot, pack = card.partition(".")
    return int(pack) if dot else None


def card_rank(card: str) -> int:
    """The rank's place in the order of play, 0 (the seven) to 7 (the ace): ``TD`` -> 6."""
    return RANKS.index(card[0])


def card_suit(card: str) -> str:
    """The suit character: ``QS`` -> ``S``."""
    return card[1]


class Action(NamedTuple):
    """One legal action, as the referee offers it. Return it (or its ``text``) from ``decide``.

    ``text`` is its exact form (``play QS``, ``declare bezique QS.1 JD``, ``exchange 7H``, ``done``),
    the only thing the referee reads of a reply; ``verb`` is the text's first word (``play``,
    ``declare``, ``exchange``, ``done``); ``combo`` the declared combination (``marriage``,
    ``royal-marriage``, ``bezique``, ``four-aces``, ``seven-of-trumps``, ``carte-blanche``, ...) for
    a declaration, else ``""``; ``cards`` the cards it names, as texts, in the text's order.
    """

    text: str
    verb: str
    combo: str
    cards: tuple[str, ...]

    def __str__(self) -> str:
        return self.text


def _action(message: game_pb2.Action) -> Action:
    words = message.text.split()
    verb = words[0] if words else ""
    combo = words[1] if verb == "declare" and len(words) > 1 else ""
    return Action(message.text, verb, combo, tuple(message.cards))


_ACTIONS: dict[str, Action] = {}


def legal_actions(messages: Iterable[game_pb2.Action]) -> list[Action]:
    """The request's legal actions as :class:`Action` values (each distinct text read once)."""
    out = []
    for message in messages:
        action = _ACTIONS.get(message.text)
        if action is None:
            if len(_ACTIONS) >= 100_000:  # declarations name physical cards: keep the cache bounded
                _ACTIONS.clear()
            action = _ACTIONS[message.text] = _action(message)
        out.append(action)
    return out


@dataclass(frozen=True, slots=True)
class SeatView:
    """What every seat sees of one seat."""

    seat: int
    hand_size: int
    table: tuple[str, ...]  # declared cards lying on the table (physical cards: ``QS.1``)
    table_marks: tuple[int, ...]  # beside each table card: the combinations it has scored in
    open_cards: tuple[str, ...]  # Polish: cards won face up
    tricks_won: int
    deal_points: int
    total: int
    to_score: tuple[str, ...]  # combinations announced "to score" (declare actions' texts)
    carte_blanche: bool  # Rubicon: has shown carte blanche and drawn no court card since
    # Rubicon: the brisque points won, once they may be counted (the stock holds twelve cards or
    # fewer), else None
    brisques: int | None


@dataclass(frozen=True, slots=True)
class View:
    """The seat's view of the game when it is asked to decide.

    ``hand`` holds card texts: kinds (``QS``) for copies the seat has not declared, physical cards
    (``QS.1``) for copies it has declared (they lie on the table and may still be played). ``trick``
    and ``last_trick`` are ``(seat, card)`` pairs in the order played. ``log`` is the game's public
    log so far, one line per event (the SDK keeps it: requests carry only what is new). ``message``
    is the observation as the referee sent it, for any field not copied here.
    """

    variant: str
    options: Mapping[str, str]
    seat: int
    deal: int  # 0-based deal number within the game
    dealer: int
    phase: str  # "play", "declare", "carte-blanche", "over"
    to_act: int
    trump: str | None  # a suit character; None before trumps are fixed (Rubicon)
    turn_up: str | None  # the card turned up (a physical card), None when there is none
    stock_size: int  # cards left to draw, the turn-up included
    hand: tuple[str, ...]
    trick: tuple[tuple[int, str], ...]
    last_trick: tuple[tuple[int, str], ...]
    last_trick_winner: int | None
    heap: tuple[str, ...]  # Rubicon: tricks lying face up until a brisque is played
    seats: tuple[SeatView, ...]
    deciding_member: int  # consultation: which player of the seat decides (0-based)
    log: tuple[str, ...]
    message: game_pb2.Observation


def _seat(message: game_pb2.SeatView) -> SeatView:
    return SeatView(
        message.seat,
        message.hand_size,
        tuple(message.table),
        tuple(message.table_marks),
        tuple(message.open_cards),
        message.tricks_won,
        message.deal_points,
        message.total,
        tuple(message.to_score),
        message.carte_blanche,
        message.brisques if message.HasField("brisques") else None,
    )


def read_view(message: game_pb2.Observation, log: Sequence[str]) -> View:
    """The :class:`View` of an observation message and the public log so far."""
    return View(
        variant=message.variant,
        options=dict(message.options),
        seat=message.seat,
        deal=message.deal,
        dealer=message.dealer,
        phase=message.phase,
        to_act=message.to_act,
        trump=message.trump or None,
        turn_up=message.turn_up or None,
        stock_size=message.stock_size,
        hand=tuple(message.hand),
        trick=tuple((p.seat, p.card) for p in message.trick),
        last_trick=tuple((p.seat, p.card) for p in message.last_trick),
        last_trick_winner=None if message.last_trick_winner < 0 else message.last_trick_winner,
        heap=tuple(message.heap),
        seats=tuple(_seat(s) for s in message.seats),
        deciding_member=message.deciding_member,
        log=tuple(log),
        message=message,
    )
