"""Red team, issue 47 item 4: one client's 70 event streams held all 64 of the Live page's watcher
slots, and every other visitor was told the server followed 64 streams at most. Each client (by its
address) holds at most MAX_WATCHERS_PER_CLIENT at a time; the others keep theirs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator

import pytest

from arena.web import live
from arena.web.live import Referee


async def _first(stream: AsyncIterator[str]) -> str:
    """The first thing a stream sends: its retry line once it holds a slot, or a failure event."""
    return await anext(aiter(stream))


async def _close(stream: AsyncIterator[str]) -> None:
    assert isinstance(stream, AsyncGenerator)
    await stream.aclose()


def _failure(text: str) -> str:
    assert text.startswith("event: failure"), text
    return str(json.loads(text.split("data: ", 1)[1])["message"])


def test_one_client_cannot_take_every_live_slot() -> None:
    async def attack() -> None:
        referee = Referee("127.0.0.1:9")  # never reached: a slot is held before its first event
        streams = [referee.stream("m", None, "203.0.113.7") for _ in range(70)]
        firsts = [await _first(s) for s in streams]
        held = [f for f in firsts if f.startswith("retry:")]
        assert len(held) == live.MAX_WATCHERS_PER_CLIENT
        refused = {_failure(f) for f in firsts if not f.startswith("retry:")}
        assert refused == {
            f"you follow {live.MAX_WATCHERS_PER_CLIENT} live streams already, the most for one "
            "client; close one first"
        }
        others = [referee.stream("m", None, f"198.51.100.{i}") for i in range(3)]
        assert all(f.startswith("retry:") for f in [await _first(s) for s in others])
        assert referee.watchers.n == live.MAX_WATCHERS_PER_CLIENT + 3
        for s in [*streams, *others]:
            await _close(s)
        assert referee.watchers.n == 0 and referee.watchers.by_client == {}
        # a slot given back is the client's again
        again = referee.stream("m", None, "203.0.113.7")
        assert (await _first(again)).startswith("retry:")
        await _close(again)

    asyncio.run(attack())


def test_the_total_cap_still_holds_across_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "MAX_WATCHERS", 5)

    async def many() -> None:
        referee = Referee("127.0.0.1:9")
        streams = [referee.stream("m", None, f"192.0.2.{i}") for i in range(6)]
        firsts = [await _first(s) for s in streams]
        assert sum(f.startswith("retry:") for f in firsts) == 5
        assert "5 live streams at most" in _failure(firsts[-1])
        for s in streams:
            await _close(s)

    asyncio.run(many())
