"""What the commands that start bots share: the --sandbox option and its probe, a bot's short name
from its command line, and SIGTERM as Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

import typer

from arena.cli.common import errors

if TYPE_CHECKING:
    from arena.sandbox import Probe


class SandboxMode(StrEnum):
    """The values of --sandbox (see arena.sandbox)."""

    auto = "auto"
    required = "required"
    none = "none"
    bubblewrap = "bubblewrap"


SANDBOX_HELP = (
    "How the bots are confined: auto (isolated by bubblewrap where this machine can, else the light "
    "mode with a warning), required (isolated or not started), none (light: the bots run as you, "
    "for a bot you trust, such as your own)."
)


def sandbox_probe(mode: str, show: bool = True) -> Probe:
    """The sandbox mode that will run, printed (unless ``show`` is false); a required sandbox that is
    unavailable ends the command with exit code 2, naming what is missing."""
    from arena.sandbox import SandboxUnavailable, require

    try:
        found = require(mode)
    except SandboxUnavailable as exc:
        errors.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc
    if show:
        errors.print(found.describe(), markup=False, highlight=False, soft_wrap=True)
    return found


# Script names that tell one bot from another nothing: such a script is named after its folder.
GENERIC_SCRIPTS = frozenset({"bot", "main", "index", "run", "app", "__main__"})


def name_of(command: str) -> str:
    """A short name for a bot from its command line: the module after -m, the script an interpreter
    runs (``node tiny.js`` is "tiny", not "node"), else the program's name. A script of a name every
    bot may have (``bot.js``, ``main.py``) is named after its folder: ``node mybot/bot.js`` is
    "mybot"."""
    from arena.bots.launcher import interpreter, script_of

    try:
        argv = shlex.split(command)
    except ValueError:
        argv = command.split()
    if not argv:
        return "bot"
    if "-m" in argv[:-1]:
        return argv[argv.index("-m") + 1].rsplit(".", 1)[-1]
    program = argv[0].rsplit("/", 1)[-1]
    if found := interpreter(program):
        script = script_of(argv)
        if not script:
            return found
        folder, _, program = script.rpartition("/")
        stem = program.rsplit(".", 1)[0] if "." in program else program
        folder = folder.rstrip("/").rsplit("/", 1)[-1]
        if stem in GENERIC_SCRIPTS and folder not in ("", ".", ".."):
            return folder
    return program.rsplit(".", 1)[0] if "." in program else program


def unique_names(names: Sequence[str]) -> list[str]:
    """The names, numbered where they repeat (``random``, ``random#2``)."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


def stop_on_sigterm() -> None:
    """SIGTERM cancels the running command like Ctrl-C does, so that its bots are stopped."""
    task = asyncio.current_task()
    if task is not None:
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on every platform
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
