"""The author's side of a competition in the ledger (issue 45): every change of a version's status kept
with its time and reason (and shown publicly without the reasons that quote a bot), the board ranking
only the versions in play, each game's bot output and time per decision kept per seat, and what an
author is shown never naming the server's paths."""

from __future__ import annotations

import struct
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from arena.competition import intake
from arena.competition.spec import parse
from arena.ledger import Ledger, seat_reports
from arena.ledger.competitions import (
    ACTIVE,
    BUILDING,
    CHECKING,
    REPLACED,
    SUSPENDED,
    WITHDRAWN,
    Competitions,
)
from arena.ledger.rows import FinishedGame, ScheduledGame


@pytest.fixture
def comp(tmp_path: Path) -> tuple[Ledger, Competitions, int]:
    led = Ledger(tmp_path / "l.sqlite")
    entry = led.register(parse({"name": "Ladder"}, "c.toml"), kind="competition")
    return led, Competitions(led), entry.id


def author(store: Competitions, cid: int, name: str) -> int:
    found = store.author_of(cid, store.add_author(cid, name))
    assert found is not None
    return found.id


def game(ord_: int, a: str, b: str) -> ScheduledGame:
    return ScheduledGame(f"c{ord_:09d}-s0", ord_, 0, ord_, 0, 0, ord_, ((a,), (b,)), (a, b))


def record(outcome: str = "normal", culprit: int = -1, detail: str = "", first: int = 0) -> dict:
    """A one-game match record: seat ``first`` wins; each seat decides twice."""
    decisions = [
        {"seat": s, "member": 0, "elapsed_ms": ms, "bank_ms": bank}
        for s, ms, bank in ((0, 10.0, 900.0), (1, 30.0, 800.0), (0, 20.0, 890.0), (1, 50.0, 750.0))
    ]
    return {
        "games": [
            {
                "outcome": outcome,
                "detail": detail,
                "culprit": culprit,
                "decisions": decisions,
                "result": {
                    "sides": [[0], [1]],
                    "ranking": [0, 1] if first == 0 else [1, 0],
                    "scores": [1000, 500],
                },
            }
        ]
    }


def test_every_change_of_status_is_kept_and_a_suspension_survives_its_replacement(
    comp: tuple[Ledger, Competitions, int],
) -> None:
    _, store, cid = comp
    ada = author(store, cid, "ada")
    one, _ = store.submit(cid, ada, "a", "1", "python", bundle="a" * 64, run="r", build="make")
    assert store.submission(one).status == BUILDING
    store.set_status(one, CHECKING, "", note="built")
    store.set_status(one, CHECKING, "")  # the check passed: no change, nothing noted
    entrant = store.activate(one, "bundle:a1")
    assert entrant is not None
    store.set_status(one, SUSPENDED, "suspended: crash: Traceback ... secret", when=(ACTIVE,))
    store.set_status(one, ACTIVE, "", when=(SUSPENDED,), note="reinstated by the organiser")
    store.set_status(one, SUSPENDED, "suspended: it crashed 5 of 6", when=(ACTIVE,))
    two, _ = store.submit(cid, ada, "a", "2", "python", bundle="b" * 64, run="r")
    assert store.submission(two).status == CHECKING, "no build command: checked at once"
    store.activate(two, "bundle:a2")
    assert [(c.status, c.reason) for c in store.history(one)] == [
        (BUILDING, "submitted"),
        (CHECKING, "built"),
        (ACTIVE, "in play"),
        (SUSPENDED, "suspended: crash: Traceback ... secret"),
        (ACTIVE, "reinstated by the organiser"),
        (SUSPENDED, "suspended: it crashed 5 of 6"),
        (REPLACED, "replaced by version 2"),
    ]
    assert all(c.at for c in store.history(one))
    # The replaced version's reason still says why it had been suspended.
    assert store.submission(one).reason == (
        "replaced by version 2 (it was suspended: it crashed 5 of 6)"
    )
    # The public history: every change, but no reason that may quote the bot.
    assert [(c.status, c.reason) for c in store.public_history(entrant)] == [
        (BUILDING, "submitted"),
        (CHECKING, "built"),
        (ACTIVE, "in play"),
        (SUSPENDED, ""),
        (ACTIVE, "reinstated by the organiser"),
        (SUSPENDED, ""),
        (REPLACED, "replaced by version 2"),
    ]
    assert [c.status for c in store.history(two)] == [CHECKING, ACTIVE]


def test_a_suspension_reason_is_kept_whole(comp: tuple[Ledger, Competitions, int]) -> None:
    _, store, cid = comp
    ada = author(store, cid, "ada")
    sid, _ = store.submit(cid, ada, "a", "1", "python", bundle="a" * 64, run="r")
    store.activate(sid, "bundle:a")
    reason = "suspended: the last: crash: " + "line of a traceback\n" * 100  # 2,000 characters
    store.set_status(sid, SUSPENDED, reason)
    assert store.submission(sid).reason == reason


def test_the_board_ranks_only_the_versions_in_play(comp: tuple[Ledger, Competitions, int]) -> None:
    led, store, cid = comp
    ids = {}
    for name in ("a", "b", "c"):
        owner = author(store, cid, f"author-{name}")
        sid, _ = store.submit(cid, owner, name, "1", "python", bundle=name * 64, run="r")
        ids[name] = store.activate(sid, f"bundle:{name}")
    games = [game(0, "a", "b"), game(1, "a", "c"), game(2, "a", "b")]
    led.plan(cid, games)
    for g in games:
        led.record_game(
            cid,
            "two-handed",
            g,
            {k: v for k, v in ids.items() if k in g.group},
            FinishedGame.from_data(record()),
        )
    board = store.board(cid)
    assert (board[0].bot, board[0].rank, board[0].in_play) == ("a", 1, True)
    assert all(r.last_played for r in board)
    # a, the best, withdrawn: the others are ranked 1 and 2, a listed apart with its last rating.
    rating = board[0].exposed
    a_sub = next(s for s in store.submissions(cid) if s.bot == "a")
    store.set_status(a_sub.id, WITHDRAWN, "withdrawn by its author")
    board = store.board(cid)
    assert [(r.rank, r.in_play) for r in board] == [(1, True), (2, True), (0, False)]
    assert (board[2].bot, board[2].status, board[2].exposed) == ("a", WITHDRAWN, rating)
    # A day on, the ranks it is compared with are those after the games before then.
    later = store.board(cid, now=datetime.now(UTC) + timedelta(days=1, minutes=1))
    assert [r.rank_change for r in later[:2]] == [0, 0]
    assert [r.rank_change for r in board[:2]] == [None, None], "not ranked a day ago"


def test_each_games_bot_output_and_times_are_kept_per_seat_and_go_with_the_game(
    comp: tuple[Ledger, Competitions, int],
) -> None:
    led, store, cid = comp
    ids = {}
    for name in ("a", "b"):
        owner = author(store, cid, f"author-{name}")
        sid, _ = store.submit(cid, owner, name, "1", "python", bundle=name * 64, run="r")
        ids[name] = store.activate(sid, f"bundle:{name}")
    g = game(0, "a", "b")
    led.plan(cid, [g])
    rec = record("crash", culprit=1, detail="crash: its output:\n    | boom")
    game_id = led.record_game(cid, "two-handed", g, ids, FinishedGame.from_data(rec))
    reports = seat_reports.from_game(
        FinishedGame.from_data(rec),
        [[ids["a"]], [ids["b"]]],
        [(0, 0, b"hello\n", 6), (1, 0, b"tail", 5000)],
    )
    assert [r.times_ms for r in reports] == [(10, 20), (30, 50)]
    assert [r.bank_left_ms for r in reports] == [890, 750]
    store.record_reports(game_id, reports)
    outs = store.game_outputs(game_id)
    assert [(o.seat, o.bot, o.output, o.output_bytes) for o in outs] == [
        (0, "a", "hello\n", 6),
        (1, "b", "tail", 5000),
    ]
    use = store.time_use(cid, ids["b"])
    assert (use.games, use.decisions, use.median_ms, use.p99_ms) == (1, 2, 40.0, 50.0)
    assert use.bank_left_ms == 750 and use.failures == {"crash": 1}
    assert store.time_use(cid, ids["a"]).failures == {}
    failures = store.play_failures(cid, ids["b"])
    assert [(f.game_id, f.key, f.outcome) for f in failures] == [(game_id, g.key, "crash")]
    assert store.game(cid, game_id) == (g.key, "crash")
    # Voided, the game takes its reports with it.
    led.void_games(cid, "a test", [game_id])
    assert store.game_outputs(game_id) == []
    assert store.game(cid, game_id) is None


def test_time_use_percentiles_are_the_nearest_rank() -> None:
    values = list(range(1, 101))
    assert seat_reports.percentile(values, 0.99) == 99
    assert seat_reports.percentile([5], 0.99) == 5
    assert struct.calcsize("<I") == 4


def test_what_an_author_is_shown_names_no_path_of_the_servers() -> None:
    builds = Path("/srv/ladder.d/builds")
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/srv/ladder.d/builds/12/bot.py", line 3, in <module>\n'
        '  File "/opt/venv/lib/python3.11/site-packages/arena_bot/client.py", line 9, in run\n'
        "cwd /srv/ladder.d/builds/12, data /srv/ladder.d/builds; see https://example.org/a/b"
    )
    shown = intake.for_authors(trace, builds)
    assert "/srv" not in shown and "/opt" not in shown
    assert '  File "bot.py", line 3' in shown
    assert '  File ".../client.py", line 9' in shown
    assert "cwd ., data ..." in shown and "https://example.org/a/b" in shown
