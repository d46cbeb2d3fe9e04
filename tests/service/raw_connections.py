"""Raw connections to a referee's listener, for the tests that flood one: each says HTTP/2's preface,
and :func:`kept` tells whether the other end still holds it."""

from __future__ import annotations

import contextlib
import socket
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def kept(conn: socket.socket) -> bool:
    """Whether the other end still holds ``conn`` open (what it sent is read until there is no more)."""
    conn.setblocking(False)
    try:
        while conn.recv(65536):
            pass
        return False  # closed by the other end
    except BlockingIOError:
        return True  # open, nothing more to read
    except OSError:
        return False


def raw(family: socket.AddressFamily, address: str | tuple[str, int]) -> socket.socket:
    """A connection to ``address`` that said the preface (unless the other end closed it first: a
    listener past its cap may close a connection before a byte is sent)."""
    conn = socket.socket(family)
    conn.settimeout(10)
    conn.connect(address)
    with contextlib.suppress(OSError):
        conn.sendall(PREFACE)
    return conn


def settled(conns: list[socket.socket], at_most: int, seconds: float = 15.0) -> int:
    """How many of ``conns`` the other end keeps, once it keeps ``at_most`` or fewer (a loaded
    machine's listener takes its time to close those past its cap), or ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while (count := sum(map(kept, conns))) > at_most and time.monotonic() < deadline:
        time.sleep(0.2)
    return count
