"""Readable transcripts of a game: the full view (every hand) or one seat's view.

A :class:`Narrator` follows a state as actions are applied and returns the new lines each time, built from
the public log, the deals' score items and (in the full view) the hands as dealt. A seat's view shows only
what :func:`arena.game.observe.observe` gives that seat.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import cast

from arena.game.actions import Action
from arena.game.cards import SUIT_NAMES, card_text, ref_text
from arena.game.events import EV_DEAL, event_text
from arena.game.observe import observe
from arena.game.results import DealResult
from arena.game.state import GameState

Policy = Callable[[GameState], Action]


class Narrator:
    """Lines describing a game as it goes. ``seat=None`` is the full (referee's) view."""

    def __init__(self, state: GameState, seat: int | None = None) -> None:
        self.state = state
        self.seat = seat
        self._events = 0
        self._deals = 0

    def header(self) -> list[str]:
        v = self.state.variant
        return [f"Bezique: {v.describe()}, seed {self.state.seed}, target {v.target or 'one deal'}"]

    def catch_up(self) -> list[str]:
        """Lines for everything that happened since the last call."""
        state = self.state
        out: list[str] = []
        log = state.log
        while self._events < len(log):
            event = log[self._events]
            self._events += 1
            if event[0] == EV_DEAL:
                out.extend(self._summaries(before=cast(int, event[2])))
                out.append(event_text(event))
                out.extend(self._deal_start())
            else:
                out.append(event_text(event))
        out.extend(self._summaries(before=len(state.deals)))
        return out

    def _summaries(self, before: int) -> list[str]:
        out: list[str] = []
        deals = self.state.deals
        while self._deals < min(before, len(deals)):
            out.extend(self._deal_summary(deals[self._deals]))
            self._deals += 1
        return out

    def before_decision(self) -> list[str]:
        """Before each decision: in consultation, which player of the seat decides; in a seat's view,
        the seat's hand."""
        state = self.state
        out = []
        size = state.variant.team_size(state.to_act)
        if size > 1:
            # 000: in consultation the players sharing a seat decide trick by trick in turn.
            member = state.deciding_member() + 1
            out.append(f"  seat {state.to_act}: player {member} of {size} decides")
        if self.seat is not None and state.to_act == self.seat:
            obs = observe(state, self.seat)
            hand = " ".join(ref_text(r) for r in obs.hand)
            out.append(f"  your hand: {hand} (stock {obs.stock_size})")
        return out

    def _deal_start(self) -> list[str]:
        state = self.state
        trump = SUIT_NAMES[state.trump] if state.trump >= 0 else "none yet"
        lines = [f"  trumps: {trump}"]
        seats = range(state.variant.seats) if self.seat is None else (self.seat,)
        for s in seats:
            lines.append(
                f"  seat {s} hand: {' '.join(ref_text(r) for r in sorted(state.dealt[s]))}"
            )
        return lines

    def _deal_summary(self, deal: DealResult) -> list[str]:
        lines = [
            f"end of deal {deal.index + 1}" + ("" if deal.completed else " (game won mid-deal)")
        ]
        for item in deal.items:
            cards = " ".join(card_text(c) for c in item.cards)
            what = f"{item.reason} {cards}".strip()
            lines.append(f"  seat {item.seat}: {item.points:+5d}  {what}")
        points = ", ".join(f"seat {s} {p}" for s, p in enumerate(deal.points))
        totals = ", ".join(f"seat {s} {t}" for s, t in enumerate(deal.totals))
        lines.append(f"  deal points: {points}; totals: {totals}")
        return lines

    def result_lines(self) -> list[str]:
        result = self.state.result()
        scores = ", ".join(f"seat {s} {p}" for s, p in enumerate(result.scores))
        winners = result.winners
        if len(winners) > 1:  # partners, or the seats sharing first place
            verdict = f"seats {' and '.join(map(str, winners))} win"
        else:
            verdict = f"seat {winners[0]} wins" if winners else "a draw"
        return [f"game over after {len(result.deals)} deal(s): {verdict} ({scores})"]


def narrate_game(
    state: GameState, policies: list[Policy], seat: int | None = None
) -> Iterator[str]:
    """Play ``state`` to the end with one policy per seat, yielding the transcript line by line."""
    narrator = Narrator(state, seat)
    yield from narrator.header()
    yield from narrator.catch_up()
    while not state.is_terminal():
        yield from narrator.before_decision()
        state.apply(policies[state.to_act](state))
        yield from narrator.catch_up()
    yield from narrator.result_lines()
