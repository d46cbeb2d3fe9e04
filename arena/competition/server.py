"""A standing competition: the submission service, the matchmaker and the referee, until stopped.

On start it registers the competition in the ledger (or finds it again: it resumes after a crash),
takes its lease, forgets the games planned but never recorded, builds the matchmaker's pool from the
active submissions and the competition's board, and finishes the pairings the last stop cut short (a
deal played in some of its seat rotations is played in the others). Then:

- authors submit bundles over gRPC (:mod:`.submission_api`, started with the server by the command
  line, serves its submissions desk, :mod:`.desk`); each is stored, built and checked in the
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
import random
from dataclasses import replace
from pathlib import Path

from arena.cluster.errors import ClusterError
from arena.competition.challenges import challenge_key
from arena.competition.desk import SubmissionsDesk
from arena.competition.live import serve_live
from arena.competition.notifications import WebhookDesk
from arena.competition.play_loop import PlayLoop
from arena.competition.retention import remove_old_outputs
from arena.ledger import LedgerError
from arena.ledger import competitions as store
from arena.ledger.leases import RENEW_SECONDS
from arena.play.game import GamePlayer, GameRules
from arena.play.ledger_thread import LedgerWorker
from arena.play.stall_watch import StallWatch
from arena.service.match_manager import ManagerOptions
from arena.service.server import check_free, create_server


class TaskDied(Exception):
    """One of the server's background tasks ended on an exception: the server stopped (``arena
    compete serve`` says so and exits with status 2, as when the ledger is lost)."""


class CompetitionServer(SubmissionsDesk, PlayLoop, WebhookDesk):
    """A standing competition until stopped: its lifecycle (start, resume, stop); the parts it is
    made of act on the state they share (:mod:`.server_state`)."""

    async def start(self) -> None:
        spec = self.spec
        # Before the ledger: a competition that cannot listen is not registered in a new ledger.
        check_free(spec.server.submissions, "submissions")
        check_free(spec.server.bots, "bots")
        if self.live_address:
            check_free(self.live_address, "the live games")
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
            spec.server.bots,
            logs_dir=self.logs_dir,
            limits=spec.limits,
            guarded=True,
            options=ManagerOptions(
                # Never shown to a bot, whatever its command names: the ledger (every deal's
                # secret) and the submitted bundles (every author's files).
                hidden=tuple(self._hidden()),
                log_folder=self.log_folder,
                # A submitted command is resolved within its bundle's build
                # (intake.runtime_command): none of its words may name a file of the folder the
                # server runs in.
                resolve_from=None,
                entrant_of=self._lobby,
                on_lobby=self._lobby_changed,
            ),
        )
        self.bots_address = self.manager.address
        if self.live_address:
            self.live_listener = await serve_live(
                self.manager, self.live_address, self._shown_live, self.live_token
            )
        self.watch = StallWatch(threshold=max(spec.time_control.grace_ms / 1000, 0.05))
        self.watch.start()
        rules = GameRules(
            spec.variant, spec.options, spec.time_control, spec.policies, spec.limits,
            spec.matchmaking.matches_per_process, self.deal_key,
            output_bytes=spec.submissions.output_kib * 1024,
        )  # fmt: skip
        self.player = GamePlayer(self.manager, rules, self.watch)
        # Challenges deal from a stream of their own (arena.competition.challenges), always here.
        self.challenge_player = GamePlayer(
            self.manager, replace(rules, deal_key=challenge_key(self.deal_key)), self.watch
        )
        if self.cluster is not None:
            from arena.cluster.bot_files import Shipment
            from arena.cluster.player import ClusterPlayer

            self.cluster_player = ClusterPlayer(
                self.cluster, Shipment(), spec.players, self.logs_dir, rules
            )
            self.cluster_player.hidden = (str(Path(self.ledger.path).resolve()),)
            self.cluster_player.log_folder = self.log_folder
        if self.serve_submissions is not None:
            self.submissions, self.submissions_address = await self.serve_submissions(
                self, spec.server.submissions, spec.submissions.max_bundle_mb
            )
        await self._refresh()
        await self._load_challenges()
        await self._resume()
        for sub in await self.db.call(
            self.store.submissions, self.cid, None, (store.BUILDING, store.CHECKING)
        ):
            if sub.kind == "bundle":
                self.disk.bundle_users[sub.bundle] += 1
                self._spawn(self._intake(sub))  # interrupted by the last stop: done again
        self._background = [
            self._watched("the matchmaker", asyncio.create_task(self._matchmake())),
            self._watched("the refresher", asyncio.create_task(self._refresher())),
            self._watched("the lease's renewal", asyncio.create_task(self._renew_lease())),
            # authors' webhooks, delivered apart from play
            self._watched("the notifier", self._start_notifier()),
            self._watched(
                "the removal of old bot output",
                asyncio.create_task(
                    remove_old_outputs(
                        self.db.call,
                        self.store.prune_outputs,
                        self.cid,
                        spec.submissions.output_days,
                    )
                ),
            ),
        ]

    def _watched(self, name: str, task: asyncio.Task[None]) -> asyncio.Task[None]:
        """A background task that must run as long as the server does. Should it end on an
        exception, the server says what died and why, and stops: :meth:`wait` raises
        :class:`TaskDied` (``compete serve`` exits with status 2), or the ledger's or the
        cluster's own error when that is what it died of. None is restarted: the state such a task leaves half-changed (the pool, a
        pairing being planned, the lease) is not known to be sound, and a server that runs on with
        no matchmaker plays no game while it looks alive; a loud stop is found and fixed."""

        def ended(done: asyncio.Task[None]) -> None:
            if done.cancelled() or self._stopping.is_set():
                return
            exc = done.exception()
            if exc is None:
                return
            self.say(f"error: {name} died: {type(exc).__name__}: {exc}; stopping the server")
            if isinstance(exc, LedgerError | ClusterError):
                self.fatal = exc
            else:
                self.fatal = TaskDied(f"{name} died: {type(exc).__name__}: {exc}")
            self._stopping.set()

        task.add_done_callback(ended)
        return task

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
        if self.live_listener is not None:
            await self.live_listener.stop(0)
        if self.submissions is not None:
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

    async def wait(self) -> None:
        """Until a fatal error (the ledger cannot be written, a background task died); it is
        raised."""
        await self._stopping.wait()
        if self.fatal is not None:
            raise self.fatal

    async def _renew_lease(self) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            await self.db.call(self.ledger.renew_lease, self.cid)
