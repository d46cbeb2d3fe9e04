"""The coordinator's side: :class:`ClusterPlayer` plays each game as a Ray task on the cluster.

It has :class:`arena.play.game.GamePlayer`'s interface (``play(game, commands) -> Played``), so
that a tournament runner uses one or the other and records what comes back in the same way: one ledger
transaction per game, rated in schedule order, by the coordinator alone.

Each game asks for one CPU per bot process, so that Ray never places more games on a node than its CPUs
allow. More games are in flight than the cluster has room for (one more per node), so that a node that
frees a slot finds a game waiting and a slow node holds nothing back. A game whose worker process or
node died (or whose result was lost with its node) is sent again, up to :data:`ATTEMPTS` times: a game is
recorded only when its record reaches the coordinator, so it is never recorded twice.

The bots' logs (``logs_dir``) come back with the games' results as they are complete, and at the end of
the run, before the coordinator lets the cluster go, :meth:`ClusterPlayer.finish` brings back the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from arena.bots.limits import Limits
from arena.bots.logs import LogFolder
from arena.cluster import node as node_side
from arena.cluster.bot_files import Shipment
from arena.cluster.connect import Cluster, Node, fingerprint
from arena.cluster.errors import ClusterError
from arena.ledger.rows import Entrant, ScheduledGame
from arena.play.game import GameRules, Played
from arena.play.seatings import HasVariant, players_per_game
from arena.sandbox import SandboxUnavailable, probe

log = logging.getLogger("arena.cluster")

ATTEMPTS = 5  # times a game is sent when nodes or worker processes die under it
WATCH_SECONDS = 5.0  # a game's wait for its result asks after the cluster this often
# At the end of a run, for every node to close its referees and send back their logs: the node's own
# bound, and time for Ray to start a worker process there for it on a busy machine.
FINISH_SECONDS = node_side.CLOSE_SECONDS + 30.0


def _lost(address: str, why: str) -> str:
    return (
        f"lost the Ray cluster at {address}: {why}. Every game finished is in the ledger: run the "
        "same command again once the cluster is back"
    )


class ClusterPlayer:
    def __init__(
        self,
        cluster: Cluster,
        shipment: Shipment,
        players_per_game: int,
        logs_dir: Path | None = None,
        rules: GameRules | None = None,
    ) -> None:
        self.cluster = cluster
        self.logs_dir = logs_dir  # the bots' logs, brought back from the nodes
        self.log_folder: LogFolder | None = None  # ... held to a size (see arena.bots.logs)
        # What every game shares; set once the tournament is registered (its deal secret known).
        self.rules = rules
        self.hidden: tuple[str, ...] = ()  # paths a node never shows a bot (the ledger)
        # Whether the bots must be isolated on every node: as on the node that checked the entrants
        # (preflight), or else as on this machine.
        self.isolated: bool | None = None
        self.shipment = shipment
        self.players = players_per_game
        ray = cluster.ray
        self._system_errors: tuple[type[BaseException], ...] = tuple(
            getattr(ray.exceptions, name)
            for name in (
                "WorkerCrashedError",
                "NodeDiedError",
                "ObjectLostError",
                "OwnerDiedError",
                "LocalRayletDiedError",
                "RaySystemError",
                "ActorDiedError",
                "ObjectFetchTimedOutError",
                "ReferenceCountingAssertionError",
            )
            if hasattr(ray.exceptions, name)
        )
        # The Ray node this coordinator reaches the cluster through is dead: nothing can be sent.
        self._local_died: type[BaseException] | None = getattr(
            ray.exceptions, "LocalRayletDiedError", None
        )
        self._task = ray.remote(node_side.play).options(
            max_retries=0,  # resent here, where it is counted and bounded
            num_cpus=players_per_game,
            name="arena-game",
        )
        self._check = ray.remote(node_side.preflight).options(
            max_retries=3, num_cpus=1, name="arena-check"
        )
        self._finish = ray.remote(node_side.finish)  # its options, a node's among them, at the end
        self._refs = {p.digest: ray.put(p.data) for p in shipment.parcels.values()}
        # The object store has the bytes now: this process keeps only what names them (a competition
        # ships every build it plays, for as long as it runs).
        shipment.parcels = {
            f: dataclasses.replace(p, data=b"") for f, p in shipment.parcels.items()
        }
        self._arena = fingerprint()
        self.resent = 0  # games sent again after a node or worker process died
        self.nodes: dict[str, int] = {}  # games played, by node id

    def in_flight(self) -> int:
        """Games to keep in flight: every node's room (its CPUs over the game's bot processes), and
        one more per node waiting its turn."""
        nodes = self.cluster.nodes()
        room = sum(int(n.cpus // self.players) for n in nodes)
        if room == 0:
            raise ClusterError(
                f"no node of the cluster has the {self.players} CPUs a game needs (one per bot "
                "process): start the nodes with more CPUs (ray start --num-cpus N)"
            )
        return room + len(nodes)

    async def ship(self, folder: Path, exclude: Iterable[Path] = ()) -> None:
        """Send ``folder`` to the object store (once): the commands that name paths in it are then
        played from the nodes' copies (a competition's submissions, as they are built)."""
        folder = folder.resolve()
        if folder in self.shipment.parcels:
            return
        parcel = await asyncio.to_thread(Shipment.parcel, folder, exclude)
        ref = await asyncio.to_thread(self.cluster.ray.put, parcel.data)
        # Both added on the event loop, where the games read them.
        self._refs[parcel.digest] = ref
        self.shipment.parcels[folder] = dataclasses.replace(parcel, data=b"")

    def unship(self, folder: Path) -> None:
        """Let the object store drop ``folder`` (a competition's build out of play), unless another
        folder shipped has the same content."""
        gone = self.shipment.parcels.pop(folder.resolve(), None)
        if gone is not None and all(
            p.digest != gone.digest for p in self.shipment.parcels.values()
        ):
            self._refs.pop(gone.digest, None)

    def _portable(
        self, commands: Mapping[str, str]
    ) -> tuple[dict[str, tuple[str, ...]], dict[str, Any]]:
        """The commands as words for a node, and the parcels they need."""
        portable = {name: self.shipment.portable(c) if c else () for name, c in commands.items()}
        wanted = set().union(*(self.shipment.digests(w) for w in portable.values()))
        return portable, {d: ref for d, ref in self._refs.items() if d in wanted}

    async def preflight(
        self,
        commands: Mapping[str, str],
        variant: str,
        options: tuple[tuple[str, str], ...],
        limits: Limits,
        at_once: int,
    ) -> tuple[str, list[str]]:
        """Start each entrant once on a node, as a local run does on this machine: the sandbox the
        node gives the bots (one line) and the entrants that failed (one line each). Raises
        :class:`arena.sandbox.SandboxUnavailable` when the node cannot give the isolation that the
        limits require."""
        portable, parcels = self._portable(commands)
        ref = self._check.remote(
            variant, options, limits, portable, parcels, self._arena, self.hidden, at_once
        )
        try:
            checked: node_side.Checked = await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                self.cluster.ray.cancel(ref, force=True)
            raise
        except Exception as exc:
            cause = getattr(exc, "cause", None)
            raise ClusterError(
                f"the entrants could not be checked on the cluster: "
                f"{_first_line(cause if cause is not None else exc)}"
            ) from None
        if checked.unavailable:
            raise SandboxUnavailable(checked.isolation)
        self.isolated = checked.isolated
        where = f"on node {checked.node['host']} ({checked.node['address']})"
        return f"{checked.isolation} ({where})", checked.failures

    async def play(self, game: ScheduledGame, commands: Mapping[str, str]) -> Played:
        """Play ``game`` on the cluster; ``commands`` as they would run on this machine."""
        if self.rules is None:
            raise ClusterError("the games' rules are not set")
        portable, parcels = self._portable(commands)
        if self.isolated is None:
            self.isolated = probe(self.rules.limits.sandbox).isolated
        failure = ""
        for attempt in range(ATTEMPTS):
            if attempt:
                self.resent += 1
                log.warning("%s: sent again (%s)", game.key, failure)
            ref = self._task.remote(
                self.rules,
                game,
                portable,
                parcels,
                self._arena,
                self.logs_dir is not None,
                self.hidden,
                self.isolated,
            )
            try:
                result: node_side.Result = await self._watched(ref)
            except (asyncio.CancelledError, ClusterError):
                # The run is stopping (or the cluster is lost): the game stops too (its worker
                # process, with the referee and the bots it launched) rather than play on for nobody.
                with contextlib.suppress(Exception):
                    self.cluster.ray.cancel(ref, force=True)
                raise
            except self._system_errors as exc:
                failure = _first_line(exc)
                await self._check_alive(exc, failure)
                continue
            except Exception as exc:  # the game's own error on the node, or Ray's
                cause = getattr(exc, "cause", None)
                return Played(None, _first_line(cause if cause is not None else exc))
            played = result.played
            self.nodes[result.node["id"]] = self.nodes.get(result.node["id"], 0) + 1
            if self.logs_dir is not None and result.logs:
                await asyncio.to_thread(self._keep_logs, result.logs)
            if played.record is None:
                return played
            # Everything the node's player gave, its seats' output among it, with where it played.
            record = dataclasses.replace(played.record, node=result.node)
            return dataclasses.replace(played, record=record)
        return Played(None, f"lost {ATTEMPTS} times with its node or worker: {failure}")

    async def _watched(self, ref: Any) -> node_side.Result:
        """The game's result, while the cluster lives: a game in flight when the whole cluster stops
        hears nothing (Ray ends this process after a minute without its control service), so its
        head is asked after every WATCH_SECONDS of waiting (a ClusterError if it is gone)."""
        # (through a concurrent future: Ray Client's references have one too)
        future = asyncio.wrap_future(ref.future())
        try:
            while True:
                done, _ = await asyncio.wait({future}, timeout=WATCH_SECONDS)
                if done:
                    return future.result()  # type: ignore[no-any-return]
                gone = await asyncio.to_thread(self.cluster.lost)
                if gone:
                    raise ClusterError(_lost(self.cluster.address, gone))
        finally:
            future.cancel()  # nothing if done; else its result, which no one awaits, is dropped

    async def _check_alive(self, exc: BaseException, failure: str) -> None:
        """Before a game lost with a node or worker is sent again: raise a ClusterError if the
        cluster itself is gone (the run stops, every game finished being in the ledger), rather than
        send it again and again until Ray ends the process."""
        local = self._local_died is not None and isinstance(exc, self._local_died)
        gone = (
            "the Ray node this coordinator goes through died"
            if local
            else await asyncio.to_thread(self.cluster.lost)
        )
        if gone:
            raise ClusterError(_lost(self.cluster.address, f"{gone} ({failure})"))

    async def finish(self) -> None:
        """At the end of a run that keeps the bots' logs, before the coordinator lets the cluster go
        (and with it the worker processes of its Ray job, and the bot processes they started): each
        node closes its referees and sends back the logs they still hold (:func:`.node.finish`).
        Above all those of the bot processes kept between games for more matches
        (``matches_per_process``), which are complete only once their process has been stopped.
        Bounded by FINISH_SECONDS, and never an error: a node that does not answer in time keeps
        its logs, and a warning names it."""
        if self.logs_dir is None:
            return
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        try:
            nodes = await asyncio.to_thread(self.cluster.nodes)
        except Exception as exc:
            log.warning(
                "the bots' logs left on the nodes are not brought back: %s", _first_line(exc)
            )
            return
        asked: dict[asyncio.Future[Any], tuple[Node, Any]] = {}
        for node in nodes:
            # No CPU: it only waits for the referees, and must run even where games hold every CPU.
            ref = self._finish.options(
                max_retries=0,
                num_cpus=0,
                name="arena-finish",
                scheduling_strategy=NodeAffinitySchedulingStrategy(node.id, soft=False),
            ).remote(self._arena)
            asked[asyncio.wrap_future(ref.future())] = (node, ref)
        if not asked:
            return
        done, late = await asyncio.wait(asked, timeout=FINISH_SECONDS)
        for future in late:
            node, ref = asked[future]
            future.cancel()
            with contextlib.suppress(Exception):
                self.cluster.ray.cancel(ref, force=True)
            log.warning(
                "node %s (%s) did not send back the bots' logs it holds within %g s",
                node.host,
                node.address,
                FINISH_SECONDS,
            )
        for future in done:
            node, _ = asked[future]
            try:
                finished: node_side.Finished = future.result()
            except Exception as exc:
                cause = getattr(exc, "cause", None)
                log.warning(
                    "node %s (%s) could not send back the bots' logs it holds: %s",
                    node.host,
                    node.address,
                    _first_line(cause if cause is not None else exc),
                )
                continue
            for line in finished.unanswered:
                log.warning("node %s (%s): %s", node.host, node.address, line)
            if finished.logs:
                await asyncio.to_thread(self._keep_logs, finished.logs)

    def _keep_logs(self, logs: Mapping[str, bytes]) -> None:
        assert self.logs_dir is not None
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        for name, data in logs.items():
            if "/" in name or name.startswith("."):  # names the node's referee made; still, checked
                continue
            (self.logs_dir / name).write_bytes(data)
        if self.log_folder is not None and self.log_folder.due():
            self.log_folder.prune()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


class Tournament(HasVariant, Protocol):
    """What the cluster's player needs of a tournament (:class:`arena.tournament.spec.TournamentSpec`)."""

    @property
    def entrants(self) -> tuple[Entrant, ...]: ...

    @property
    def base_dir(self) -> Path: ...


def for_tournament(
    cluster: Cluster,
    spec: Tournament,
    exclude: Iterable[Path] = (),
    logs_dir: Path | None = None,
) -> ClusterPlayer:
    """The player of a tournament's games: its bots' folders packed (never the files in
    ``exclude``: the ledger, the tournament file, the logs) and put in the object store; with
    ``logs_dir``, the bots' logs come back there. Its rules are set once the tournament is
    registered."""
    shipment = Shipment.for_commands((e.command for e in spec.entrants), spec.base_dir, exclude)
    return ClusterPlayer(cluster, shipment, sum(players_per_game(spec)), logs_dir)
