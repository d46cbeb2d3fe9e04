"""``arena serve``: the referee for remote bots, until interrupted."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Annotated

import typer

from arena.service.server import create_server


def serve(
    address: Annotated[
        str,
        typer.Option(
            help="HOST:PORT to listen on; port 0 picks a free port. The default is loopback only; "
            "0.0.0.0:PORT accepts bots from other machines and needs --admin-token."
        ),
    ] = "127.0.0.1:50051",
    admin_token: Annotated[
        str | None,
        typer.Option(
            envvar="ARENA_ADMIN_TOKEN",
            help="A secret every admin call must present (metadata 'authorization: Bearer TOKEN'); "
            "required beyond loopback, since the admin service launches commands.",
            show_default=False,
        ),
    ] = None,
    records: Annotated[
        Path | None,
        typer.Option(
            help="Write each finished match's record (JSON) into this folder.", show_default=False
        ),
    ] = None,
    logs: Annotated[
        Path | None,
        typer.Option(
            help="Write each local bot's output to a log file in this folder.", show_default=False
        ),
    ] = None,
) -> None:
    """Run the referee for remote bots until interrupted.

    Serves the bot gateway, the admin and spectator API, health and reflection, and prints the address
    it listens on. Start matches with the Admin service's StartMatch; remote bots dial in with the
    tokens it returns. Ctrl-C or SIGTERM stops every running match and kills its local bots.
    """
    try:
        asyncio.run(_serve(address, records, logs, admin_token))
    except ValueError as exc:  # beyond loopback without an admin token
        raise typer.BadParameter(str(exc), param_hint="--address/--admin-token") from exc
    except OSError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:  # a second Ctrl-C while stopping
        raise typer.Exit(130) from None


async def _serve(
    address: str, records: Path | None, logs: Path | None, admin_token: str | None
) -> None:
    server, _, manager = await create_server(
        address, records_dir=records, logs_dir=logs, admin_token=admin_token
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    typer.echo(f"referee listening on {manager.address}", nl=True)
    if admin_token:
        typer.echo("admin calls must carry 'authorization: Bearer <admin token>'", err=True)
    typer.echo("stop with Ctrl-C", err=True)
    try:
        await stop.wait()
        typer.echo("stopping: ending running matches and their bots", err=True)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await manager.close()
        await server.stop(grace=1.0)
    typer.echo("stopped", err=True)
