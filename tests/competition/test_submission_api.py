"""The submission service's guards over real gRPC: the author's token is checked before a request is
read, the receive limit is what a bundle needs, and what a stranger or an author sends that names
nothing (an id beyond SQLite's integers) is refused by name."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import pytest
from intake_helpers import Gates, bundle, run, running, until

from arena.competition import submission_access, submission_api
from arena.ledger.rows import FinishedGame
from arena.service.server import open_files_limit
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

# A remote entrant's language labels: a bundle's languages, or "remote".
LABELS = "python, node, cpp, go, java, binary, remote"

MiB = 1024 * 1024


def stub(address: str) -> tuple[grpc.aio.Channel, competition_pb2_grpc.CompetitionStub]:
    channel = grpc.aio.insecure_channel(
        address, options=[("grpc.max_send_message_length", 64 * MiB)]
    )
    return channel, competition_pb2_grpc.CompetitionStub(channel)


def test_a_stranger_is_refused_before_the_request_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(stranger_refused, tmp_path, monkeypatch)


async def stranger_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A security tester's Submit calls of ~80 MB with no token were refused only once received and
    parsed (forty at once: 4 GB). The token is now checked before the body is read: the servicer's
    handler never runs for a stranger's call, and an author's call still does."""
    handled: list[str] = []
    submit = submission_api.CompetitionServicer.Submit

    async def counted(self: Any, request: pb.SubmitRequest, context: Any) -> pb.SubmitResponse:
        handled.append("Submit")
        return await submit(self, request, context)

    monkeypatch.setattr(submission_api.CompetitionServicer, "Submit", counted)
    async with running(tmp_path, monkeypatch, Gates(), max_bundle_mb=4) as (server, comp, _):
        channel, calls = stub(server.submissions_address)
        body = pb.SubmitRequest(bundle=bytes(3 * MiB))
        for metadata in ((), (("authorization", "Bearer not-a-token"),)):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await calls.Submit(body, metadata=metadata)
            assert info.value.code() is grpc.StatusCode.UNAUTHENTICATED
            assert "arena compete author add NAME" in (info.value.details() or "")
        assert handled == [], "a stranger's call reached the handler"
        token = comp.add_author(server.cid, "bob")
        mine = (("authorization", f"Bearer {token}"),)
        sent = await calls.Submit(pb.SubmitRequest(bundle=bundle("1")), metadata=mine)
        assert (sent.bot, sent.version) == ("b", "1") and handled == ["Submit"]
        # The receive limit is the bundle's cap and a little framing (bytes travel as they are):
        # a little over the cap is refused by name, far over by the transport.
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await calls.Submit(pb.SubmitRequest(bundle=bytes(4 * MiB + 1)), metadata=mine)
        assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "over the limit of 4 MB" in (info.value.details() or "")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await calls.Submit(pb.SubmitRequest(bundle=bytes(5 * MiB)), metadata=mine)
        assert info.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        await channel.close()


def test_an_id_beyond_sqlites_integers_is_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(id_beyond, tmp_path, monkeypatch)


async def id_beyond(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GetLog(2**63) answered UNKNOWN with Python's OverflowError: an id SQLite cannot hold names
    no submission."""
    async with running(tmp_path, monkeypatch, Gates()) as (server, comp, _):
        channel, calls = stub(server.submissions_address)
        mine = (("authorization", f"Bearer {comp.add_author(server.cid, 'bob')}"),)
        for sid in (0, 2**63 - 1, 2**63, 2**64 - 1):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await calls.GetLog(pb.GetLogRequest(submission_id=sid), metadata=mine)
            assert info.value.code() is grpc.StatusCode.NOT_FOUND, sid
            assert info.value.details() == f"you have no submission {sid}"
        await channel.close()


def test_a_look_alike_name_or_a_strange_language_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(look_alike, tmp_path, monkeypatch)


async def look_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RegisterRemote(bot="js-lowball\\n") was accepted beside another author's js-lowball (the
    name's pattern ended in '$', which matches before a final newline), and a remote entrant's
    language was any 32 characters, escape sequences too. Names and versions are matched whole in
    every call, and the language is one the arena knows."""
    async with running(tmp_path, monkeypatch, Gates()) as (server, comp, ada):
        await server.register_remote(ada, "js-lowball", "1", "node")
        channel, calls = stub(server.submissions_address)
        bob = (("authorization", f"Bearer {comp.add_author(server.cid, 'bob')}"),)
        refused = {
            ("js-lowball\n", "9", "node"): "bot: expected 1-64 letters, digits, '.', '_' or '-', "
            "got 'js-lowball\\n'",
            ("bob-bot", "9\n", "node"): "version: expected 1-64 letters, digits, '.', '_', '+' "
            "or '-', got '9\\n'",
            ("bob-bot", "9", "python\x1b[31m"): f"language: expected one of {LABELS}, "
            "got 'python\\x1b[31m'",
            ("bob-bot", "9", "rust"): f"language: expected one of {LABELS}, got 'rust'",
        }
        for (bot, version, language), why in refused.items():
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await calls.RegisterRemote(
                    pb.RegisterRemoteRequest(bot=bot, version=version, language=language),
                    metadata=bob,
                )
            assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT, bot
            assert info.value.details() == why
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await calls.Withdraw(pb.WithdrawRequest(bot="js-lowball\n"), metadata=bob)
        assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        reg = await calls.RegisterRemote(
            pb.RegisterRemoteRequest(bot="bob-bot", version="1"), metadata=bob
        )
        assert comp.submission(reg.submission_id).language == "remote"
        names = [s.bot for s in comp.submissions(server.cid)]
        assert names == ["js-lowball", "bob-bot"]
        await channel.close()


def test_a_flood_of_wrong_tokens_queues_one_lookup_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(wrong_tokens, tmp_path, monkeypatch)


async def wrong_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call with a wrong token cost a lookup on the ledger's one thread, where the competition
    records its games: two hundred at once queued two hundred lookups ahead of its own work. They
    now wait their turn in the event loop, one lookup at a time; an author's calls after the first
    are not looked up at all, and an author added meanwhile is found at once."""
    async with running(tmp_path, monkeypatch, Gates()) as (server, comp, _):
        lookups = {"now": 0, "most": 0, "all": 0}
        call = server.db.call

        async def counted(fn: Any, *args: Any) -> Any:
            if getattr(fn, "__name__", "") != "author_of":
                return await call(fn, *args)
            lookups["now"] += 1
            lookups["all"] += 1
            lookups["most"] = max(lookups["most"], lookups["now"])
            try:
                return await call(fn, *args)
            finally:
                lookups["now"] -= 1

        monkeypatch.setattr(server.db, "call", counted)
        channel, calls = stub(server.submissions_address)
        wrong = [(("authorization", f"Bearer wrong-{i}"),) for i in range(200)]
        refused = await asyncio.gather(
            *(calls.Leaderboard(pb.LeaderboardRequest(), metadata=m) for m in wrong),
            return_exceptions=True,
        )
        assert all(
            isinstance(r, grpc.aio.AioRpcError) and r.code() is grpc.StatusCode.UNAUTHENTICATED
            for r in refused
        )
        assert lookups["most"] == 1 and lookups["all"] == 200, lookups
        mine = (("authorization", f"Bearer {comp.add_author(server.cid, 'bob')}"),)
        for _ in range(3):
            board = await calls.Leaderboard(pb.LeaderboardRequest(), metadata=mine)
            assert board.competition == "Intake"
        assert lookups["all"] == 201, lookups  # bob's first call only
        await channel.close()


def test_an_authors_calls_at_once_are_capped_before_their_bundles_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(calls_at_once, tmp_path, monkeypatch)


async def calls_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An author's Submit calls are taken in one at a time, and each held its bundle in memory until
    its turn: forty at once of 19 MB each took the server past 4 GB. An author has at most
    CALLS_PER_AUTHOR calls under way; one more is refused before its bundle is read, and is taken
    again once one has ended."""
    async with running(tmp_path, monkeypatch, Gates()) as (server, comp, _):
        gate = asyncio.Event()
        received: list[int] = []
        submit = server.submit

        async def held(author: Any, data: bytes) -> Any:
            received.append(len(data))
            await gate.wait()
            return await submit(author, data)

        monkeypatch.setattr(server, "submit", held)
        channel, calls = stub(server.submissions_address)
        mine = (("authorization", f"Bearer {comp.add_author(server.cid, 'bob')}"),)
        sent = [
            asyncio.ensure_future(
                calls.Submit(pb.SubmitRequest(bundle=bundle(str(i))), metadata=mine)
            )
            for i in range(submission_access.CALLS_PER_AUTHOR + 2)
        ]
        await until(lambda: len(received) >= submission_access.CALLS_PER_AUTHOR, lambda: received)
        await until(lambda: sum(f.done() for f in sent) >= 2, lambda: sent)
        await asyncio.sleep(0.5)  # and no more are read meanwhile
        assert len(received) == submission_access.CALLS_PER_AUTHOR, received
        refused = [f for f in sent if f.done()]
        assert len(refused) == 2, refused
        for f in refused:
            error = f.exception()
            assert isinstance(error, grpc.aio.AioRpcError), error
            assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "calls under way" in (error.details() or "")
        gate.set()
        await asyncio.gather(*sent, return_exceptions=True)
        board = await calls.Leaderboard(pb.LeaderboardRequest(), metadata=mine)
        assert board.competition == "Intake"  # the calls that ended are counted no more
        await channel.close()


def test_a_flood_of_idle_connections_leaves_authors_and_the_ledger_their_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(idle_flood, tmp_path, monkeypatch)


async def idle_flood(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team, issue 47 item 6: 20,174 idle connections to the submission port spent the server's
    open files: no game was recorded, an author got UNAVAILABLE, the ledger could open no file and
    the server exited. The port is now a guard's: one client keeps 4 anonymous connections at most,
    the listener a share of the open files, and an author's call goes through."""
    async with running(tmp_path, monkeypatch, Gates()) as (server, comp, _):
        host, port = server.submissions_address.rsplit(":", 1)
        writers = []
        for _ in range(1000):
            _, writer = await asyncio.open_connection(host, int(port), local_addr=("127.0.0.2", 0))
            writer.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            writers.append(writer)
        try:
            guard = server.submissions.guard
            await until(lambda: guard.refused >= 996, lambda: (guard.total, guard.refused))
            assert guard.total <= 4, "one client's anonymous connections are capped"
            share = max(open_files_limit() // 8, 16 * 3)  # an eighth, at least 16 connections
            assert guard.caps.connections * 3 <= share, "a share of the open files"
            channel, calls = stub(server.submissions_address)
            bob = (("authorization", f"Bearer {comp.add_author(server.cid, 'bob')}"),)
            sent = await calls.Submit(pb.SubmitRequest(bundle=bundle("1")), metadata=bob)
            assert sent.version == "1"
            await channel.close()
            await asyncio.to_thread(comp.submissions, server.cid)  # the ledger opens its files
        finally:
            for writer in writers:
                writer.close()


def test_an_author_reads_their_own_bots_output_of_a_game_and_never_anothers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(game_logs, tmp_path, monkeypatch)


async def game_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GetGameLog gives the caller's own seats of a game, with no path of the server's; another
    author's output, a game the caller's bots did not play and an unknown id are refused alike.
    GetLog carries the games the version caused to fail, its history and time use, and the public
    board needs no token."""
    from arena.ledger import seat_reports
    from arena.ledger.rows import ScheduledGame

    async with running(tmp_path, monkeypatch, Gates()) as (server, comp, ada):
        channel, calls = stub(server.submissions_address)
        md = {}
        ids = {}
        subs = {}
        for name in ("ada", "bob", "cy"):
            token = comp.add_author(server.cid, name) if name != "ada" else None
            who = comp.authors(server.cid)[-1] if token else ada
            if token:
                md[name] = (("authorization", f"Bearer {token}"),)
            sid, _ = comp.submit(server.cid, who.id, f"{name}-bot", "1", "remote")
            ids[f"{name}-bot"] = comp.activate(sid, f"remote:{name}")
            subs[name] = sid
        g = ScheduledGame("c000000001-s0", 0, 0, 0, 0, 0, 1, (("ada-bot",), ("bob-bot",)),
                          ("ada-bot", "bob-bot"))  # fmt: skip
        server.ledger.plan(server.cid, [g])
        detail = f'crash: its output:\n    | File "{server.builds}/9/bot.py", line 1'
        rec = {"games": [{"outcome": "crash", "detail": detail, "culprit": 1, "decisions": [],
                          "result": {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1, 0]}}]}  # fmt: skip
        gid = server.ledger.record_game(
            server.cid, "two-handed", g, ids, FinishedGame.from_data(rec)
        )
        outputs = [
            (0, 0, b"ada thinks\n", 11),
            (1, 0, f"{server.builds}/9/bot.py: boom".encode(), 30),
        ]
        comp.record_reports(
            gid,
            seat_reports.from_game(
                FinishedGame.from_data(rec), [[ids["ada-bot"]], [ids["bob-bot"]]], outputs
            ),
        )
        bob = await calls.GetGameLog(pb.GetGameLogRequest(game_id=gid), metadata=md["bob"])
        assert [(s.seat, s.bot, s.output) for s in bob.seats] == [(1, "bob-bot", "bot.py: boom")]
        assert (bob.key, bob.outcome) == (g.key, "crash")
        for game_id in (gid, gid + 1, 0, 2**64 - 1):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await calls.GetGameLog(pb.GetGameLogRequest(game_id=game_id), metadata=md["cy"])
            assert info.value.code() is grpc.StatusCode.NOT_FOUND, game_id
        logged = await calls.GetLog(pb.GetLogRequest(submission_id=subs["bob"]), metadata=md["bob"])
        assert [(f.game_id, f.outcome) for f in logged.failures] == [(gid, "crash")]
        assert str(server.builds) not in logged.failures[0].detail
        assert 'File "bot.py", line 1' in logged.failures[0].detail
        assert [c.status for c in logged.history] == ["checking", "active"]
        assert logged.time_use.games == 1 and dict(logged.time_use.failures) == {"crash": 1}
        board = await calls.Leaderboard(pb.LeaderboardRequest())  # no token: the public board
        assert {r.bot for r in board.rows} == {"ada-bot", "bob-bot", "cy-bot"}
        assert all(r.in_play for r in board.rows)
        await channel.close()
