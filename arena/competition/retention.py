"""What a competition keeps on its disk, and when it lets it go: each submission's build (its own
folder, made read-only by the intake) and each bundle in the store.

A build is removed once its submission is out of play for good (failed, replaced, withdrawn: only a
suspended one may come back) and no intake or game uses it; a bundle once no submission in intake or in
play names it and none is being taken in. Which intakes and games use what is counted here
(:attr:`Disk.build_users`, :attr:`Disk.bundle_users`), by the server that starts them. An author whose
every new version replaced the last left each one's build and bundle on the disk for ever: 240 MB a
version, fifty versions a day.

Each game's bot output (the tail kept per seat, up to ``output_kib``) goes ``output_days`` after its
game (:func:`remove_old_outputs`); the game, its record and its time per decision stay.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

from arena.competition import bundles, intake
from arena.ledger import competitions as store
from arena.ledger.seat_reports import PruneStep
from arena.ledger.times import stamp

OUTPUT_CHECK_SECONDS = 3600.0  # how often the games' outputs past their days are looked for


class Disk:
    """A competition's builds (``builds``, a folder per submission id) and bundles (``store``).
    ``submission`` and ``live`` read the ledger (a submission by id; those in intake or in play);
    ``removed`` is told of each build removed (a cluster's nodes may hold a copy)."""

    def __init__(
        self,
        builds: Path,
        store_: bundles.Store,
        submission: Callable[[int], Awaitable[store.Submission]],
        live: Callable[[], Awaitable[list[store.Submission]]],
        removed: Callable[[Path], None],
    ) -> None:
        self.builds = builds
        self.bundles = store_
        self._submission = submission
        self._live = live
        self._removed = removed
        # Submissions being taken in or in intake, by bundle: a bundle is removed only when none
        # uses it (see release).
        self.bundle_users: Counter[str] = Counter()
        # Submissions whose build an intake or a game is using, by id: a build out of play is
        # removed only when none does (see clear).
        self.build_users: Counter[int] = Counter()
        self._clearing = asyncio.Lock()  # one clear at a time (see there)

    async def tidy(self, sub: store.Submission) -> None:
        """After an intake: the build of a submission that did not enter play (failed, withdrawn or
        replaced in intake: nothing plays it) is removed, and its bundle when nothing else uses it.
        A bundle of 96 KB unpacked to 99 MB of zeros, and its build copy, stayed for ever once it
        failed. Its log and reason stay in the ledger. (The build of a version that played and then
        left play goes once no game runs it: see :meth:`clear`.)"""
        now = await self._submission(sub.id)
        if now.entrant_id is None and now.status not in (store.BUILDING, store.CHECKING):
            with contextlib.suppress(OSError):
                await asyncio.to_thread(intake._remove, self.builds / str(sub.id))
        await self.release(sub.bundle)

    async def release(self, sha: str) -> None:
        """One use of a bundle is over; with none left, and no submission in intake or in play
        naming it in the ledger, its archive and unpacked folder are removed (a bot plays from its
        build, never from its bundle)."""
        self.bundle_users[sha] -= 1
        if self.bundle_users[sha] > 0:
            return
        del self.bundle_users[sha]
        subs = await self._live()
        if any(s.bundle == sha for s in subs) or self.bundle_users[sha] > 0:
            return  # in use, or taken in again meanwhile
        async with self._clearing:  # not beside a clear, which may be removing it too
            await self._drop_bundle(sha)

    async def clear(self, live: list[store.Submission]) -> bool:
        """Remove the builds of the submissions out of play for good that no intake or game uses any
        more, and the bundles that no submission in ``live`` (in intake or in play) names. (Whether
        an intake or a game uses a build or bundle is read from the counters just before it goes: a
        submission may have come in since the ledger was read.) One at a time: of two refreshes at
        once, the second found a bundle the first had taken off its list but was still removing,
        passed it by and returned, and its caller saw it still there.

        Whether a build out of play was kept because an intake or a game uses it (the caller clears
        again later: its server's refreshes do, until none is left)."""
        deferred = False
        async with self._clearing:
            kept = {str(s.id) for s in live}
            for name in await asyncio.to_thread(_names, self.builds) - kept:
                if name.isdigit() and self.build_users[int(name)] <= 0:
                    with contextlib.suppress(OSError):
                        await asyncio.to_thread(intake._remove, self.builds / name)
                    self._removed(self.builds / name)
                elif name.isdigit():
                    deferred = True
            named = {s.bundle for s in live}
            for name in await asyncio.to_thread(_names, self.bundles.root):
                sha = name.removesuffix(".tar.gz")
                if (
                    bundles.DIGEST.fullmatch(sha)
                    and sha not in named
                    and not self.bundle_users[sha]
                ):
                    await self._drop_bundle(sha)
        return deferred

    async def _drop_bundle(self, sha: str) -> None:
        """Take a bundle out of the store at once (a put from now on unpacks it afresh) and remove
        its folder; a failure is left for the organiser, never the author's error."""
        with contextlib.suppress(OSError):
            gone = self.bundles.discard(sha)
            if gone is not None:
                await asyncio.to_thread(shutil.rmtree, gone, True)


def _names(folder: Path) -> set[str]:
    """The names in a folder (none when it is missing or cannot be read)."""
    try:
        return {entry.name for entry in os.scandir(folder)}
    except OSError:
        return set()


async def remove_old_outputs(
    call: Callable[..., Awaitable[PruneStep]],
    prune: Callable[..., PruneStep],
    competition_id: int,
    days: int,
    every: float = OUTPUT_CHECK_SECONDS,
) -> None:
    """Until cancelled: every ``every`` seconds, the bot output of the competition's games (ranked,
    then challenge games) that ended more than ``days`` ago removed, a step of a thousand games at a
    time on the ledger's thread (``call(prune, ...)``: :meth:`Competitions.prune_outputs`), each
    pass starting where the last one ended, so that a pass costs the games that aged since, never
    the ledger."""
    after = {False: 0, True: 0}
    while True:
        cutoff = stamp(ago=timedelta(days=days))
        for challenges in (False, True):
            while True:
                step = await call(prune, competition_id, cutoff, after[challenges], challenges)
                after[challenges] = step.last
                if step.caught_up:
                    break
        await asyncio.sleep(every)
