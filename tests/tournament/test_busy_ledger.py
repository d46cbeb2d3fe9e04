"""Issue 14: fair clocks and clean failures when the ledger is busy, full or shared.

- a program holding a shared lock on the ledger for 3 s in every 5 costs no bot a game on time;
- a ledger locked for longer than the busy timeout, or a disk that fills, ends the run promptly with
  one line naming the cause, exit status 2, no bot left running, nothing recorded lost; Ctrl-C too;
- two runs of one tournament on one ledger: the second is refused while the first runs;
- a game that ended on time while the arena stalled the clock is played again, not charged.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.ledger import Ledger, LedgerError
from arena.tournament.runner import TournamentRunner
from arena.tournament.spec import load

pytestmark = pytest.mark.slow

RUN_TIMEOUT = 300.0

BOT = textwrap.dedent(
    """\
    import time
    from arena_bot.sdk import Bot, main_for

    class Quick(Bot):
        name = "quick"
        def decide(self, view, legal, clock):
            if PAUSE:
                time.sleep(PAUSE)
            return legal[len(legal) // 2]

    main_for(Quick())
    """
)


def tournament(
    directory: Path,
    deals: int,
    budget_ms: int = 1000,
    pause: float = 0.0,
    variant: str = "rubicon",
    games_per_process: int = 1,
) -> Path:
    """Two quick bots (a copy of the script in ``directory``, so that its processes can be found) on
    a tight clock with no bank: a game decided on time means the arena held the clock up. Each
    decision after ``pause`` seconds: a run that must last a while does so with bots that wait, not
    with games that keep the machine busy. Rubicon unless told: one deal a game, a quarter of a
    two-handed game's decisions. ``games_per_process`` is the tournament's ``matches_per_process``:
    where a test is about the ledger, bot processes play several games, since starting them costs
    more than the games."""
    (directory / "quick.py").write_text(BOT.replace("PAUSE", repr(pause)))
    directory.chmod(0o755)  # a sandboxed bot runs under a uid of its own: it must read its folder
    path = directory / "busy.toml"
    path.write_text(
        textwrap.dedent(
            f"""\
            name = "Busy"
            variant = "{variant}"
            deals_per_pairing = {deals}
            matches_per_process = {games_per_process}
            concurrency = 2
            seed = 11
            [time_control]
            budget_ms = {budget_ms}
            bank_ms = 0
            grace_ms = 200
            [[entrants]]
            name = "a"
            command = "{{python}} quick.py"
            [[entrants]]
            name = "b"
            command = "{{python}} quick.py"
            """
        )
    )
    return path


# A step that makes SIGINT's disposition the default and executes the rest of its command line. (Not
# a preexec_fn: that forks this process, which has used gRPC, and such a fork may abort in gRPC's fork
# handlers before it executes anything.)
DEFAULT_SIGINT = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])",
]


def arena(toml: Path, ledger: Path, *, before: Sequence[str] = ()) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *before,
            sys.executable,
            "-m",
            "arena.cli.main",
            "run",
            str(toml),
            "--ledger",
            str(ledger),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def count(ledger: Path, sql: str = "SELECT count(*) FROM games") -> int:
    try:
        conn = sqlite3.connect(ledger, timeout=30.0)
        try:
            return int(conn.execute(sql).fetchone()[0])
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def wait_for_games(ledger: Path, n: int, proc: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT
    while count(ledger) < n:
        assert proc is None or proc.poll() is None, proc.communicate() if proc else ""
        assert time.monotonic() < deadline, "no games recorded in time"
        time.sleep(0.1)


def bots_left(directory: Path) -> list[str]:
    """Processes still running a bot from ``directory``."""
    left = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if str(directory) in cmdline and "quick.py" in cmdline:
                left.append(f"{entry.name}: {cmdline}")
    return left


def no_bots_left(directory: Path) -> None:
    deadline = time.monotonic() + 10
    while bots_left(directory) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert bots_left(directory) == []


# ---------------------------------------------------------------- a reader beside a tight clock


@contextlib.contextmanager
def reader(ledger: Path, hold: float = 3.0, every: float = 5.0) -> Iterator[list[int]]:
    """A program reading the ledger that keeps a shared lock for ``hold`` seconds in every ``every``."""
    stop = threading.Event()
    held: list[int] = []

    def read() -> None:
        conn = sqlite3.connect(ledger, timeout=30.0, isolation_level=None)
        while not stop.is_set():
            with contextlib.suppress(sqlite3.OperationalError):
                conn.execute("BEGIN")
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                held.append(1)
                stop.wait(hold)
                conn.execute("COMMIT")
            stop.wait(every - hold)
        conn.close()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    try:
        yield held
    finally:
        stop.set()
        thread.join()


def test_a_reader_holding_locks_costs_no_bot_a_game(tmp_path: Path) -> None:
    # Sixteen games of a second or so each, two at a time: the run lasts well beyond two of the
    # reader's five-second rounds, and games end all along, their records written while the reader
    # holds its lock as often as not.
    toml = tournament(tmp_path, deals=8, pause=0.005, games_per_process=16)
    ledger = tmp_path / "ledger.sqlite"
    Ledger(ledger).close()
    led = Ledger(ledger)
    runner = TournamentRunner(load(toml), led)
    with reader(ledger) as held:
        asyncio.run(asyncio.wait_for(runner.run(), RUN_TIMEOUT))
    led.close()
    assert len(held) >= 2, "the reader held its lock during the run"
    assert count(ledger) == 16
    assert count(ledger, "SELECT count(*) FROM games WHERE outcome != 'normal'") == 0
    no_bots_left(tmp_path)


# ---------------------------------------------------------------- fatal errors end the run


def test_a_ledger_locked_for_too_long_ends_the_run_cleanly(tmp_path: Path) -> None:
    toml = tournament(tmp_path, deals=4, games_per_process=8)
    ledger = tmp_path / "ledger.sqlite"
    proc = arena(toml, ledger)
    wait_for_games(ledger, 1, proc)
    holder = sqlite3.connect(ledger, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        locked = time.monotonic()
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - locked
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert proc.returncode == 2, out + err
    assert "locked by another program" in err
    assert len(err.strip().splitlines()) == 1, err
    assert took < 30, f"the run ended {took:.0f} s after the lock (busy timeout 10 s)"
    no_bots_left(tmp_path)
    assert count(ledger) >= 1
    # nothing lost: a rerun resumes and completes the tournament
    again = arena(toml, ledger)
    again.communicate(timeout=RUN_TIMEOUT)
    assert again.returncode == 0
    assert count(ledger) == 8


def test_ctrl_c_while_the_ledger_is_locked(tmp_path: Path) -> None:
    toml = tournament(tmp_path, deals=12, games_per_process=24)
    ledger = tmp_path / "ledger.sqlite"
    # Ctrl-C's SIGINT as a terminal sends it: the run's disposition of it made the default, since a
    # test suite started in the background (a shell's `&`) hands its children SIGINT ignored.
    proc = arena(toml, ledger, before=DEFAULT_SIGINT)
    wait_for_games(ledger, 1, proc)
    holder = sqlite3.connect(ledger, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        time.sleep(1.0)  # a write is waiting for the lock now
        sigint = sigint_state(proc.pid)  # named if the run goes on regardless
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert proc.returncode == 130, f"{out}{err}\nthe arena's SIGINT when it was sent: {sigint}"
    assert "interrupted" in err
    no_bots_left(tmp_path)


def sigint_state(pid: int) -> str:
    """Whether the process ignores, blocks or catches SIGINT (Linux /proc), in words."""
    bit = 1 << (signal.SIGINT - 1)
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError as exc:
        return f"unknown ({exc})"
    masks = {k: int(v, 16) for k, _, v in (line.partition(":\t") for line in lines) if k in _MASKS}
    return ", ".join(
        f"{word} {'yes' if masks.get(k, 0) & bit else 'no'}" for k, word in _MASKS.items()
    )


_MASKS = {"SigIgn": "ignored", "SigBlk": "blocked", "SigCgt": "caught"}


@contextlib.contextmanager
def small_disk(directory: Path) -> Iterator[Path | None]:
    """A 2 MiB tmpfs at ``directory`` where this machine lets the test mount one, else None."""
    directory.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        yield None
        return
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(directory)], capture_output=True
    )
    if done.returncode != 0:
        yield None
        return
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=False)


# What the full disk leaves the run: its schedule and about seven two-handed games of twelve.
ROOM_FOR_A_FEW_GAMES = 200 * 1024


def test_a_full_disk_ends_the_run_cleanly(tmp_path: Path) -> None:
    # 12 games; the disk fills after about 7 (the room left is measured in two-handed records)
    toml = tournament(tmp_path, deals=6, variant="two-handed", games_per_process=12)
    with small_disk(tmp_path / "disk") as disk:
        if disk is not None:
            ledger = disk / "ledger.sqlite"
            Ledger(ledger).close()
            # Leave room for the schedule and a few games only, measured from what the new ledger
            # leaves free: a fixed filler left less room with each table a migration added, until
            # not even the schedule fitted.
            fs = os.statvfs(disk)
            (disk / "filler").write_bytes(
                b"\0" * (fs.f_bavail * fs.f_frsize - ROOM_FOR_A_FEW_GAMES)
            )
            proc = arena(toml, ledger)
            out, err = proc.communicate(timeout=RUN_TIMEOUT)
            assert proc.returncode == 2, out + err
            assert "disk full" in err, err
            assert len(err.strip().splitlines()) == 1, err
            no_bots_left(tmp_path)
            recorded = count(ledger)
            assert 0 < recorded < 12, recorded
            assert count(ledger, "SELECT count(*) FROM game_records") == recorded
            (disk / "filler").unlink()  # room again: the run resumes where it stopped
            again = arena(toml, ledger)
            again.communicate(timeout=RUN_TIMEOUT)
            assert again.returncode == 0
            assert count(ledger) == 12
            return
    # No tmpfs here: the same end to a run, from a simulated failing write.
    ledger_path = tmp_path / "ledger.sqlite"

    class FullLedger(Ledger):
        writes = 0

        def record_game(self, *args: Any, **kwargs: Any) -> int:
            FullLedger.writes += 1
            if FullLedger.writes > 2:
                raise LedgerError(
                    f"{self.path}: cannot write: disk full (database or disk is full)"
                )
            return super().record_game(*args, **kwargs)

    led = FullLedger(ledger_path)
    runner = TournamentRunner(load(toml), led)
    started = time.monotonic()
    with pytest.raises(LedgerError, match="disk full"):
        asyncio.run(asyncio.wait_for(runner.run(), RUN_TIMEOUT))
    assert time.monotonic() - started < 120
    led.close()
    no_bots_left(tmp_path)
    assert count(ledger_path) == 2


# ---------------------------------------------------------------- one run at a time


def test_a_second_run_of_a_running_tournament_is_refused(tmp_path: Path) -> None:
    # Twelve games of a second or so each, still being played when the second run asks; the test is
    # about the lease: bot processes play several games.
    toml = tournament(tmp_path, deals=6, pause=0.005, games_per_process=12)
    ledger = tmp_path / "ledger.sqlite"
    first = arena(toml, ledger)
    wait_for_games(ledger, 1, first)
    second = arena(toml, ledger)
    out, err = second.communicate(timeout=RUN_TIMEOUT)
    assert second.returncode == 2, out + err
    assert f"is being run by process {first.pid}" in err
    first.communicate(timeout=RUN_TIMEOUT)
    assert first.returncode == 0
    assert count(ledger, "SELECT count(DISTINCT key) FROM games") == count(ledger) == 12
    # The lease went with the first run: a third run resumes (and plays nothing).
    third = arena(toml, ledger)
    out, _ = third.communicate(timeout=RUN_TIMEOUT)
    assert third.returncode == 0 and "resumed: 12 game(s)" in out


# ---------------------------------------------------------------- the arena's own stalls


def test_a_game_lost_on_time_while_the_arena_stalled_is_played_again(tmp_path: Path) -> None:
    """The watcher says the loop stalled during the first attempt: that game is played again; on the
    second attempt there is no stall, and the (really slow) bot's timeout stands."""
    toml = tournament(tmp_path, deals=1, budget_ms=300, pause=2.0)
    ledger = tmp_path / "ledger.sqlite"
    led = Ledger(ledger)
    spec = load(toml)
    runner = TournamentRunner(spec.__class__(**{**spec_fields(spec), "concurrency": 1}), led)
    stalls = iter([5.0, 5.0])

    async def go() -> None:
        task = asyncio.create_task(runner.run())
        while not hasattr(runner, "player"):
            await asyncio.sleep(0.01)
        runner.player.watch.longest = lambda a, b: next(stalls, 0.0)  # type: ignore[method-assign]
        await task

    asyncio.run(asyncio.wait_for(go(), RUN_TIMEOUT))
    led.close()
    assert runner.progress.replayed == 2
    assert count(ledger) == 2
    assert count(ledger, "SELECT count(*) FROM games WHERE outcome = 'timeout'") == 2
    no_bots_left(tmp_path)


def spec_fields(spec: Any) -> dict[str, Any]:
    return {f: getattr(spec, f) for f in spec.__dataclass_fields__}
