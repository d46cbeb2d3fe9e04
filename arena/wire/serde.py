"""Conversions between the engine's values and the protocol's messages: the one place they meet.

Cards and actions travel as their exact text forms; the structured fields beside them are filled for
bots that prefer not to parse.
"""

from __future__ import annotations

from collections.abc import Callable

from arena.game import Action, GameResult, Observation, ScoreItem, SeatInfo
from arena.game.cards import CARD_TEXTS, REF_TEXTS, card_text, parse_card, parse_ref, ref_text
from arena.wire.v1 import game_pb2


def action_to_pb(action: Action) -> game_pb2.Action:
    """The action's message; the same message object for the same action (built once)."""
    pb = _ACTION_PB.get(action)
    if pb is None:
        if len(_ACTION_PB) > 50_000:  # declarations name physical cards: keep the cache bounded
            _ACTION_PB.clear()
        pb = _ACTION_PB[action] = _build_action_pb(action)
    return pb


_ACTION_PB: dict[Action, game_pb2.Action] = {}


def _build_action_pb(action: Action) -> game_pb2.Action:
    return game_pb2.Action(
        text=action.text,
        verb=int(action.verb),  # type: ignore[arg-type]
        combination=action.combo,  # type: ignore[arg-type]
        cards=[ref_text(r) for r in action.refs],
    )


def observation_to_pb(obs: Observation, deciding_member: int = 0) -> game_pb2.Observation:
    pb = game_pb2.Observation()
    fill_observation(pb, obs, deciding_member)
    return pb


def fill_observation(pb: game_pb2.Observation, obs: Observation, deciding_member: int = 0) -> None:
    """Write ``obs`` into the empty message ``pb``, in place: on the path of every decision, so a
    request's observation is filled where it lies (no nested message built and then copied) and card
    texts are looked up in tables."""
    cards = CARD_TEXTS
    pb.variant = obs.variant
    if obs.options:
        options = pb.options
        for key, value in obs.options:  # (a map's update() is a slow generic mapping method)
            options[key] = value
    pb.seat = -1 if obs.seat is None else obs.seat
    pb.deal = obs.deal
    pb.dealer = obs.dealer
    pb.phase = obs.phase
    pb.to_act = obs.to_act
    if obs.trump is not None:
        pb.trump = obs.trump
    if obs.turn_up is not None:
        pb.turn_up = cards[obs.turn_up]
    pb.stock_size = obs.stock_size
    pb.hand.extend([REF_TEXTS[r] for r in obs.hand])
    for seat, card in obs.trick:
        played = pb.trick.add()
        played.seat = seat
        played.card = cards[card]
    for seat, card in obs.last_trick:
        played = pb.last_trick.add()
        played.seat = seat
        played.card = cards[card]
    pb.last_trick_winner = -1 if obs.last_trick_winner is None else obs.last_trick_winner
    if obs.heap:
        pb.heap.extend([cards[c] for c in obs.heap])
    for si in obs.seats:
        view = pb.seats.add()
        view.seat = si.seat
        view.hand_size = si.hand_size
        if si.table:
            view.table.extend([cards[c] for c, _ in si.table])
            view.table_marks.extend([m for _, m in si.table])
        if si.open_cards:
            view.open_cards.extend([cards[c] for c in si.open_cards])
        view.tricks_won = si.tricks_won
        view.deal_points = si.deal_points
        view.total = si.total
        if si.to_score:
            view.to_score.extend(si.to_score)
        view.carte_blanche = si.carte_blanche
        if si.brisques is not None:
            view.brisques = si.brisques
    pb.deciding_member = deciding_member


def _item_to_pb(item: ScoreItem) -> game_pb2.ScoreItem:
    return game_pb2.ScoreItem(
        seat=item.seat,
        reason=item.reason,
        points=item.points,
        cards=[card_text(c) for c in item.cards],
    )


def result_to_pb(
    result: GameResult, outcome: int, detail: str = "", culprit: int = -1
) -> game_pb2.GameResult:
    return game_pb2.GameResult(
        outcome=outcome,  # type: ignore[arg-type]
        detail=detail,
        sides=[game_pb2.Side(seats=list(side)) for side in result.sides],
        ranking=list(result.ranking),
        scores=list(result.scores),
        side_scores=list(result.side_scores),
        deals=[
            game_pb2.DealResult(
                index=d.index,
                dealer=d.dealer,
                items=[_item_to_pb(i) for i in d.items],
                points=list(d.points),
                totals=list(d.totals),
                brisques=list(d.brisques),
                completed=d.completed,
            )
            for d in result.deals
        ],
        settlement=[_item_to_pb(i) for i in result.settlement],
        culprit=culprit,
    )


class _Texts(dict[str, int]):
    """Card texts to numbers: the canonical texts the referee sends, each found in one lookup (a
    ``map`` over a repeated field, with no Python call per card); another spelling goes through the
    engine's parser, which reads it or raises its ParseError, and is not kept."""

    __slots__ = ("_parse",)

    def __init__(self, texts: tuple[str, ...], parse: Callable[[str], int]) -> None:
        super().__init__((text, number) for number, text in enumerate(texts))
        self._parse = parse

    def __missing__(self, text: str) -> int:
        return self._parse(text)


_CARDS = _Texts(CARD_TEXTS, parse_card)
_REFS = _Texts(REF_TEXTS, parse_ref)


def _seat_from_pb(s: game_pb2.SeatView) -> SeatInfo:
    card = _CARDS.__getitem__
    table = s.table
    marks = s.table_marks
    open_cards = s.open_cards
    to_score = s.to_score
    return SeatInfo(
        s.seat,
        s.hand_size,
        tuple(zip(map(card, table), marks, strict=True)) if table or marks else (),
        tuple(map(card, open_cards)) if open_cards else (),
        s.tricks_won,
        s.deal_points,
        s.total,
        tuple(to_score) if to_score else (),
        s.carte_blanche,
        s.brisques if s.HasField("brisques") else None,
    )


def observation_from_pb(pb: game_pb2.Observation, log: tuple[str, ...] = ()) -> Observation:
    """The engine's Observation from its message (what a Python bot works with); ``log`` is the public
    log the bot has accumulated, since requests carry only the new entries. On the path of every
    request a Python bot is sent: cards are looked up in tables, fields read once, and the fields
    usually empty (a seat's table, the heap) cost a test."""
    card = _CARDS.__getitem__
    options = pb.options
    turn_up = pb.turn_up
    seat = pb.seat
    trick = pb.trick
    last_trick = pb.last_trick
    winner = pb.last_trick_winner
    heap = pb.heap
    return Observation(
        pb.variant,
        tuple(sorted(options.items())) if options else (),
        None if seat < 0 else seat,
        pb.deal,
        pb.dealer,
        pb.phase,
        pb.to_act,
        pb.trump or None,
        card(turn_up) if turn_up else None,
        pb.stock_size,
        tuple(map(_REFS.__getitem__, pb.hand)),
        tuple([(p.seat, card(p.card)) for p in trick]) if trick else (),
        tuple([(p.seat, card(p.card)) for p in last_trick]) if last_trick else (),
        None if winner < 0 else winner,
        tuple(map(card, heap)) if heap else (),
        tuple(map(_seat_from_pb, pb.seats)),
        log,
    )
