"""An author's turns and caps at the competition's intake: submissions taken in one at a time per
author (never holding up another's), at most max_pending waiting, max_bots_per_author in play and
max_submissions_per_day over the last 24 hours."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from intake_helpers import Gates, bundle, refused, run, running, until

from arena.ledger import competitions as store


def test_an_authors_intakes_are_taken_one_at_a_time_and_never_hold_up_anothers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(one_intake_per_author, tmp_path, monkeypatch)


async def one_intake_per_author(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four submissions of one author whose builds slept for ever held both intake places, and
    another author's waited 234 s. An author's second version now waits for their first, holding
    no place meanwhile; another author's is built at once. The first, passed, is then replaced by
    the second (the ledger keeps the later version in play whichever passes first: test_store)."""
    gates = Gates()
    async with running(tmp_path, monkeypatch, gates) as (server, comp, ada):
        gates.close("1")
        await server.submit(ada, bundle("1"))
        two = await server.submit(ada, bundle("2"))
        comp.add_author(server.cid, "bob")
        bob = comp.authors(server.cid)[1]
        other = await server.submit(bob, bundle("c1", name="c"))
        await until(lambda: comp.submission(other.id).status == store.ACTIVE)
        assert gates.started == ["1", "c1"], "ada's second waits for her first"
        gates.open("1")
        await until(lambda: comp.submission(two.id).status == store.ACTIVE)
        await until(lambda: not server._tasks)
        assert gates.started == ["1", "c1", "2"]
        assert [(s.version, s.status, s.reason) for s in comp.submissions(server.cid, ada.id)] == [
            ("1", store.REPLACED, "replaced by version 2"),
            ("2", store.ACTIVE, ""),
        ]
        await server._refresh()
        assert sorted(e.submission.version for e in server.entries.values()) == ["2", "c1"]


def test_an_author_has_at_most_max_pending_submissions_in_intake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(max_pending, tmp_path, monkeypatch)


async def max_pending(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Submissions waiting to be built are capped per author (each takes an intake's time and a
    bundle's disk); one that finishes, or is withdrawn, makes room."""
    gates = Gates()
    async with running(tmp_path, monkeypatch, gates, max_pending=2) as (server, comp, ada):
        for version in ("1", "2", "3"):
            gates.close(version)
        await server.submit(ada, bundle("1"))
        await server.submit(ada, bundle("2", name="other"))
        why = (
            "you have 2 submission(s) still to be built and checked, the most allowed "
            "(max_pending = 2); wait for one to finish (arena compete submissions), or withdraw "
            "its bot"
        )
        await refused(server.submit(ada, bundle("3")), why)
        assert await server.withdraw(ada, "other") == 1
        three = await server.submit(ada, bundle("3"))
        for version in ("1", "2", "3"):
            gates.open(version)
        await until(lambda: comp.submission(three.id).status == store.ACTIVE)


def test_an_author_makes_at_most_max_submissions_per_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(max_per_day, tmp_path, monkeypatch)


async def max_per_day(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every submission stays in the ledger with its log, a failed one too: new versions and
    failing bundles grew it without end. Over the last 24 hours an author has at most
    max_submissions_per_day, of either kind; older ones no longer count, and another author's
    never do."""
    gates = Gates()
    async with running(tmp_path, monkeypatch, gates, max_submissions_per_day=2) as (
        server,
        comp,
        ada,
    ):
        await server.register_remote(ada, "r", "1", "python")
        gates.errors["1"] = OSError("no room")
        failed = await server.submit(ada, bundle("1"))
        await until(
            lambda: comp.submission(failed.id).status == store.FAILED
        )  # counted all the same
        why = (
            "you have made 2 submissions in the last 24 hours, the most allowed "
            "(max_submissions_per_day = 2); try again later"
        )
        await refused(server.register_remote(ada, "r", "2", "python"), why)
        await refused(server.submit(ada, bundle("2")), why)
        comp.add_author(server.cid, "bob")
        await server.register_remote(comp.authors(server.cid)[1], "s", "1", "python")
        await until(lambda: not server._tasks)
        with comp.ledger.transaction():  # a day and a minute later
            comp.conn.execute(
                "UPDATE submissions SET submitted_at = ? WHERE author_id = ?",
                ("2000-01-01T00:00:00+00:00", ada.id),
            )
        await server.register_remote(ada, "r", "2", "python")
        assert [s.version for s in comp.submissions(server.cid, ada.id)] == ["1", "1", "2"]


def test_an_author_has_at_most_max_bots_per_author_and_registrations_share_refreshes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(max_bots, tmp_path, monkeypatch)


async def max_bots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One author registered 2,410 remote entrants, every one on the board, each registration a
    full refresh on the ledger's thread (games recorded fell from 19 to 1-3 per 10 s). Bots are
    capped per author, bundles and remote entrants together (a new version is no new bot), and
    registrations that come together share one refresh."""
    from arena.competition import roster

    monkeypatch.setattr(roster, "REFRESH_SECONDS", 3600.0)  # no refresh but the calls'
    gates = Gates()
    async with running(tmp_path, monkeypatch, gates, max_bots_per_author=3) as (server, comp, ada):
        await server.submit(ada, bundle("1"))
        await server.register_remote(ada, "r1", "1", "python")
        await server.register_remote(ada, "r2", "1", "python")
        why = (
            "you have 3 bots in play or in intake, the most allowed (max_bots_per_author = 3); "
            "withdraw one first (arena compete withdraw BOT)"
        )
        await refused(server.register_remote(ada, "r3", "1", "python"), why)
        await refused(server.submit(ada, bundle("1", name="c")), why)
        await server.register_remote(ada, "r2", "2", "python")  # a new version: no new bot
        assert await server.withdraw(ada, "r2") == 1
        await server.register_remote(ada, "r3", "1", "python")
        await until(lambda: not server._tasks)

        # Registrations while a refresh is under way wait for one more, shared by all of them.
        comp.add_author(server.cid, "bob")
        bob = comp.authors(server.cid)[1]
        refreshes: list[int] = []
        gate = asyncio.Event()
        refresh = server._refresh

        async def counted() -> None:
            refreshes.append(1)
            await gate.wait()
            await refresh()

        monkeypatch.setattr(server, "_refresh", counted)
        first = asyncio.ensure_future(server.register_remote(bob, "s0", "1", "python"))
        await until(lambda: len(refreshes) == 1)
        rest = [
            asyncio.ensure_future(server.register_remote(bob, f"s{i}", "1", "python"))
            for i in (1, 2)
        ]
        await until(lambda: len(comp.submissions(server.cid, bob.id)) == 3)
        gate.set()
        await asyncio.gather(first, *rest)
        assert len(refreshes) == 2
        assert {e.submission.bot for e in server.entries.values()} >= {"s0", "s1", "s2"}
