"""The referee's match loop with scripted fake ports, in-process (no server): identical records for the
same seed and answers, secret deals, what a request carries, multi-seat variants and consultation,
and the books of decisions and events. Clocks and failures: test_match_failures.py."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import replace

import pytest
from fake_ports import (
    GENEROUS,
    FakePort,
    from_decision,
    not_legal,
    play,
    raising,
    seeded,
    sleeping,
    two,
)

from arena.game import Action, GameState, kind_text, variant
from arena.game.events import event_text
from arena.referee import (
    GameEnd,
    Match,
    MatchConfig,
    MatchRecord,
    Outcome,
    SeatFailure,
)
from arena.referee import match as match_module
from arena.referee.match import PublicEvent
from arena.referee.record import replay

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
