"""Conversions between the engine's values and the protocol's messages: the one place they meet.

Cards and actions travel as their exact text forms; the structured fields beside them are filled for
bots that prefer not to parse.
"""

from __future__ import annotations

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


def observation_from_pb(pb: game_pb2.Observation, log: tuple[str, ...] = ()) -> Observation:
    """The engine's Observation from its message (what a Python bot works with); ``log`` is the public
    log the bot has accumulated, since requests carry only the new entries."""
    return Observation(
        variant=pb.variant,
        options=tuple(sorted(pb.options.items())),
        seat=None if pb.seat < 0 else pb.seat,
        deal=pb.deal,
        dealer=pb.dealer,
        phase=pb.phase,
        to_act=pb.to_act,
        trump=pb.trump or None,
        turn_up=parse_card(pb.turn_up) if pb.turn_up else None,
        stock_size=pb.stock_size,
        hand=tuple(parse_ref(c) for c in pb.hand),
        trick=tuple((p.seat, parse_card(p.card)) for p in pb.trick),
        last_trick=tuple((p.seat, parse_card(p.card)) for p in pb.last_trick),
        last_trick_winner=None if pb.last_trick_winner < 0 else pb.last_trick_winner,
        heap=tuple(parse_card(c) for c in pb.heap),
        seats=tuple(
            SeatInfo(
                seat=s.seat,
                hand_size=s.hand_size,
                table=tuple(
                    (parse_card(c), m) for c, m in zip(s.table, s.table_marks, strict=True)
                ),
                open_cards=tuple(parse_card(c) for c in s.open_cards),
                tricks_won=s.tricks_won,
                deal_points=s.deal_points,
                total=s.total,
                to_score=tuple(s.to_score),
                carte_blanche=s.carte_blanche,
            )
            for s in pb.seats
        ),
        log=log,
    )
