"""Scratch folders: one per arena process, locked while it lives, removed at exit, and swept by the next
arena process when a killed one left its folder behind."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena.common import scratch_dirs as scratch

CHILD = textwrap.dedent(
    """
    import sys, time
    from arena.common import scratch_dirs as scratch
    work = scratch.scratch_dir("bot-")
    (work / "left.txt").write_text("a bot's file")
    print(work, flush=True)
    if sys.argv[1] == "wait":
        time.sleep(600)
    """
)


def child(tmp_path: Path, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, mode], stdout=subprocess.PIPE, text=True, env=env
    )


def test_scratch_dirs_live_in_one_locked_folder_per_process() -> None:
    first, second = scratch.scratch_dir("bot-"), scratch.scratch_dir("bot-")
    assert first != second and first.parent == second.parent == scratch.run_dir()
    assert first.parent.name.startswith(scratch.PREFIX)
    fd = os.open(first.parent / scratch.LOCK, os.O_RDWR)
    try:
        with pytest.raises(BlockingIOError):  # held by this process for as long as it lives
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
    assert first.parent not in scratch.sweep(first.parent.parent)
    assert first.is_dir()


def test_a_normal_exit_removes_the_folder(tmp_path: Path) -> None:
    proc = child(tmp_path, "exit")
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert not Path(out.strip()).exists()
    assert list(tmp_path.glob(f"{scratch.PREFIX}*")) == []


def test_the_folder_of_a_killed_process_is_swept_and_a_live_ones_kept(tmp_path: Path) -> None:
    killed, alive = child(tmp_path, "wait"), child(tmp_path, "wait")
    try:
        assert killed.stdout is not None and alive.stdout is not None
        killed_work = Path(killed.stdout.readline().strip())
        alive_work = Path(alive.stdout.readline().strip())
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=60)
        assert (killed_work / "left.txt").exists(), "SIGKILL skips every clean-up"

        removed = scratch.sweep(tmp_path)

        assert removed == [killed_work.parent]
        assert not killed_work.parent.exists()
        assert (alive_work / "left.txt").exists()
    finally:
        alive.kill()
        alive.wait(timeout=60)


def test_a_folder_still_being_made_is_left_alone(tmp_path: Path) -> None:
    """No lock file yet: its process has just made it and is about to lock it."""
    young = tmp_path / f"{scratch.PREFIX}young"
    young.mkdir()
    (young / f"{scratch.LOCK}.new").touch()
    assert scratch.sweep(tmp_path) == []
    assert young.exists()
