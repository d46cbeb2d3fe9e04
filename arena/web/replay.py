"""A recorded game as a list of frames for the replay player: the table after each decision.

A frame is built from the engine's own observations (:func:`arena.game.observe`), the only way a view
of the state is built: the spectator's view gives everything public (the trick, declared cards, scores,
the stock's size), and each seat's observation its own hand. The full view shows every seat's hand; a
seat's view shows that seat's hand alone, so a seat's frames hold nothing that seat did not see. The
commentary is the transcript's (:class:`arena.game.transcript.Narrator`), also per view.
"""

from __future__ import annotations

from typing import Any

from arena.game import Action, GameState, observe
from arena.game.cards import ref_text
from arena.game.errors import IllegalActionError, ParseError, VariantError
from arena.game.transcript import Narrator
from arena.referee.record import GameRecord, MatchRecord, replay
from arena.web.queries import MAX_DETAIL, cap


class ReplayError(ValueError):
    """A stored record that cannot be replayed; the message says where it fails."""


def _sorted(refs: Any) -> list[str]:
    """Cards in suit order (spades, hearts, diamonds, clubs), high to low within a suit."""
    return [ref_text(r) for r in sorted(refs, key=lambda r: ((r & 31) >> 3, -(r & 7), r))]


def _frame(state: GameState, view: int | None) -> dict[str, Any]:
    # A frame shows no log (the narrator tells the moves): the views are taken without it, or every
    # frame would build the texts of the whole log so far, and a replay would cost the square of the
    # game's length.
    end = len(state.log)
    public = observe(state, None, log_from=end)
    seats = range(state.variant.seats) if view is None else (view,)
    hands = {s: observe(state, s, log_from=end).hand for s in seats}
    out_seats = []
    for info in public.seats:
        table = {c for c, _ in info.table}
        hand = hands.get(info.seat)
        out_seats.append(
            {
                "seat": info.seat,
                # Declared cards stay in the hand but lie on the table: shown there, not twice.
                "hand": None if hand is None else _sorted(r for r in hand if r not in table),
                "hand_size": info.hand_size - len(table),
                "table": _sorted(table),
                "open": _sorted(info.open_cards),
                "tricks": info.tricks_won,
                "deal_points": info.deal_points,
                "total": info.total,
                "to_score": list(info.to_score),
                "carte_blanche": info.carte_blanche,
            }
        )
    return {
        "deal": public.deal,
        "dealer": public.dealer,
        "phase": public.phase,
        "to_act": public.to_act,
        "trump": public.trump,
        "turn_up": None if public.turn_up is None else ref_text(public.turn_up),
        "stock": public.stock_size,
        "trick": [[s, ref_text(c)] for s, c in public.trick],
        "last_trick": [[s, ref_text(c)] for s, c in public.last_trick],
        "last_winner": public.last_trick_winner,
        "heap": [ref_text(c) for c in public.heap],
        "seats": out_seats,
    }


def frames(record: MatchRecord, game: GameRecord, view: int | None) -> dict[str, Any]:
    """The game step by step in one view: ``None`` the full view, a seat number that seat's view."""
    try:
        state = replay(record, game)
    except (ParseError, VariantError, ValueError) as exc:
        raise ReplayError(f"the record's deal cannot be set up: {exc}") from exc
    n = state.variant.seats
    if view is not None and not 0 <= view < n:
        raise ReplayError(f"seat must be 0..{n - 1} for {state.variant.name}")
    narrator = Narrator(state, view)
    first = {
        "step": 0,
        "actor": None,
        "action": None,
        "failure": None,
        "lines": [*narrator.header()[1:], *narrator.catch_up()],
        **_frame(state, view),
    }
    out = [first]
    for step, d in enumerate(game.decisions, start=1):
        if not d.action:  # the game was forfeited at this decision
            out[-1]["lines"].append(f"seat {d.seat}: {d.failure or 'no reply'}")
            break
        try:
            state.apply(Action.parse(d.action))
        except (ParseError, IllegalActionError) as exc:
            raise ReplayError(f"decision {step}: {exc}") from exc
        own = view is None or d.seat == view
        out.append(
            {
                "step": step,
                "actor": d.seat,
                # Another seat's move reaches a seat's view through the public log alone.
                "action": cap(d.action) if own else None,
                "failure": d.failure,
                "detail": cap(d.detail, MAX_DETAIL) if d.failure and own else "",
                "lines": narrator.catch_up(),
                **_frame(state, view),
            }
        )
    if state.is_terminal():
        ending = narrator.result_lines()
    else:
        ending = [
            f"game ended: {game.outcome}"
            + (f": {cap(game.detail, MAX_DETAIL)}" if game.detail else "")
        ]
    out[-1]["lines"].extend(ending)
    result = game.result or {}
    return {
        "variant": record.variant,
        "describe": state.variant.describe(),
        "seats": n,
        "players": [[cap(p) for p in seat] for seat in record.players],
        "view": "full" if view is None else view,
        "outcome": game.outcome,
        "scores": list(result.get("scores", [])),
        "ranking": list(result.get("ranking", [])),
        "sides": [list(s) for s in result.get("sides", [])],
        "frames": out,
    }
