"""A cancellation (Ctrl-C, a fatal error that ends a run, a stopped match) is never swallowed on the way.

Python 3.11's ``asyncio.wait_for`` returns the inner result when the waiting task is cancelled just as
the inner awaitable finishes, and the cancellation is lost: a match whose game-end notifications were
bounded with it could go on after Ctrl-C. The arena bounds its waits with ``asyncio.timeout``, and
waits for a task it cancelled with ``asyncio.wait``; these tests cancel the waiting task at each
moment around the end of such a wait.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from arena.play.stall_watch import StallWatch
from arena.referee.match import _quietly

ARENA = Path(__file__).resolve().parents[1] / "arena"


async def _goes_on_after_cancel(
    wait: Callable[[], Awaitable[object]], finish: Callable[[], None] | None, turns: int
) -> bool:
    """Whether a task running ``wait()`` carries on when it is cancelled ``turns`` loop turns after
    ``finish()`` ended what it waits for (without ``finish``: ``turns`` after the task began)."""
    went_on = False

    async def caller() -> None:
        nonlocal went_on
        await wait()
        went_on = True
        await asyncio.sleep(0.05)

    task = asyncio.ensure_future(caller())
    if finish is not None:
        await asyncio.sleep(0.01)  # the caller is waiting now
        finish()
    for _ in range(turns):
        await asyncio.sleep(0)
    task.cancel()
    await asyncio.wait({task})
    return went_on and not task.cancelled()


@pytest.mark.parametrize("turns", range(4))
def test_a_bounded_notification_never_swallows_a_cancellation(turns: int) -> None:
    async def main() -> bool:
        done = asyncio.Event()
        return await _goes_on_after_cancel(lambda: _quietly(done.wait()), done.set, turns)

    assert not asyncio.run(main())


@pytest.mark.parametrize("turns", range(1, 4))
def test_stopping_the_stall_watch_never_swallows_a_cancellation(turns: int) -> None:
    async def main() -> bool:
        watch = StallWatch()
        watch.start()
        await asyncio.sleep(0)
        return await _goes_on_after_cancel(watch.stop, None, turns)

    assert not asyncio.run(main())


def test_the_arena_bounds_no_wait_with_wait_for() -> None:
    """asyncio.timeout, not asyncio.wait_for (see above), everywhere in the package."""
    found = [
        f"{path.relative_to(ARENA)}:{n}"
        for path in sorted(ARENA.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(r"\basyncio\.wait_for\(", line)
    ]
    assert found == []
