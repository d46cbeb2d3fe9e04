"""A/B tests: is a new version of a bot stronger than the old one? (issue 18)

Two versions play *duplicate pairs*: one deal played twice with their places swapped, each pair scored
0, 1/2, 1, 3/2 or 2 points for the new version (pentanomial counts, ``arena.stats``). A sequential test
(the GSPRT) stops as soon as H0 or H1 is accepted; a fixed test plays a set number of pairs.

- Two seats, or two sides (partners, consultation): the new version takes every place of one side and
  the old version every place of the other; in the second game of the pair they change sides.
- Three- and four-handed (every seat for itself): both versions sit at the same table with fixed
  opponents (the ``opponent`` role, e.g. the greedy bot) in the other seats. A game scores 1 for the new
  version when it places above the old one, 1/2 when they share a place, 0 below; the second game swaps
  the two versions' seats and keeps the opponents where they were. The seating turns from pair to pair
  (``pair_seatings``) so that both versions hold every seat and sit both next to and across from each
  other. What is tested is which version does better against the same opponents on the same cards, not
  strength against each other alone.

A game that a bot's failure ended (timeout, crash, illegal action, ...) is that bot's loss, as the
referee's forfeit ranks it; it is shown with the pair. A pair the arena could not play (no record)
is not counted; its deal is skipped.

The loop (:func:`run_ab_test`) knows nothing of processes or servers: it takes a *play this pair*
callable (deal index -> :class:`PairReport`) and the pairs already played (to resume from a ledger),
and reports after each pair. :class:`RefereePairs` plays pairs on an in-process referee.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from arena.bots.limits import Limits
from arena.game import Variant
from arena.play.deals import DealSuite
from arena.play.game import REPLAYS
from arena.play.stall_watch import StallWatch
from arena.referee import MatchConfig, MatchRecord, Outcome, Policies, TimeControl
from arena.service.match_manager import MatchManager, PlayerSpec
from arena.stats import Pentanomial, Sprt, SprtDecision, SprtReport

NEW, OLD, OPPONENT = "new", "old", "opponent"
CONNECT_TIMEOUT = 30.0  # seconds for local bots to start and dial in, on a loaded machine
MAX_ERRORS_IN_A_ROW = 3  # pairs the arena could not play, one after the other, before it gives up
BROKEN_AFTER_GAMES = 4  # a version that failed each of the first this many games is not run further
BROKEN_STOP = "failed each of its first"  # ... and the test says so in why it stopped
LIMIT_STOP = "pair limit"  # why a test stopped that played every pair it was given
NO_DEALS_STOP = "no deals left"  # ... that played every deal of its suite

Seating = tuple[tuple[str, ...], ...]  # the role of each player of each seat


def pair_seatings(v: Variant, index: int) -> tuple[Seating, Seating]:
    """The two games of pair ``index``: the new and the old version swap places in the second."""
    sizes = [v.team_size(s) for s in range(v.seats)]
    if len(v.sides) == 2:
        side_of = [v.side_of(s) for s in range(v.seats)]
        first = tuple((NEW if side_of[s] == 0 else OLD,) * sizes[s] for s in range(v.seats))
    else:
        if any(size != 1 for size in sizes):
            raise ValueError(f"{v.name}: an A/B test needs one player per seat or two sides")
        n = v.seats
        # Both versions and n - 2 opponents; across pairs the table turns (every seat for each) and,
        # with four seats, the old version sits next to the new one or across from it.
        base = [NEW, OLD] + [OPPONENT] * (n - 2)
        if n == 4 and (index // n) % 2 == 1:
            base = [NEW, OPPONENT, OLD, OPPONENT]
        turn = index % n
        order = base[-turn:] + base[:-turn] if turn else base
        first = tuple((role,) for role in order)
    swap = {NEW: OLD, OLD: NEW, OPPONENT: OPPONENT}
    second = tuple(tuple(swap[r] for r in seat) for seat in first)
    return first, second


@dataclass(frozen=True, slots=True)
class GameReport:
    """One game of a pair, from the new version's side."""

    seats: Seating
    points: float  # the new version's result against the old: 1, 0.5 or 0
    outcome: str  # normal, timeout, illegal-action, crash, disconnect, protocol-error, adjudicated
    failed: str = ""  # the role whose failure ended the game (new, old, opponent), or ""
    detail: str = ""
    new_score: int = 0  # the game's points of the new version's side
    old_score: int = 0
    new_place: int = 0  # 0: first
    old_place: int = 0


@dataclass(frozen=True, slots=True)
class PairReport:
    index: int  # the deal's index in the suite
    seed: int
    games: tuple[GameReport, ...] = ()
    error: str = ""  # the arena could not play it: not counted

    @property
    def points(self) -> float:
        """The new version's points in the pair: 0, 0.5, 1, 1.5 or 2."""
        return sum(g.points for g in self.games)

    @property
    def counted(self) -> bool:
        return not self.error and len(self.games) == 2

    @property
    def failures(self) -> tuple[GameReport, ...]:
        return tuple(g for g in self.games if g.failed)


def score_game(
    v: Variant,
    seats: Seating,
    ranking: Sequence[int],
    side_scores: Sequence[int],
    outcome: Outcome,
    culprit: int = -1,
    detail: str = "",
) -> GameReport:
    """How the new version did against the old in one finished game, from the game's result (the
    place and points of each side, as in :class:`~arena.game.GameResult` and the ledger), its outcome
    and the seat whose failure ended it (-1: none)."""

    def side_of(role: str) -> int:
        for seat, roles in enumerate(seats):
            if role in roles:
                return v.side_of(seat)
        raise ValueError(f"no {role} version in the seating {seats}")

    new_side, old_side = side_of(NEW), side_of(OLD)
    new_place, old_place = ranking[new_side], ranking[old_side]
    failed = ""
    if outcome is not Outcome.NORMAL and 0 <= culprit < len(seats):
        failed = seats[culprit][0]
    if failed == NEW:
        points = 0.0  # a failure is the failing version's loss, whatever the scores were
    elif failed == OLD:
        points = 1.0
    else:
        points = 1.0 if new_place < old_place else 0.5 if new_place == old_place else 0.0
    return GameReport(
        seats=seats,
        points=points,
        outcome=outcome.text,
        failed=failed,
        detail=detail if outcome is not Outcome.NORMAL else "",
        new_score=side_scores[new_side],
        old_score=side_scores[old_side],
        new_place=new_place,
        old_place=old_place,
    )


def game_report(v: Variant, seats: Seating, record: MatchRecord) -> GameReport:
    """:func:`score_game` for a one-game match record."""
    g = record.games[0]
    return score_game(
        v,
        seats,
        g.result["ranking"],
        g.result["side_scores"],
        Outcome[g.outcome.upper().replace("-", "_")],
        g.culprit,
        g.detail,
    )


PlayPair = Callable[[int], Awaitable[PairReport]]


@dataclass(slots=True)
class AbTestState:
    """What the test has seen so far, updated after each pair."""

    sprt: Sprt
    counts: Pentanomial = field(default_factory=Pentanomial)
    report: SprtReport | None = None
    pairs: list[PairReport] = field(default_factory=list)  # in the order they finished
    errors: int = 0
    stopped: str = ""  # why the test ended: H0 accepted, H1 accepted, pair limit, arena errors

    def add(self, pair: PairReport) -> None:
        self.pairs.append(pair)
        if not pair.counted:
            self.errors += 1
            return
        self.counts = self.counts.add(pair.points)
        self.report = self.sprt.report(self.counts)

    @property
    def decision(self) -> SprtDecision:
        return self.report.decision if self.report is not None else SprtDecision.CONTINUE

    @property
    def games(self) -> list[GameReport]:
        return [g for p in self.pairs if p.counted for g in p.games]


OnPair = Callable[[PairReport, AbTestState], None]


async def run_ab_test(
    play_pair: PlayPair,
    sprt: Sprt,
    max_pairs: int,
    concurrency: int = 1,
    sequential: bool = True,
    played: Iterable[PairReport] = (),
    on_pair: OnPair | None = None,
    deals: int | None = None,
) -> AbTestState:
    """Play pairs on deals 0, 1, 2, ... (skipping those in ``played``, which are counted first) until
    the test decides (when ``sequential``), ``max_pairs`` pairs are counted, the ``deals`` available
    are used up, one version has failed every game of the first pairs (a broken command), or the arena
    fails ``MAX_ERRORS_IN_A_ROW`` pairs in a row. Up to ``concurrency`` pairs are played at once; when
    the test decides, the pairs still being played are cancelled. ``on_pair`` is called after each
    pair."""
    if max_pairs < 1:
        raise ValueError(f"an A/B test needs at least one pair, got {max_pairs}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    state = AbTestState(sprt)
    done: set[int] = set()
    for pair in played:
        done.add(pair.index)
        state.add(pair)
    counted = sum(1 for p in state.pairs if p.counted)

    def finished() -> str:
        if sequential and state.decision is not SprtDecision.CONTINUE:
            return str(state.decision.value)
        # Before the pair limit: a test of 2 or 4 games stopped there, exit 0, with a version that
        # failed every one of them. Its first games are all it played when they are fewer.
        enough = min(BROKEN_AFTER_GAMES, 2 * max_pairs)
        if counted * 2 >= enough:
            first = list(
                itertools.islice((g for p in state.pairs if p.counted for g in p.games), enough)
            )
            for role in (NEW, OLD):
                if all(g.failed == role for g in first):
                    return f"the {role} version {BROKEN_STOP} {len(first)} games"
        if counted >= max_pairs:
            return LIMIT_STOP
        return ""

    state.stopped = finished()
    if state.stopped:
        return state
    running: dict[asyncio.Task[PairReport], int] = {}
    next_index = 0
    errors_in_a_row = 0
    try:
        while True:
            while len(running) < concurrency and counted + len(running) < max_pairs:
                while next_index in done:
                    next_index += 1
                if deals is not None and next_index >= deals:
                    break
                task = asyncio.ensure_future(play_pair(next_index))
                running[task] = next_index
                done.add(next_index)
                next_index += 1
            if not running:
                state.stopped = finished() or (
                    LIMIT_STOP if counted >= max_pairs else NO_DEALS_STOP
                )
                return state
            finished_tasks, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in sorted(finished_tasks, key=lambda t: running[t]):
                index = running.pop(task)
                pair = task.result()
                if pair.index != index:
                    raise ValueError(f"asked to play pair {index}, got pair {pair.index}")
                state.add(pair)
                if pair.counted:
                    counted += 1
                    errors_in_a_row = 0
                else:
                    errors_in_a_row += 1
                if on_pair is not None:
                    on_pair(pair, state)
                state.stopped = finished()
                if state.stopped:
                    return state
                if errors_in_a_row >= MAX_ERRORS_IN_A_ROW:
                    state.stopped = "arena errors"
                    return state
    finally:
        for task in running:
            task.cancel()
        for task in running:
            with contextlib.suppress(BaseException):
                await task


class PairRecorder(Protocol):
    """Where the games of an A/B test are kept as they are played (the ledger: ``arena.tournament.
    abledger``)."""

    async def plan(self, index: int, seed: int, seatings: Sequence[Seating]) -> None:
        """Pair ``index`` is about to be played on the deal of this public seed."""

    async def record(self, index: int, number: int, seats: Seating, record: MatchRecord) -> None:
        """Game ``number`` (0 or 1) of pair ``index`` finished with this match record."""

    async def not_played(self, index: int) -> None:
        """Pair ``index`` could not be played (its games not recorded are forgotten)."""


@dataclass(slots=True)
class RefereePairs:
    """Plays pairs on an in-process referee (``arena.service.server.create_server``): each game of a
    pair is a one-game match between local bot processes, on the suite's deal drawn with
    ``deal_key`` (empty: from the public seed alone). Games in ``recorded`` (by pair index and game
    number: already in a ledger) are not played again; each game played is handed to ``recorder``. A
    game that ended on time while ``watch`` saw the event loop stalled by the arena itself is played
    again, as in tournaments."""

    manager: MatchManager
    variant: Variant
    options: tuple[tuple[str, str], ...]
    deals: DealSuite
    commands: dict[str, str]  # by role: new, old and (three or four seats) opponent
    names: dict[str, str]  # by role
    time_control: TimeControl = field(default_factory=TimeControl)
    policies: Policies = field(default_factory=Policies)
    limits: Limits = field(default_factory=Limits)
    matches_per_process: int = 1
    concurrency: int = 2  # games at once
    connect_timeout: float = CONNECT_TIMEOUT
    deal_key: bytes = field(default=b"", repr=False)
    recorded: dict[tuple[int, int], GameReport] = field(default_factory=dict)
    recorder: PairRecorder | None = None
    watch: StallWatch | None = None
    replayed: int = 0  # games played again because the arena stalled the bots' clock
    played: int = 0  # games played to their end (a game played again counted once)
    _gate: asyncio.Semaphore | None = None

    async def __call__(self, index: int) -> PairReport:
        deal = self.deals.deal(index)
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.concurrency)
        seatings = pair_seatings(self.variant, index)
        if self.recorder is not None and not all((index, n) in self.recorded for n in (0, 1)):
            await self.recorder.plan(index, deal.seed, seatings)
        results = await asyncio.gather(*(self._game(index, n, s) for n, s in enumerate(seatings)))
        errors = [e for _, e in results if e]
        if errors:
            if self.recorder is not None:
                await self.recorder.not_played(index)
            return PairReport(index, deal.seed, error="; ".join(errors))
        return PairReport(index, deal.seed, tuple(g for g, _ in results if g is not None))

    async def _game(self, index: int, number: int, seats: Seating) -> tuple[GameReport | None, str]:
        if (index, number) in self.recorded:
            return self.recorded[(index, number)], ""
        deal = self.deals.deal(index)
        config = deal.configure(
            MatchConfig(
                variant=self.variant.name,
                options=self.options,
                seed=deal.seed,
                games=1,
                time_control=self.time_control,
                policies=self.policies,
                deal_key=self.deal_key,
            )
        )
        specs = [[PlayerSpec(self.names[r], self.commands[r]) for r in seat] for seat in seats]
        assert self._gate is not None
        loop = asyncio.get_running_loop()
        replays = 0
        while True:
            async with self._gate:
                entry = self.manager.create(
                    config, specs, self.connect_timeout, self.limits, self.matches_per_process
                )
                started = loop.time()
                await self.manager.start(entry)
                await entry.done.wait()
            if entry.record is None or not entry.ends:
                return None, entry.error or "the match ended without a record"
            stalled = self.watch.longest(started, loop.time()) if self.watch else 0.0
            if (
                self.watch is not None
                and entry.record.games[0].outcome == Outcome.TIMEOUT.text
                and stalled > self.watch.threshold
                and replays < REPLAYS
            ):
                replays += 1  # the arena held the clock up: the bot is not charged
                self.replayed += 1
                continue
            break
        self.played += 1
        if self.recorder is not None:
            await self.recorder.record(index, number, seats, entry.record)
        return game_report(self.variant, seats, entry.record), ""


def roles_needed(v: Variant) -> Sequence[str]:
    """The roles an A/B test of variant ``v`` seats: opponents only for three or four seats each for
    itself."""
    return (NEW, OLD) if len(v.sides) == 2 else (NEW, OLD, OPPONENT)
