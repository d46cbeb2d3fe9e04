"""One match: a series of games between seats, with clocks, legality checks and failure policies.

The referee is the trusted party: it deals from the seed, asks the seat to act for its decision with the
observation built by the engine's ``observe`` and the sorted legal actions, measures the time from request
sent to reply received, and checks the reply against the legal actions, never trusting it. A seat's
failure (timeout, illegal action, crash, disconnect, protocol error) becomes a typed, recorded outcome: the
game is forfeited, or a random legal action is played for the seat and a strike counted, as the match's
policies say. Nothing a bot does can raise out of :meth:`Match.run`.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict
from typing import NamedTuple

from arena.game import Action, GameResult, GameState, ParseError, Variant, observe
from arena.game.cutting import draw_cut
from arena.game.events import event_text
from arena.referee.config import FailurePolicy, MatchConfig, Outcome
from arena.referee.record import (
    DecisionRecord,
    GameRecord,
    MatchRecord,
    deck_texts,
    result_to_dict,
)
from arena.referee.seat_port import Decision, GameEnd, SeatFailure, SeatPort
from arena.referee.series import Seating, allies_won, first_seating, next_seating


class PublicEvent(NamedTuple):
    """An entry of a game's public log, as spectators see it (a named tuple: one is built for every
    event of every game)."""

    match_id: str
    game: int
    sequence: int
    text: str


EventSink = Callable[[PublicEvent], None]

# What a bot sends is data, kept short before it enters a record or an outcome: a reply as recorded,
# a reply quoted in a detail, and a detail as a whole.
MAX_REPLY_KEPT = 200
MAX_REPLY_SHOWN = 80
MAX_DETAIL = 2000
# Decision records and public events are written in batches, at most this long after the decision.
FLUSH_SECONDS = 0.05

__all__ = ["EventSink", "GameEnd", "Match", "PublicEvent"]


class Match:
    """A match between seats; ``players[seat]`` lists the ports of the players sharing that seat."""

    def __init__(
        self,
        match_id: str,
        config: MatchConfig,
        players: Sequence[Sequence[SeatPort]],
        on_event: EventSink | None = None,
        on_game_end: Callable[[GameEnd], None] | None = None,
    ) -> None:
        self.match_id = match_id
        self.config = config
        self.variant = config.build_variant()
        v = self.variant
        check_seats(v, [len(ports) for ports in players])
        self.players = [list(p) for p in players]
        self.on_event = on_event
        self.on_game_end = on_game_end
        self._request_id = 0
        self._deadline: _Deadline | None = None  # made by run(), in the match's task
        self.ends: list[GameEnd] = []
        self.record = MatchRecord(
            match_id=match_id,
            variant=v.name,
            options=dict(v.options),
            seed=config.seed,
            players=[[p.name for p in ports] for ports in self.players],
            time_control=asdict(config.time_control),
            policies={
                k: (val.value if isinstance(val, FailurePolicy) else val)
                for k, val in asdict(config.policies).items()
            },
        )

    async def run(self) -> MatchRecord:
        self._deadline = _Deadline()
        series = self.variant.consultation == "series"
        roster = [p for ports in self.players for p in ports]  # the players, as given
        # A series played on from a game before this match (a tournament's): its seating and result.
        seating: Seating = ()
        allies_won_before = False
        if series and self.config.series_before is not None:
            seating, allies_won_before = self.config.series_before
        try:
            for game in range(self.config.games):
                cut = None
                if series:
                    # 000: the single player "continues to do so till the allies win a game, when
                    # the two cut as before to see who shall be the single player".
                    seed = self.config.deal_seed(game)
                    if not seating:
                        seating, cut = first_seating(seed)
                    else:
                        won = (
                            allies_won(self.ends[-1].result.ranking)
                            if self.ends
                            else allies_won_before
                        )
                        seating, cut = next_seating(seating, won, seed)
                    self.players = [[roster[i] for i in seat] for seat in seating]
                rec = await self._play_game(game, seating)
                if series:
                    rec.seating = [list(seat) for seat in seating]
                    rec.single_cut = cut.text if cut is not None else ""
                self.record.games.append(rec)
        finally:
            self._deadline.close()
        for ports in self.players:
            for port in ports:
                await _quietly(port.match_over(self.match_id, self.ends))
        return self.record

    async def _play_game(self, game: int, seating: Seating = ()) -> GameRecord:
        cfg = self.config
        tc = cfg.time_control
        v = self.variant
        seed = cfg.game_seed(game)  # public: recorded
        secret = cfg.deal_seed(game)  # what the deals are drawn from: never recorded
        dealer = cfg.dealer(game)
        # 002: the players cut for the deal, where the books say so and no dealer is set (duplicate
        # deals and scripted sessions set theirs): a chance event drawn from the game's secret seed
        # like its deals, and recorded.
        cut = (
            draw_cut(secret, range(v.seats), v.packs) if dealer is None and v.cut_for_deal else None
        )
        state = GameState.new(v, seed=secret, dealer=dealer, decks=cfg.game_decks(game), cut=cut)
        rec = GameRecord(index=game, seed=seed, dealer=state.first_dealer, strikes=[0] * v.seats)
        rec.cut = cut.text if cut is not None else ""
        rec.decks.append(deck_texts(state))
        bank = [float(tc.bank_ms)] * v.seats
        # How much of the public log each player has been sent (players sharing a seat each need it).
        seen = [[0] * v.team_size(s) for s in range(v.seats)]
        books = _Books(self, game, rec, state)
        fallback = random.Random(f"arena-fallback:{secret}")
        outcome, detail, culprit = Outcome.NORMAL, "", -1
        deals = 0
        while not state.is_terminal():
            seat = state.to_act
            member = state.deciding_member()
            port = self.players[seat][member]
            legal = tuple(state.legal_actions())
            texts = tuple([a.text for a in legal])  # what a reply is matched against, and recorded
            obs = observe(state, seat, log_from=seen[seat][member])
            seen[seat][member] = len(state.log)
            self._request_id += 1
            decision = Decision(  # request_id, match_id, game, seat, deciding_member, ...
                self._request_id,
                self.match_id,
                game,
                seat,
                member,
                obs,  # observation
                legal,
                tc.budget_ms,
                int(bank[seat]),  # bank_ms
            )
            reply, action, failure, why, elapsed = await self._ask(
                port, decision, texts, bank[seat]
            )
            # Time past the budget and the grace comes out of the bank, whatever the answer was.
            bank[seat] = max(0.0, bank[seat] - max(0.0, elapsed - tc.budget_ms - tc.grace_ms))
            if failure is not None:
                rec.strikes[seat] += 1
                policy = cfg.policies.for_outcome(failure)
                limit = cfg.policies.max_strikes
                if policy is FailurePolicy.FORFEIT or (limit and rec.strikes[seat] >= limit):
                    books.add(decision, texts, reply, None, failure, why, elapsed, bank[seat])
                    outcome, detail, culprit = failure, f"seat {seat} ({port.name}): {why}", seat
                    if policy is FailurePolicy.RANDOM_ACTION:
                        detail += f" (strike {rec.strikes[seat]} of {limit})"
                    break
                action = fallback.choice(legal)
            assert action is not None
            books.add(decision, texts, reply, action, failure, why, elapsed, bank[seat])
            state.apply(action)
            if state.deal_index > deals and not state.is_terminal():
                deals = state.deal_index
                rec.decks.append(deck_texts(state))
        books.flush()
        result = state.result() if state.is_terminal() else _forfeit_result(state, culprit)
        rec.outcome, rec.detail, rec.culprit = outcome.text, detail, culprit
        rec.result = result_to_dict(result)
        await self._end_game(GameEnd(game, result, outcome, detail, culprit, seating))
        return rec

    async def _end_game(self, end: GameEnd) -> None:
        """A game is over: noted, told to whoever follows the match, and to every player."""
        self.ends.append(end)
        if self.on_game_end is not None:
            self.on_game_end(end)
        for ports in self.players:
            for p in ports:
                await _quietly(
                    p.game_over(
                        self.match_id, end.game, end.result, end.outcome, end.detail, end.culprit
                    )
                )

    async def _ask(
        self, port: SeatPort, decision: Decision, texts: tuple[str, ...], bank: float
    ) -> tuple[str | None, Action | None, Outcome | None, str, float]:
        """Ask the port and judge the answer: (reply, action, failure, detail, elapsed ms).
        ``texts`` are the legal actions' texts, in the order of ``decision.legal``."""
        tc = self.config.time_control
        limit_ms = tc.budget_ms + max(bank, 0.0) + tc.grace_ms
        deadline = self._deadline
        assert deadline is not None, "a match's decisions are asked from Match.run"
        start = time.perf_counter()
        deadline.arm(limit_ms / 1000)
        try:
            raw: object = await port.decide(decision)
        except asyncio.CancelledError:
            if not deadline.expired():
                raise  # cancelled from outside: the match is being stopped
            elapsed = (time.perf_counter() - start) * 1000
            try:
                gone = await port.departure()  # a player that left is not one that was slow
            except Exception:
                gone = None
            if gone is not None:
                return None, None, gone[0], gone[1][:MAX_DETAIL], elapsed
            return None, None, Outcome.TIMEOUT, f"no reply within {limit_ms:.0f} ms", elapsed
        except SeatFailure as exc:
            elapsed = (time.perf_counter() - start) * 1000
            return None, None, exc.outcome, exc.detail[:MAX_DETAIL], elapsed
        except Exception as exc:  # a port must never take the referee down
            elapsed = (time.perf_counter() - start) * 1000
            return None, None, Outcome.CRASH, f"{type(exc).__name__}: {exc}"[:MAX_DETAIL], elapsed
        finally:
            deadline.disarm()
        elapsed = (time.perf_counter() - start) * 1000
        if not isinstance(raw, str):
            detail = f"reply is not text: {raw!r:.{MAX_REPLY_SHOWN}}"
            return None, None, Outcome.PROTOCOL_ERROR, detail, elapsed
        reply = raw
        if elapsed > limit_ms:
            return (
                reply,
                None,
                Outcome.TIMEOUT,
                # Rounded up, to a tenth: a reply 0.3 ms late reads as later than the limit.
                f"replied after {math.ceil(elapsed * 10) / 10:.1f} ms, limit {limit_ms:g} ms",
                elapsed,
            )
        if reply in texts:  # the exact text of a legal action, nothing else
            return reply, decision.legal[texts.index(reply)], None, "", elapsed
        return reply, None, Outcome.ILLEGAL_ACTION, _not_legal(reply, decision.legal), elapsed


def check_seats(v: Variant, sizes: Sequence[int]) -> None:
    """ValueError unless ``sizes`` (the players of each seat, in seat order) fit the variant's
    seats."""
    if len(sizes) != v.seats:
        raise ValueError(f"{v.name} has {v.seats} seats, got {len(sizes)}")
    for seat, size in enumerate(sizes):
        if size != v.team_size(seat):
            raise ValueError(
                f"seat {seat} of {v.name} takes {v.team_size(seat)} player(s), got {size}"
            )


def _not_legal(reply: str, legal: Sequence[Action]) -> str:
    """Why a reply is no legal action. A reply must be the exact text of one of the request's legal
    actions: one spelling per action keeps records, transcripts and duplicate comparisons exact, and
    a sloppy reply is a bug of the bot's that the arena should show rather than hide."""
    shown = f"{reply!r:.{MAX_REPLY_SHOWN}}"
    try:
        action = Action.parse(reply)
    except ParseError as exc:
        why = str(exc)  # it quotes the reply: cut short too
        if len(why) > 2 * MAX_REPLY_SHOWN:
            why = why[: 2 * MAX_REPLY_SHOWN] + "..."
        return f"unreadable action {shown}: {why}"
    if action in legal:
        return f"{shown} is not written exactly as the legal action {action.text!r}"
    texts = ", ".join(a.text for a in legal)
    return f"{shown} is not legal here{LEGAL_SHOWN}{texts})"[:MAX_DETAIL]


LEGAL_SHOWN = " (legal: "  # where an illegal action's detail lists the legal ones


def public_detail(detail: str) -> str:
    """A game's detail as anyone may see it while its deal is still to be played (in another seat
    rotation, or by another pairing): an illegal action's detail lists the legal actions, and in a
    trick they are the culprit's hand, which another player holds in a game still to come."""
    return detail.split(LEGAL_SHOWN, 1)[0]


class _Deadline:
    """The clock of one decision at a time: what ``asyncio.timeout`` does, set up once per match.

    On expiry the match's task is cancelled; ``expired()`` then tells that cancellation from one from
    outside by the task's cancel count, as ``asyncio.Timeout`` does. One timer serves decision after
    decision: a decision's deadline is almost always later than the pending timer's (each is armed
    later than the one before, with the same limit or nearly), so arming it usually only notes the
    new deadline, and a timer that fires before the deadline it now guards sets itself again for it.
    A new timer is made only when the deadline is earlier than the pending one. Either way the
    match's task is cancelled once the loop's clock has reached the deadline of the decision armed,
    and never for a decision disarmed.
    """

    __slots__ = ("armed", "at", "cancelling", "fired", "handle", "loop", "task")

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self.task = task
        self.handle: asyncio.TimerHandle | None = None
        self.at = 0.0
        self.armed = False
        self.fired = False
        self.cancelling = 0

    def arm(self, seconds: float) -> None:
        self.fired = False
        self.cancelling = self.task.cancelling()
        self.at = at = self.loop.time() + seconds
        self.armed = True
        handle = self.handle
        if handle is None or handle.when() > at:
            if handle is not None:
                handle.cancel()
            self.handle = self.loop.call_at(at, self._fire)

    def _fire(self) -> None:
        self.handle = None
        if not self.armed:
            return
        if self.loop.time() < self.at:  # armed since for a later deadline: wait for that one
            self.handle = self.loop.call_at(self.at, self._fire)
            return
        self.armed = False
        self.fired = True
        self.task.cancel()

    def disarm(self) -> None:
        self.armed = False  # a pending timer stays for the next decision (see the class)

    def close(self) -> None:
        self.armed = False
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None

    def expired(self) -> bool:
        """After a CancelledError: was it this clock's, and nobody else's?"""
        return self.fired and self.task.uncancel() <= self.cancelling


class _Books:
    """A game's decision records and public events, written off the referee's critical path.

    Between a bot's reply and the next request only what the next request needs is done (judge the
    reply, apply it, observe, send); recording the decisions and publishing the events they caused
    are queued and done in batches, at most FLUSH_SECONDS after the first decision queued, while the
    bots think (a turn of the event loop per decision for it would cost more than the work itself).
    The queue is flushed in order, and completely before the game's result is taken.
    """

    __slots__ = ("game", "loop", "match", "pending", "published", "rec", "state", "timer")

    def __init__(self, match: Match, game: int, rec: GameRecord, state: GameState) -> None:
        self.match = match
        self.game = game
        self.rec = rec
        self.state = state
        self.loop = asyncio.get_running_loop()
        self.pending: list[
            tuple[
                Decision,
                tuple[str, ...],
                str | None,
                Action | None,
                Outcome | None,
                str,
                float,
                float,
            ]
        ] = []
        self.published = 0
        self.timer: asyncio.TimerHandle | None = None

    def add(
        self,
        decision: Decision,
        texts: tuple[str, ...],
        reply: str | None,
        action: Action | None,
        failure: Outcome | None,
        why: str,
        elapsed: float,
        bank: float,
    ) -> None:
        self.pending.append((decision, texts, reply, action, failure, why, elapsed, bank))
        if self.timer is None:
            self.timer = self.loop.call_later(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        pending, self.pending = self.pending, []
        decisions = self.rec.decisions
        for entry in pending:
            decisions.append(_decision_record(*entry))
        log = self.state.log
        events = self.rec.events
        sink = self.match.on_event
        match_id, game = self.match.match_id, self.game
        for sequence in range(self.published, len(log)):
            text = event_text(log[sequence])
            events.append(text)
            if sink is not None:
                sink(PublicEvent(match_id, game, sequence, text))
        self.published = len(log)


def _decision_record(
    d: Decision,
    texts: tuple[str, ...],
    reply: str | None,
    action: Action | None,
    failure: Outcome | None,
    detail: str,
    elapsed: float,
    bank: float,
) -> DecisionRecord:
    if reply is not None and len(reply) > MAX_REPLY_KEPT:  # a legal reply is far shorter
        reply = reply[:MAX_REPLY_KEPT] + f"... [{len(reply)} characters]"
    return DecisionRecord(  # by position: request_id, seat, member, legal, reply, action, ...
        d.request_id,
        d.seat,
        d.deciding_member,
        texts,
        reply,
        action.text if action is not None else "",
        failure.text if failure is not None else None,
        detail,
        round(elapsed, 3),  # elapsed_ms
        round(bank, 3),  # bank_ms
    )


def _forfeit_result(state: GameState, culprit: int) -> GameResult:
    """A game ended by a seat's failure: its side is ranked last, the others share first place."""
    v = state.variant
    scores = tuple(state.totals[s] + state.deal_points[s] for s in range(v.seats))
    side_scores = tuple(sum(scores[s] for s in side) for side in v.sides)
    lost = v.side_of(culprit)
    ranking = tuple(1 if i == lost else 0 for i in range(len(v.sides)))
    team_sizes = tuple(v.team_size(s) for s in range(v.seats))
    return GameResult(v.sides, ranking, scores, side_scores, tuple(state.deals), team_sizes)


async def _quietly(coro: Awaitable[None]) -> None:
    try:
        async with asyncio.timeout(5.0):
            await coro
    except Exception:  # notifications are best effort: a dead bot is already recorded
        return
