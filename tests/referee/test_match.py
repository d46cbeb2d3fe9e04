"""The referee's match loop with scripted fake ports, in-process (no server): identical records for the
same seed and answers, clocks and the bank, every kind of seat failure under both failure policies,
nothing escaping ``Match.run``, multi-seat variants and consultation."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import re
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

import pytest

from arena.game import Action, GameResult, GameState, kind_text, variant
from arena.game.events import event_text
from arena.referee import (
    Decision,
    FailurePolicy,
    GameEnd,
    Match,
    MatchConfig,
    MatchRecord,
    Outcome,
    Policies,
    SeatFailure,
    TimeControl,
)
from arena.referee import match as match_module
from arena.referee.match import PublicEvent
from arena.referee.record import replay

Answer = Callable[[Decision], Awaitable[object]]
GENEROUS = TimeControl(budget_ms=5_000, bank_ms=20_000, grace_ms=1_000)
ALL_PLAYS = [f"play {r}{s}" for s in "SHDC" for r in "789JQKTA"]


class FakePort:
    """A scripted player: answers with ``answer`` and remembers everything it was told."""

    def __init__(self, name: str, answer: Answer | None = None) -> None:
        self.name = name
        self.answer = answer or seeded(zlib.crc32(name.encode()))
        self.decisions: list[Decision] = []
        self.games_over: list[tuple[int, Outcome, str, int]] = []
        self.matches_over: list[str] = []
        self.ends: list[GameEnd] = []

    async def decide(self, decision: Decision) -> str:
        self.decisions.append(decision)
        return await self.answer(decision)  # type: ignore[return-value]

    async def game_over(
        self,
        match_id: str,
        game: int,
        result: GameResult,
        outcome: Outcome,
        detail: str,
        culprit: int,
    ) -> None:
        self.games_over.append((game, outcome, detail, culprit))

    async def match_over(self, match_id: str, games: Sequence[GameEnd]) -> None:
        self.matches_over.append(match_id)
        self.ends = list(games)


def seeded(seed: int) -> Answer:
    rng = random.Random(seed)

    async def answer(d: Decision) -> object:
        return rng.choice(d.legal).text

    return answer


def from_decision(k: int, bad: Answer, good: Answer | None = None) -> Answer:
    """Answer well (``good``) until this port's ``k``-th decision (1-based), then with ``bad``."""
    good = good or seeded(k)
    count = 0

    async def answer(d: Decision) -> object:
        nonlocal count
        count += 1
        return await (bad if count >= k else good)(d)

    return answer


def raising(exc: BaseException) -> Answer:
    async def answer(d: Decision) -> object:
        raise exc

    return answer


def returning(value: object) -> Answer:
    async def answer(d: Decision) -> object:
        return value

    return answer


async def hang(d: Decision) -> object:
    await asyncio.sleep(3600)
    raise AssertionError("unreachable")


def sleeping(seconds: float, then: Answer | None = None) -> Answer:
    then = then or seeded(0)

    async def answer(d: Decision) -> object:
        await asyncio.sleep(seconds)
        return await then(d)

    return answer


async def not_legal(d: Decision) -> object:
    legal = {a.text for a in d.legal}
    return next(p for p in ALL_PLAYS if p not in legal)


def play(
    config: MatchConfig, ports: Sequence[Sequence[FakePort]], match_id: str = "m-test"
) -> MatchRecord:
    return asyncio.run(asyncio.wait_for(Match(match_id, config, ports).run(), timeout=120))


def two(a: FakePort, b: FakePort) -> list[list[FakePort]]:
    return [[a], [b]]


# ---------------------------------------------------------------------- reproducibility


def test_same_seed_and_answers_give_identical_record_content() -> None:
    """ARCHITECTURE: the same seed, rules version and bot answers give an identical record."""

    def once(seed: int) -> MatchRecord:
        ports = two(FakePort("a", seeded(11)), FakePort("b", seeded(12)))
        return play(MatchConfig(seed=seed, games=2, time_control=GENEROUS), ports)

    first, second, other = once(5), once(5), once(6)
    content = first.to_dict(timings=False)
    assert content == second.to_dict(timings=False)
    assert json.dumps(content) == json.dumps(second.to_dict(timings=False))
    assert content != other.to_dict(timings=False)
    assert first.games[0].decks != other.games[0].decks
    assert [g.outcome for g in first.games] == ["normal", "normal"]
    assert all(
        "elapsed_ms" not in d and "bank_ms" not in d
        for g in content["games"]
        for d in g["decisions"]
    )
    timed = first.to_dict()
    assert all("elapsed_ms" in d for g in timed["games"] for d in g["decisions"])


# ---------------------------------------------------------------------- secret deals


def _decks(config: MatchConfig) -> list[list[list[str]]]:
    ports = two(FakePort("a", seeded(1)), FakePort("b", seeded(2)))
    return [g.decks for g in play(config, ports).games]


def test_deals_come_from_the_public_seed_and_the_secret_key() -> None:
    """ARCHITECTURE: reproducible without being predictable. Fresh secrets deal differently from the
    same seed; the same seed and key deal the same cards (duplicate deals, reruns); without a key a
    deal is what anyone can compute from the seed."""
    base = MatchConfig(seed=5, games=2, time_control=GENEROUS)
    key = bytes(range(32))
    first = _decks(replace(base, deal_key=os.urandom(32)))
    second = _decks(replace(base, deal_key=os.urandom(32)))
    assert first != second
    assert _decks(replace(base, deal_key=key)) == _decks(replace(base, deal_key=key))
    public = _decks(base)
    assert public != first and public != _decks(replace(base, deal_key=key))
    v = variant("two-handed")
    for game, decks in enumerate(public):
        computed = GameState.new(v, seed=base.game_seed(game))  # anyone can do this
        assert decks[0] == [kind_text(k) for k in computed.deck_for(0)]
    assert base.predictable and not replace(base, deal_key=key).predictable


def test_the_key_is_never_recorded_or_shown() -> None:
    key = os.urandom(32)
    config = MatchConfig(seed=5, time_control=GENEROUS, deal_key=key)
    assert key.hex() not in repr(config) and repr(key) not in repr(config)
    record = play(config, two(FakePort("a"), FakePort("b")))
    text = json.dumps(record.to_dict())
    assert key.hex() not in text
    assert str(config.deal_seed(0)) not in text  # nor the seed derived from it
    assert record.seed == 5 and record.games[0].seed == config.game_seed(0)  # the public seed


def test_a_record_replays_its_secret_deal() -> None:
    """A record keeps every deal's shuffled cards: replaying needs no key."""
    config = MatchConfig(seed=9, games=2, time_control=GENEROUS, deal_key=os.urandom(32))
    record = play(config, two(FakePort("a"), FakePort("b")))
    for game in record.games:
        state = replay(MatchRecord.from_dict(json.loads(json.dumps(record.to_dict()))), game)
        for d in game.decisions:
            assert sorted(a.text for a in state.legal_actions()) == sorted(d.legal)
            if not d.action:
                break
            state.apply(Action.parse(d.action))
        assert state.is_terminal() or game.outcome != "normal"
        assert len(game.decks) == state.deal_index + 1
        assert [kind_text(k) for k in state.deck_for(0)] == game.decks[0]


def test_requests_carry_observe_the_legal_actions_and_the_clock() -> None:
    """Each request holds the engine's sorted legal actions, ids that grow across games, the match's
    budget and the seat's bank; the ports are told of each game's end and of the match's end."""
    a, b = FakePort("a", seeded(1)), FakePort("b", seeded(2))
    record = play(MatchConfig(seed=3, games=2, time_control=GENEROUS), two(a, b))
    ids = [d.request_id for d in sorted(a.decisions + b.decisions, key=lambda d: d.request_id)]
    assert ids == list(range(1, len(ids) + 1))
    assert [d.request_id for g in record.games for d in g.decisions] == ids
    for port, seat in ((a, 0), (b, 1)):
        assert {d.seat for d in port.decisions} == {seat}
        assert all(d.match_id == "m-test" for d in port.decisions)
        assert all(d.budget_ms == GENEROUS.budget_ms for d in port.decisions)
        assert all(0 < d.bank_ms <= GENEROUS.bank_ms for d in port.decisions)
        assert all(list(d.legal) == sorted(d.legal) for d in port.decisions)
        assert [(g, o, c) for g, o, _, c in port.games_over] == [
            (0, Outcome.NORMAL, -1),
            (1, Outcome.NORMAL, -1),
        ]
        assert port.matches_over == ["m-test"]
        assert [(e.game, e.outcome) for e in port.ends] == [
            (0, Outcome.NORMAL),
            (1, Outcome.NORMAL),
        ]
    game = record.games[0]
    state = replay(record, game)
    for d in game.decisions:
        assert tuple(a.text for a in state.legal_actions()) == d.legal
        state.apply(state.legal_actions()[list(d.legal).index(d.action)])
    assert state.is_terminal()


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


# ---------------------------------------------------------------------- seats and players


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("two-handed", [1]),
        ("two-handed", [1, 1, 1]),
        ("three-handed", [1, 1]),
        ("three-handed-consultation", [1, 1]),
        ("four-handed-consultation", [2, 1]),
        ("four-handed-partners", [1, 1, 2, 1]),
    ],
)
def test_match_rejects_the_wrong_players(name: str, shape: list[int]) -> None:
    ports = [[FakePort(f"p{s}{m}") for m in range(n)] for s, n in enumerate(shape)]
    with pytest.raises(ValueError, match=r"seat|seats"):
        Match("m", MatchConfig(variant=name), ports)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["three-handed", "four-handed", "four-handed-partners"])
def test_multi_seat_variants_ask_every_seat(name: str) -> None:
    v = variant(name)
    ports = [[FakePort(f"p{s}", seeded(s))] for s in range(v.seats)]
    record = play(MatchConfig(variant=name, seed=12, time_control=GENEROUS), ports)
    game = record.games[0]
    assert game.outcome == "normal"
    assert record.players == [[f"p{s}"] for s in range(v.seats)]
    for seat, (port,) in enumerate(ports):
        assert port.decisions and {d.seat for d in port.decisions} == {seat}
    state = replay(record, game)
    for d in game.decisions:
        assert d.seat == state.to_act
        state.apply(next(a for a in state.legal_actions() if a.text == d.action))
    assert state.is_terminal()
    assert game.result["ranking"] == list(state.result().ranking)


@pytest.mark.parametrize("name", ["three-handed-consultation", "four-handed-consultation"])
def test_consultation_alternates_the_deciding_member_trick_by_trick(name: str) -> None:
    """000: the allies share one hand; the decision alternates between them trick by trick (the
    declaring turn after a trick belongs to that trick)."""
    v = variant(name)
    ports = [
        [FakePort(f"s{s}m{m}", seeded(10 * s + m)) for m in range(v.team_size(s))] for s in (0, 1)
    ]
    record = play(MatchConfig(variant=name, seed=13, time_control=GENEROUS), ports)
    game = record.games[0]
    assert game.outcome == "normal"
    for seat, members in enumerate(ports):
        for member, port in enumerate(members):
            assert port.decisions, f"seat {seat} member {member} never decided"
            assert {(d.seat, d.deciding_member) for d in port.decisions} == {(seat, member)}
    state = replay(record, game)
    switches = 0
    previous: dict[int, tuple[int, int]] = {}
    for d in game.decisions:
        trick = state.game_tricks - (1 if state.phase == 2 else 0)  # phase 2: the declaring turn
        size = v.team_size(d.seat)
        assert d.member == trick % size
        if size == 2 and d.seat in previous and previous[d.seat][0] != trick:
            switches += previous[d.seat][1] != d.member
        previous[d.seat] = (trick, d.member)
        state.apply(next(a for a in state.legal_actions() if a.text == d.action))
    assert switches > 20
    assert state.is_terminal()


def test_a_consultation_member_failing_forfeits_its_seat() -> None:
    name = "four-handed-consultation"
    bad = FakePort("s1m1", from_decision(2, raising(SeatFailure(Outcome.CRASH, "member down"))))
    ports = [[FakePort("s0m0"), FakePort("s0m1")], [FakePort("s1m0"), bad]]
    record = play(MatchConfig(variant=name, seed=14, time_control=GENEROUS), ports)
    game = record.games[0]
    assert (game.outcome, game.culprit) == ("crash", 1)
    assert game.detail == "seat 1 (s1m1): member down"
    assert game.decisions[-1].member == 1
    assert record.players == [["s0m0", "s0m1"], ["s1m0", "s1m1"]]


def test_a_forfeit_in_a_partnership_loses_for_the_whole_side() -> None:
    """Partners (seats 0 and 2 against 1 and 3): one partner's forfeit loses the game for both."""
    ports = [[FakePort(f"p{s}")] for s in range(4)]
    ports[2][0].answer = from_decision(1, not_legal)
    record = play(MatchConfig(variant="four-handed-partners", seed=15), ports)
    game = record.games[0]
    assert (game.outcome, game.culprit) == ("illegal-action", 2)
    assert game.result["ranking"] == [1, 0]


def test_the_first_dealer_can_be_fixed_per_game() -> None:
    a, b = FakePort("a"), FakePort("b")
    record = play(MatchConfig(seed=16, games=2, dealers=(1, 0), time_control=GENEROUS), two(a, b))
    assert [g.dealer for g in record.games] == [1, 0]
    assert [g.decisions[0].seat for g in record.games] == [0, 1]  # the non-dealer leads
    state = GameState.new(variant("two-handed"), seed=record.games[0].seed, dealer=1)
    assert state.to_act == 0


def test_the_books_record_every_decision_and_publish_every_event_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Decision records and public events are written in batches off the critical path: still every
    decision, with the legal actions as sent and the action applied, and every event of the log,
    published once, in order and before the game's end is announced, equal to the record's."""
    published: list[tuple[int, int, str]] = []
    ended: list[tuple[int, int]] = []

    def on_event(event: PublicEvent) -> None:
        assert event.match_id == "m-books"
        published.append((event.game, event.sequence, event.text))

    def on_game_end(end: GameEnd) -> None:
        ended.append((end.game, len(published)))

    # Flushed at every turn of the loop that seat a's answers give: batches of every size.
    monkeypatch.setattr(match_module, "FLUSH_SECONDS", 0.0)
    a, b = FakePort("a", sleeping(0.0)), FakePort("b")
    config = MatchConfig(seed=4, games=2, time_control=GENEROUS)
    match = Match("m-books", config, two(a, b), on_event=on_event, on_game_end=on_game_end)
    record = asyncio.run(asyncio.wait_for(match.run(), timeout=120))
    asked = sorted(a.decisions + b.decisions, key=lambda d: d.request_id)
    decisions = [d for g in record.games for d in g.decisions]
    assert [d.request_id for d in decisions] == [d.request_id for d in asked]
    assert [d.legal for d in decisions] == [tuple(x.text for x in d.legal) for d in asked]
    for game in record.games:
        state = replay(record, game)
        for d in game.decisions:
            state.apply(Action.parse(d.action))
        assert state.is_terminal()
        assert game.events == [event_text(e) for e in state.log]
        mine = [(s, t) for g, s, t in published if g == game.index]
        assert mine == list(enumerate(game.events))
    # Each game's events were all out before its end was announced.
    assert ended == [(0, len(record.games[0].events)), (1, len(published))]
