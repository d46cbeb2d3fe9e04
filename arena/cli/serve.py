"""``arena serve``: the referee for remote bots and admin-started matches, until interrupted.

Bots dial one address (the bot gateway and health only); the admin service (start, list and watch
matches) listens on another, and every admin call must carry the admin token. Without
``--admin-token`` a fresh token is made and written to a file only this user can read
(:func:`token_file`), where ``arena start``, ``arena matches`` and ``arena watch`` find it. Matches
started through the admin service run their local bots under this server's sandbox and limits
(``--sandbox``, ``--memory-mb``, ..., or ``--limits FILE``) and are dealt from this server's secret.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena.cli.bots import SANDBOX_HELP, SandboxMode, sandbox_probe
from arena.cli.common import deal_key as parse_deal_key
from arena.cli.common import logs_folder
from arena.cli.options import DEFAULT_LOGS_MB, LogsMaxOption
from arena.common.bounds import MAX_CPUS, MAX_MB

if TYPE_CHECKING:
    from arena.bots.limits import Limits
    from arena.sandbox import Probe

TOKEN_DIR_NAME = "bezique-arena"


def token_dir() -> Path:
    """This user's private folder for admin tokens: ``$XDG_RUNTIME_DIR/bezique-arena`` (a per-user
    folder in memory) where there is one, else ``~/.local/state/bezique-arena``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / TOKEN_DIR_NAME
    return Path.home() / ".local" / "state" / TOKEN_DIR_NAME


def token_file(admin_address: str) -> Path:
    """Where the admin token of the server listening on ``admin_address`` is kept (loopback
    addresses, whatever their spelling, share one name per port)."""
    from arena.service.server import is_loopback

    host, _, port = admin_address.rpartition(":")
    if is_loopback(admin_address):
        host = "loopback"
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{host}-{port}")
    return token_dir() / f"admin-{safe}.token"


def read_token(admin_address: str) -> str | None:
    """The token a local ``arena serve`` wrote for this address, if any."""
    try:
        return token_file(admin_address).read_text().strip() or None
    except OSError:
        return None


def write_token(path: Path, token: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.parent.chmod(0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    path.chmod(0o600)


def load_limits(path: Path) -> Limits:
    """Limits from a TOML file: a ``[limits]`` table (as in a tournament file), or the fields at the
    top level."""
    import tomllib

    from arena.bots.limits import Limits

    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise typer.BadParameter(f"{path}: {exc}", param_hint="--limits") from exc
    table = data.get("limits", data)
    if not isinstance(table, dict):
        raise typer.BadParameter(f"{path}: [limits] must be a table", param_hint="--limits")
    try:
        return Limits.from_table(table)
    except ValueError as exc:
        raise typer.BadParameter(f"{path}: {exc}", param_hint="--limits") from exc


def serve(
    address: Annotated[
        str,
        typer.Option(
            help="HOST:PORT where bots dial in (the bot gateway and health, nothing else); port 0 "
            "picks a free port. 0.0.0.0:PORT accepts bots from other machines."
        ),
    ] = "127.0.0.1:50051",
    admin_address: Annotated[
        str,
        typer.Option(
            help="HOST:PORT of the admin service (start, list and watch matches), on a listener of "
            "its own; every call must carry the admin token. Loopback by default."
        ),
    ] = "127.0.0.1:50052",
    admin_token: Annotated[
        str | None,
        typer.Option(
            envvar="ARENA_ADMIN_TOKEN",
            help="The secret every admin call must present (metadata 'authorization: Bearer "
            "TOKEN'). Default: a fresh one, written to a file only you can read, where arena start, "
            "matches and watch find it.",
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
    logs_max_mb: LogsMaxOption = DEFAULT_LOGS_MB,
    sandbox: Annotated[SandboxMode | None, typer.Option(help=SANDBOX_HELP)] = None,
    limits_file: Annotated[
        Path | None,
        typer.Option(
            "--limits",
            help="A TOML file of limits for local bots: a \\[limits] table as in a tournament file "
            "(memory_mb, cpu_seconds, processes, cpus, file_size_mb, open_files, log_bytes, "
            "disk_mb, sandbox, freeze). The options below override it.",
            show_default=False,
        ),
    ] = None,
    memory_mb: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=MAX_MB,
            help="Address space of a bot process, and memory of its processes together where the "
            "machine has control groups (MiB; 0: none).",
        ),
    ] = None,
    cpu_seconds: Annotated[
        int | None, typer.Option(min=0, help="CPU seconds of a bot process (0: none).")
    ] = None,
    processes: Annotated[
        int | None, typer.Option(min=0, help="Processes and threads of a bot (0: none).")
    ] = None,
    cpus: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=MAX_CPUS,
            help="CPUs a bot's processes together may keep busy, where the machine has control "
            "groups (0: none).",
        ),
    ] = None,
    deal_key: Annotated[
        str | None,
        typer.Option(
            envvar="ARENA_DEAL_KEY",
            help="The secret deals are drawn with, in hex (default: a fresh one, so that no deal "
            "can be computed from its seed). The same key and seed give the same deal.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run the referee for remote bots and admin-started matches until interrupted.

    Bots dial --address (the bot gateway and health); the admin and spectator service, with
    reflection, listens on --admin-address and needs the admin token on every call. Local bots of
    admin-started matches run under this server's sandbox and limits. Prints both addresses and where
    the admin token is. Ctrl-C or SIGTERM stops every running match and kills its local bots.
    """
    from arena.bots.limits import Limits

    limits = load_limits(limits_file) if limits_file is not None else Limits()
    chosen = {
        "sandbox": sandbox.value if sandbox is not None else None,
        "memory_mb": memory_mb,
        "cpu_seconds": cpu_seconds,
        "processes": processes,
        "cpus": cpus,
    }
    try:
        limits = Limits.from_table(
            {
                **{k: getattr(limits, k) for k in Limits.__dataclass_fields__},
                **{k: v for k, v in chosen.items() if v is not None},
            }
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    key = secrets.token_bytes(32)
    if deal_key:
        try:
            key = parse_deal_key(deal_key)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--deal-key") from exc
    logs_folder(logs)
    found = sandbox_probe(limits.sandbox, show=False)  # refuse before binding anything
    try:
        asyncio.run(
            _serve(
                address, admin_address, records, logs, admin_token, limits, key, found, logs_max_mb
            )
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--address/--admin-address") from exc
    except OSError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:  # a second Ctrl-C while stopping
        raise typer.Exit(130) from None


async def _serve(
    address: str,
    admin_address: str,
    records: Path | None,
    logs: Path | None,
    admin_token: str | None,
    limits: Limits,
    deal_key: bytes,
    found: Probe,
    logs_max_mb: int,
) -> None:
    from arena.bots.logs import LogFolder
    from arena.service.match_manager import ManagerOptions
    from arena.service.server import create_server

    server, _, manager = await create_server(
        address,
        records_dir=records,
        logs_dir=logs,
        admin_token=admin_token,
        admin_address=admin_address,
        limits=limits,
        deal_key=deal_key,
        options=ManagerOptions(
            log_folder=LogFolder(logs, logs_max_mb * 1024 * 1024) if logs is not None else None
        ),
        guarded=True,  # anyone on the network may reach it: caps per client, deadlines
    )
    written: Path | None = None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        if not admin_token:  # written before the addresses are printed: whoever reads them finds it
            written = token_file(server.admin_address)
            write_token(written, server.admin_token)
        typer.echo(f"referee listening on {manager.address}", nl=True)
        typer.echo(f"admin service on {server.admin_address}", nl=True)
        typer.echo(found.describe(), err=True)
        if written is None:
            typer.echo(
                "admin calls must carry 'authorization: Bearer <admin token>' (the token given)",
                err=True,
            )
        else:
            typer.echo(
                f"admin token written to {written} (readable by you only; arena start, matches "
                "and watch read it)",
                err=True,
            )
        typer.echo("stop with Ctrl-C", err=True)
        await stop.wait()
        typer.echo("stopping: ending running matches and their bots", err=True)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        if written is not None and read_token(server.admin_address) == server.admin_token:
            with contextlib.suppress(OSError):
                written.unlink()
        await manager.close()
        await server.stop(grace=1.0)
    typer.echo("stopped", err=True)
