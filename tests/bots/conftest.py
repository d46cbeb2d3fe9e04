"""Fixtures of the bot tests."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def referee_socket(tmp_path: Path) -> Iterator[str]:
    """A Unix socket for a sandboxed bot to be given (nobody answers on it)."""
    folder = tmp_path / "sock"
    folder.mkdir(mode=0o700)
    path = folder / "referee.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen()
    path.chmod(0o666)
    yield str(path)
    listener.close()
