"""The import-linter contract in pyproject.toml (run by make test as ``lint-imports``) covers every
room of arena/: a room left out of the layers would be free to import anything."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _contracts() -> list[dict[str, object]]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        data = tomllib.load(f)
    contracts: list[dict[str, object]] = data["tool"]["importlinter"]["contracts"]
    return contracts


def _layered(contract: dict[str, object]) -> list[str]:
    layers = contract["layers"]
    assert isinstance(layers, list)
    return [room.strip() for layer in layers for room in str(layer).split("|")]


def test_every_room_of_arena_is_in_a_layer() -> None:
    rooms = {
        f"arena.{p.parent.name}"
        for p in (ROOT / "arena").glob("*/__init__.py")
        if p.parent.name != "__pycache__"
    }
    (layers,) = [c for c in _contracts() if c["type"] == "layers"]
    layered = _layered(layers)
    assert sorted(layered) == sorted(set(layered)), "a room in two layers"
    assert set(layered) == rooms


def test_every_room_is_a_package() -> None:
    """A folder of arena/ without an __init__.py is a namespace package: import-linter does not
    see it as a module of the contract, and setuptools' finder leaves it out of the wheel."""
    folders = {
        p.name
        for p in (ROOT / "arena").iterdir()
        if p.is_dir() and p.name != "__pycache__" and any(p.glob("*.py"))
    }
    packages = {p.parent.name for p in (ROOT / "arena").glob("*/__init__.py")}
    assert folders == packages
    # and no module lies outside a room (the package's own __init__ sets gRPC's transport only)
    assert sorted(p.name for p in (ROOT / "arena").glob("*.py")) == ["__init__.py"]
