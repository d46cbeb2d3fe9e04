"""The referee's match loop with scripted fake ports, in-process: clocks and the bank, every kind of
seat failure under both failure policies, and nothing escaping ``Match.run``."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Sequence

import pytest
from fake_ports import (
    GENEROUS,
    Answer,
    FakePort,
    from_decision,
    hang,
    not_legal,
    play,
    raising,
    returning,
    seeded,
    sleeping,
    two,
)

from arena.referee import (
    Decision,
    FailurePolicy,
    GameEnd,
    Match,
    MatchConfig,
    Outcome,
    Policies,
    SeatFailure,
    TimeControl,
)
from arena.referee.match import public_detail

# ---------------------------------------------------------------------- time


def test_timeout_forfeits_the_game() -> None:
    """A seat that does not answer within budget + bank + grace loses the game: outcome timeout."""
    tc = TimeControl(budget_ms=50, bank_ms=0, grace_ms=20)
    a, b = FakePort("a", from_decision(3, hang)), FakePort("b")
    record = play(MatchConfig(seed=1, time_control=tc), two(a, b))
    game = record.games[0]
    assert (game.outcome, game.culprit) == ("timeout", 0)
    assert "no reply within 70 ms" in game.detail and game.detail.startswith("seat 0 (a)")
    last = game.decisions[-1]
    assert (last.seat, last.failure, last.reply, last.action) == (0, "timeout", None, "")
    assert game.result["ranking"] == [1, 0]
    assert b.games_over[0][1:] == (Outcome.TIMEOUT, game.detail, 0)
    assert a.matches_over == b.matches_over == ["m-test"]


def test_stopping_the_match_while_a_seat_thinks_is_no_timeout() -> None:
    """The match's task cancelled from outside (the arena stopping) while a seat thinks: run() ends
    with CancelledError, and no game is recorded as that seat's timeout."""

    async def main() -> None:
        a, b = FakePort("a", hang), FakePort("b", hang)
        tc = TimeControl(budget_ms=20_000, bank_ms=0, grace_ms=0)
        match = Match("m-stop", MatchConfig(seed=1, time_control=tc), two(a, b))
        task = asyncio.create_task(match.run())
        while not (a.decisions or b.decisions):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert match.record.games == [] and match.ends == []

    asyncio.run(asyncio.wait_for(main(), timeout=60))


def test_the_clock_restarts_for_every_decision() -> None:
    """Each decision gets its own limit: a seat that answers in 5 ms again and again never times
    out with a limit of 250 ms, though its answers take far longer than that in all."""
    tc = TimeControl(budget_ms=200, bank_ms=0, grace_ms=50)
    a, b = FakePort("a", sleeping(0.005)), FakePort("b")
    record = play(MatchConfig(seed=3, time_control=tc), two(a, b))
    game = record.games[0]
    assert game.outcome == "normal"
    assert sum(d.seat == 0 for d in game.decisions) > 40


def test_random_action_on_timeout_counts_strikes_then_forfeits() -> None:
    """Policy random-action: a random legal action is played for the seat and a strike counted; the
    seat forfeits on max_strikes strikes."""
    tc = TimeControl(budget_ms=30, bank_ms=30, grace_ms=10)
    policies = Policies(on_timeout=FailurePolicy.RANDOM_ACTION, max_strikes=3)
    a, b = FakePort("a", hang), FakePort("b")
    record = play(MatchConfig(seed=2, time_control=tc, policies=policies), two(a, b))
    game = record.games[0]
    mine = [d for d in game.decisions if d.seat == 0]
    assert [d.failure for d in mine] == ["timeout"] * 3
    assert all(d.action in d.legal for d in mine[:2])
    assert mine[2].action == ""
    assert game.strikes == [3, 0]
    assert (game.outcome, game.culprit) == ("timeout", 0)
    assert game.detail.endswith("(strike 3 of 3)")
    assert record.policies["on_timeout"] == "random-action"


def test_a_timeout_spends_the_bank() -> None:
    """A decision that times out has overrun its budget by the whole bank: the bank is spent, and the
    next request says so (bank 0), instead of granting the full bank again."""
    tc = TimeControl(budget_ms=30, bank_ms=60, grace_ms=10)
    policies = Policies(on_timeout=FailurePolicy.RANDOM_ACTION, max_strikes=2)
    a, b = FakePort("a", hang), FakePort("b")
    play(MatchConfig(seed=2, time_control=tc, policies=policies), two(a, b))
    assert [d.bank_ms for d in a.decisions] == [60, 0]


def test_slow_answers_draw_the_bank_down_until_it_is_spent() -> None:
    """Time beyond budget + grace comes out of the bank; once the bank is spent the seat times out."""
    tc = TimeControl(budget_ms=40, bank_ms=300, grace_ms=0)
    a, b = FakePort("a", sleeping(0.15)), FakePort("b")
    record = play(MatchConfig(seed=4, time_control=tc), two(a, b))
    game = record.games[0]
    assert (game.outcome, game.culprit) == ("timeout", 0)
    banks = [d.bank_ms for d in a.decisions]
    assert len(banks) >= 2 and banks[0] == 300
    assert all(x > y for x, y in itertools.pairwise(banks))
    limit = int(re.search(r"no reply within (\d+) ms", game.detail).group(1))  # type: ignore[union-attr]
    assert limit < 40 + 300
    recorded = [d.bank_ms for d in game.decisions if d.seat == 0 and d.failure is None]
    assert all(x > y for x, y in itertools.pairwise(recorded))
    assert all(d.elapsed_ms >= 100 for d in game.decisions if d.seat == 0 and not d.failure)


# ---------------------------------------------------------------------- bad answers


def test_an_illegal_action_forfeits_the_game() -> None:
    a, b = FakePort("a"), FakePort("b", from_decision(2, not_legal))
    record = play(MatchConfig(seed=5, time_control=GENEROUS), two(a, b))
    game = record.games[0]
    assert (game.outcome, game.culprit) == ("illegal-action", 1)
    last = game.decisions[-1]
    assert last.failure == "illegal-action" and last.reply is not None
    assert last.reply not in last.legal and last.action == ""
    assert "is not legal here" in game.detail and last.reply in game.detail
    assert game.result["ranking"] == [0, 1]
    # what a spectator may see while the deal is still to be played: not the hand the list names
    public = public_detail(game.detail)
    assert public.endswith(f"{last.reply!r} is not legal here") and public in game.detail
    assert not any(text in public for text in last.legal)
    assert (
        public_detail("seat 0 (a): no reply within 300 ms") == "seat 0 (a): no reply within 300 ms"
    )


@pytest.mark.parametrize("text", ["xyzzy", "", "play", "play QS QH", "declare nothing", "play ZZ"])
def test_unreadable_text_is_an_illegal_action(text: str) -> None:
    a, b = FakePort("a", returning(text)), FakePort("b", returning(text))
    record = play(MatchConfig(seed=6, time_control=GENEROUS), two(a, b))
    game = record.games[0]
    assert game.outcome == "illegal-action"
    assert "unreadable action" in game.detail
    assert game.decisions[-1].reply == text


@pytest.mark.parametrize(
    "spelling", ["PLAY {card}", " play {card}", "play {card} ", "play  {card}"]
)
def test_a_reply_must_be_the_exact_text_of_a_legal_action(spelling: str) -> None:
    """One text per action: a reply that only spells a legal action differently is illegal, and the
    detail says which action it resembles."""

    async def sloppy(d: Decision) -> object:
        card = d.legal[0].text.split()[1] if d.legal[0].text.startswith("play ") else None
        if card is None:
            return d.legal[0].text
        return spelling.format(card=card if not spelling.startswith("PLAY") else card.lower())

    a, b = FakePort("a", sloppy), FakePort("b")
    record = play(MatchConfig(seed=5, time_control=GENEROUS, dealers=(1,)), two(a, b))
    game = record.games[0]
    assert (game.outcome, game.culprit) == ("illegal-action", 0)
    assert "is not written exactly as the legal action 'play " in game.detail


def test_what_a_bot_replies_is_kept_short_in_the_record() -> None:
    huge = "play " + "[bold red]QS[/]" * 1000
    a, b = FakePort("a", returning(huge)), FakePort("b")
    record = play(MatchConfig(seed=5, time_control=GENEROUS, dealers=(1,)), two(a, b))
    game = record.games[0]
    reply = game.decisions[-1].reply
    assert reply is not None and len(reply) < 250 and reply.startswith("play [bold red]QS[/]")
    assert reply.endswith(f"[{len(huge)} characters]")
    assert len(game.detail) < 400  # the detail quotes the reply cut short


def test_random_action_policy_without_a_strike_limit_plays_on() -> None:
    """max_strikes 0: never forfeit; every bad answer is replaced by a random legal action."""
    policies = Policies(on_illegal_action=FailurePolicy.RANDOM_ACTION, max_strikes=0)
    a, b = FakePort("a", returning("xyzzy")), FakePort("b")
    record = play(MatchConfig(seed=7, time_control=GENEROUS, policies=policies), two(a, b))
    game = record.games[0]
    assert game.outcome == "normal"
    mine = [d for d in game.decisions if d.seat == 0]
    assert game.strikes == [len(mine), 0] and len(mine) > 10
    assert all(d.failure == "illegal-action" and d.action in d.legal for d in mine)


@pytest.mark.parametrize(
    "outcome", [Outcome.CRASH, Outcome.DISCONNECT, Outcome.PROTOCOL_ERROR], ids=lambda o: o.text
)
def test_a_seat_failure_is_recorded_with_its_type(outcome: Outcome) -> None:
    failure = SeatFailure(outcome, f"scripted {outcome.text}")
    a, b = FakePort("a", from_decision(4, raising(failure))), FakePort("b")
    record = play(MatchConfig(seed=8, time_control=GENEROUS), two(a, b))
    game = record.games[0]
    assert (game.outcome, game.culprit) == (outcome.text, 0)
    assert game.detail == f"seat 0 (a): scripted {outcome.text}"
    assert game.decisions[-1].failure == outcome.text
    assert b.games_over[0][1] is outcome


@pytest.mark.parametrize(
    "policy_field", ["on_crash", "on_protocol_error"], ids=["crash", "protocol-error"]
)
def test_random_action_policy_covers_crashes_and_protocol_errors(policy_field: str) -> None:
    outcome = Outcome.CRASH if policy_field == "on_crash" else Outcome.PROTOCOL_ERROR
    policies = Policies(**{policy_field: FailurePolicy.RANDOM_ACTION, "max_strikes": 2})
    a = FakePort("a", from_decision(2, raising(SeatFailure(outcome, "again"))))
    record = play(
        MatchConfig(seed=9, time_control=GENEROUS, policies=policies), two(a, FakePort("b"))
    )
    game = record.games[0]
    assert game.strikes[0] == 2 and game.outcome == outcome.text
    assert game.detail.endswith("(strike 2 of 2)")


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        (raising(RuntimeError("boom")), "crash"),
        (raising(KeyError("missing")), "crash"),
        (raising(ZeroDivisionError("division by zero")), "crash"),
        (raising(ConnectionResetError("reset")), "crash"),
        (returning(None), "protocol-error"),
        (returning(42), "protocol-error"),
        (returning(b"play QS"), "protocol-error"),
    ],
    ids=["runtime", "key", "zero-division", "connection", "none", "int", "bytes"],
)
def test_nothing_a_port_does_escapes_match_run(answer: Answer, outcome: str) -> None:
    """A port raising any exception or answering something that is not text becomes an outcome."""
    a, b = FakePort("a", from_decision(2, answer)), FakePort("b")
    record = play(MatchConfig(seed=10, games=2, time_control=GENEROUS), two(a, b))
    assert [g.outcome for g in record.games] == [outcome, outcome]
    assert all(g.culprit == 0 for g in record.games)
    assert len(b.games_over) == 2 and b.matches_over == ["m-test"]


def test_failing_notifications_do_not_stop_the_match() -> None:
    """game_over and match_over are best effort: a port failing them changes nothing."""

    class Grumpy(FakePort):
        async def game_over(self, *args: object) -> None:  # type: ignore[override]
            raise RuntimeError("cannot tell")

        async def match_over(self, match_id: str, games: Sequence[GameEnd]) -> None:
            raise SeatFailure(Outcome.DISCONNECT, "gone")

    a, b = Grumpy("a", seeded(1)), FakePort("b", seeded(2))
    record = play(MatchConfig(seed=11, games=2, time_control=GENEROUS), two(a, b))
    assert [g.outcome for g in record.games] == ["normal", "normal"]
    assert b.matches_over == ["m-test"]
