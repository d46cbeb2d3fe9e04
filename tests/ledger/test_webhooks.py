"""Notifications in the ledger (issue 45): a change of status queues a delivery for its author's webhook
in the transaction that records it, the queue is capped (the oldest dropped, counted), a failed
delivery is retried with a doubling backoff and a webhook failing again and again is disabled, and the
daily digest counts the games an author's bots caused to fail by kind over the last 24 hours."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from arena.competition.spec import parse
from arena.ledger import Ledger
from arena.ledger.competitions import ACTIVE, CHECKING, FAILED, SUSPENDED, Competitions
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.ledger.webhooks import Webhooks


@pytest.fixture
def comp(tmp_path: Path) -> tuple[Ledger, Competitions, Webhooks, int]:
    led = Ledger(tmp_path / "l.sqlite")
    entry = led.register(parse({"name": "Ladder"}, "c.toml"), kind="competition")
    return led, Competitions(led), Webhooks(led), entry.id


def author(store: Competitions, cid: int, name: str) -> int:
    found = store.author_of(cid, store.add_author(cid, name))
    assert found is not None
    return found.id


def queued(hooks: Webhooks, cid: int, now: float = 1e12) -> list[tuple[str, str, str, str]]:
    return [
        (d.kind, d.payload["bot"], d.payload["version"], d.payload["reason"])
        for d in hooks.due(cid, now, 1000)
    ]


def test_each_change_of_status_an_author_is_told_of_is_queued_with_its_reason(
    comp: tuple[Ledger, Competitions, Webhooks, int],
) -> None:
    _, store, hooks, cid = comp
    ada, bob = author(store, cid, "ada"), author(store, cid, "bob")
    hooks.set(ada, "https://example.org/hook", "n1", 100)
    one, _ = store.submit(cid, ada, "a", "1", "python", bundle="a" * 64, run="r", build="make")
    store.set_status(one, CHECKING, "", note="built")
    store.set_status(one, CHECKING, "")  # the check passed: nothing noted, nothing told
    store.activate(one, "bundle:a1")
    store.set_status(one, SUSPENDED, "suspended: crash: boom", when=(ACTIVE,))
    two, _ = store.submit(cid, ada, "a", "2", "python", bundle="b" * 64, run="r")
    store.activate(two, "bundle:a2")
    three, _ = store.submit(cid, ada, "a", "3", "python", bundle="c" * 64, run="r")
    store.set_status(three, FAILED, "the check failed: no answer")
    # Bob has no webhook: nothing queued for him.
    other, _ = store.submit(cid, bob, "b", "1", "python", bundle="d" * 64, run="r")
    store.activate(other, "bundle:b1")
    assert queued(hooks, cid) == [
        ("built", "a", "1", "built"),
        ("active", "a", "1", "in play"),
        ("suspended", "a", "1", "suspended: crash: boom"),
        ("replaced", "a", "1", "replaced by version 2 (it was suspended: crash: boom)"),
        ("active", "a", "2", "in play"),
        ("failed", "a", "3", "the check failed: no answer"),
    ]
    first = hooks.due(cid, 1e12, 1)[0]
    assert first.payload["competition"] == "Ladder"
    assert first.payload["submission_id"] == one and first.payload["status"] == CHECKING
    assert first.payload["at"]
    assert hooks.due(cid, 1e12, 1000, skip=(first.id,))[0].id != first.id
    hooks.remove(ada)
    assert queued(hooks, cid) == [] and hooks.get(ada) is None


def test_an_authors_queue_is_capped_and_the_oldest_dropped_are_counted(
    comp: tuple[Ledger, Competitions, Webhooks, int],
) -> None:
    _, store, hooks, cid = comp
    ada = author(store, cid, "ada")
    hooks.set(ada, "https://example.org/hook", "n1", 3)
    for version in range(1, 6):  # 5 versions, each in play (and the one before replaced)
        sid, _ = store.submit(cid, ada, "a", str(version), "python", bundle=f"{version}" * 64)
        store.activate(sid, f"bundle:{version}")
    # 9 events (5 active, 4 replaced): the last 3 kept.
    assert queued(hooks, cid) == [
        ("active", "a", "4", "in play"),
        ("replaced", "a", "4", "replaced by version 5"),
        ("active", "a", "5", "in play"),
    ]
    hook = hooks.get(ada)
    assert hook is not None and (hook.dropped, hook.queued) == (6, 3)


def test_a_failed_delivery_backs_off_doubling_and_a_webhook_failing_in_a_row_is_disabled(
    comp: tuple[Ledger, Competitions, Webhooks, int],
) -> None:
    _, store, hooks, cid = comp
    ada = author(store, cid, "ada")
    hooks.set(ada, "https://example.org/hook", "n1", 100)
    sid, _ = store.submit(cid, ada, "a", "1", "python", bundle="a" * 64)
    store.activate(sid, "bundle:a")
    now = 1000.0
    retries = []
    for _ in range(3):
        (delivery,) = hooks.due(cid, 1e12, 10)
        failure = hooks.failed(
            delivery, "the receiver answered 500", now, attempts=4, first_retry=2.0,
            disable_after=10,
        )  # fmt: skip
        assert failure.retry_at is not None and not failure.disabled
        retries.append(failure.retry_at - now)
        assert hooks.due(cid, failure.retry_at - 0.01, 10) == [], "not due before its backoff"
    assert retries == [2.0, 4.0, 8.0]
    (delivery,) = hooks.due(cid, 1e12, 10)
    last = hooks.failed(
        delivery, "no answer", now, attempts=4, first_retry=2.0, disable_after=10
    )  # fmt: skip
    assert last.retry_at is None, "its 4 attempts spent: given up"
    hook = hooks.get(ada)
    assert hook is not None
    assert (hook.failures, hook.abandoned, hook.queued, hook.disabled_at) == (4, 1, 0, None)
    # A success resets the count in a row; then 2 more failures in a row disable it (at 2).
    store.set_status(sid, SUSPENDED, "suspended")
    (delivery,) = hooks.due(cid, 1e12, 10)
    hooks.delivered(delivery)
    hook = hooks.get(ada)
    assert hook is not None and (hook.failures, hook.delivered) == (0, 1)
    store.set_status(sid, ACTIVE, "", note="reinstated by the organiser")
    for disabled in (False, True):
        (delivery,) = hooks.due(cid, 1e12, 10)
        failure = hooks.failed(
            delivery, "the receiver answered 503", now, attempts=10, first_retry=0.0,
            disable_after=2,
        )  # fmt: skip
        assert failure.disabled is disabled
    hook = hooks.get(ada)
    assert hook is not None and hook.disabled_at is not None
    assert hook.disabled_reason.startswith(
        "disabled after 2 failed deliveries in a row; the last: the receiver answered 503"
    )
    assert hooks.due(cid, 1e12, 10) == [], "a disabled webhook is sent nothing"
    store.set_status(sid, SUSPENDED, "suspended again")
    again = hooks.get(ada)
    assert hook.queued == 1 and again is not None and again.queued == 1, "none queued if disabled"
    # Set again: enabled, its counts afresh, what was waiting sent.
    hooks.set(ada, "https://example.org/new", "n2", 100)
    hook = hooks.get(ada)
    assert hook is not None and (hook.disabled_at, hook.failures) == (None, 0)
    assert [d.url for d in hooks.due(cid, 1e12, 10)] == ["https://example.org/new"]


def game(ord_: int, a: str, b: str) -> ScheduledGame:
    return ScheduledGame(f"c{ord_:09d}-s0", ord_, 0, ord_, 0, 0, ord_, ((a,), (b,)), (a, b))


def record(outcome: str = "normal", culprit: int = -1) -> dict[str, object]:
    return {
        "games": [
            {
                "outcome": outcome,
                "detail": "what the referee saw",
                "culprit": culprit,
                "decisions": [],
                "result": {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 500]},
            }
        ]
    }


def test_the_daily_digest_counts_the_games_an_authors_bots_caused_to_fail_by_kind(
    comp: tuple[Ledger, Competitions, Webhooks, int],
) -> None:
    led, store, hooks, cid = comp
    ada, bob = author(store, cid, "ada"), author(store, cid, "bob")
    ids = {}
    for owner, name in ((ada, "a"), (bob, "b")):
        sid, _ = store.submit(cid, owner, name, "1", "python", bundle=name * 64, run="r")
        ids[name] = store.activate(sid, f"bundle:{name}")
    for owner in (ada, bob):
        hooks.set(owner, "https://example.org/hook", f"n{owner}", 100)
    # a (seat 0) crashes twice and times out once; b (seat 1) causes one illegal action.
    outcomes = [("crash", 0), ("normal", -1), ("crash", 0), ("timeout", 0), ("illegal-action", 1)]
    games = [game(i, "a", "b") for i in range(len(outcomes))]
    led.plan(cid, games)
    for g, (outcome, culprit) in zip(games, outcomes, strict=True):
        led.record_game(cid, "two-handed", g, ids, FinishedGame.from_data(record(outcome, culprit)))
    now = datetime.now(UTC) + timedelta(seconds=1)
    assert hooks.digest_due(cid, now) == [ada, bob]
    payload = hooks.digest(cid, ada, now)
    assert payload is not None
    assert payload["event"] == "digest" and payload["competition"] == "Ladder"
    assert payload["bots"] == [
        {"bot": "a", "version": "1", "failed": {"crash": 2, "timeout": 1}, "games": 3}
    ]
    assert payload["since"] < payload["at"]
    bob_says = hooks.digest(cid, bob, now)
    assert bob_says is not None and bob_says["bots"][0]["failed"] == {"illegal-action": 1}
    digests = [d for d in hooks.due(cid, 1e12, 100) if d.kind == "digest"]
    assert [d.author_id for d in digests] == [ada, bob]
    assert digests[0].payload == payload
    # Once a day: not due again until a day has passed.
    assert hooks.digest_due(cid, now + timedelta(hours=23)) == []
    assert hooks.digest_due(cid, now + timedelta(days=1)) == [ada, bob]
    hooks.set(ada, "https://example.org/again", "n9", 100)  # set again: no second digest today
    assert hooks.digest_due(cid, now + timedelta(hours=23)) == []
    # Two days on, nothing failed in the last 24 hours: nothing to say, nothing queued.
    assert hooks.digest(cid, ada, now + timedelta(days=2)) is None
    assert len([d for d in hooks.due(cid, 1e12, 100) if d.kind == "digest"]) == 2
