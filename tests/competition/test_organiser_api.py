"""The organiser's calls over real gRPC and the organiser's commands run remotely (``--server
--token``): guarded by the organiser's token (kept hashed; an author's token is refused), the same
actions as on the ledger (pause, resume, suspend with a reason, reinstate, add an author with the
token shown once, list the authors)."""

from __future__ import annotations

import asyncio
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from intake_helpers import Gates, bundle, run, running, until
from typer.testing import CliRunner

from arena.cli.main import app
from arena.competition import organiser
from arena.ledger import competitions as store
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

ORGANISER_TOKEN = "the-organisers-token-0123456789"


def test_the_organisers_token_is_created_once_and_kept_hashed(tmp_path: Path) -> None:
    made = organiser.take_token(tmp_path, None)
    assert made is not None and len(made) >= 32
    kept = organiser.token_file(tmp_path)
    assert made not in kept.read_text(), "only the token's hash is kept"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert organiser.is_organiser(tmp_path, made)
    assert not organiser.is_organiser(tmp_path, made + "x")
    assert not organiser.is_organiser(tmp_path, "")
    assert organiser.take_token(tmp_path, None) is None, "a kept token is not replaced"
    assert organiser.is_organiser(tmp_path, made)
    # A token given replaces the kept one.
    assert organiser.take_token(tmp_path, ORGANISER_TOKEN) is None
    assert organiser.is_organiser(tmp_path, ORGANISER_TOKEN)
    assert not organiser.is_organiser(tmp_path, made)
    with pytest.raises(organiser.OrganiserError, match="at least 16 printable"):
        organiser.take_token(tmp_path, "short")


def test_the_organiser_acts_over_grpc_and_an_author_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(organiser_calls, tmp_path, monkeypatch)


async def organiser_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    organiser.take_token(tmp_path / "data", ORGANISER_TOKEN)
    async with running(tmp_path, monkeypatch, Gates()) as (server, comp, ada):
        channel = grpc.aio.insecure_channel(server.submissions_address)
        calls = competition_pb2_grpc.CompetitionStub(channel)
        boss = (("authorization", f"Bearer {ORGANISER_TOKEN}"),)
        ada_token = comp.add_author(server.cid, "ada2")
        author = (("authorization", f"Bearer {ada_token}"),)
        me = await calls.WhoAmI(pb.WhoAmIRequest(), metadata=boss)
        assert (me.role, me.competition) == ("organiser", "Intake")
        me = await calls.WhoAmI(pb.WhoAmIRequest(), metadata=author)
        assert (me.role, me.name) == ("author", "ada2")
        # An author's token, a wrong one or none: refused, the request unread.
        for metadata in (author, (("authorization", "Bearer nobody-0123456789"),), ()):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await calls.SetPaused(pb.SetPausedRequest(paused=False), metadata=metadata)
            assert info.value.code() is grpc.StatusCode.PERMISSION_DENIED
            assert "the organiser's token" in (info.value.details() or "")
        assert comp.paused(server.cid), "nothing changed"
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await calls.WhoAmI(pb.WhoAmIRequest(), metadata=(("authorization", "Bearer x"),))
        assert info.value.code() is grpc.StatusCode.UNAUTHENTICATED

        assert (
            await calls.SetPaused(pb.SetPausedRequest(paused=False), metadata=boss)
        ).paused is False
        assert not comp.paused(server.cid)
        await calls.SetPaused(pb.SetPausedRequest(paused=True), metadata=boss)
        assert comp.paused(server.cid)

        added = await calls.AddAuthor(pb.AddAuthorRequest(name="cy"), metadata=boss)
        assert added.name == "cy" and added.token
        assert comp.author_of(server.cid, added.token) is not None
        listed = await calls.ListAuthors(pb.ListAuthorsRequest(), metadata=boss)
        assert [a.name for a in listed.authors] == ["ada", "ada2", "cy"]
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await calls.AddAuthor(pb.AddAuthorRequest(name="cy"), metadata=boss)
        assert info.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert "already an author named 'cy'" in (info.value.details() or "")
        assert "ledger.sqlite" not in (info.value.details() or ""), "no path of the server's"

        sub = await server.submit(ada, bundle("1"))
        await until(lambda: comp.submission(sub.id).status == store.ACTIVE)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await calls.Suspend(pb.SuspendRequest(bot="b", reason="  "), metadata=boss)
        assert "give the reason" in (info.value.details() or "")
        done = await calls.Suspend(pb.SuspendRequest(bot="b", reason="it cheats"), metadata=boss)
        assert done.suspended == 1
        assert comp.submission(sub.id).status == store.SUSPENDED
        assert comp.submission(sub.id).reason == "suspended: it cheats"
        status = await calls.OrganiserStatus(pb.OrganiserStatusRequest(), metadata=boss)
        assert status.paused and [(s.bot, s.status, s.author) for s in status.submissions] == [
            ("b", "suspended", "ada")
        ]
        done2 = await calls.Reinstate(pb.ReinstateRequest(bot="b"), metadata=boss)
        assert done2.reinstated == 1 and comp.submission(sub.id).status == store.ACTIVE
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await calls.Reinstate(pb.ReinstateRequest(bot="b"), metadata=boss)
        assert info.value.details() == "no suspended submission of a bot named 'b'"
        await channel.close()


def test_the_organisers_commands_act_remotely_as_on_the_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(remote_commands, tmp_path, monkeypatch)


async def remote_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    organiser.take_token(tmp_path / "data", ORGANISER_TOKEN)
    monkeypatch.delenv("ARENA_ORGANISER_TOKEN", raising=False)
    runner = CliRunner()

    async def arena(*args: str) -> tuple[int, str]:
        result = await asyncio.to_thread(runner.invoke, app, ["compete", *args])
        return result.exit_code, result.output

    async with running(tmp_path, monkeypatch, Gates()) as (server, comp, ada):
        remote = ("--server", server.submissions_address, "--token", ORGANISER_TOKEN)
        sub = await server.submit(ada, bundle("1"))
        await until(lambda: comp.submission(sub.id).status == store.ACTIVE)
        assert await arena("resume", *remote) == (0, "resumed: games start again\n")
        assert not comp.paused(server.cid)
        assert (await arena("pause", *remote))[0] == 0 and comp.paused(server.cid)
        code, out = await arena("suspend", "b", "--reason", "too slow", *remote)
        assert code == 0, out
        assert comp.submission(sub.id).reason == "suspended: too slow"
        code, out = await arena("reinstate", "b", *remote)
        assert code == 0 and comp.submission(sub.id).status == store.ACTIVE
        code, out = await arena("author", "add", "dee", *remote)
        assert code == 0, out
        token = out.splitlines()[-1]
        found = comp.author_of(server.cid, token)
        assert found is not None and found.name == "dee", "the token printed is dee's"
        code, out = await arena("author", "list", *remote)
        assert code == 0 and "dee" in out and token not in out
        # Refused with one clear line: no token, an author's token, nothing to reinstate.
        code, out = await arena("pause", "--server", server.submissions_address)
        assert code != 0 and "give the organiser's token" in out
        code, out = await arena("pause", "--server", server.submissions_address, "--token", token)
        assert code == 1 and "PERMISSION_DENIED" in out and "organiser's token" in out
        code, out = await arena("reinstate", "b", *remote)
        assert code == 1 and "no suspended submission of a bot named 'b'" in out
    # The same commands on the ledger, here (one implementation).
    local = ("--ledger", str(tmp_path / "ledger.sqlite"))
    code, out = await arena("suspend", "b", "--reason", "locally", *local)
    assert code == 0, out
    code, out = await arena("suspend", "b", "--reason", "again", *local)
    assert code == 2 and "no active submission of a bot named 'b'" in out


def test_compete_serve_makes_the_organisers_token_once_and_takes_one_given(tmp_path: Path) -> None:
    """The first start prints a new token once (its hash kept); the next start prints none and the
    token still works; --organiser-token-file replaces it."""
    toml = tmp_path / "c.toml"
    toml.write_text(
        'name = "Token Ladder"\n[server]\nsubmissions = "127.0.0.1:0"\nbots = "127.0.0.1:0"\n'
    )
    ledger = tmp_path / "ledger.sqlite"

    def serve(*extra: str) -> str:
        process = subprocess.Popen(
            [sys.executable, "-m", "arena.cli.main", "compete", "serve", str(toml),
             "--ledger", str(ledger), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if "stop with Ctrl-C" in line:
                break
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
        return "".join(lines) + rest

    first = serve()
    assert "the organiser's token" in first, first
    (token,) = re.findall(r"(?m)^([0-9a-f]{32,})$", first)
    data = tmp_path / "ledger.sqlite.d"
    assert organiser.is_organiser(data, token)
    again = serve()
    assert "the organiser's token" not in again and token not in again
    assert organiser.is_organiser(data, token)
    given = tmp_path / "token"
    given.write_text(ORGANISER_TOKEN + "\n")
    third = serve("--organiser-token-file", str(given))
    assert ORGANISER_TOKEN not in third and "the organiser's token" not in third
    assert organiser.is_organiser(data, ORGANISER_TOKEN) and not organiser.is_organiser(data, token)


def test_compete_status_shows_the_same_remotely_as_on_the_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 45: compete status took only --ledger; through the server (--server --token, the
    OrganiserStatus call) it shows what its help promises too: games played and the last games."""
    run(remote_status, tmp_path, monkeypatch)


async def remote_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.ledger.rows import FinishedGame, ScheduledGame

    organiser.take_token(tmp_path / "data", ORGANISER_TOKEN)
    monkeypatch.delenv("ARENA_ORGANISER_TOKEN", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()

    async def arena(*args: str) -> tuple[int, str]:
        result = await asyncio.to_thread(runner.invoke, app, ["compete", *args])
        return result.exit_code, result.output

    async with running(tmp_path, monkeypatch, Gates()) as (server, comp, ada):
        remote = ("--server", server.submissions_address, "--token", ORGANISER_TOKEN)
        code, out = await arena("status", *remote)
        assert code == 0, out
        assert "paused; 0 games" in out and "no submissions yet" in out
        assert "no game played yet" in out
        ids = {}
        for bot in ("smart", "bold"):
            sid, _ = comp.submit(server.cid, ada.id, bot, "1", "remote")
            ids[bot] = comp.activate(sid, f"remote:{bot}")
        result = {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 600]}
        for order in range(12):
            game = ScheduledGame(
                f"c{order:09d}-s0", order, 0, order, 0, 0, order + 1, (("smart",), ("bold",)),
                ("smart", "bold"),
            )  # fmt: skip
            server.ledger.plan(server.cid, [game])
            outcome = "crash" if order == 3 else "normal"
            rec = {"games": [{"outcome": outcome, "detail": "", "culprit": 1 if order == 3 else -1,
                              "result": result}]}  # fmt: skip
            server.ledger.record_game(
                server.cid, "two-handed", game, ids, FinishedGame.from_data(rec)
            )
        code, out = await arena("status", *remote)
        assert code == 0, out
        assert "paused; 12 games, 1 ended by a bot's failure" in out
        assert "submissions: 2 active" in out
        assert "The last 10 games" in out
        assert "c000000011-s0" in out and "c000000001-s0" not in out
        assert "smart 1:1000, bold 1:600" in out
        code, refused = await arena("status", "--server", server.submissions_address)
        assert code != 0 and "give the organiser's token" in refused
    # The same status on the ledger, here: one implementation, the same lines.
    code, local = await arena("status", "--ledger", str(tmp_path / "ledger.sqlite"))
    assert code == 0, local
    assert local == out
