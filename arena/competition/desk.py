"""A competition's submissions desk: what an author may do (submit a bundle, register a remote
entrant, withdraw a bot, read their submissions, logs and the board), each call held to the
competition's caps and taken in one at a time per author. The submission API
(:mod:`.submission_api`) serves it over gRPC through its :class:`~.desk_port.Desk` protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from arena.competition import bundles, intake, organiser, runtimes
from arena.competition.desk_port import SubmissionError
from arena.competition.intake_queue import IntakeQueue
from arena.ledger import LedgerError, seat_reports, status_history
from arena.ledger import competitions as store
from arena.ledger.times import stamp

# A remote entrant's language, shown on the board: a bundle's languages, or "remote" (the default);
# arena compete remote --help lists the same.
REMOTE_LANGUAGES = (*runtimes.LANGUAGES, "remote")

_T = TypeVar("_T")


def _check_name(bot: str) -> None:
    """A bot's name as an author gives it in a call, checked as a manifest's is: whole (no trailing
    newline that made a second "js-lowball" beside another author's)."""
    if not bundles.NAME.fullmatch(bot):
        raise SubmissionError(f"bot: expected {bundles.NAME_RULE}, got {bot!r}")


class SubmissionsDesk(IntakeQueue):
    @property
    def competition_name(self) -> str:
        return self.spec.name

    @property
    def max_bundle_mb(self) -> int:
        return self.spec.submissions.max_bundle_mb

    async def submit(self, author: store.Author, data: bytes) -> store.Submission:
        caps = self.spec.submissions
        if len(data) > caps.max_bundle_mb * 1024 * 1024:
            raise SubmissionError(
                f"the bundle is {len(data)} bytes, over the limit of {caps.max_bundle_mb} MB"
            )
        async with self._turn(self._taking, author.id):
            await self._within_the_day(author)
            pending = await self.db.call(
                self.store.submissions, self.cid, author.id, (store.BUILDING, store.CHECKING)
            )
            pending = [s for s in pending if s.kind == "bundle"]
            if len(pending) >= caps.max_pending:
                raise SubmissionError(
                    f"you have {len(pending)} submission(s) still to be built and checked, the "
                    f"most allowed (max_pending = {caps.max_pending}); wait for one to finish "
                    "(arena compete submissions), or withdraw its bot"
                )
            sha = await asyncio.to_thread(bundles.digest, data)
            self.disk.bundle_users[sha] += 1  # until its intake ends (released there)
            try:
                try:
                    _, manifest, _ = await asyncio.to_thread(
                        self.bundles.put, data, caps.max_files, caps.max_unpacked_mb * 1024 * 1024
                    )
                except bundles.BundleError as exc:
                    raise SubmissionError(f"bundle refused: {exc}") from exc
                refused = self._language_refused(manifest.language)
                if refused is not None:
                    raise SubmissionError(f"bundle refused: {refused}")
                await self._room_for(author, manifest.name)
                try:
                    sid, _ = await self.db.call(
                        self.store.submit,
                        self.cid,
                        author.id,
                        bundle=sha,
                        **intake.manifest_columns(manifest),
                    )
                except LedgerError as exc:
                    raise SubmissionError(self._for_author(exc)) from exc
            except SubmissionError:
                await self.disk.release(sha)  # refused after unpacking: nothing keeps it
                raise
        sub = await self.db.call(self.store.submission, sid)
        self.say(f"{author.name} submitted {sub.bot} {sub.version}")
        self._spawn(self._intake(sub))
        return sub

    def _language_refused(self, language: str) -> str | None:
        """Why a bundle in ``language`` is refused here: the competition does not accept it, or
        this server lacks its toolchain (the Debian packages to install named); None: accepted."""
        accepted = self.spec.submissions.languages
        if language not in accepted:
            return (
                f"language {language!r} is not accepted by this competition (it accepts "
                f"{', '.join(accepted)})"
            )
        return runtimes.refusal(language)

    async def register_remote(
        self, author: store.Author, bot: str, version: str, language: str
    ) -> tuple[store.Submission, str]:
        _check_name(bot)
        if not bundles.VERSION.fullmatch(version):
            raise SubmissionError(f"version: expected {bundles.VERSION_RULE}, got {version!r}")
        language = language or "remote"
        if language not in REMOTE_LANGUAGES:
            raise SubmissionError(
                f"language: expected one of {', '.join(REMOTE_LANGUAGES)}, got {language!r}"
            )
        async with self._turn(self._taking, author.id):
            await self._within_the_day(author)
            await self._room_for(author, bot)
            try:
                sid, token = await self.db.call(
                    self.store.submit, self.cid, author.id, bot, version, language
                )
                await self.db.call(self.store.activate, sid, f"remote:{author.id}:{bot}")
            except LedgerError as exc:
                raise SubmissionError(self._for_author(exc)) from exc
        await self._refresh_soon()
        return await self.db.call(self.store.submission, sid), token

    async def _within_the_day(self, author: store.Author) -> None:
        """Refuse a submission past ``max_submissions_per_day`` over the last 24 hours: each one,
        failed or not, stays in the ledger for good, and a new version or a failing bundle was
        a way to grow it without end."""
        cap = self.spec.submissions.max_submissions_per_day
        since = stamp(ago=timedelta(days=1))
        made = await self.db.call(self.store.submitted_since, self.cid, author.id, since)
        if made >= cap:
            raise SubmissionError(
                f"you have made {made} submissions in the last 24 hours, the most allowed "
                f"(max_submissions_per_day = {cap}); try again later"
            )

    async def _room_for(self, author: store.Author, bot: str) -> None:
        """Refuse a new bot of an author who has ``max_bots_per_author`` in play or in intake
        already (one author registered 2,410 remote entrants, each on every board); a new version
        of a bot they have is no new bot."""
        cap = self.spec.submissions.max_bots_per_author
        current = (store.ACTIVE, store.SUSPENDED, store.BUILDING, store.CHECKING)
        subs = await self.db.call(self.store.submissions, self.cid, author.id, current)
        bots = {s.bot for s in subs}
        if bot not in bots and len(bots) >= cap:
            raise SubmissionError(
                f"you have {len(bots)} bots in play or in intake, the most allowed "
                f"(max_bots_per_author = {cap}); withdraw one first (arena compete withdraw BOT)"
            )

    def _for_author(self, exc: LedgerError) -> str:
        """A ledger's refusal in words for the author: without the ledger's path, which the ledger
        puts first in some of its messages (the author has no use for a path on the server), and
        otherwise whole ("bot version 1 was submitted already: give a new version")."""
        return str(exc).removeprefix(f"{self.ledger.path}: ")

    async def withdraw(self, author: store.Author, bot: str) -> int:
        _check_name(bot)
        current = (store.ACTIVE, store.SUSPENDED, store.BUILDING, store.CHECKING)  # in play, intake
        subs = await self.db.call(self.store.submissions, self.cid, author.id, current)
        count = 0
        for s in subs:
            if s.bot == bot:
                count += await self.db.call(
                    self.store.set_status, s.id, store.WITHDRAWN, "withdrawn by its author",
                    when=current,
                )  # fmt: skip
        await self._refresh_soon()
        return count

    async def submissions_of(self, author: store.Author) -> list[store.Submission]:
        return await self.db.call(self.store.submissions, self.cid, author.id)

    async def submission(self, submission_id: int) -> store.Submission:
        return await self.db.call(self.store.submission, submission_id)

    async def log(self, submission_id: int) -> str:
        return await self.db.call(self.store.log, submission_id)

    async def history(self, submission_id: int) -> list[status_history.StatusChange]:
        """A submission's status history, for its author (no path of the server's)."""
        changes = await self.db.call(self.store.history, submission_id)
        return [
            status_history.StatusChange(c.status, intake.for_authors(c.reason, self.builds), c.at)
            for c in changes
        ]

    async def play_failures(self, entrant_id: int) -> list[store.PlayFailure]:
        """The last games the entrant caused to fail, for its author (no path of the server's)."""
        found = await self.db.call(self.store.play_failures, self.cid, entrant_id)
        return [
            store.PlayFailure(
                f.game_id, f.key, f.outcome, intake.for_authors(f.detail, self.builds),
                f.finished_at,
            )
            for f in found
        ]  # fmt: skip

    async def time_use(self, entrant_id: int) -> seat_reports.TimeUse:
        return await self.db.call(self.store.time_use, self.cid, entrant_id)

    async def game_log(
        self, author: store.Author, game_id: int
    ) -> tuple[str, str, list[seat_reports.SeatOutput]]:
        """A game's key, outcome and the output of the author's own bots in it (no path of the
        server's); refused when the game is not the competition's or no bot of the author's played
        it (another author's output is never given)."""
        found = await self.db.call(self.store.game, self.cid, game_id)
        mine = await self.db.call(self.store.entrants_of, self.cid, author.id)
        outputs = await self.db.call(self.store.game_outputs, game_id) if found else []
        own = [o for o in outputs if o.entrant_id in mine]
        if found is None or not own:
            raise SubmissionError(f"no bot of yours played a game {game_id} whose output is kept")
        return (
            found[0],
            found[1],
            [
                seat_reports.SeatOutput(
                    o.seat, o.member, o.entrant_id, o.bot, o.version,
                    intake.for_authors(o.output, self.builds), o.output_bytes,
                )
                for o in own
            ],
        )  # fmt: skip

    async def author_of(self, token: str) -> store.Author | None:
        return await self.db.call(self.store.author_of, self.cid, token)

    async def board(self) -> list[store.BoardLine]:
        """The competition's board with each entrant's author and status."""
        return await self.db.call(self.store.board, self.cid)

    # ---------------------------------------------------------------- the organiser's calls

    @property
    def data_dir(self) -> Path:
        return self.builds.parent  # the competition's data folder (builds/ and bundles/ in it)

    def is_organiser(self, token: str) -> bool:
        """Whether ``token`` is the organiser's (its hash, kept in the data folder, read at each
        call: a token renewed while the server runs is taken at once)."""
        return organiser.is_organiser(self.data_dir, token)

    async def organise(self, action: Callable[..., _T], *args: Any) -> _T:
        """One of :mod:`.organiser`'s actions on the competition, on the ledger's thread; then the
        server takes the change in at once (a pause, a suspension) rather than at its next
        refresh."""
        try:
            result = await self.db.call(action, self.store, self.cid, *args)
        except LedgerError as exc:
            raise organiser.OrganiserError(self._for_author(exc)) from exc
        await self._refresh_soon()
        return result
