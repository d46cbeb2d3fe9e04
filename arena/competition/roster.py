"""A competition's roster: the matchmaker's pool brought up to the ledger (entrants in play in, the
others out; ratings; the organiser's pause), each bundle's build shipped to the cluster, and the
remote entrants waiting in the lobby."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arena.competition import bundles, intake
from arena.competition.matchmaker import Candidate
from arena.competition.server_state import LIVE, CompetitionState, Entry
from arena.ledger import competitions as store

REFRESH_SECONDS = 2.0  # how often the organiser's changes in the ledger are read


class Roster(CompetitionState):
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
                    manifest = intake.manifest_of(sub)
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
        self.manager.pool.end_waiting({e.command for e in self.entries.values()})
        self._wake.set()
        await self.disk.clear(live)

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
        connected, in the lobby, and is not reserved for a game picked for it (:attr:`reserved`)."""
        entry = self.entries.get(entrant)
        candidate = self.candidates.get(entrant)
        if entry is None or candidate is None:
            return
        if entry.command or (
            entrant not in self.reserved and self.manager.lobby.waiting(entry.submission.bot)
        ):
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
