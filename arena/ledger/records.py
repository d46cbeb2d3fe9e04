"""How a game's full record is stored: compact JSON, zlib-compressed, with its layout's version.

A record holds every decision with its legal actions: as plain JSON it runs to a hundred kilobytes or
more, most of it repeated action texts, which compress about tenfold. Records stored as plain JSON text
by earlier versions of the arena (encoding ``json``) stay readable.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

ENCODING = "json+zlib"
SCHEMA = 1  # the layout of a match record's plain data; raise it when that layout changes
ENCODINGS = ("json", ENCODING)


class RecordError(ValueError):
    """A stored record that cannot be read back; the message says why."""


def encode(text: str) -> tuple[str, int, bytes]:
    """(encoding, schema, data) for a record's JSON text."""
    return ENCODING, SCHEMA, zlib.compress(text.encode("utf-8"), 6)


def decode(encoding: str, data: bytes | str) -> dict[str, Any]:
    """The record stored as ``data`` in ``encoding``."""
    try:
        if encoding == "json":
            text = data if isinstance(data, str) else data.decode("utf-8")
        elif encoding == ENCODING:
            raw = data.encode("latin-1") if isinstance(data, str) else data
            text = zlib.decompress(raw).decode("utf-8")
        else:
            raise RecordError(f"unknown record encoding {encoding!r}")
        value = json.loads(text)
    except (zlib.error, UnicodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"the stored record is damaged ({encoding}): {exc}") from exc
    if not isinstance(value, dict) or not isinstance(value.get("games"), list):
        raise RecordError("the stored record is not a match record (no list of games)")
    return value
