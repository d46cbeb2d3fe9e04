"""A seat's stream port against the match's clock, in-process (no server): replies that arrive as the
clock runs out, copies of a late reply, and a bot whose stream ends while its process lives on."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable

import pytest

from arena.game import GameState, observe, variant
from arena.referee import Decision, Match, MatchConfig, MatchRecord, Outcome, TimeControl
from arena.service import stream_port as ports_module
from arena.service.stream_port import Outgoing, StreamPort
from arena.wire.v1 import bot_pb2

SHORT = TimeControl(budget_ms=200, bank_ms=0, grace_ms=50)

# How a test's bot answers a request: (the port, the request) -> None; it calls port.on_reply itself.
Answer = Callable[[StreamPort, bot_pb2.DecisionRequest], None]


def reply_to(request: bot_pb2.DecisionRequest) -> bot_pb2.Reply:
    return bot_pb2.Reply(
        request_id=request.request_id,
        match_id=request.match_id,
        action=request.legal_actions[0].text,
    )


def at_once(port: StreamPort, request: bot_pb2.DecisionRequest) -> None:
    asyncio.get_running_loop().call_soon(port.on_reply, reply_to(request))


def attach(port: StreamPort, answer: Answer, sent: list[bot_pb2.DecisionRequest]) -> None:
    async def write(message: Outgoing) -> None:
        if isinstance(message, bytes):
            message = bot_pb2.RefereeMessage.FromString(message)
        if message.WhichOneof("body") == "request":
            sent.append(message.request)
            answer(port, message.request)

    port.attach(write)


def play(
    first: Answer, games: int = 2, clock: TimeControl = SHORT
) -> tuple[MatchRecord, list[bot_pb2.DecisionRequest]]:
    """A match of ``games`` between seat 0 answering with ``first`` and seat 1 answering at once."""
    sent: list[bot_pb2.DecisionRequest] = []

    async def run() -> MatchRecord:
        ports = [StreamPort(name, "m1", s, 0, f"t{s}") for s, name in enumerate(("a", "b"))]
        attach(ports[0], first, sent)
        attach(ports[1], at_once, [])
        config = MatchConfig(seed=21, games=games, dealers=(1,) * games, time_control=clock)
        match = Match("m1", config, [[ports[0]], [ports[1]]])
        return await match.run()

    return asyncio.run(run()), sent


def outcomes(record: MatchRecord) -> list[tuple[str, str]]:
    return [(g.outcome, g.detail) for g in record.games]


def late_by(seconds: float) -> Answer:
    """Answer the first request ``seconds`` after its clock's limit; the others at once."""
    asked = 0

    def answer(port: StreamPort, request: bot_pb2.DecisionRequest) -> None:
        nonlocal asked
        asked += 1
        if asked > 1:
            return at_once(port, request)
        limit = (SHORT.budget_ms + SHORT.grace_ms) / 1000
        asyncio.get_running_loop().call_later(limit + seconds, port.on_reply, reply_to(request))

    return answer


def late_then_copied(copies: int) -> Answer:
    """Leave the first request unanswered past its clock; send its reply ``copies`` times just before
    answering the next request (so the copies land in the next game, whatever the machine's speed);
    answer every other request at once."""
    first: list[bot_pb2.DecisionRequest] = []

    def answer(port: StreamPort, request: bot_pb2.DecisionRequest) -> None:
        if not first:
            first.append(request)
            return
        if len(first) == 1:
            first.append(request)
            loop = asyncio.get_running_loop()
            for _ in range(copies):
                loop.call_soon(port.on_reply, reply_to(first[0]))
        at_once(port, request)

    return answer


def test_a_reply_read_as_the_clock_runs_out_costs_the_timeout_only() -> None:
    """The clock cancels the wait; the reply, read before the referee's task has run again, is a late
    reply like any other (it was once punished a second time, as a reply to a request 'never asked',
    which lost the bot its next game too)."""
    record, _ = play(late_by(0.0))
    assert outcomes(record)[0][0] == "timeout"
    assert outcomes(record)[1] == ("normal", "")


def test_a_late_reply_is_no_error_once_and_its_copies_are() -> None:
    """One late reply is forgiven; sending it again is a second reply (a bot may not flood its stream
    with copies of a reply it knows is late)."""
    record, _ = play(late_then_copied(copies=1))
    assert outcomes(record)[0][0] == "timeout"
    assert outcomes(record)[1] == ("normal", "")
    record, _ = play(late_then_copied(copies=3))
    assert outcomes(record)[0][0] == "timeout"
    assert outcomes(record)[1][0] == "protocol-error"
    assert "a second reply to request 1" in outcomes(record)[1][1]


class Alive:
    """A bot's process as a port sees it: running, until ``exit_after`` seconds (None: never). A
    frozen one (stopped between turns, the fairness option) runs that time only once thawed."""

    def __init__(self, exit_after: float | None, frozen: bool = False) -> None:
        self.returncode: int | None = None
        self.exit_after = exit_after
        self.running = asyncio.Event()
        if not frozen:
            self.running.set()

    async def wait(self) -> int:
        await self.running.wait()
        if self.exit_after is None:
            await asyncio.Event().wait()
        await asyncio.sleep(self.exit_after or 0)
        self.returncode = 1
        return 1

    def exit_text(self) -> str:
        return "bot process exited with code 1"

    frozen = False

    def thaw(self) -> None:
        self.running.set()

    def freeze(self) -> None:
        pass


@pytest.mark.parametrize(
    ("exit_after", "frozen", "outcome", "detail"),
    [
        (None, False, "disconnect", "the bot closed its stream"),
        (0.4, False, "crash", "bot process exited with code 1"),
        (0.1, True, "crash", "bot process exited with code 1"),
    ],
    ids=["lives-on", "exits-later", "frozen-as-it-exits"],
)
def test_a_bot_whose_stream_ends_is_not_recorded_as_slow(
    monkeypatch: pytest.MonkeyPatch,
    exit_after: float | None,
    frozen: bool,
    outcome: str,
    detail: str,
) -> None:
    """A launched bot's stream ends while its process runs: the port waits a while to tell a crash
    from a disconnect. That wait is the referee's, not the bot's thinking: with a clock shorter than
    it, the decision was recorded as a timeout; and no request is sent to the ended stream. A bot
    stopped between turns as its stream ends (it crashed just after a reply) is let run to its exit:
    frozen, it could not exit, and its crash was recorded as a disconnect."""
    monkeypatch.setattr(ports_module, "SETTLE_SECONDS", 0.6)
    asked = 0

    def answer(port: StreamPort, request: bot_pb2.DecisionRequest) -> None:
        nonlocal asked
        asked += 1
        if asked == 3:  # the stream ends with this request unanswered
            port.process = Alive(exit_after, frozen)  # type: ignore[assignment]
            port.on_closed(ports_module.Outcome.DISCONNECT, "the bot closed its stream")
        else:
            at_once(port, request)

    record, sent = play(answer, games=2)
    assert outcomes(record)[0] == (outcome, f"seat 0 (a): {detail}")
    assert len(sent) == 3, "nothing is sent to a stream that has ended"


def test_a_decision_stopped_while_its_request_is_written_leaves_nothing_pending() -> None:
    """The match is stopped (its task cancelled) while a request is still being written, and the bot
    is then found gone: the decision nobody waits for any more is not failed again. Before, its
    future stayed behind, the bot's end set its exception, and asyncio printed "Future exception
    was never retrieved" on the arena's stderr, after a run's one-line error."""
    unretrieved: list[str] = []

    async def run() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: unretrieved.append(context["message"]))
        port = StreamPort("a", "m1", 0, 0, "t0")
        writing = asyncio.Event()

        async def write(message: Outgoing) -> None:
            writing.set()
            await asyncio.sleep(3600)  # a stream that does not take the request

        port.attach(write)
        state = GameState.new(variant("two-handed"), seed=3)
        legal = tuple(state.legal_actions())
        seat = state.to_act
        decision = Decision(1, "m1", 1, seat, 0, observe(state, seat), legal, 1000, 0)
        task = asyncio.create_task(port.decide(decision))
        written = asyncio.ensure_future(writing.wait())
        await asyncio.wait([task, written], timeout=10, return_when=asyncio.FIRST_COMPLETED)
        assert writing.is_set(), task
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        port.on_closed(Outcome.CRASH, "bot process was killed by SIGTERM")
        del task
        gc.collect()
        await asyncio.sleep(0)

    asyncio.run(run())
    assert unretrieved == []


class Freezable:
    """A bot's process that lives on, frozen and thawed as the fairness option has it."""

    returncode = None

    def __init__(self) -> None:
        self.frozen = False

    async def wait(self) -> int:
        await asyncio.Event().wait()
        return 0

    def exit_text(self) -> str:
        return "bot process is running"

    def thaw(self) -> None:
        self.frozen = False

    def freeze(self) -> None:
        self.frozen = True


def test_a_frozen_bot_whose_stream_ends_behind_its_reply_stays_frozen_on_its_opponents_turns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the fairness option a bot answers and closes its stream at once, the close arriving once
    it is frozen. The port thawed it to let it exit, and it ran on through its opponent's turns to
    the end of the match; now it is thawed only when the match waits for it (its next decision)."""
    monkeypatch.setattr(ports_module, "SETTLE_SECONDS", 0.3)
    seen: list[bool] = []  # the first player's state at each of its opponent's requests

    async def run() -> MatchRecord:
        ports = [StreamPort(name, "m1", s, 0, f"t{s}") for s, name in enumerate(("a", "b"))]
        process = Freezable()
        ports[0].process = process  # type: ignore[assignment]
        asked = 0

        def leave(port: StreamPort, request: bot_pb2.DecisionRequest) -> None:
            nonlocal asked
            asked += 1
            at_once(port, request)
            if asked == 2:  # the stream ends right behind this reply
                loop = asyncio.get_running_loop()
                loop.call_later(0.02, port.on_closed, Outcome.DISCONNECT, "it closed its stream")

        def watch(port: StreamPort, request: bot_pb2.DecisionRequest) -> None:
            def answer() -> None:  # a while into its turn: the other's stream has ended by then
                if asked >= 2:
                    seen.append(process.frozen)
                port.on_reply(reply_to(request))

            asyncio.get_running_loop().call_later(0.1, answer)

        attach(ports[0], leave, [])
        attach(ports[1], watch, [])
        clock = TimeControl(budget_ms=200, bank_ms=0, grace_ms=1_000)
        config = MatchConfig(seed=21, games=1, dealers=(1,), time_control=clock)
        return await Match("m1", config, [[ports[0]], [ports[1]]]).run()

    record = asyncio.run(run())
    assert outcomes(record)[0] == ("disconnect", "seat 0 (a): it closed its stream")
    assert seen and all(seen), seen
