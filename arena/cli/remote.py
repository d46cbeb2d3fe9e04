"""Commands that talk to a running referee (``arena serve``) through its admin service: start a
match, list matches, watch one live."""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from arena.cli.bots import name_of, unique_names
from arena.cli.common import console, errors
from arena.cli.options import (
    AdminTokenOption,
    BankOption,
    BudgetOption,
    GraceOption,
    MaxStrikesOption,
    OnFailureOption,
    RefereeOption,
)
from arena.cli.serve import read_token, token_file
from arena.common.bounds import MAX_SEED
from arena.referee import FailurePolicy

if TYPE_CHECKING:
    import grpc

DEFAULT_SERVER = "127.0.0.1:50052"


def _metadata(server: str, token: str | None) -> tuple[tuple[str, str], ...]:
    """The admin token: the one given, else the file a local arena serve wrote."""
    token = token or read_token(server)
    if not token:
        errors.print(
            f"[red]error:[/] no admin token for {escape(server)}: is arena serve running there? "
            f"A local arena serve writes it to {escape(str(token_file(server)))} while it runs; "
            "for another referee give --admin-token (or ARENA_ADMIN_TOKEN)"
        )
        raise typer.Exit(2)
    return (("authorization", f"Bearer {token}"),)


def _fail(exc: grpc.aio.AioRpcError, server: str) -> typer.Exit:
    import grpc

    if exc.code() is grpc.StatusCode.UNAVAILABLE:  # gRPC's own words name no cause a user knows
        errors.print(
            f"[red]error:[/] no referee answers at {escape(server)}: is arena serve running, "
            "with this as its --admin-address?",
            soft_wrap=True,
        )
        return typer.Exit(1)
    errors.print(
        f"[red]error:[/] the referee at {escape(server)} answered {exc.code().name}: {escape(exc.details() or '')}"
    )
    return typer.Exit(1 if exc.code() is not grpc.StatusCode.INVALID_ARGUMENT else 2)


def start(
    server: RefereeOption = DEFAULT_SERVER,
    bot: Annotated[
        list[str] | None,
        typer.Option(
            "--bot",
            "-b",
            help="A local bot's command line, run by the referee under its own sandbox and limits; "
            "one per player in seat order.",
        ),
    ] = None,
    remote: Annotated[
        list[str] | None,
        typer.Option(
            "--remote",
            "-r",
            help="The name of a player who dials in from elsewhere; its token is printed. Remote "
            "players take the seats after the local ones.",
        ),
    ] = None,
    variant: Annotated[str, typer.Option("--variant", "-v", help="The variant.")] = "two-handed",
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="A variant option NAME=VALUE.")
    ] = None,
    games: Annotated[int, typer.Option(min=1, help="Number of games.")] = 1,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=MAX_SEED,
            help="Public seed of the deals (default: a random one). The server deals from it and "
            "its own secret, so the same seed on the same server deals the same cards.",
            show_default=False,
        ),
    ] = None,
    budget_ms: BudgetOption = 1000,
    bank_ms: BankOption = 10_000,
    grace_ms: GraceOption = 100,
    on_failure: OnFailureOption = FailurePolicy.FORFEIT,
    max_strikes: MaxStrikesOption = 3,
    connect_timeout: Annotated[
        float,
        typer.Option(
            min=0.1,
            max=86_400.0,
            help="Seconds for every player to dial in (a remote bot started by hand may need "
            "minutes); a player still missing then loses by a crash at its first decision.",
        ),
    ] = 10.0,
    admin_token: AdminTokenOption = None,
) -> None:
    """Start a match on a running referee: local bots by command line, remote bots by token."""
    import grpc

    from arena.bots.launcher import LaunchError, check_command
    from arena.service.servicers import POLICY_TO_PB
    from arena.wire.v1 import admin_pb2, admin_pb2_grpc, bot_pb2

    local = bot or []
    for command in local:
        try:
            check_command(command)
        except LaunchError as exc:
            raise typer.BadParameter(str(exc), param_hint="--bot") from exc
    names = unique_names([name_of(c) for c in local])
    seats = [admin_pb2.SeatSpec(name=n, command=c) for n, c in zip(names, local, strict=True)]
    seats += [admin_pb2.SeatSpec(name=n) for n in remote or []]
    options = {}
    for opt in option or []:
        key, eq, value = opt.partition("=")
        if not eq:
            raise typer.BadParameter(f"expected NAME=VALUE, got {opt!r}", param_hint="--option")
        options[key] = value
    policy = POLICY_TO_PB[on_failure]
    request = admin_pb2.StartMatchRequest(
        variant=variant,
        options=options,
        seats=seats,
        games=games,
        seed=seed if seed is not None else secrets.randbelow(2**48),
        time_control=bot_pb2.TimeControl(budget_ms=budget_ms, bank_ms=bank_ms, grace_ms=grace_ms),
        policies=bot_pb2.Policies(
            on_timeout=policy,
            on_illegal_action=policy,
            on_crash=policy,
            on_protocol_error=policy,
            max_strikes=max_strikes,
        ),
        connect_timeout_ms=round(connect_timeout * 1000),
    )
    metadata = _metadata(server, admin_token)

    async def go() -> admin_pb2.StartMatchResponse:
        async with grpc.aio.insecure_channel(server) as channel:
            return await admin_pb2_grpc.AdminStub(channel).StartMatch(request, metadata=metadata)

    try:
        response = asyncio.run(go())
    except grpc.aio.AioRpcError as exc:
        raise _fail(exc, server) from exc
    console.print(f"match {escape(response.match_id)} started")
    for t in response.tokens:
        console.print(f"  seat {t.seat} ({escape(t.name)}): token {escape(t.token)}")
    if response.tokens:
        address = escape(response.bot_address or "the referee's bot address")
        console.print(
            f"remote bots dial {address} within {connect_timeout:g} s, e.g. "
            f"ARENA_ADDRESS={address} ARENA_TOKEN=TOKEN node clients/javascript/bot.js"
        )
    console.print(
        f"watch it with: arena watch {escape(response.match_id)} --server {escape(server)}"
    )


def matches(server: RefereeOption = DEFAULT_SERVER, admin_token: AdminTokenOption = None) -> None:
    """List the matches of a running referee."""
    import grpc

    from arena.wire.v1 import admin_pb2, admin_pb2_grpc

    metadata = _metadata(server, admin_token)

    async def go() -> admin_pb2.ListMatchesResponse:
        async with grpc.aio.insecure_channel(server) as channel:
            return await admin_pb2_grpc.AdminStub(channel).ListMatches(
                admin_pb2.ListMatchesRequest(), metadata=metadata
            )

    try:
        found = asyncio.run(go())
    except grpc.aio.AioRpcError as exc:
        raise _fail(exc, server) from exc
    if not found.matches:
        console.print("no matches")
    for m in found.matches:
        console.print(
            escape(
                f"{m.match_id}  {m.variant}  {m.status}  {m.games_played}/{m.games} games  "
                f"{' vs '.join(m.seat_names)}"
            ),
            soft_wrap=True,
        )


def watch(
    match_id: Annotated[str, typer.Argument(help="The match (see arena matches).")],
    server: RefereeOption = DEFAULT_SERVER,
    admin_token: AdminTokenOption = None,
) -> None:
    """Follow a match's public events live (never a hidden card), then print its results."""
    import grpc

    from arena.wire.v1 import admin_pb2, admin_pb2_grpc, game_pb2

    md = _metadata(server, admin_token)

    async def go() -> admin_pb2.MatchInfo:
        async with grpc.aio.insecure_channel(server) as channel:
            admin = admin_pb2_grpc.AdminStub(channel)
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
            escape(f"game {i}: {outcome_names.get(g.outcome, g.outcome)}{detail}; {scores}"),
            soft_wrap=True,
        )
