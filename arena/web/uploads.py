"""A bundle uploaded from the browser (``multipart/form-data``), read as it arrives and refused once
it is over the competition's cap: its declared length is checked before anything is read, and the
bytes are counted as they come, so that an oversize body is never held whole (a body that lies
about its length, or declares none, is stopped at the cap). The form is small (the CSRF token and
one file), parsed here with no library of its own.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

# Room above the bundle's cap for the form's other parts and the multipart framing.
FORM_MARGIN = 64 * 1024


class UploadError(ValueError):
    """An upload refused; ``status`` is the HTTP status to answer (413: too large)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Part:
    name: str
    filename: str | None
    data: bytes


def too_large(cap_mb: int) -> UploadError:
    return UploadError(
        413, f"the upload is over the competition's limit of {cap_mb} MB for a bundle; nothing kept"
    )


async def read_capped(chunks: AsyncIterator[bytes], declared: str | None, cap_mb: int) -> bytes:
    """The body, read chunk by chunk; :func:`too_large` as soon as it (or its declared length) is
    over the cap and the form's margin."""
    limit = cap_mb * 1024 * 1024 + FORM_MARGIN
    if declared is not None:
        if not declared.isdigit():
            raise UploadError(400, f"Content-Length must be a number, got {declared[:40]!r}")
        if int(declared) > limit:
            raise too_large(cap_mb)
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise too_large(cap_mb)
    return bytes(body)


_BOUNDARY = re.compile(r'boundary="?([^";]{1,200})"?', re.IGNORECASE)
_DISPOSITION = re.compile(r'(\w+)="([^"]*)"')


def boundary_of(content_type: str | None) -> bytes:
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    found = _BOUNDARY.search(content_type or "")
    if kind != "multipart/form-data" or found is None:
        raise UploadError(400, "the upload must be a multipart/form-data form (the page's own)")
    return found.group(1).encode("latin-1")


def parse_form(body: bytes, boundary: bytes) -> dict[str, Part]:
    """The form's parts by name (the first of a name): a field's or a file's bytes."""
    delimiter = b"--" + boundary
    pieces = body.split(delimiter)
    if len(pieces) < 3 or not pieces[-1].startswith(b"--"):
        raise UploadError(400, "the upload's form is cut short or malformed")
    parts: dict[str, Part] = {}
    for piece in pieces[1:-1]:
        if not piece.startswith(b"\r\n") or not piece.endswith(b"\r\n"):
            raise UploadError(400, "the upload's form is malformed")
        head, sep, data = piece[2:-2].partition(b"\r\n\r\n")
        if not sep:
            raise UploadError(400, "the upload's form has a part with no headers")
        fields: dict[str, str] = {}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            key, _, value = line.partition(":")
            if key.strip().lower() == "content-disposition":
                fields = dict(_DISPOSITION.findall(value))
        name = fields.get("name")
        if name is not None and name not in parts:
            parts[name] = Part(name, fields.get("filename"), data)
    return parts
