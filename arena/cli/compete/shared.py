"""What the organiser's and the authors' ``arena compete`` commands share: finding the competition in
a ledger, one call to a running competition's submission service, and ``leaderboard``, which both ask
(the organiser from the ledger, an author from the running competition with a token)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.common import FIRST_COMPETITION, console, fail, open_ledger, plain
from arena.cli.options import (
    DEFAULT_COMPETITION_SERVER,
    DEFAULT_LEDGER,
    CompetitionOption,
    LedgerOption,
)

if TYPE_CHECKING:
    from arena.ledger import Ledger
    from arena.ledger import competitions as store
    from arena.wire.v1 import competition_pb2 as pb
    from arena.wire.v1 import competition_pb2_grpc


def competition_id(led: Ledger, name: str | None) -> int:
    competitions = [t for t in led.tournaments() if t.kind == "competition"]
    if not competitions:
        raise fail(f"no competition in {led.path} yet (arena compete serve FILE starts one)")
    if name is None:
        if len(competitions) == 1:
            return competitions[0].id
        names = ", ".join(repr(t.name) for t in competitions)
        raise fail(f"say which competition with --competition (competitions: {names})")
    for t in competitions:
        if t.name == name or str(t.id) == name:
            return t.id
    raise fail(f"no competition {name!r} in {led.path}")


def open_competition(ledger: Path, name: str | None) -> tuple[Ledger, int]:
    """The ledger of the organiser's commands and the competition in it they act on."""
    led = open_ledger(ledger, first=FIRST_COMPETITION)
    return led, competition_id(led, name)


Metadata = tuple[tuple[str, str], ...]
_T = TypeVar("_T")


CALL_SECONDS = 600.0  # one call to the submission service (a bundle's upload and unpacking)


def call(
    server: str,
    token: str,
    call: Callable[[competition_pb2_grpc.CompetitionAsyncStub, Metadata], Awaitable[_T]],
) -> _T:
    """One call to the submission service; a failure is a one-line error (exit 1)."""
    import grpc

    from arena.wire.v1 import competition_pb2_grpc

    async def go() -> _T:
        async with grpc.aio.insecure_channel(
            server, options=[("grpc.max_send_message_length", 2**31 - 1)]
        ) as channel:
            stub = competition_pb2_grpc.CompetitionStub(channel)
            # No token: a call anyone may make (the public board).
            async with asyncio.timeout(CALL_SECONDS):
                return await call(stub, (("authorization", f"Bearer {token}"),) if token else ())

    try:
        return asyncio.run(go())
    except TimeoutError:
        raise fail(
            f"the competition at {server} did not answer within {CALL_SECONDS} s", 1
        ) from None
    except grpc.aio.AioRpcError as exc:
        code = exc.code()
        if code is grpc.StatusCode.UNAVAILABLE:
            raise fail(
                f"no competition answers at {server}: is arena compete serve running?", 1
            ) from None
        raise fail(
            f"the competition at {server} answered {code.name}: {exc.details()}", 1
        ) from None


BOARD_COLUMNS = (
    "#", "bot", "version", "language", "author", "mu - 3 sigma", "mu", "sigma", "games",
    "last played", "24 h", "status",
)  # fmt: skip


def _board(title: str, rows: list[store.BoardLine] | list[pb.LeaderboardRow]) -> Table:
    """The board: the versions in play ranked, then those out of play (withdrawn, replaced,
    suspended) apart and dimmed, unranked, with their last rating."""
    table = Table(title=escape(title))
    for col in BOARD_COLUMNS:
        table.add_column(col, justify="right" if col in ("#", "games", "24 h") else "left")
    apart = False
    for r in rows:
        if not r.in_play and not apart:
            apart = True
            table.add_section()
        table.add_row(
            str(r.rank) if r.in_play else "-", plain(r.bot), plain(r.version),
            plain(r.language, 16), plain(r.author), f"{r.exposed:.2f}", f"{r.mu:.2f}",
            f"{r.sigma:.2f}", str(r.games),
            r.last_played.replace("T", " ").removesuffix("+00:00") or "never",
            _change(r), r.status, style="dim" if not r.in_play else None,
        )  # fmt: skip
    return table


def _change(r: store.BoardLine | pb.LeaderboardRow) -> str:
    """Places gained over the last 24 hours: +2, -1, = (none), new (not ranked then), - (apart)."""
    if not r.in_play:
        return "-"
    change = r.rank_change if not hasattr(r, "HasField") or r.HasField("rank_change") else None
    if change is None:
        return "new"
    return f"{change:+d}" if change else "="


def leaderboard(
    ctx: typer.Context,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            "-s",
            help="Ask a running competition (no token needed; with a token and no --ledger: "
            f"{DEFAULT_COMPETITION_SERVER}, as for submit).",
            envvar="ARENA_COMPETITION",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="ARENA_AUTHOR_TOKEN",
            help="Your author token: without --ledger, ask the running competition.",
        ),
    ] = None,
    competition: CompetitionOption = None,
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
) -> None:
    """Show the competition's leaderboard by mu - 3 sigma: the versions in play ranked, with authors,
    last played and places gained over the last 24 hours; withdrawn, replaced and suspended versions
    listed apart with their last rating. Anyone may ask a running competition (--server, no token
    needed) or read the ledger."""
    ledger_source = ctx.get_parameter_source("ledger")  # typer's own click: compared by name
    if token and not server and ledger_source is not None and ledger_source.name == "DEFAULT":
        # An author's token, as for submit: the running competition.
        server = DEFAULT_COMPETITION_SERVER
    if server:
        from arena.wire.v1 import competition_pb2 as pb

        answer = call(
            server,
            token or "",
            lambda stub, md: stub.Leaderboard(pb.LeaderboardRequest(), metadata=md),
        )
        console.print(_board(f"Leaderboard: {answer.competition}", list(answer.rows)))
        return
    from arena.ledger import competitions as store

    led, cid = open_competition(ledger, competition)
    name = led.find_tournament(str(cid)).name
    console.print(_board(f"Leaderboard: {name}", store.Competitions(led).board(cid)))
