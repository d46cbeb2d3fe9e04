"""What identifies a tournament or a competition in the ledger: its name, and the canonical JSON of
its file; which changes to a file are harmless on resume."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol

# Fields of a tournament's spec that cannot change any game: changing them resumes the tournament.
HARMLESS = ("concurrency", "limits.log_bytes")
HARMLESS_ENTRANT_FIELDS = ("language",)


class Registrable(Protocol):
    """What the ledger keeps of a tournament's or a competition's file."""

    @property
    def name(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def source(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...


def canonical_spec(spec: Registrable) -> str:
    return json.dumps(spec.to_dict(), sort_keys=True)


def _upgraded(spec: dict[str, Any]) -> dict[str, Any]:
    """A stored spec in today's field names (specs stored by earlier versions of the arena)."""
    out = dict(spec)
    if "games_per_pairing" in out and "deals_per_pairing" not in out:
        out["deals_per_pairing"] = out.pop("games_per_pairing")
    return out


def changed_fields(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Dotted names of the fields that differ between two specs (entrants by position)."""
    out: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                walk(a.get(key), b.get(key), f"{where}.{key}" if where else key)
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{where}[{i}]")
        elif a != b:
            out.append(where)

    walk(_upgraded(old), _upgraded(new), "")
    return out


def harmless(field: str) -> bool:
    if field in HARMLESS:
        return True
    if field.startswith("entrants["):
        return field.rsplit(".", 1)[-1] in HARMLESS_ENTRANT_FIELDS and "." in field
    return False


def digest(canonical: str) -> str:
    return hashlib.sha256(canonical.encode()).hexdigest()
