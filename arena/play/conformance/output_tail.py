"""What a crashed bot wrote, as the conformance check shows it: all of it when short, else its first
and last lines with the cut marked (Node prints an uncaught error's message above its stack trace,
Python below)."""

from __future__ import annotations

import contextlib

from arena.bots.launcher import TAIL_LINES, BotProcess, output_line
from arena.service.stream_port import StreamPort

# A crashed bot's output is shown whole when short, else its first and last lines: Node prints an
# uncaught error's message (Cannot find module ...) above its stack trace, Python below.
LOG_HEAD_LINES = 6
LOG_TAIL_LINES = 8
# The first lines come from the bot's log, of which this much is read: the launcher keeps only the
# last TAIL_LINES in memory.
LOG_READ_BYTES = 1 << 20


def bot_output_tail(port: StreamPort) -> str:
    """What the player's bot process wrote, for a crash: all of it when short, else its first and
    last lines with the cut marked."""
    if port.process is None:
        return ""
    return "\n".join(output_lines(port.process))


def output_lines(process: BotProcess) -> list[str]:
    kept = process.last_output(TAIL_LINES)
    if len(kept) < TAIL_LINES:  # the launcher dropped none: this is all of it
        return _cut(kept)
    data = b""
    if process.log_path is not None:
        with contextlib.suppress(OSError), process.log_path.open("rb") as log:
            data = log.read(LOG_READ_BYTES + 1)
    lines = _log_lines(data)
    if not lines:  # no log: the first lines are kept nowhere; every line that is
        return ["    ... (its first lines are not kept)", *_bar(kept)]
    # The log is whole when read to its end, not truncated, and ends as the lines kept do (the
    # launcher may not have written out what it read last, for a bot still running).
    whole = len(data) <= LOG_READ_BYTES and len(data) < process.limits.log_bytes
    if whole and lines[-len(kept) :] == kept:
        return _cut(lines)
    return [
        *_bar(lines[:LOG_HEAD_LINES]),
        "    ... (lines left out)",
        *_bar(kept[-LOG_TAIL_LINES:]),
    ]


def _cut(lines: list[str]) -> list[str]:
    """All the lines, or the first LOG_HEAD_LINES and the last LOG_TAIL_LINES when there are more."""
    left_out = len(lines) - LOG_HEAD_LINES - LOG_TAIL_LINES
    if left_out <= 1:  # a marker would take the room of the line it hides
        return _bar(lines)
    head, tail = lines[:LOG_HEAD_LINES], lines[-LOG_TAIL_LINES:]
    return [*_bar(head), f"    ... ({left_out} lines left out)", *_bar(tail)]


def _bar(lines: list[str]) -> list[str]:
    return [f"    | {line}" for line in lines]


def _log_lines(data: bytes) -> list[str]:
    """A log's lines as the launcher keeps them: cut to length, made printable, blank ones left out."""
    return [text for line in data.split(b"\n") if (text := output_line(line))]
