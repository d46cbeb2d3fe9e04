"""``arena web``: the arena in a browser (leaderboards, entrants, replays, live matches), read-only over
the ledger, until interrupted."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Annotated

import typer

from arena.cli.common import fail
from arena.cli.options import DEFAULT_LEDGER, LedgerOption


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on HOST:PORT (port 0: a free port), made here so that the URL printed is the
    one actually served."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def web(
    ledger: LedgerOption = Path(DEFAULT_LEDGER),
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            "-s",
            envvar="ARENA_SERVER",
            help="A running referee's admin address (arena serve's --admin-address, "
            "127.0.0.1:50052 by default), whose matches the Live page follows.",
            show_default=False,
        ),
    ] = None,
    admin_token: Annotated[
        str | None,
        typer.Option(
            envvar="ARENA_ADMIN_TOKEN",
            help="The referee's admin token (default: the one a local arena serve wrote for "
            "this address).",
            show_default=False,
        ),
    ] = None,
    submissions: Annotated[
        str | None,
        typer.Option(
            "--submissions",
            help="A running competition's submission address (HOST:PORT, printed by arena compete "
            "serve): serve its author area too. Authors sign in with their token (the organiser "
            "with theirs) to follow their bots, upload bundles and withdraw bots; the organiser "
            "pauses, suspends, reinstates and adds authors. Every action is a call to that "
            "service; the web never writes the ledger.",
            show_default=False,
        ),
    ] = None,
    host: Annotated[
        str,
        typer.Option(help="Address to listen on; the default is this machine only (loopback)."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port; 0 picks a free one.")] = 8000,
) -> None:
    """Serve the arena's web pages and JSON API over the ledger until interrupted.

    Events (tournaments and competitions) with their leaderboards, each entrant's rating history and
    games, every game's replay (full view or one seat's), and the matches of a running referee live
    (--server). The ledger is opened read-only: a tournament running beside it is never held up.

    With --submissions, a competition's author area: a "Sign in" link for authors and the organiser, sessions in cookies (HttpOnly, SameSite=Strict, Secure when served beyond loopback: put it behind HTTPS then)."""
    # Imported here: the other commands start without the web's libraries.
    import uvicorn

    from arena.cli.serve import read_token
    from arena.service.server import is_loopback
    from arena.web.app import create_app
    from arena.web.reader import LedgerUnavailable

    if server and not admin_token:
        admin_token = read_token(server)  # a local arena serve's, as arena start finds it
    if str(ledger) != ":memory:" and not ledger.exists():
        raise fail(f"no ledger at {ledger} (run a tournament first: arena run FILE)")
    try:
        app = create_app(
            ledger,
            server=server,
            admin_token=admin_token,
            loopback_only=is_loopback(f"{host}:{port}"),
            submissions=submissions,
            secure_cookies=not is_loopback(f"{host}:{port}"),
        )
    except LedgerUnavailable as exc:
        raise fail(str(exc)) from exc
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    if not is_loopback(f"{host}:{port}"):
        typer.echo(
            f"note: listening on {host}, beyond this machine: anyone who can reach it can read the "
            "ledger's games and ratings (never a deal's secret)",
            err=True,
        )
    typer.echo(f"arena web: {ledger} at {url_of(sock)}")
    if server:
        typer.echo(f"following the referee at {server} on the Live page", err=True)
    if submissions:
        typer.echo(f"the author area of the competition at {submissions}: /signin", err=True)
        if not is_loopback(f"{host}:{port}"):
            typer.echo(
                "note: its session cookies are Secure (HTTPS only): serve it behind an HTTPS proxy",
                err=True,
            )
    typer.echo("stop with Ctrl-C", err=True)
    config = uvicorn.Config(
        app, loop="asyncio", http="h11", lifespan="on", log_level="warning", access_log=False
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn stops cleanly, then passes Ctrl-C on
        typer.echo("stopped", err=True)
    finally:
        sock.close()
