"""Raw connections to a referee's listener, for the tests that flood one: each says HTTP/2's preface,
and :func:`kept` tells whether the other end still holds it. :func:`frame` and :func:`headers` write
HTTP/2 by hand, for the tests that send what no gRPC client would."""

from __future__ import annotations

import contextlib
import socket
import struct
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


DATA, HEADERS, RST_STREAM, SETTINGS = 0, 1, 3, 4
END_STREAM, END_HEADERS = 1, 4


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    """One HTTP/2 frame."""
    return (
        struct.pack(">I", len(payload))[1:]
        + bytes([kind, flags])
        + struct.pack(">I", stream)
        + payload
    )


def headers(path: str) -> bytes:
    """The header block of a gRPC call to ``path`` (HPACK literals, each name and value under 127
    bytes)."""
    fields = [
        (":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "referee"),
        ("content-type", "application/grpc"), ("te", "trailers"),
    ]  # fmt: skip
    block = b""
    for name, value in fields:
        block += bytes([0, len(name)]) + name.encode() + bytes([len(value)]) + value.encode()
    return block


def frames_until(conn: socket.socket, stream: int, seconds: float) -> list[tuple[int, int]]:
    """The (kind, flags) of the frames ``conn`` receives for ``stream``, until one ends it (a reset, or
    an end of stream) or ``seconds`` have passed."""
    conn.settimeout(seconds)
    deadline = time.monotonic() + seconds
    got: list[tuple[int, int]] = []
    buffer = b""
    while time.monotonic() < deadline:
        try:
            chunk = conn.recv(65536)
        except TimeoutError:
            break
        if not chunk:
            break
        buffer += chunk
        while len(buffer) >= 9 and len(buffer) >= 9 + int.from_bytes(buffer[:3], "big"):
            size, kind, flags = int.from_bytes(buffer[:3], "big"), buffer[3], buffer[4]
            sid = struct.unpack(">I", buffer[5:9])[0] & 0x7FFFFFFF
            buffer = buffer[9 + size :]
            if sid == stream:
                got.append((kind, flags))
                if kind == RST_STREAM or flags & END_STREAM:
                    return got
        conn.settimeout(max(0.01, deadline - time.monotonic()))
    return got
