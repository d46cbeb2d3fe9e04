"""Match records: the full record replays to the same game, round-trips through JSON, and a seat's view
(``seat_view``) holds only that seat's hands and exactly the observations ``observe`` gave it."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_ports import GENEROUS, FakePort, from_decision, hang, seeded

from arena.game import GameState, kind_text, observe, variant
from arena.game.events import event_text
from arena.referee import Match, MatchConfig, MatchRecord, TimeControl
from arena.referee.record import replay, result_to_dict, seat_view

CASES = [
    ("two-handed", {}),
    ("two-handed", {"declarations_per_trick": "one", "bezique_cards": "trump-dependent"}),
    ("polish", {}),
    ("rubicon", {}),
    ("three-handed-consultation", {}),
    ("four-handed-partners", {}),
]


def run_match(
    name: str, options: dict[str, str], seed: int, games: int = 1, tc: TimeControl = GENEROUS
) -> tuple[MatchRecord, list[list[FakePort]]]:
    v = variant(name, **options)
    ports = [
        [FakePort(f"s{s}m{m}", seeded(100 * seed + 10 * s + m)) for m in range(v.team_size(s))]
        for s in range(v.seats)
    ]
    config = MatchConfig(
        variant=name, options=tuple(options.items()), seed=seed, games=games, time_control=tc
    )
    record = asyncio.run(asyncio.wait_for(Match("m-rec", config, ports).run(), timeout=120))
    return record, ports


def hand_kinds(state: GameState, seat: int) -> list[int]:
    return sorted(c & 31 for c in state.hands[seat])


def keys(data: Any) -> Iterator[str]:
    if isinstance(data, dict):
        for k, v in data.items():
            yield k
            yield from keys(v)
    elif isinstance(data, list | tuple):
        for v in data:
            yield from keys(v)


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{len(o)}" for n, o in CASES])
def test_seat_view_holds_only_that_seats_hand_as_observe_gave_it(
    name: str, options: dict[str, str]
) -> None:
    """ARCHITECTURE, RULES.md section 7: replays exist per seat; a seat's view never holds another
    seat's hand or the stock, and shows what the seat was sent."""
    record, ports = run_match(name, options, seed=3)
    game = record.games[0]
    assert game.outcome == "normal"
    v = variant(name, **options)
    for seat in range(v.seats):
        view = seat_view(record, seat)
        assert json.loads(json.dumps(view))["seat"] == seat
        assert not {"decks", "seed", "stock"} & set(keys(view))
        sent = sorted((d for p in ports[seat] for d in p.decisions), key=lambda d: d.request_id)
        mine = view["games"][0]["decisions"]
        assert [d["request_id"] for d in mine] == [d.request_id for d in sent]
        assert [d["observation"] for d in mine] == [d.observation.to_dict() for d in sent]
        assert [d["legal"] for d in mine] == [[a.text for a in d.legal] for d in sent]
        assert [d["member"] for d in mine] == [d.deciding_member for d in sent]
        # Replay the full state alongside: the view's hand is this seat's hand, kind for kind.
        state = replay(record, game)
        seen = [0] * v.team_size(seat)  # the public log each player of the seat has been sent
        views = iter(mine)
        for d in game.decisions:
            if d.seat == seat:
                shown = next(views)
                kinds = sorted(kind_text(k) for k in hand_kinds(state, seat))  # its own cards
                assert sorted(c.split(".")[0] for c in shown["observation"]["hand"]) == kinds
                expected = observe(state, seat, log_from=seen[d.member]).to_dict()
                seen[d.member] = len(state.log)
                assert shown["observation"] == expected
            state.apply(next(a for a in state.legal_actions() if a.text == d.action))
        assert next(views, None) is None


def test_a_seats_view_never_shows_another_hand_when_the_hands_differ() -> None:
    """A check that could fail: each seat's shown hand differs from the other seat's hand whenever
    their kinds differ, so the view is not merely any hand."""
    record, _ = run_match("two-handed", {}, seed=4)
    game = record.games[0]
    differing = 0
    for seat in (0, 1):
        view = seat_view(record, seat)["games"][0]["decisions"]
        state = replay(record, game)
        views = iter(view)
        for d in game.decisions:
            if d.seat == seat:
                shown = Counter(c.split(".")[0] for c in next(views)["observation"]["hand"])
                other = Counter(kind_text(k) for k in hand_kinds(state, 1 - seat))
                if other != Counter(kind_text(k) for k in hand_kinds(state, seat)):
                    differing += 1
                    assert shown != other
            state.apply(next(a for a in state.legal_actions() if a.text == d.action))
    assert differing > 50


@pytest.mark.parametrize(
    ("name", "options"), CASES[:4], ids=[f"{n}-{len(o)}" for n, o in CASES[:4]]
)
def test_the_full_record_replays_the_game(name: str, options: dict[str, str]) -> None:
    """The full record keeps each deal's shuffled order, every decision's legal actions and action,
    the public log and the result; replaying it gives the same game."""
    record, _ = run_match(name, options, seed=5, games=2)
    assert record.variant == name and record.rules_version
    assert record.options == dict(variant(name, **options).options)
    assert record.time_control == {"budget_ms": 5_000, "bank_ms": 20_000, "grace_ms": 1_000}
    for game in record.games:
        state = replay(record, game)
        assert game.decks[0] == [kind_text(k) for k in state.deck_for(0)]
        for d in game.decisions:
            assert list(d.legal) == [a.text for a in state.legal_actions()]
            assert d.reply == d.action and d.failure is None
            state.apply(next(a for a in state.legal_actions() if a.text == d.action))
        assert state.is_terminal()
        assert len(game.decks) == len(state.deals)
        assert game.decks == [
            [kind_text(k) for k in state.deck_for(i)] for i in range(len(state.deals))
        ]
        assert game.events == [event_text(e) for e in state.log]
        assert game.result == result_to_dict(state.result())


def test_a_record_round_trips_through_json() -> None:
    record, _ = run_match("polish", {}, seed=6, games=2)
    data = json.loads(json.dumps(record.to_dict()))
    again = MatchRecord.from_dict(data)
    assert again.to_dict() == record.to_dict()
    assert seat_view(again, 1) == seat_view(record, 1)


def test_a_record_played_on_a_cluster_node_reads_back_with_its_node() -> None:
    # The cluster adds where a game was played; such a record was once refused by every replay.
    record, _ = run_match("two-handed", {}, seed=6, games=1)
    node = {"id": "ab12", "address": "10.0.0.2", "host": "worker-2"}
    data = json.loads(json.dumps({**record.to_dict(), "node": node}))
    again = MatchRecord.from_dict(data)
    assert again.node == node and again.to_dict() == {**record.to_dict(), "node": node}
    assert MatchRecord.from_dict(record.to_dict()).node is None


def test_seat_view_of_a_forfeited_game() -> None:
    """A game that ended on a seat's failure has a last decision with no action applied; its seat
    views must still be built, showing the failure."""
    tc = TimeControl(budget_ms=40, bank_ms=0, grace_ms=10)
    ports = [[FakePort("a", from_decision(3, hang, seeded(1)))], [FakePort("b", seeded(2))]]
    config = MatchConfig(seed=7, games=2, time_control=tc)
    record = asyncio.run(asyncio.wait_for(Match("m-ff", config, ports).run(), timeout=60))
    assert [g.outcome for g in record.games] == ["timeout", "timeout"]
    for seat in (0, 1):
        view = seat_view(record, seat)
        assert [g["outcome"] for g in view["games"]] == ["timeout", "timeout"]
    failed = seat_view(record, 0)["games"][0]["decisions"][-1]
    assert failed["failure"] == "timeout" and failed["action"] == ""


def test_to_dict_is_asdict_written_out() -> None:
    """``MatchRecord.to_dict`` is written out field by field for speed: it must give exactly what
    ``dataclasses.asdict`` gives (a field added to a record and not to ``to_dict`` fails here), with
    and without timings, for games that ended normally and on a failure, and share nothing mutable
    with the record."""
    tc = TimeControl(budget_ms=40, bank_ms=0, grace_ms=10)
    ports = [[FakePort("a", from_decision(3, hang, seeded(1)))], [FakePort("b", seeded(2))]]
    failed = asyncio.run(
        asyncio.wait_for(Match("m-ff", MatchConfig(seed=7, time_control=tc), ports).run(), 60)
    )
    for record in (run_match("rubicon", {}, seed=3, games=2)[0], failed):
        assert record.to_dict() == dataclasses.asdict(record)
        plain = dataclasses.asdict(record)
        for game in plain["games"]:
            for d in game["decisions"]:
                del d["elapsed_ms"], d["bank_ms"]
        assert record.to_dict(timings=False) == plain
        assert json.dumps(record.to_dict()) == json.dumps(dataclasses.asdict(record))
    assert failed.games[0].outcome == "timeout" and failed.games[0].decisions[-1].detail
    data = record.to_dict()
    data["options"]["x"] = "y"
    data["policies"]["on_timeout"] = "x"
    data["games"][0]["result"]["ranking"].append(9)
    data["games"][0]["decks"][0].append("x")
    data["games"][0]["strikes"].append(9)
    data["games"][0]["events"].append("x")
    assert record.to_dict() == dataclasses.asdict(record), "the copy shares nothing"


def _damaged(data: dict[str, Any], how: str) -> dict[str, Any]:
    game = data["games"][0]
    if how == "variant":
        data["variant"] = "zzz"
    elif how == "decks":
        game["decks"] = 5
    elif how == "short deck":
        game["decks"][0] = game["decks"][0][:10]
    elif how == "dealer":
        game["dealer"] = "zz"
    elif how == "no dealer":
        game["dealer"] = None
    elif how == "options":
        data["options"] = "x"
    elif how == "card":
        game["decks"][0][0] = "ZZ"
    elif how == "action":
        game["decisions"][3]["action"] = "play ZZ"
    elif how == "no games":
        data["games"] = []
    return data


@pytest.mark.parametrize(
    ("how", "why"),
    [
        ("variant", "deal cannot be set up: unknown variant"),
        ("decks", "deal cannot be set up"),
        ("short deck", "must hold 64 cards"),
        ("dealer", "dealer: expected a seat number, got 'zz'"),
        ("no dealer", "dealer: expected a seat number, got None"),  # never another game, silently
        ("options", "deal cannot be set up: a field of the wrong type"),
        ("card", "deal cannot be set up"),
        ("action", "the record does not replay"),
        ("no games", "the record holds no game"),
    ],
)
def test_a_damaged_record_file_is_a_named_error_not_a_traceback(
    tmp_path: Path, how: str, why: str
) -> None:
    from typer.testing import CliRunner

    from arena.cli.main import app

    record, _ = run_match("two-handed", {}, seed=6, games=1)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(_damaged(record.to_dict(), how)))
    result = CliRunner().invoke(app, ["replay", "--record", str(path)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert why in " ".join(result.output.split())
