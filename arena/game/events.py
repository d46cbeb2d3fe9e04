"""Phases of play and the public log's events.

Events are plain tuples, ``(EV_..., seat, payload...)``: the log grows on every play and is part of the
engine's inner loop; :func:`event_text` gives each its words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, cast

from arena.game.actions import Combo
from arena.game.cards import JACK, KING, QUEEN, SUIT_CHARS, card_text, kind_text

# Phases.
PLAY: Final = 1  # a seat plays a card to the trick
DECLARE: Final = 2  # the trick's winner may declare, exchange the seven, or be done
CARTE_BLANCHE: Final = 3  # Rubicon: a seat may show carte blanche
OVER: Final = 4

PHASE_NAMES: Final = {
    PLAY: "play",
    DECLARE: "declare",
    CARTE_BLANCHE: "carte-blanche",
    OVER: "over",
}

# Public log events.
EV_DEAL: Final = 0  # (EV_DEAL, dealer, deal index, turn-up or -1)
EV_PLAY: Final = 1  # (EV_PLAY, seat, card)
EV_TRICK: Final = 2  # (EV_TRICK, winner, tricks done)
EV_DECLARE: Final = 3  # (EV_DECLARE, seat, combo, cards, points)
EV_EXCHANGE: Final = 4  # (EV_EXCHANGE, seat, seven, turn-up taken)
EV_TURN_UP: Final = 5  # (EV_TURN_UP, seat, card): the last draw takes the turn-up
EV_CARTE_BLANCHE: Final = 6  # (EV_CARTE_BLANCHE, seat, shown kinds)
EV_SCORE: Final = 7  # (EV_SCORE, seat, reason, points): points credited other than declarations
EV_TRUMPS: Final = 8  # (EV_TRUMPS, seat, suit): Rubicon, trumps fixed by a marriage or sequence
EV_CUT: Final = 9  # (EV_CUT, seat, kind): a card cut for the first deal (before EV_DEAL)
EV_INQUIRE: Final = 10  # (EV_INQUIRE, seat, partner): four-handed partners, 003
EV_PASS: Final = 11  # (EV_PASS, seat): asked by his partner, he has nothing to declare

COURT_RANKS: Final = (JACK, QUEEN, KING)


def event_text(event: tuple[Any, ...]) -> str:
    """The text of one public log event (each distinct event's text is built once: every request a
    bot is sent carries the events since its previous one, and the referee publishes them too)."""
    text = _EVENT_TEXTS.get(event)
    if text is None:
        if len(_EVENT_TEXTS) >= 100_000:
            _EVENT_TEXTS.clear()
        text = _EVENT_TEXTS[event] = _event_text(event)
    return text


_EVENT_TEXTS: dict[tuple[Any, ...], str] = {}


def event_texts(events: Sequence[tuple[Any, ...]]) -> tuple[str, ...]:
    """The texts of a run of events, as :func:`event_text` gives them: looked up all at once when
    every one has been built before (an observation from the start of the log, a replayed log)."""
    texts = tuple(map(_EVENT_TEXTS.get, events))
    if None in texts:
        return tuple([event_text(e) for e in events])
    return cast(tuple[str, ...], texts)


def _event_text(event: tuple[Any, ...]) -> str:
    kind = event[0]
    if kind == EV_PLAY:
        return f"seat {event[1]} plays {card_text(event[2])}"
    if kind == EV_TRICK:
        return f"seat {event[1]} wins trick {event[2]}"
    if kind == EV_DECLARE:
        cards = " ".join(card_text(c) for c in event[3])
        return f"seat {event[1]} declares {Combo(event[2]).text} {cards} for {event[4]}"
    if kind == EV_EXCHANGE:
        return (
            f"seat {event[1]} exchanges {card_text(event[2])} for the turn-up {card_text(event[3])}"
        )
    if kind == EV_TURN_UP:
        return f"seat {event[1]} draws the turn-up {card_text(event[2])}"
    if kind == EV_CARTE_BLANCHE:
        shown = " ".join(kind_text(k) for k in event[2])
        return f"seat {event[1]} shows carte blanche: {shown}"
    if kind == EV_SCORE:
        return f"seat {event[1]} scores {event[3]} for {event[2]}"
    if kind == EV_TRUMPS:
        return f"seat {event[1]} fixes trumps: {SUIT_CHARS[event[2]]}"
    if kind == EV_INQUIRE:
        return f"seat {event[1]} inquires of seat {event[2]}"
    if kind == EV_PASS:
        return f"seat {event[1]} answers: nothing to declare"
    if kind == EV_CUT:
        return f"seat {event[1]} cuts {kind_text(event[2])} for the deal"
    if kind == EV_DEAL:
        turn_up = f", turn-up {card_text(event[3])}" if event[3] >= 0 else ""
        return f"deal {event[2] + 1}: seat {event[1]} deals{turn_up}"
    raise ValueError(f"unknown event {event!r}")
