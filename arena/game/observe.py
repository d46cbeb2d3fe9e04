"""A seat's view of the game: the only way anything about a state reaches a bot or a spectator.

docs/rules.md §7: a seat sees its own hand, every card on the table (declared or open cards, the
turn-up, the current trick), the last trick, all scores, the stock size and the public log; never another
seat's hand or the order of the stock. ``observe(state, None)`` is the spectator's view: no hand at all.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from arena.game.actions import Action
from arena.game.cards import ANY_COPY, SUIT_CHARS, card_text, ref_text
from arena.game.declarations import COMBO_MARKS
from arena.game.events import OVER, PHASE_NAMES, event_text, event_texts
from arena.game.fields import F_RUBICON
from arena.game.state import GameState

# Events a view builds one by one; a longer run is looked up at once (event_texts).
SHORT_RUN: Final = 8
# Rubicon: the stock size at and under which the brisques won may be counted (000).
BRISQUES_COUNTED_FROM: Final = 12


class SeatInfo(NamedTuple):
    """What everybody sees of one seat."""

    seat: int
    hand_size: int
    table: tuple[tuple[int, int], ...]  # declared cards lying on the table: (card, marks)
    open_cards: tuple[int, ...]  # Polish: cards won face up
    tricks_won: int
    deal_points: int
    total: int
    to_score: tuple[str, ...]  # combinations announced "to score" (Portland Club option)
    carte_blanche: bool  # Rubicon: has shown carte blanche and drawn no court card since
    # Rubicon: the brisque points the seat has won, once they may be counted (the stock holds twelve
    # cards or fewer, docs/rules.md §6.3); None before, and in the other variants.
    brisques: int | None = None


class Observation(NamedTuple):
    """A seat's view (a named tuple, like SeatInfo: immutable and cheap to build, as one is built for
    every request a bot is sent)."""

    variant: str
    options: tuple[tuple[str, str], ...]
    seat: int | None  # None: a spectator
    deal: int
    dealer: int
    phase: str
    to_act: int
    trump: str | None
    turn_up: int | None
    stock_size: int
    hand: tuple[
        int, ...
    ]  # card references: kinds for undeclared copies, physical for declared ones
    trick: tuple[tuple[int, int], ...]  # current trick: (seat, card)
    last_trick: tuple[tuple[int, int], ...]
    last_trick_winner: int | None
    heap: tuple[int, ...]  # Rubicon: tricks lying face up until a brisque is played
    seats: tuple[SeatInfo, ...]
    log: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain data with cards in their text forms (used for golden files and records)."""
        return {
            "variant": self.variant,
            "options": dict(self.options),
            "seat": self.seat,
            "deal": self.deal,
            "dealer": self.dealer,
            "phase": self.phase,
            "to_act": self.to_act,
            "trump": self.trump,
            "turn_up": None if self.turn_up is None else card_text(self.turn_up),
            "stock_size": self.stock_size,
            "hand": [ref_text(r) for r in self.hand],
            "trick": [[s, card_text(c)] for s, c in self.trick],
            "last_trick": [[s, card_text(c)] for s, c in self.last_trick],
            "last_trick_winner": self.last_trick_winner,
            "heap": [card_text(c) for c in self.heap],
            "seats": [
                {
                    "seat": si.seat,
                    "hand_size": si.hand_size,
                    "table": [card_text(c) for c, _ in si.table],
                    "open_cards": [card_text(c) for c in si.open_cards],
                    "tricks_won": si.tricks_won,
                    "deal_points": si.deal_points,
                    "total": si.total,
                    "to_score": list(si.to_score),
                    "carte_blanche": si.carte_blanche,
                    # Only once the brisques may be counted (docs/rules.md §6.3).
                    **({} if si.brisques is None else {"brisques": si.brisques}),
                }
                for si in self.seats
            ],
            "log": list(self.log),
        }


def _to_score(reserves: list[Action], own: bool) -> tuple[str, ...]:
    """docs/rules.md §2.3 and §6.4 (000, 004): a seat sees its own list of combinations held "to score"; the
    others see the claims made of cards on the table only, never a card still hidden in the hand."""
    if own:
        return tuple([a.text for a in reserves])
    return tuple([a.text for a in reserves if all(r < ANY_COPY for r in a.refs)])


def observe(state: GameState, seat: int | None, log_from: int = 0) -> Observation:
    """The view of ``seat`` (or of a spectator when ``seat`` is None). The public log is given from
    entry ``log_from`` on: a seat that has seen the earlier entries need not be sent them again."""
    v = state.variant
    n = v.seats
    if seat is not None and not 0 <= seat < n:
        raise ValueError(f"seat must be 0..{n - 1} or None, got {seat}")
    marks = state.marks
    hand: tuple[int, ...] = ()
    if seat is not None:
        refs = [c if c >= ANY_COPY or marks[c] else ANY_COPY + (c & 31) for c in state.hands[seat]]
        refs.sort()
        hand = tuple(refs)
    last_seats, last_cards, last_winner = state.last_trick
    # Loops and fields by position rather than nested generators and keywords: this runs for every
    # request a bot is sent.
    hands, reserves, over = state.hands, state.reserves, state.phase == OVER
    opened, won, points, totals = state.open, state.tricks_won, state.deal_points, state.totals
    # 000 (Rubicon): the brisques "may be counted during the play, provided there are not more than
    # twelve cards in the stock": then each seat's count, its own and the other's, is shown to all.
    counted = (
        state.brisques()
        if state.fam == F_RUBICON and state.stock_size <= BRISQUES_COUNTED_FROM
        else None
    )
    infos = []
    for s in range(n):
        held = hands[s]
        table = [(c, marks[c]) for c in held if c < ANY_COPY and marks[c] & COMBO_MARKS]
        if len(table) > 1:
            table.sort()
        infos.append(
            SeatInfo(  # seat, hand_size, table, open_cards, tricks_won, deal_points, total, ...
                s,
                len(held),
                tuple(table),
                tuple(opened[s]),
                won[s],
                points[s],
                totals[s] if over else totals[s] + points[s],
                _to_score(reserves[s], s == seat) if reserves[s] else (),  # to_score
                state.cb_active[s],  # carte_blanche
                None if counted is None else counted[s],  # brisques
            )
        )
    log = state.log
    # A bot's request carries the few events since its last one; a view from the start, the whole log.
    fresh = len(log) - log_from
    if fresh <= 0:
        texts: tuple[str, ...] = ()
    elif fresh <= SHORT_RUN:
        texts = tuple([event_text(e) for e in log[log_from:]])
    else:
        texts = event_texts(log[log_from:])
    return Observation(  # in the order of the fields
        v.name,
        v.options,
        seat,
        state.deal_index,
        state.dealer,
        PHASE_NAMES[state.phase],
        state.to_act,
        SUIT_CHARS[state.trump] if state.trump >= 0 else None,
        state.turn_up if state.turn_up >= 0 else None,
        state.stock_size,
        hand,
        tuple(zip(state.trick_order, state.trick, strict=False)),
        tuple(zip(last_seats, last_cards, strict=True)),
        last_winner if last_winner >= 0 else None,
        tuple(state.heap),
        tuple(infos),
        texts,
    )
