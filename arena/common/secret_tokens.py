"""The secrets the arena hands out: seat tokens, admin tokens, authors' tokens.

Each is given on command lines (``my_bot --token T``, ``arena compete submit --token T``), so it is
written in hex: a URL-safe token may start with ``-``, which argparse then takes for an option
(``argument --token: expected one argument``), about one token in 64.
"""

from __future__ import annotations

import secrets

TOKEN_BYTES = 24  # 192 bits


def new_token(nbytes: int = TOKEN_BYTES) -> str:
    """A fresh secret of ``nbytes`` random bytes, as lower-case hex."""
    return secrets.token_hex(nbytes)
