"""Notifications' cost (issue 45): what a change of status costs once its author has a webhook (the
row queued in the same transaction: the only work play ever does for a notification), and how fast
the notifier delivers to a receiver on loopback.

    python benchmarks/notifications.py [--changes 2000] [--deliveries 500] [--at-once 4]

Prints ``status_change_ms_without_webhook`` and ``status_change_ms_with_webhook`` (the median of
``--changes`` changes, each its own transaction in a ledger file), then ``deliveries_per_second``:
``--deliveries`` deliveries queued at once, delivered ``--at-once`` at a time to a receiver that
answers 200 at once (each one signed, a connection of its own). A delivery's end is a transaction
of the ledger's (the row removed, the counts kept): the rate is bounded by the ledger's commits, as
the play loop's games are, which it shares a writer thread with.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.competition.notifications import Notifier
from arena.competition.spec import Notifications, parse
from arena.ledger import Ledger, webhooks
from arena.ledger.competitions import ACTIVE, SUSPENDED, Competitions
from arena.ledger.webhooks import Webhooks
from arena.play.ledger_thread import LedgerWorker


def change_cost(store: Competitions, sid: int, changes: int) -> float:
    """The median milliseconds of one change of the submission's status (suspended, back)."""
    times = []
    for i in range(changes):
        status = SUSPENDED if i % 2 == 0 else ACTIVE
        start = time.perf_counter()
        store.set_status(sid, status, f"change {i}")
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


async def serve_200(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    await reader.readexactly(length)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    await writer.drain()
    writer.close()


async def delivery_rate(led: Ledger, cid: int, author_id: int, count: int, at_once: int) -> float:
    server = await asyncio.start_server(serve_200, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    hooks = Webhooks(led)
    hooks.set(author_id, f"http://127.0.0.1:{port}/hook", "bench", count)
    for i in range(count):
        with led.transaction():
            webhooks.enqueue(led.conn, author_id, "active", {"reason": f"in play {i}"}, "now")
    db = LedgerWorker("bench-ledger")
    settings = Notifications(allowed_hosts=("127.0.0.1",), deliveries_at_once=at_once)
    notifier = Notifier(db, hooks, cid, settings, b"k" * 32, Path("/nonexistent"), print, 0.005)
    start = time.perf_counter()
    task = asyncio.create_task(notifier.run())
    try:
        async with asyncio.timeout(300):
            while True:
                hook = hooks.get(author_id)
                assert hook is not None
                if hook.delivered >= count:
                    break
                if hook.failures:
                    sys.exit(f"a delivery failed: {hook.last_error}")
                await asyncio.sleep(0.01)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        db.close()
        server.close()
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=2000)
    parser.add_argument("--deliveries", type=int, default=500)
    parser.add_argument("--at-once", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        led = Ledger(Path(folder) / "ledger.sqlite")
        cid = led.register(parse({"name": "Bench"}, "bench.toml"), kind="competition").id
        store = Competitions(led)
        ids = []
        for name in ("ada", "bob"):
            author = store.author_of(cid, store.add_author(cid, name))
            assert author is not None
            sid, _ = store.submit(cid, author.id, name, "1", "python", bundle=name[0] * 64)
            store.activate(sid, f"bundle:{name}")
            ids.append((author.id, sid))
        Webhooks(led).set(ids[1][0], "https://example.org/hook", "bench", 100)
        without = change_cost(store, ids[0][1], args.changes)
        with_hook = change_cost(store, ids[1][1], args.changes)
        print(f"status_change_ms_without_webhook {without:.3f}")
        print(f"status_change_ms_with_webhook {with_hook:.3f}")
        Webhooks(led).remove(ids[1][0])  # its queue (example.org) is not the receiver's
        rate = asyncio.run(delivery_rate(led, cid, ids[0][0], args.deliveries, args.at_once))
        print(f"deliveries_per_second {rate:.0f}")
        led.close()


if __name__ == "__main__":
    main()
