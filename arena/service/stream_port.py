"""A seat's player reached over a bot's gRPC stream: the referee's SeatPort on the service side.

The gateway servicer attaches the stream when the bot presents its token; from then on the port writes
requests and results straight to the stream (no queue, no extra task: the referee's per-decision path is
as short as the transport allows), and the servicer hands it every message the bot sends. Replies are matched to requests by id; anything else the bot sends is a protocol error that the
port reports at the seat's next decision.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

from arena.bots.launcher import BotProcess
from arena.game import GameResult
from arena.referee import Decision, GameEnd, Outcome, SeatFailure
from arena.wire import encode, serde
from arena.wire.v1 import bot_pb2

# What the port writes to a bot's stream: a message, or a message already serialised (a request,
# written straight to bytes by arena.wire.encode; the gateway's serializer passes bytes through).
Outgoing = bot_pb2.RefereeMessage | bytes

MAX_REMEMBERED = 4096  # request ids remembered to tell a late reply from an unknown one
MAX_REMEMBERED_VIOLATIONS = 16
# A local bot whose stream closes and whose process exits within this time has crashed (a Python bot
# dying of an exception takes a while to exit on a loaded machine: its traceback, gRPC's shutdown;
# 3 s was seen too short). Only a bot that closes its stream and lives on waits it out.
SETTLE_SECONDS = 10.0
MATCH_OVER = "the match is over"  # how the manager closes every port of a finished match


def match_points(games: Sequence[GameEnd]) -> list[float]:
    """MatchOver's points: for each game, 1 shared among the sides ranked first, each seat of such a
    side getting its side's share. Per seat; but per player of the match (in the order its players
    were given) when the games carry a seating (a consultation series, docs/rules.md §3.2), whose
    players change seats game by game: the points follow the players, not the seats."""
    if not games:
        return []
    seated = bool(games[0].seating)
    size = sum(map(len, games[0].seating)) if seated else len(games[0].result.scores)
    points = [0.0] * size
    for end in games:
        r = end.result
        firsts = [side for side, place in enumerate(r.ranking) if place == 0]
        for side in firsts:
            for seat in r.sides[side]:
                for who in end.seating[seat] if seated else (seat,):
                    points[who] += 1.0 / len(firsts)
    return points


class StreamPort:
    """One player of one seat of one match, over a bot's stream."""

    def __init__(self, name: str, match_id: str, seat: int, member: int, token: str) -> None:
        self.name = name
        self.match_id = match_id
        self.seat = seat
        self.member = member
        self.token = token
        self._writer: Callable[[Outgoing], Awaitable[None]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # set by attach()
        self.finished = asyncio.Event()  # nothing more to send: the servicer may end the stream
        self.over = False  # the match has ended for this player (its MatchOver is on its way)
        self.claimed = False  # a stream has presented this seat's token
        self.attached = asyncio.Event()  # ... and has been welcomed: requests can be written
        self.bot_name = ""
        self.bot_version = ""
        self.refused = ""  # why the referee refused a Hello that presented this seat's token
        self._pending: dict[int, asyncio.Future[str]] = {}
        self._expired: deque[int] = deque(maxlen=MAX_REMEMBERED)
        self._answered: deque[int] = deque(maxlen=MAX_REMEMBERED)
        self._violations: list[str] = []
        self._closed: tuple[Outcome, str] | None = None
        self._settling = False
        self.flooded = False  # closed for a flood of protocol errors: its stream is read no more
        self._settle_task: asyncio.Task[None] | None = None  # the wait for a closed bot's exit
        self._settle_detail = ""
        self.process: BotProcess | None = None  # a local bot's process, when the arena launched it
        self.gone = asyncio.Event()  # closed: crashed, disconnected, or the match is over
        self.drained = asyncio.Event()  # the stream has ended after its last message

    # ------------------------------------------------------------------ the referee's side

    async def decide(self, decision: Decision) -> str:
        if self._violations:
            raise SeatFailure(Outcome.PROTOCOL_ERROR, self._violations.pop(0))
        if self._closed is not None:
            raise SeatFailure(*self._closed)
        if not self.attached.is_set():
            raise SeatFailure(Outcome.CRASH, self.not_connected())
        if self._settling:  # the stream has ended: nothing to send to, only why it ended to learn
            raise SeatFailure(*(await self.departure() or (Outcome.DISCONNECT, "")))
        loop = self._loop  # the loop the stream was attached in (a lookup costs a system call)
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()
        self._pending[decision.request_id] = future
        message = request_bytes(decision)
        proc = self.process
        if proc is not None:
            proc.thaw()  # fairness option: a bot runs only on its own turn
        try:
            # The write too: a decision stopped while its request is written must leave no future
            # behind for the bot's end to fail, unheard.
            await self._send(message)
            return await future
        except BaseException:
            answered = future.done() and not future.cancelled() and future.exception() is None
            if not answered:
                # Timed out or failed: a late reply to it is not another error.
                self._expired.append(decision.request_id)
            raise
        finally:
            if proc is not None:
                proc.freeze()
            self._pending.pop(decision.request_id, None)

    def not_connected(self) -> str:
        """Why the player never got its stream, in words: a refused Hello says why it was."""
        if self.refused:
            return f"the referee refused its Hello: {self.refused}"
        return "the bot never connected"

    async def departure(self) -> tuple[Outcome, str] | None:
        """Why the player is gone once its stream has ended (None while it lasts): the bot's crash if
        its process exits within SETTLE_SECONDS, else its disconnect (at once for a remote bot)."""
        if self._closed is None and not self._settling:
            return None
        if self._closed is None:
            self._settle_on_its_turn()  # the match waits for this player: its own time
        await self.gone.wait()
        return self._closed

    async def game_over(
        self,
        match_id: str,
        game: int,
        result: GameResult,
        outcome: Outcome,
        detail: str,
        culprit: int,
    ) -> None:
        # A bot frozen between its turns (fairness option) stays frozen: it reads the result when
        # it is next asked, or when its match is over.
        if self._closed is None and self.attached.is_set():
            pb = serde.result_to_pb(result, int(outcome), detail, culprit)
            await self._send(
                bot_pb2.RefereeMessage(
                    game_over=bot_pb2.GameOver(match_id=match_id, game=game, result=pb)
                )
            )

    async def match_over(self, match_id: str, games: Sequence[GameEnd]) -> None:
        # Before the write: the bot may read its MatchOver and answer before the write returns, and
        # whatever it says then is said between matches.
        self.over = True
        if self.process is not None:
            # Frozen between turns, it must read its MatchOver and leave (or, kept for another match,
            # be frozen again as it waits: MatchManager.park).
            self.process.thaw()
            if self._settling:
                self._settle_on_its_turn()  # it has waited frozen since its stream closed
        if self._closed is None and self.attached.is_set():
            message = bot_pb2.MatchOver(
                match_id=match_id,
                games=[
                    serde.result_to_pb(e.result, int(e.outcome), e.detail, e.culprit) for e in games
                ],
                points=match_points(games),
            )
            await self._send(bot_pb2.RefereeMessage(match_over=message))
        self.finished.set()  # the servicer closes the stream

    async def _send(self, message: Outgoing) -> None:
        """Write to the bot's stream; a failed write closes the port (its decision then fails)."""
        writer = self._writer
        if writer is None or self.finished.is_set():
            return
        try:
            # One write at a time without a lock: every write comes from the match's task, in turn,
            # and each is awaited before the next (the Welcome is written before the port is attached).
            await writer(message)
        except Exception as exc:
            self.on_closed(Outcome.DISCONNECT, f"the stream failed: {type(exc).__name__}")

    # ------------------------------------------------------------------ the stream's side

    def attach(self, writer: Callable[[Outgoing], Awaitable[None]]) -> None:
        """The servicer hands over the stream's write (after the Welcome)."""
        self._writer = writer
        self._loop = asyncio.get_running_loop()
        if self.process is not None:
            # Fairness option: from its Welcome on, a bot runs only on its own turns (what it does
            # with the Welcome counts in its first decision's time, which its bank covers).
            self.process.freeze()
        self.attached.set()

    def on_reply(self, reply: bot_pb2.Reply) -> None:
        rid = reply.request_id
        future = self._pending.get(rid)
        match_id = reply.match_id
        if match_id != self.match_id:
            self.on_violation(f"reply for match {match_id!r:.40} on a stream of {self.match_id}")
        elif future is not None and not future.done():
            self._answered.append(rid)
            future.set_result(reply.action)
        elif rid in self._answered:
            self.on_violation(f"a second reply to request {rid}")
        elif future is not None or rid in self._expired:
            # A late reply to a request whose wait has ended (timed out or failed; its future may be
            # done before the referee's task has run to note it expired): the failure is recorded,
            # and the reply is no error. Once: another copy of it is a second reply.
            if future is None:
                self._expired.remove(rid)
            self._answered.append(rid)
        else:
            self.on_violation(f"a reply to request {rid}, which was never asked")

    def expired(self, request_id: int) -> bool:
        """A request of this player's that timed out or failed (a late reply to it is no error)."""
        return request_id in self._expired

    def on_violation(self, what: str) -> None:
        """A protocol error: it fails the decision the seat owes now, or else its next one. One more
        than MAX_REMEMBERED_VIOLATIONS owed is a flood: every message of it costs the referee's
        event loop, which every match shares, so the player is closed (its stream ends, and each of
        its decisions fails as a protocol error that says so)."""
        for future in self._pending.values():
            if not future.done():
                future.set_exception(SeatFailure(Outcome.PROTOCOL_ERROR, what))
                return
        if len(self._violations) < MAX_REMEMBERED_VIOLATIONS:  # a flood must not grow memory
            self._violations.append(what)
            return
        self._violations.clear()
        self.flooded = True
        self._close(
            Outcome.PROTOCOL_ERROR,
            f"its stream was cut: a flood of protocol errors ({MAX_REMEMBERED_VIOLATIONS} not yet "
            f"charged, then {what})",
        )

    def on_closed(self, outcome: Outcome, detail: str) -> None:
        """The player is gone. A local bot's stream usually closes just before its process exits: a
        disconnect is settled as a crash if the process exits within SETTLE_SECONDS."""
        if self._closed is not None or self._settling:
            return
        proc = self.process
        if outcome is Outcome.DISCONNECT and proc is not None:
            if proc.returncode is not None:
                outcome, detail = Outcome.CRASH, proc.exit_text()
            else:
                self._settling = True
                self._settle_detail = detail
                # Frozen between its turns (fairness option) when its stream closed, it stays frozen:
                # a bot that closed its stream on purpose ran on through its opponents' turns, to
                # the end of its match. It is thawed to exit (or be judged gone) on its own time:
                # when the match next asks it, or at the match's end. (Once its MatchOver is sent,
                # it is not thawed either: that thawed it, and one kept for another match has been
                # frozen again as it waits.)
                if self.over or not proc.frozen:
                    self._start_settle(proc)
                return
        self._close(outcome, detail)

    def _start_settle(self, proc: BotProcess) -> None:
        self._settle_task = asyncio.get_running_loop().create_task(
            self._settle(proc, self._settle_detail)
        )

    def _settle_on_its_turn(self) -> None:
        """The match waits to learn why the player's stream ended: its process, frozen since its
        stream closed or since its last decision, is thawed to exit on its own time."""
        proc = self.process
        if proc is None:
            return
        if not self.over:
            proc.thaw()
        if self._settle_task is None:
            self._start_settle(proc)

    async def _settle(self, proc: BotProcess, detail: str) -> None:
        try:
            async with asyncio.timeout(SETTLE_SECONDS):
                await proc.wait()
        except TimeoutError:
            if not self.over:
                proc.freeze()  # gone from the match but alive: it runs on nobody's turn
            self._close(Outcome.DISCONNECT, detail)
        else:
            self._close(Outcome.CRASH, proc.exit_text())

    def _close(self, outcome: Outcome, detail: str) -> None:
        if self._closed is None:
            self._closed = (outcome, detail)
        self.gone.set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(SeatFailure(outcome, detail))
        self.finished.set()

    @property
    def closed(self) -> bool:
        return self._closed is not None

    @property
    def close_detail(self) -> str:
        """Why the player is gone ("" while it is not)."""
        return self._closed[1] if self._closed is not None else ""

    @property
    def ended_normally(self) -> bool:
        """Once the match is over: the player was never closed by a crash or a broken stream (at the
        end of the match the manager closes every port, with MATCH_OVER)."""
        return self._closed is None or self._closed == (Outcome.DISCONNECT, MATCH_OVER)


def request_bytes(decision: Decision) -> bytes:
    """The DecisionRequest a bot is sent, serialised by :mod:`arena.wire.encode` (the one encoder of
    a request: on the path of every decision, and pinned to the protocol buffer library's bytes by
    tests/wire/test_request_bytes.py)."""
    return encode.request_bytes(
        decision.request_id,
        decision.match_id,
        decision.game,
        decision.seat,
        decision.observation,
        decision.deciding_member,
        decision.legal,
        decision.budget_ms,
        decision.bank_ms,
    )
