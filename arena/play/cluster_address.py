"""What a cluster address may look like (checked when a tournament file is read; no Ray needed)."""

from __future__ import annotations

import re

_HOST_PORT = re.compile(r"^(ray://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})/?$")
FORMS = "auto, HOST:PORT, ray://HOST:PORT or local"


def address_problem(address: str) -> str:
    """Why ``address`` cannot be a cluster's address ("" when it can)."""
    if address in ("auto", "local"):
        return ""
    match = _HOST_PORT.match(address)
    if match is None or not 0 < int(match.group(3)) < 65536:
        return f"expected {FORMS}, got {address!r}"
    host = match.group(2)
    if not host.startswith("["):
        try:
            host.encode("idna")  # as the connection encodes it: each label 1 to 63 characters
        except UnicodeError:
            return f"{host!r} is not a host name (empty or longer than 63 characters between dots)"
    return ""
