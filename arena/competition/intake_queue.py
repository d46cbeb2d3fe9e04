"""A competition's intakes: each submitted bundle built and checked in its turn (one at a time per
author, ``INTAKES_AT_ONCE`` at a time in all), each step taken only while the submission is still in
intake, and a passing bot put in play (see :mod:`.intake` for the build and the check)."""

from __future__ import annotations

from arena.competition import bundles, intake, runtimes
from arena.competition.roster import Roster
from arena.competition.server_state import log
from arena.ledger import LedgerError
from arena.ledger import competitions as store


class IntakeQueue(Roster):
    async def _intake(self, sub: store.Submission) -> None:
        """Build and check a submission. An error of the arena's own on the way (a folder it cannot
        replace, a full disk) fails the submission with a reason rather than leaving it building for
        ever, its author's ``submit --wait`` with it; the error and its traceback are logged for the
        organiser. One of the ledger's is fatal (see :meth:`_done`).

        An author's intakes are taken one at a time, each in its turn for one of the
        INTAKES_AT_ONCE places: four submissions of one author whose builds slept for ever held
        every place, and another author's waited minutes."""
        self.disk.build_users[sub.id] += 1  # its build, until it is tidied
        try:
            async with self._turn(self._intake_turn, sub.author_id), self._intakes:
                try:
                    await self._build_and_check(sub)
                except LedgerError:
                    raise
                except Exception as exc:
                    log.exception(
                        "submission %d (%s %s): the intake failed", sub.id, sub.bot, sub.version
                    )
                    self.say(f"{sub.bot} {sub.version}: the intake failed: {exc!r}")
                    reason = (
                        f"the arena could not build or check it ({type(exc).__name__}, an error "
                        "of the arena's, not the bot's); the competition server's output has the "
                        "details"
                    )
                    await self._step(sub, store.FAILED, reason)
                # Not when the intake is cut short by a stop: the next start takes it up again.
                await self.disk.tidy(sub)
        finally:
            self.disk.build_users[sub.id] -= 1

    async def _step(
        self,
        sub: store.Submission,
        status: str,
        reason: str = "",
        log: str | None = None,
        note: str | None = None,
    ) -> bool:
        """One step of an intake, taken only while the submission is still in intake: its author may
        withdraw it, and a later version entering play replaces it, at any moment. False: the intake
        stops there."""
        built = self.builds / str(sub.id)
        moved: bool = await self.db.call(
            self.store.set_status,
            sub.id,
            status,
            intake.for_author(reason, built),
            None if log is None else intake.for_author(log, built),
            when=(store.BUILDING, store.CHECKING),
            note=note,
        )
        if not moved:
            self.say(f"{sub.bot} {sub.version}: left intake (withdrawn or replaced meanwhile)")
        return moved

    async def _build_and_check(self, sub: store.Submission) -> None:
        caps = self.spec.submissions
        manifest = intake.manifest_of(sub)
        built = self.builds / str(sub.id)
        # A bundle with no build command is checked at once: "checking" from its submission on.
        if not await self._step(sub, store.BUILDING if manifest.build else store.CHECKING):
            return
        # Accepted at submission; the toolchain may have gone since (an intake resumed at a start).
        lacking = runtimes.refusal(sub.language)
        if lacking is not None:
            if await self._step(sub, store.FAILED, lacking, lacking):
                self.say(f"{sub.bot} {sub.version}: refused: {lacking}")
            return
        result = await intake.build(
            manifest, self.bundles.folder(sub.bundle), built, self.spec.limits, caps.build_seconds
        )
        if not result.ok:
            if await self._step(sub, store.FAILED, result.reason, result.log):
                self.say(f"{sub.bot} {sub.version}: the build failed")
            return
        built_note = "built" if manifest.build else None
        if not await self._step(sub, store.CHECKING, "", result.log, built_note):
            return
        try:
            command = intake.runtime_command(manifest, built)
        except bundles.BundleError as exc:
            if await self._step(sub, store.FAILED, str(exc), result.log):
                self.say(f"{sub.bot} {sub.version}: refused: {exc}")
            return
        checked = await intake.check(
            command, self.spec.variant, self.spec.limits, caps.check_seconds, self._hidden(),
            shown=manifest.run, time_control=self.spec.time_control,
        )  # fmt: skip
        log_text = "\n".join(t for t in (result.log, checked.log) if t)
        if not checked.ok:
            if await self._step(sub, store.FAILED, checked.reason, log_text):
                self.say(f"{sub.bot} {sub.version}: the conformance check failed")
            return
        if not await self._step(sub, store.CHECKING, "", log_text):
            return
        entrant = await self.db.call(self.store.activate, sub.id, f"bundle:{sub.bundle}:{sub.run}")
        if entrant is None:  # withdrawn, or a later version entered play meanwhile
            now = await self.db.call(self.store.submission, sub.id)
            self.say(f"{sub.bot} {sub.version}: out of play: {now.reason or now.status}")
        else:
            self.say(f"{sub.bot} {sub.version} is in play")
        await self._refresh()
