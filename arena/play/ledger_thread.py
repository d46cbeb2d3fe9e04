"""The ledger on a thread of its own.

Every ledger call of a running tournament goes through one worker thread: a write that waits for
another program's lock, or an fsync on a slow disk, then never holds up the event loop on which the
referee times the bots. Calls run one at a time, in the order they are made. The thread is a daemon:
an arena interrupted while a write waits for a lock exits without waiting for it (SQLite's journal keeps
the file whole).
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

_T = TypeVar("_T")
_Job = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], "Future[Any]"]


class LedgerWorker:
    def __init__(self, name: str = "ledger") -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    async def call(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """``fn(*args, **kwargs)`` on the worker thread; its exception is raised here."""
        done: Future[_T] = Future()
        self._jobs.put((fn, args, kwargs, done))
        return await asyncio.wrap_future(done)

    def close(self) -> None:
        """The worker ends after the calls already made."""
        self._jobs.put(None)

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, args, kwargs, done = job
            if not done.set_running_or_notify_cancel():
                continue
            try:
                done.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # handed to the caller, whatever it is
                done.set_exception(exc)
