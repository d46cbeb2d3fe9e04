"""The state a competition's server keeps while it runs, shared by the parts that act on it (the
submissions desk, the intakes, the roster, the play loop: :mod:`.server` puts them together), and the
bookkeeping of the tasks they start.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.bots import logs as bot_logs
from arena.cluster.errors import ClusterError
from arena.competition import bundles
from arena.competition.live import GameKey, LiveListener
from arena.competition.matchmaker import Candidate, Pool
from arena.competition.retention import Disk
from arena.competition.spec import CompetitionSpec
from arena.competition.submission_api import SubmissionListener, SubmissionsStarter
from arena.ledger import Ledger, LedgerError
from arena.ledger import challenges as ch
from arena.ledger import competitions as store
from arena.play.game import GamePlayer
from arena.play.ledger_thread import LedgerWorker
from arena.play.stall_watch import StallWatch
from arena.service.match_manager import MatchManager
from arena.service.server import ArenaServer

if TYPE_CHECKING:
    from arena.cluster.connect import Cluster
    from arena.cluster.player import ClusterPlayer

log = logging.getLogger("arena.competition")

# A submission in intake or in play: its build and bundle are kept.
LIVE = store.LIVE
INTAKES_AT_ONCE = 2  # submissions built and checked at the same time (one per author)


@dataclass(slots=True)
class Entry:
    """An entrant in play: its submission and how to start it."""

    submission: store.Submission
    command: str  # "" for a remote entrant


class CompetitionState:
    """What the parts of a competition's server share; set up by the constructor and by
    :meth:`arena.competition.server.CompetitionServer.start`."""

    # Set by start():
    db: LedgerWorker
    cid: int
    deal_key: bytes | None
    rng: random.Random
    referee: ArenaServer
    manager: MatchManager
    watch: StallWatch
    player: GamePlayer

    def __init__(
        self,
        spec: CompetitionSpec,
        ledger: Ledger,
        data_dir: Path,
        logs_dir: Path | None = None,
        on_event: Callable[[str], None] | None = None,
        cluster: Cluster | None = None,
        logs_max_mb: int = bot_logs.DEFAULT_MB,
        serve_submissions: SubmissionsStarter | None = None,
        live_address: str = "",
        live_token: str = "",
    ) -> None:
        self.spec = spec
        # The live games for the web's Live page (arena.competition.live): where, with what token
        # ("": a fresh one), and the games whose deal will not be played again that may be shown
        # (the last keys, a pairing's last rotation or a single deal, as they were played).
        self.live_address = live_address or spec.server.live
        self.live_token = live_token
        self.live_listener: LiveListener | None = None
        self.shown_games: OrderedDict[GameKey, None] = OrderedDict()
        # The submission API the command line starts with the server (None: no submissions taken
        # but the desk's own calls).
        self.serve_submissions = serve_submissions
        self.submissions: SubmissionListener | None = None
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
        self.remote_entrants: dict[str, int] = {}  # a remote entrant in play by its bot's name
        # The ledger as the last refresh left it (see roster.Roster._refresh): where it stands in
        # the ledger's changes, the submissions in intake or in play by id, and each entrant's
        # (mu, sigma, games, order of its last game) on the competition's board.
        self.marks = store.Marks()
        self.live: dict[int, store.Submission] = {}
        self.standings: dict[int, tuple[float, float, int, int]] = {}
        # A build kept only because an intake or a game used it: the next refresh tidies again.
        self.tidy_pending = True
        self._refreshing = asyncio.Lock()
        self.played: dict[int, int] = {}  # games planned for each entrant
        # Remote entrants picked for a game, from their pick until that game ends: one connection
        # plays one game at a time, so none is put back in the pool meanwhile, whatever the lobby
        # says (its session waits there until the game claims it).
        self.reserved: set[int] = set()
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
        # Authors' challenges (arena.competition.challenges): the open ones by id (every write to
        # them goes through this server), those with a game under way, and how many games those are.
        self.open_challenges: dict[int, ch.Challenge] = {}
        self.challenge_busy: set[int] = set()
        self.challenge_running = 0
        self.challenge_had_last_place = False  # the last place freed went to a challenge game

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

    def _hidden(self) -> list[Path]:
        """What no submitted bot is ever shown, even inside a folder it may see: the ledger (every
        deal's secret) and the bundles (every author's files). (The builds cannot be: each bot's
        folder is its own build; a command names nothing outside it, see intake.runtime_command.)"""
        ledger = [Path(self.ledger.path)] if self.ledger.path != ":memory:" else []
        return [self.bundles.root, *ledger]

    @staticmethod
    def _turn(locks: dict[int, asyncio.Lock], author_id: int) -> asyncio.Lock:
        """An author's lock of ``locks`` (made at their first call: one per author)."""
        return locks.setdefault(author_id, asyncio.Lock())

    def _unship(self, build: Path) -> None:
        """A build removed from the disk: the cluster's nodes let their copy go."""
        if self.cluster_player is not None:
            self.cluster_player.unship(build)
