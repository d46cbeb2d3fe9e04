"""Scripted seats for the referee's match loop in-process (no server): a fake port answering each
request as a test says, and the answers tests give."""

from __future__ import annotations

import asyncio
import random
import zlib
from collections.abc import Awaitable, Callable, Sequence

from arena.game import GameResult
from arena.referee import (
    Decision,
    GameEnd,
    Match,
    MatchConfig,
    MatchRecord,
    Outcome,
    TimeControl,
)

Answer = Callable[[Decision], Awaitable[object]]
GENEROUS = TimeControl(budget_ms=5_000, bank_ms=20_000, grace_ms=1_000)
ALL_PLAYS = [f"play {r}{s}" for s in "SHDC" for r in "789JQKTA"]


class FakePort:
    """A scripted player: answers with ``answer`` and remembers everything it was told."""

    def __init__(self, name: str, answer: Answer | None = None) -> None:
        self.name = name
        self.answer = answer or seeded(zlib.crc32(name.encode()))
        self.decisions: list[Decision] = []
        self.games_over: list[tuple[int, Outcome, str, int]] = []
        self.matches_over: list[str] = []
        self.ends: list[GameEnd] = []

    async def decide(self, decision: Decision) -> str:
        self.decisions.append(decision)
        return await self.answer(decision)  # type: ignore[return-value]

    async def departure(self) -> tuple[Outcome, str] | None:
        return None

    async def game_over(
        self,
        match_id: str,
        game: int,
        result: GameResult,
        outcome: Outcome,
        detail: str,
        culprit: int,
    ) -> None:
        self.games_over.append((game, outcome, detail, culprit))

    async def match_over(self, match_id: str, games: Sequence[GameEnd]) -> None:
        self.matches_over.append(match_id)
        self.ends = list(games)


def seeded(seed: int) -> Answer:
    rng = random.Random(seed)

    async def answer(d: Decision) -> object:
        return rng.choice(d.legal).text

    return answer


def from_decision(k: int, bad: Answer, good: Answer | None = None) -> Answer:
    """Answer well (``good``) until this port's ``k``-th decision (1-based), then with ``bad``."""
    good = good or seeded(k)
    count = 0

    async def answer(d: Decision) -> object:
        nonlocal count
        count += 1
        return await (bad if count >= k else good)(d)

    return answer


def raising(exc: BaseException) -> Answer:
    async def answer(d: Decision) -> object:
        raise exc

    return answer


def returning(value: object) -> Answer:
    async def answer(d: Decision) -> object:
        return value

    return answer


async def hang(d: Decision) -> object:
    await asyncio.sleep(3600)
    raise AssertionError("unreachable")


def sleeping(seconds: float, then: Answer | None = None) -> Answer:
    then = then or seeded(0)

    async def answer(d: Decision) -> object:
        await asyncio.sleep(seconds)
        return await then(d)

    return answer


async def not_legal(d: Decision) -> object:
    legal = {a.text for a in d.legal}
    return next(p for p in ALL_PLAYS if p not in legal)


def play(
    config: MatchConfig, ports: Sequence[Sequence[FakePort]], match_id: str = "m-test"
) -> MatchRecord:
    return asyncio.run(asyncio.wait_for(Match(match_id, config, ports).run(), timeout=120))


def two(a: FakePort, b: FakePort) -> list[list[FakePort]]:
    return [[a], [b]]
