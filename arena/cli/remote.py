"""Commands that talk to a running referee (``arena serve``) through its admin service: start a
match, list matches, watch one live."""

from __future__ import annotations

import asyncio
from typing import Annotated

import grpc
import typer
from rich.markup import escape

from arena.cli.common import console, errors
from arena.cli.match import name_of, unique_names
from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2, game_pb2

ServerOption = Annotated[
    str,
    typer.Option(
        "--server", "-s", help="The referee's address (see arena serve).", envvar="ARENA_SERVER"
    ),
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--admin-token",
        envvar="ARENA_ADMIN_TOKEN",
        help="The referee's admin token, if it has one.",
        show_default=False,
    ),
]


def _metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()


def _fail(exc: grpc.aio.AioRpcError, server: str) -> typer.Exit:
    errors.print(
        f"[red]error:[/] the referee at {escape(server)} answered {exc.code().name}: {escape(exc.details() or '')}"
    )
    return typer.Exit(1 if exc.code() is not grpc.StatusCode.INVALID_ARGUMENT else 2)


def start(
    server: ServerOption = "127.0.0.1:50051",
    bot: Annotated[
        list[str] | None,
        typer.Option(
            "--bot",
            "-b",
            help="A local bot's command line, run by the referee; one per player in seat order.",
        ),
    ] = None,
    remote: Annotated[
        list[str] | None,
        typer.Option(
            "--remote",
            "-r",
            help="The name of a player who dials in from elsewhere; its token is printed. Remote players take the seats after the local ones.",
        ),
    ] = None,
    variant: Annotated[str, typer.Option("--variant", "-v", help="The variant.")] = "two-handed",
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="A variant option NAME=VALUE.")
    ] = None,
    games: Annotated[int, typer.Option(min=1, help="Number of games.")] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the deals.")] = 1,
    budget_ms: Annotated[int, typer.Option(min=0, help="Time for each decision, in ms.")] = 1000,
    bank_ms: Annotated[int, typer.Option(min=0, help="Extra time for the game, in ms.")] = 10_000,
    admin_token: TokenOption = None,
) -> None:
    """Start a match on a running referee: local bots by command line, remote bots by token."""
    local = bot or []
    names = unique_names([name_of(c) for c in local])
    seats = [admin_pb2.SeatSpec(name=n, command=c) for n, c in zip(names, local, strict=True)]
    seats += [admin_pb2.SeatSpec(name=n) for n in remote or []]
    options = {}
    for opt in option or []:
        key, eq, value = opt.partition("=")
        if not eq:
            raise typer.BadParameter(f"expected NAME=VALUE, got {opt!r}", param_hint="--option")
        options[key] = value
    request = admin_pb2.StartMatchRequest(
        variant=variant,
        options=options,
        seats=seats,
        games=games,
        seed=seed,
        time_control=bot_pb2.TimeControl(budget_ms=budget_ms, bank_ms=bank_ms, grace_ms=100),
    )

    async def go() -> admin_pb2.StartMatchResponse:
        async with grpc.aio.insecure_channel(server) as channel:
            return await admin_pb2_grpc.AdminStub(channel).StartMatch(
                request, metadata=_metadata(admin_token)
            )

    try:
        response = asyncio.run(go())
    except grpc.aio.AioRpcError as exc:
        raise _fail(exc, server) from exc
    console.print(f"match {response.match_id} started")
    for t in response.tokens:
        console.print(f"  seat {t.seat} ({escape(t.name)}): token {t.token}")
    console.print(f"watch it with: arena watch {response.match_id} --server {server}")


def matches(server: ServerOption = "127.0.0.1:50051", admin_token: TokenOption = None) -> None:
    """List the matches of a running referee."""

    async def go() -> admin_pb2.ListMatchesResponse:
        async with grpc.aio.insecure_channel(server) as channel:
            return await admin_pb2_grpc.AdminStub(channel).ListMatches(
                admin_pb2.ListMatchesRequest(), metadata=_metadata(admin_token)
            )

    try:
        found = asyncio.run(go())
    except grpc.aio.AioRpcError as exc:
        raise _fail(exc, server) from exc
    if not found.matches:
        console.print("no matches")
    for m in found.matches:
        console.print(
            f"{m.match_id}  {m.variant}  {m.status}  {m.games_played}/{m.games} games  "
            f"{escape(' vs '.join(m.seat_names))}"
        )


def watch(
    match_id: Annotated[str, typer.Argument(help="The match (see arena matches).")],
    server: ServerOption = "127.0.0.1:50051",
    admin_token: TokenOption = None,
) -> None:
    """Follow a match's public events live (never a hidden card), then print its results."""

    async def go() -> admin_pb2.MatchInfo:
        async with grpc.aio.insecure_channel(server) as channel:
            admin = admin_pb2_grpc.AdminStub(channel)
            md = _metadata(admin_token)
            request = admin_pb2.WatchMatchRequest(match_id=match_id, from_start=True)
            async for event in admin.WatchMatch(request, metadata=md):
                typer.echo(f"game {event.game + 1} | {event.text}")
            return await admin.GetMatch(admin_pb2.GetMatchRequest(match_id=match_id), metadata=md)

    try:
        info = asyncio.run(go())
    except grpc.aio.AioRpcError as exc:
        raise _fail(exc, server) from exc
    outcome_names = {
        v.number: v.name.removeprefix("OUTCOME_").lower().replace("_", "-")
        for v in game_pb2.Outcome.DESCRIPTOR.values
    }
    names = list(info.summary.seat_names)
    for i, g in enumerate(info.games, start=1):
        scores = ", ".join(
            f"{names[s] if s < len(names) else s}: {p}" for s, p in enumerate(g.scores)
        )
        detail = f" ({g.detail})" if g.detail else ""
        console.print(
            f"game {i}: {outcome_names.get(g.outcome, g.outcome)}{escape(detail)}; {escape(scores)}"
        )
