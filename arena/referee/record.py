"""Match records: the full record (deals, every decision with its reply and time, public events, result)
and a seat's view of it.

The full record keeps each deal's shuffled order and every decision's legal actions, raw reply, action
played and time. What a seat was shown at each decision is not stored twice: the engine is deterministic,
so :func:`seat_view` replays the game and rebuilds exactly the observations that seat received.
Timings are kept apart from the content: the same seed, rules version and answers give identical content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena.game import RULES_VERSION, Action, GameResult, GameState, observe, variant
from arena.game.cards import card_text, kind_text, parse_kind
from arena.game.cutting import parse_cut


@dataclass(slots=True)
class DecisionRecord:
    request_id: int
    seat: int
    member: int
    legal: tuple[str, ...]
    reply: str | None  # the raw reply; None when there was none (timeout, crash, ...)
    action: str  # the action applied (the reply, or the referee's random action on a strike)
    failure: str | None = None  # an Outcome's text when the seat failed at this decision
    detail: str = ""
    elapsed_ms: float = 0.0  # timing: request sent to reply received
    bank_ms: float = 0.0  # timing: bank left after this decision


@dataclass(slots=True)
class GameRecord:
    index: int
    seed: int
    dealer: int
    decks: list[list[str]] = field(default_factory=list)  # each deal's shuffled kinds, top first
    decisions: list[DecisionRecord] = field(default_factory=list)
    events: list[str] = field(default_factory=list)  # the public log
    outcome: str = "normal"
    detail: str = ""
    culprit: int = -1
    strikes: list[int] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    # The players' cut for the deal (arena.game.cutting's text form), where the books describe one
    # and the referee drew it; empty otherwise (and in records made before it was drawn).
    cut: str = ""
    # Consultation series (docs/rules.md §3.2): each seat's players in this game, as indexes into the
    # match's players in the order given (its ``players`` flattened), and the cut for the single player
    # made before this game (cutters are those indexes); empty outside a series.
    seating: list[list[int]] = field(default_factory=list)
    single_cut: str = ""

    def to_dict(self, timings: bool = True) -> dict[str, Any]:
        """See :meth:`MatchRecord.to_dict`."""
        decisions = [
            {
                "request_id": d.request_id,
                "seat": d.seat,
                "member": d.member,
                "legal": d.legal,  # a tuple of strings, as asdict keeps it
                "reply": d.reply,
                "action": d.action,
                "failure": d.failure,
                "detail": d.detail,
                "elapsed_ms": d.elapsed_ms,
                "bank_ms": d.bank_ms,
            }
            for d in self.decisions
        ]
        if not timings:
            for d in decisions:
                del d["elapsed_ms"], d["bank_ms"]
        return {
            "index": self.index,
            "seed": self.seed,
            "dealer": self.dealer,
            "decks": [list(deck) for deck in self.decks],
            "decisions": decisions,
            "events": list(self.events),
            "outcome": self.outcome,
            "detail": self.detail,
            "culprit": self.culprit,
            "strikes": list(self.strikes),
            "result": _plain(self.result),
            "cut": self.cut,
            "seating": [list(s) for s in self.seating],
            "single_cut": self.single_cut,
        }


def _plain(value: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, tuples and scalars), sharing nothing mutable."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


@dataclass(slots=True)
class MatchRecord:
    match_id: str
    variant: str
    options: dict[str, str]
    seed: int
    players: list[list[str]]  # per seat, the names of the players sharing it
    time_control: dict[str, int]
    policies: dict[str, Any]
    rules_version: str = RULES_VERSION
    games: list[GameRecord] = field(default_factory=list)
    # Where a game sent to a Ray cluster was played (the node's id, address and host); None here.
    node: dict[str, str] | None = None

    def to_dict(self, timings: bool = True) -> dict[str, Any]:
        """The record as plain data (what ``dataclasses.asdict`` gives, written out: a record is
        turned into data once per game a tournament plays, and ``asdict``'s generic walk over every
        decision cost the referee more than the rest of the game's bookkeeping). Nothing in it is
        shared with the record. ``timings=False`` leaves out each decision's times."""
        return {
            "match_id": self.match_id,
            "variant": self.variant,
            "options": dict(self.options),
            "seed": self.seed,
            "players": [list(p) for p in self.players],
            "time_control": dict(self.time_control),
            "policies": _plain(self.policies),
            "rules_version": self.rules_version,
            "games": [g.to_dict(timings) for g in self.games],
            "node": dict(self.node) if self.node is not None else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MatchRecord:
        games = [
            GameRecord(
                **{
                    **g,
                    "decisions": [
                        DecisionRecord(**{**d, "legal": tuple(d["legal"])}) for d in g["decisions"]
                    ],
                }
            )
            for g in data["games"]
        ]
        return cls(**{**data, "games": games})


def result_to_dict(result: GameResult) -> dict[str, Any]:
    def items(its: Any) -> list[dict[str, Any]]:
        return [
            {
                "seat": i.seat,
                "reason": i.reason,
                "points": i.points,
                "cards": [card_text(c) for c in i.cards],
            }
            for i in its
        ]

    return {
        "sides": [list(s) for s in result.sides],
        "ranking": list(result.ranking),
        "scores": list(result.scores),
        "side_scores": list(result.side_scores),
        "team_sizes": list(result.team_sizes),
        "settlement": items(result.settlement),
        "deals": [
            {
                "index": d.index,
                "dealer": d.dealer,
                "items": items(d.items),
                "points": list(d.points),
                "totals": list(d.totals),
                "brisques": list(d.brisques),
                "completed": d.completed,
            }
            for d in result.deals
        ],
    }


def deck_texts(state: GameState) -> list[str]:
    return [kind_text(k) for k in state.deck_for(state.deal_index)]


def replay(record: MatchRecord, game: GameRecord) -> GameState:
    """The game's state at the start, ready to have the recorded actions applied. A record that cannot
    set one up (damaged, or not a record) raises ValueError saying what is wrong."""
    if type(game.dealer) is not int:  # None would draw a dealer of its own: another game
        raise ValueError(f"dealer: expected a seat number, got {game.dealer!r}")
    try:
        v = variant(record.variant, **record.options)
        decks = [[parse_kind(k) for k in deck] for deck in game.decks]
        cut = parse_cut(game.cut) if game.cut else None
        return GameState.new(v, seed=game.seed, dealer=game.dealer, decks=decks, cut=cut)
    except (TypeError, AttributeError) as exc:  # a field of the wrong type
        raise ValueError(f"a field of the wrong type: {exc}") from exc


def seat_view(record: MatchRecord, seat: int) -> dict[str, Any]:
    """What one seat saw: its decisions with the observation and legal actions it was sent, its replies
    and times, the public events and the results; never another seat's hand or the stock."""
    games = []
    for game in record.games:
        state = replay(record, game)
        seen: dict[int, int] = {}  # per player of the seat, as the referee sent it
        mine = []
        for d in game.decisions:
            if d.seat == seat:
                obs = observe(state, seat, log_from=seen.get(d.member, 0))
                seen[d.member] = len(state.log)
                mine.append(
                    {
                        "request_id": d.request_id,
                        "member": d.member,
                        "observation": obs.to_dict(),
                        "legal": list(d.legal),
                        "reply": d.reply,
                        "action": d.action,
                        "failure": d.failure,
                        "elapsed_ms": d.elapsed_ms,
                    }
                )
            if not d.action:  # the game was forfeited at this decision
                break
            state.apply(Action.parse(d.action))
        games.append(
            {
                "index": game.index,
                "decisions": mine,
                "events": list(game.events),
                "outcome": game.outcome,
                "detail": game.detail,
                "culprit": game.culprit,
                "result": game.result,
            }
        )
    return {
        "match_id": record.match_id,
        "variant": record.variant,
        "options": record.options,
        "seat": seat,
        "players": record.players,
        "rules_version": record.rules_version,
        "games": games,
    }
