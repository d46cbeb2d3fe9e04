"""A competition's play loop: the matchmaker pairs the entrant that needs games most and the
pairing's deal is played once per seat rotation (a remote entrant's games are single deals), each game
recorded in the ledger, and an entrant that causes too many of its recent games to fail suspended."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from arena.competition import intake
from arena.competition.challenges import Challenges
from arena.competition.live import game_key
from arena.competition.matchmaker import Candidate
from arena.ledger import competitions as store
from arena.ledger import seat_reports
from arena.ledger.rows import ScheduledGame
from arena.play.game import GamePlayer, finished
from arena.play.seatings import arrangements, deal_seed
from arena.service.match_manager import MatchEntry

if TYPE_CHECKING:
    from arena.cluster.player import ClusterPlayer

MIN_GAMES_JUDGED = 3  # games an entrant plays before its error rate can suspend it
# Games the live service remembers it may show: more than the finished matches the referee keeps
# (arena.service.match_manager.KEEP_FINISHED) and those in play.
SHOWN_KEPT = 1024


class PlayLoop(Challenges):
    def _rotations(self) -> int:
        return len(arrangements(self.spec, tuple(f"p{i}" for i in range(self.spec.players))))

    async def _matchmake(self) -> None:
        mm = self.spec.matchmaking
        while True:
            if self.paused or self.running + self.challenge_running >= mm.games_at_once:
                await self._sleep(mm.pause_seconds)
                continue
            # A free place: to a challenge game when one waits, within the challenges' share, and
            # the last place went to a ranked pairing (or none can be made now).
            challenge_may = (
                self.challenge_running < mm.challenge_slots and self._challenge_waiting()
            )
            if challenge_may and not self.challenge_had_last_place and await self._challenge():
                continue
            game = self.pool.pick(self.spec.players, mm.opponent_window, self.rng)
            if game is None:
                if not (challenge_may and await self._challenge()):
                    await self._sleep(mm.pause_seconds)
                continue
            self.challenge_had_last_place = False
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
            if any(c.entrant not in self.entries for c in game):
                # One of them left play (withdrawn, replaced, suspended) while the pairing was
                # being planned: it is dropped, planned no more. (Its entry was looked up below,
                # and a KeyError ended the matchmaker for good, silently: no game was paired again.)
                keys = tuple(g.key for g in games)
                await self.db.call(self.store.unplan_unplayed, self.cid, keys)
                continue
            for c in game:
                self.played[c.entrant] = self.played.get(c.entrant, 0) + len(games)
                self.candidates[c.entrant] = Candidate(
                    c.entrant, c.author, c.mu, c.sigma, self.played[c.entrant], self.order, c.name
                )
                self.pool.put(self.candidates[c.entrant])
            for c in remote:
                # Reserved until its game ends (see _sync): until the game claims its session the
                # lobby still says it waits, and a refresh would give it a second game whose seat
                # nobody takes (forfeited, after the connect timeout, as never connected).
                self.reserved.add(c.entrant)
                self.pool.remove(c.entrant)
            commands = {c.name: self.entries[c.entrant].command for c in game}
            ids = {c.name: c.entrant for c in game}
            self._start_play(games, commands, ids, {c.entrant for c in remote})

    async def _challenge(self) -> bool:
        """Start the next challenge game, if one can be played now."""
        found = await self._next_challenge()
        if found is None:
            return False
        self._start_challenge(*found)
        self.challenge_had_last_place = True
        return True

    async def _sleep(self, seconds: float) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()

    def _start_play(
        self,
        games: list[ScheduledGame],
        commands: dict[str, str],
        ids: dict[str, int],
        reserved: set[int] | None = None,
    ) -> None:
        """Play a pairing's games in a task of their own, the builds of its entrants (all in play
        now) kept until they end, its ``reserved`` remote entrants let go then."""
        used = [self.entries[e].submission.id for e in ids.values()]
        self.disk.build_users.update(used)
        self.running += 1
        self._spawn(self._play(games, commands, ids, used, reserved or set()))

    async def _play(
        self,
        games: list[ScheduledGame],
        commands: dict[str, str],
        ids: dict[str, int],
        used: list[int],
        reserved: set[int],
    ) -> None:
        player: GamePlayer | ClusterPlayer = self.player
        if self.cluster_player is not None and all(e in self.shipped for e in ids.values()):
            player = self.cluster_player  # bundles only, on the nodes: played anywhere
        try:
            for i, game in enumerate(games):
                if i == len(games) - 1 and player is self.player:
                    # No game of its deal is left to play once it starts: it may be shown live.
                    self._show_live(game)
                played = await player.play(game, commands)
                if played.record is None:
                    self.say(f"{game.key}: the arena could not play it: {played.error}")
                    await self.db.call(self.store.unplan_unplayed, self.cid, (game.key,))
                    continue
                record = finished(played.record)
                game_id = await self.db.call(
                    self.ledger.record_game, self.cid, self.spec.variant, game, ids, record
                )
                # Beside the record, for the authors: each bot's output and time per decision.
                seats = [[ids[name] for name in seat] for seat in game.seats]
                written = [(o.seat, o.member, o.tail, o.written) for o in played.outputs]
                reports = seat_reports.from_game(record, seats, written)
                await self.db.call(self.store.record_reports, game_id, reports)
                self.say(f"{game.key}: {' v '.join(ids)}: {played.outcome}")
                g = played.record.games[0]
                if g.outcome != "normal" and g.culprit >= 0:
                    for name in game.seats[g.culprit]:
                        await self._judge(ids[name])
        finally:
            self.running -= 1
            self.disk.build_users.subtract(used)
            self.reserved -= reserved
            for entrant in reserved:
                self._sync(entrant)  # free again: back in the pool once it waits in the lobby
            await self._refresh()

    def _show_live(self, game: ScheduledGame) -> None:
        self.shown_games[(game.seed, game.seats)] = None
        while len(self.shown_games) > SHOWN_KEPT:
            self.shown_games.popitem(last=False)

    def _shown_live(self, entry: MatchEntry) -> bool:
        """Whether the live games may show this match: a ranked game (never a challenge's, whose
        deals are dealt with a key of their own) whose deal will not be played again."""
        return (
            entry.config.deal_key == (self.deal_key or b"") and game_key(entry) in self.shown_games
        )

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
        # The last failure quoted whole (its author needs the traceback), in the author's words: no
        # path of the server's.
        reason = (
            f"suspended: it caused {caused} of its last {total} games to fail "
            f"(the limit is {mm.max_error_rate:.0%}); the last: "
            f"{intake.for_authors(last, self.builds)}"
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
