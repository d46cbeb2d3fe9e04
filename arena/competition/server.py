"""A standing competition: the submission service, the matchmaker and the referee, until stopped.

On start it registers the competition in the ledger (or finds it again: it resumes after a crash),
takes its lease, forgets the games planned but never recorded, builds the matchmaker's pool from the
active submissions and the competition's board, and finishes the pairings the last stop cut short (a
deal played in some of its seat rotations is played in the others). Then:

- authors submit bundles over gRPC (:mod:`.service`); each is stored, built and checked in the
  background (:mod:`.intake`) and enters play when it passes; a new version replaces the old one;
- the matchmaker pairs the entrant that needs games most (:mod:`.matchmaker`) and plays the pairing's
  deal once per seat rotation, one game at a time, ``games_at_once`` pairings at a time;
- every game is recorded in one ledger transaction through a worker thread (never on the loop that
  times the bots) and rated in pairing order on the competition's board;
- a bot that causes more than ``max_error_rate`` of its recent games to fail is suspended, with the
  reason shown to its author;
- the organiser's commands (pause, suspend, withdraw...) write the ledger; the server reads them every
  few seconds.

With a Ray cluster (``[server] cluster``, ``arena compete serve --cluster``) the games between submitted
bundles are played on its nodes (:mod:`arena.cluster`): each submission's build is sent to the object
store once, when it enters play, and the records come back here to be written as above. A game with a
remote entrant is played here, where that bot dials in. Ray is imported only then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.bots import logs as bot_logs
from arena.cluster.errors import ClusterError
from arena.competition import bundles, intake
from arena.competition.disk import Disk
from arena.competition.matchmaker import Candidate, Pool
from arena.competition.spec import CompetitionSpec
from arena.ledger import Ledger, LedgerError
from arena.ledger import competitions as store
from arena.ledger.leases import RENEW_SECONDS
from arena.service.server import check_free, create_server
from arena.tournament.games import GamePlayer, Rules
from arena.tournament.schedule import ScheduledGame, arrangements, deal_seed
from arena.tournament.stalls import StallWatch
from arena.tournament.worker import LedgerWorker

if TYPE_CHECKING:
    from arena.cluster.connect import Cluster
    from arena.cluster.player import ClusterPlayer

log = logging.getLogger("arena.competition")

# A submission in intake or in play: its build and bundle are kept.
LIVE = (store.BUILDING, store.CHECKING, store.ACTIVE, store.SUSPENDED)

REFRESH_SECONDS = 2.0  # how often the organiser's changes in the ledger are read
INTAKES_AT_ONCE = 2  # submissions built and checked at the same time (one per author)
MIN_GAMES_JUDGED = 3  # games an entrant plays before its error rate can suspend it
MAX_FAILURE_SHOWN = 300  # characters of the last failure quoted in a suspension's reason
# A remote entrant's language, shown on the board: a bundle's languages, or "remote" (the default).
REMOTE_LANGUAGES = (*bundles.LANGUAGES, "remote")


class SubmissionError(Exception):
    """A submission refused; the message is for its author."""


def _check_name(bot: str) -> None:
    """A bot's name as an author gives it in a call, checked as a manifest's is: whole (no trailing
    newline that made a second "js-lowball" beside another author's)."""
    if not bundles.NAME.fullmatch(bot):
        raise SubmissionError(f"bot: expected {bundles.NAME_RULE}, got {bot!r}")


@dataclass(slots=True)
class Entry:
    """An entrant in play: its submission and how to start it."""

    submission: store.Submission
    command: str  # "" for a remote entrant


class CompetitionServer:
    def __init__(
        self,
        spec: CompetitionSpec,
        ledger: Ledger,
        data_dir: Path,
        logs_dir: Path | None = None,
        on_event: Callable[[str], None] | None = None,
        cluster: Cluster | None = None,
        logs_max_mb: int = bot_logs.DEFAULT_MB,
    ) -> None:
        self.spec = spec
        self.ledger = ledger
        self.store = store.Competitions(ledger)
        data_dir = data_dir.resolve()  # bound into sandboxes by its full path
        self.bundles = bundles.Store(data_dir / "bundles")
        self.builds = data_dir / "builds"
        self.logs_dir = logs_dir
        # The logs' folder held to its size, by the referee and by the cluster's player alike.
        self.log_folder = (
            bot_logs.LogFolder(logs_dir, logs_max_mb * 1024 * 1024)
            if logs_dir is not None
            else None
        )
        self.say = on_event or (lambda text: None)
        self.pool = Pool()
        self.entries: dict[int, Entry] = {}  # by entrant id
        self.candidates: dict[int, Candidate] = {}  # the matchmaker's view of each entrant
        self.remote_tokens: dict[str, str] = {}  # a remote entrant's token hash: its bot name
        self.played: dict[int, int] = {}  # games planned for each entrant
        self.paused = False
        self.running = 0
        self.order = 0  # the next planned game's order
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._background: list[asyncio.Task[None]] = []
        self.bots_address = ""
        self.submissions_address = ""
        self._stopping = asyncio.Event()
        self._intakes = asyncio.Semaphore(INTAKES_AT_ONCE)
        # By author: their intake under way (the next waits for it, never holding one of the
        # INTAKES_AT_ONCE places meanwhile), and their call being taken in (counted against their
        # caps, then recorded, one at a time).
        self._intake_turn: dict[int, asyncio.Lock] = {}
        self._taking: dict[int, asyncio.Lock] = {}
        self._queued: asyncio.Future[None] | None = None  # the refresh the next callers share
        self._queue = asyncio.Lock()
        # The builds and bundles on the disk, and which intakes and games use them.
        self.disk = Disk(
            self.builds,
            self.bundles,
            lambda sid: self.db.call(self.store.submission, sid),
            lambda: self.db.call(self.store.submissions, self.cid, None, LIVE),
            self._unship,
        )
        self.fatal: Exception | None = None
        self.cluster = cluster  # games between bundles go there (connected by the caller)
        self.cluster_player: ClusterPlayer | None = None
        self.shipped: set[int] = set()  # entrants whose build the cluster's nodes have
        self.unplayable: set[int] = set()  # entrants in play whose command is refused (said once)

    # ------------------------------------------------------------------ life

    async def start(self) -> None:
        spec = self.spec
        # Before the ledger: a competition that cannot listen is not registered in a new ledger.
        check_free(spec.server.submissions, "submissions")
        check_free(spec.server.bots, "bots")
        self.db = LedgerWorker("competition-ledger")
        entry = await self.db.call(self.ledger.register, spec, None, "competition")
        self.cid, self.deal_key = entry.id, entry.deal_key
        await self.db.call(self.ledger.take_lease, self.cid)
        forgotten = await self.db.call(self.store.unplan_unplayed, self.cid, keep_begun=True)
        if forgotten:
            self.say(f"forgot {forgotten} game(s) planned but never played before the last stop")
        self.order = await self.db.call(self.store.next_ord, self.cid)
        self.rng = random.Random(f"{(self.deal_key or b'').hex()}:{self.order}")
        # The bots' listener serves the bot gateway alone: no admin, no spectating.
        self.referee, _, self.manager = await create_server(
            spec.server.bots, logs_dir=self.logs_dir, limits=spec.limits, guarded=True
        )
        # Never shown to a bot, whatever its command names: the ledger (every deal's secret) and the
        # submitted bundles (every author's files).
        self.manager.hide(*self._hidden())
        self.manager.log_folder = self.log_folder
        # A submitted command is resolved within its bundle's build (intake.runtime_command): none
        # of its words may name a file of the folder the server runs in.
        self.manager.resolve_from = None
        self.manager.lobby = self._lobby
        self.manager.on_lobby = self._lobby_changed
        self.bots_address = self.manager.address
        self.watch = StallWatch(threshold=max(spec.time_control.grace_ms / 1000, 0.05))
        self.watch.start()
        rules = Rules(
            spec.variant, spec.options, spec.time_control, spec.policies, spec.limits,
            spec.matchmaking.matches_per_process, self.deal_key,
        )  # fmt: skip
        self.player = GamePlayer(self.manager, rules, self.watch)
        if self.cluster is not None:
            from arena.cluster.player import ClusterPlayer
            from arena.cluster.shipping import Shipment

            self.cluster_player = ClusterPlayer(
                self.cluster, Shipment(), spec.players, self.logs_dir, rules
            )
            self.cluster_player.hidden = (str(Path(self.ledger.path).resolve()),)
            self.cluster_player.log_folder = self.log_folder
        from arena.competition.service import serve_submissions

        self.submissions, self.submissions_address = await serve_submissions(self)
        await self._refresh()
        await self._resume()
        for sub in await self.db.call(
            self.store.submissions, self.cid, None, (store.BUILDING, store.CHECKING)
        ):
            if sub.kind == "bundle":
                self.disk.bundle_users[sub.bundle] += 1
                self._spawn(self._intake(sub))  # interrupted by the last stop: done again
        self._background = [
            asyncio.create_task(self._matchmake()),
            asyncio.create_task(self._refresher()),
            asyncio.create_task(self._renew_lease()),
        ]

    def _hidden(self) -> list[Path]:
        """What no submitted bot is ever shown, even inside a folder it may see: the ledger (every
        deal's secret) and the bundles (every author's files). (The builds cannot be: each bot's
        folder is its own build; a command names nothing outside it, see intake.runtime_command.)"""
        ledger = [Path(self.ledger.path)] if self.ledger.path != ":memory:" else []
        return [self.bundles.root, *ledger]

    async def _resume(self) -> None:
        """Finish the pairings the last stop cut short: the deal is played in the seat rotations it
        still lacks, by the same entrants, while they are in play (even paused: these games were
        under way). A pairing one of whose entrants has left play is forgotten, unfinished."""
        for games, ids in await self.db.call(self.store.begun_pairings, self.cid):
            names = games[0].group
            entries = {name: self.entries.get(ids.get(name, -1)) for name in names}
            commands = {name: e.command for name, e in entries.items() if e is not None}
            if len(commands) < len(names) or not all(commands.values()):
                keys = tuple(g.key for g in games)
                await self.db.call(self.store.unplan_unplayed, self.cid, keys)
                self.say(
                    f"forgot {len(games)} game(s) of pairing {games[0].pairing} "
                    f"({' v '.join(names)}): one of its entrants is out of play"
                )
                continue
            self.say(
                f"resuming pairing {games[0].pairing} ({' v '.join(names)}): {len(games)} game(s)"
            )
            for name in names:
                self.played[ids[name]] = self.played.get(ids[name], 0) + len(games)
            self._start_play(games, commands, {name: ids[name] for name in names})

    async def stop(self) -> None:
        queued = [self._queued] if self._queued is not None else []
        for task in [*self._background, *self._tasks, *queued]:
            task.cancel()
        await asyncio.gather(*self._background, *self._tasks, *queued, return_exceptions=True)
        if self.cluster_player is not None and not isinstance(self.fatal, ClusterError):
            # The bots' logs that the nodes still hold, before the caller lets the cluster go.
            await self.cluster_player.finish()
        await self.watch.stop()
        await self.manager.close()
        await self.referee.stop(0)
        await self.submissions.stop(0)
        with contextlib.suppress(Exception):
            # The games cut short are forgotten now rather than at the next start (but for the rest
            # of a pairing begun, which the next start plays).
            async with asyncio.timeout(5.0):
                await self.db.call(self.store.unplan_unplayed, self.cid, keep_begun=True)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2.0):
                await self.db.call(self.ledger.release_lease, self.cid)
        self.db.close()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            self.say(f"error: {exc}")
            if isinstance(exc, LedgerError | ClusterError):  # the ledger, or the cluster, is lost
                self.fatal = exc
                self._stopping.set()

    async def wait(self) -> None:
        """Until a fatal error (the ledger cannot be written); it is raised."""
        await self._stopping.wait()
        if self.fatal is not None:
            raise self.fatal

    async def _renew_lease(self) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            await self.db.call(self.ledger.renew_lease, self.cid)

    # ------------------------------------------------------------------ submissions

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
                await self._room_for(author, manifest.name)
                try:
                    sid, _ = await self.db.call(
                        self.store.submit, self.cid, author.id, manifest.name, manifest.version,
                        manifest.language, bundle=sha, run=manifest.run, build=manifest.build,
                    )  # fmt: skip
                except LedgerError as exc:
                    raise SubmissionError(self._for_author(exc)) from exc
            except SubmissionError:
                await self.disk.release(sha)  # refused after unpacking: nothing keeps it
                raise
        sub = await self.db.call(self.store.submission, sid)
        self.say(f"{author.name} submitted {sub.bot} {sub.version}")
        self._spawn(self._intake(sub))
        return sub

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

    @staticmethod
    def _turn(locks: dict[int, asyncio.Lock], author_id: int) -> asyncio.Lock:
        """An author's lock of ``locks`` (made at their first call: one per author)."""
        return locks.setdefault(author_id, asyncio.Lock())

    async def _within_the_day(self, author: store.Author) -> None:
        """Refuse a submission past ``max_submissions_per_day`` over the last 24 hours: each one,
        failed or not, stays in the ledger for good, and a new version or a failing bundle was
        a way to grow it without end."""
        cap = self.spec.submissions.max_submissions_per_day
        since = (datetime.now(UTC) - timedelta(days=1)).isoformat(timespec="seconds")
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
        self, sub: store.Submission, status: str, reason: str = "", log: str | None = None
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
        )
        if not moved:
            self.say(f"{sub.bot} {sub.version}: left intake (withdrawn or replaced meanwhile)")
        return moved

    async def _build_and_check(self, sub: store.Submission) -> None:
        caps = self.spec.submissions
        manifest = bundles.Manifest(sub.bot, sub.version, sub.language, sub.run, sub.build)
        built = self.builds / str(sub.id)
        if not await self._step(sub, store.BUILDING):
            return
        result = await intake.build(
            manifest, self.bundles.folder(sub.bundle), built, self.spec.limits, caps.build_seconds
        )
        if not result.ok:
            if await self._step(sub, store.FAILED, result.reason, result.log):
                self.say(f"{sub.bot} {sub.version}: the build failed")
            return
        if not await self._step(sub, store.CHECKING, "", result.log):
            return
        try:
            command = intake.runtime_command(manifest, built)
        except bundles.BundleError as exc:
            if await self._step(sub, store.FAILED, str(exc), result.log):
                self.say(f"{sub.bot} {sub.version}: refused: {exc}")
            return
        checked = await intake.check(
            command, self.spec.variant, self.spec.limits, caps.check_seconds, self._hidden(),
            shown=manifest.run,
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

    # ------------------------------------------------------------------ the pool

    async def _refresher(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            await self._refresh()

    async def _refresh_soon(self) -> None:
        """Wait for a refresh that reads the ledger after this call, shared with every caller that
        comes before it starts: a flood of registrations costs a refresh or two, not one each."""
        if self._queued is None:
            self._queued = asyncio.ensure_future(self._queued_refresh())
        await asyncio.shield(self._queued)

    async def _queued_refresh(self) -> None:
        async with self._queue:  # one queued refresh at a time, and the next one waits for it
            self._queued = None  # callers from now on need a refresh that starts after this one
            await self._refresh()

    async def _refresh(self) -> None:
        """Bring the pool up to the ledger: active entrants in, the others out; ratings; pause."""
        self.paused = await self.db.call(self.store.paused, self.cid)
        live = await self.db.call(self.store.submissions, self.cid, None, LIVE)
        active = [s for s in live if s.status == store.ACTIVE]
        standings = await self.db.call(self.store.standings, self.cid)
        tokens = await self.db.call(self.store.remote_tokens, self.cid)
        self.remote_tokens = {digest: name for digest, name in tokens}
        keep: set[int] = set()
        for sub in active:
            if sub.entrant_id is None:
                continue
            entrant = sub.entrant_id
            if entrant not in self.entries:
                command = ""  # a remote entrant plays from its own machine
                if sub.kind == "bundle":
                    manifest = bundles.Manifest(
                        sub.bot, sub.version, sub.language, sub.run, sub.build
                    )
                    build = self.builds / str(sub.id)
                    try:
                        command = intake.runtime_command(manifest, build)
                    except bundles.BundleError as exc:  # in play before this check was made
                        if entrant not in self.unplayable:
                            self.unplayable.add(entrant)
                            self.say(f"{sub.bot} {sub.version}: not played: {exc}")
                        continue
                    if self.cluster_player is not None:
                        await self._ship(entrant, build)
                self.entries[entrant] = Entry(sub, command)
            keep.add(entrant)
            mu, sigma, games, last = standings.get(entrant, (25.0, 25.0 / 3, 0, -1))
            self.played[entrant] = max(self.played.get(entrant, 0), games)
            old = self.candidates.get(entrant)
            self.candidates[entrant] = Candidate(
                entrant, sub.author_id, mu, sigma, self.played[entrant],
                max(last, old.last if old else -1), sub.bot,
            )  # fmt: skip
            self._sync(entrant)
        for entrant in list(self.entries):
            if entrant not in keep:
                self.pool.remove(entrant)
                del self.entries[entrant]
                self.candidates.pop(entrant, None)
        # The processes of a bundle out of play (withdrawn, replaced, suspended) stop waiting for
        # games, and one whose game was under way stops when that game ends.
        self.manager.end_waiting({e.command for e in self.entries.values()})
        self._wake.set()
        await self.disk.clear(live)

    def _unship(self, build: Path) -> None:
        """A build removed from the disk: the cluster's nodes let their copy go."""
        if self.cluster_player is not None:
            self.cluster_player.unship(build)

    async def _ship(self, entrant: int, build: Path) -> None:
        """Send an entrant's build to the cluster; one that cannot be sent plays here."""
        assert self.cluster_player is not None
        try:
            await self.cluster_player.ship(build, [Path(self.ledger.path)])
        except Exception as exc:
            self.say(f"entrant {entrant}: its games are played here, not on the cluster: {exc}")
            return
        self.shipped.add(entrant)

    def _sync(self, entrant: int) -> None:
        """Pool membership: a bundle entrant while it is active; a remote one while it also waits,
        connected, in the lobby."""
        entry = self.entries.get(entrant)
        candidate = self.candidates.get(entrant)
        if entry is None or candidate is None:
            return
        if entry.command or self.manager.waiting(entry.submission.bot):
            self.pool.put(candidate)
        else:
            self.pool.remove(entrant)

    def _lobby(self, token: str) -> str | None:
        """The remote entrant whose token this is (the bot gateway asks when a token opens no
        seat)."""
        return self.remote_tokens.get(store.hash_token(token))

    def _lobby_changed(self, name: str) -> None:
        for entrant, entry in self.entries.items():
            if entry.submission.bot == name and not entry.command:
                self._sync(entrant)
        self._wake.set()

    # ------------------------------------------------------------------ play

    def _rotations(self) -> int:
        return len(arrangements(self.spec, tuple(f"p{i}" for i in range(self.spec.players))))

    async def _matchmake(self) -> None:
        mm = self.spec.matchmaking
        while True:
            if self.paused or self.running >= mm.games_at_once:
                await self._sleep(mm.pause_seconds)
                continue
            game = self.pool.pick(self.spec.players, mm.opponent_window, self.rng)
            if game is None:
                await self._sleep(mm.pause_seconds)
                continue
            names = tuple(c.name for c in game)
            pairing = self.order
            seed = deal_seed(self.spec.seed, 0, pairing, 0)
            seatings = arrangements(self.spec, names)
            remote = [c for c in game if not self.entries[c.entrant].command]
            # A remote bot keeps its memory from one game to the next: it would know the cards when
            # the deal came round again with the seats rotated. Its games are single deals.
            if not mm.duplicate or remote:
                seatings = [seatings[pairing % len(seatings)]]
            games = []
            for rot, seats in enumerate(seatings):
                key = f"c{self.order:09d}-s{rot}"
                games.append(ScheduledGame(key, self.order, 0, pairing, 0, rot, seed, seats, names))
                self.order += 1
            await self.db.call(self.ledger.plan, self.cid, games)
            for c in game:
                self.played[c.entrant] = self.played.get(c.entrant, 0) + len(games)
                self.candidates[c.entrant] = Candidate(
                    c.entrant, c.author, c.mu, c.sigma, self.played[c.entrant], self.order, c.name
                )
                self.pool.put(self.candidates[c.entrant])
            for c in remote:
                self.pool.remove(c.entrant)  # back when it waits in the lobby again
            commands = {c.name: self.entries[c.entrant].command for c in game}
            ids = {c.name: c.entrant for c in game}
            self._start_play(games, commands, ids)

    async def _sleep(self, seconds: float) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()

    def _start_play(
        self, games: list[ScheduledGame], commands: dict[str, str], ids: dict[str, int]
    ) -> None:
        """Play a pairing's games in a task of their own, the builds of its entrants (all in play
        now) kept until they end."""
        used = [self.entries[e].submission.id for e in ids.values()]
        self.disk.build_users.update(used)
        self.running += 1
        self._spawn(self._play(games, commands, ids, used))

    async def _play(
        self,
        games: list[ScheduledGame],
        commands: dict[str, str],
        ids: dict[str, int],
        used: list[int],
    ) -> None:
        player: GamePlayer | ClusterPlayer = self.player
        if self.cluster_player is not None and all(e in self.shipped for e in ids.values()):
            player = self.cluster_player  # bundles only, on the nodes: played anywhere
        try:
            for game in games:
                played = await player.play(game, commands)
                if played.record is None:
                    self.say(f"{game.key}: the arena could not play it: {played.error}")
                    await self.db.call(self.store.unplan_unplayed, self.cid, (game.key,))
                    continue
                await self.db.call(
                    self.ledger.record_game, self.cid, self.spec.variant, game, ids, played.record
                )
                self.say(f"{game.key}: {' v '.join(ids)}: {played.outcome}")
                g = played.record["games"][0]
                if g["outcome"] != "normal" and g["culprit"] >= 0:
                    for name in game.seats[g["culprit"]]:
                        await self._judge(ids[name])
        finally:
            self.running -= 1
            self.disk.build_users.subtract(used)
            await self._refresh()

    async def _judge(self, entrant: int) -> None:
        """Suspend an entrant that caused too many of its recent games to fail."""
        mm = self.spec.matchmaking
        caused, total = await self.db.call(self.store.failures, self.cid, entrant, mm.error_window)
        if total < min(MIN_GAMES_JUDGED, mm.error_window) or caused / total <= mm.max_error_rate:
            return
        entry = self.entries.get(entrant)
        if entry is None:
            return
        last = await self.db.call(self.store.last_failure, self.cid, entrant)
        reason = (
            f"suspended: it caused {caused} of its last {total} games to fail "
            f"(the limit is {mm.max_error_rate:.0%}); the last: {last[:MAX_FAILURE_SHOWN]}"
        )
        suspended = await self.db.call(
            self.store.set_status,
            entry.submission.id,
            store.SUSPENDED,
            reason,
            when=(store.ACTIVE,),
        )
        if not suspended:
            return  # out of play meanwhile (withdrawn, replaced)
        self.say(f"{entry.submission.bot} {entry.submission.version} {reason}")
        self.pool.remove(entrant)
