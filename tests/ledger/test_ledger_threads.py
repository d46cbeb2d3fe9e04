"""A ledger shared by two threads (issue 47): the competition benchmark added authors through the
server's connection from its own thread while the server's ledger thread wrote, and a submission's
intake failed with "cannot start a transaction within a transaction" (it stayed "building" for
good). Each call and transaction now runs whole, one thread at a time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from arena.competition.spec import parse
from arena.ledger import Ledger
from arena.ledger import competitions as store


def test_a_second_threads_write_waits_for_the_first_threads_transaction(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "ledger.sqlite")
    spec = parse({"name": "Shared", "server": {"submissions": "127.0.0.1:0"}}, "x.toml")
    cid = led.register(spec, None, "competition").id
    comp = store.Competitions(led)
    inside, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def holder() -> None:
        try:
            with led.transaction():
                led.conn.execute(
                    "INSERT INTO authors (competition_id, name, token_hash, created_at) "
                    "VALUES (?, 'held', 'h', 'now')",
                    (cid,),
                )
                inside.set()
                release.wait(10)
                led.conn.execute("ROLLBACK")  # what a failed transaction does: its rows go
                led.conn.execute("BEGIN")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=holder)
    thread.start()
    assert inside.wait(10)
    done: list[str] = []
    writer = threading.Thread(target=lambda: done.append(comp.add_author(cid, "ada")))
    writer.start()
    time.sleep(0.3)
    assert not done, "the second thread's write waits while the first thread's transaction is open"
    release.set()
    writer.join(10)
    thread.join(10)
    assert not errors
    # Neither thread's rows were taken into the other's transaction: the held one was rolled back
    # alone, ada's was committed.
    assert [a.name for a in comp.authors(cid)] == ["ada"]
    led.close()
