"""The logs' folder of a server that runs for good, held to a size (arena.bots.logs): a standing
competition with --logs started bot processes without end, and their logs filled the disk."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from arena.bots import logs
from arena.bots.logs import LogFolder
from arena.service.match_manager import ManagerOptions, MatchManager


def _logs(folder: Path, sizes: dict[str, int]) -> None:
    """Files of these sizes, written in this order a second apart (the first is the oldest)."""
    folder.mkdir(exist_ok=True)
    for age, (name, size) in enumerate(reversed(list(sizes.items()))):
        path = folder / name
        path.write_bytes(b"x" * size)
        os.utime(path, (1_000_000 - age, 1_000_000 - age))


def test_the_oldest_logs_go_first_until_the_rest_fit(tmp_path: Path) -> None:
    _logs(tmp_path, {"a.log": 400, "b.log": 300, "c.log": 200, "d.log": 100, "notes.txt": 5000})
    folder = LogFolder(tmp_path, 350)
    assert folder.prune() == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.log", "d.log", "notes.txt"]
    assert folder.prune() == 0


def test_an_unbounded_folder_is_never_pruned_and_a_bounded_one_not_too_often(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not LogFolder(tmp_path, 0).due()
    folder = LogFolder(tmp_path, 1)
    assert folder.due()
    folder.prune()
    assert not folder.due()
    monkeypatch.setattr(logs, "EVERY_SECONDS", 0.0)
    assert folder.due()


def test_a_servers_manager_holds_its_logs_folder(tmp_path: Path) -> None:
    """What arena serve --logs-max-mb and arena compete serve set: the manager prunes before each
    new log."""
    _logs(tmp_path, {"m1-seat0-0-a.log": 2000, "m1-seat1-0-b.log": 2000, "m2-seat0-0-a.log": 10})
    manager = MatchManager(logs_dir=tmp_path)
    asyncio.run(manager.prune_logs())  # no bound set: all kept
    assert len(list(tmp_path.iterdir())) == 3
    manager = MatchManager(logs_dir=tmp_path, options=ManagerOptions(LogFolder(tmp_path, 2500)))
    asyncio.run(manager.prune_logs())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m1-seat1-0-b.log", "m2-seat0-0-a.log"]
