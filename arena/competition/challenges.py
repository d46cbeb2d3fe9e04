"""Authors' challenges: N unrated games of a bot of theirs against another entrant in play (another
author's, or another bot of their own), asked over the submission service and played by the server
between its ranked games.

- **Capacity.** Challenge games take at most ``challenge_slots`` of the ``games_at_once`` places at a
  time (``max(1, floor(challenge_share * games_at_once))``, none when the share is 0), and never more
  than the places free: ranked pairings and challenge games together are at most ``games_at_once``.
  When both wait, a place freed goes to the kind that did not have the last one, so that challenges
  are played between ranked games rather than before or after them all (:mod:`.play_loop`).
- **Quota.** An author may ask for ``max_challenge_games`` games in one challenge and
  ``challenge_games_per_day`` over 24 hours (the games of an ended challenge that were never played
  are given back).
- **Unrated.** A challenge game is recorded in ``challenge_games`` (:mod:`arena.ledger.challenges`),
  never in the competition's games: no board, standings, head to head or suspension counts it.
- **Deals.** A challenge's deals come from a stream of their own: seeds drawn from the challenge's id
  (round :data:`CHALLENGE_ROUND`, which ranked pairings never use) and dealt with a key derived from
  the competition's secret (:func:`challenge_key`), so that no ranked deal (a duplicate pairing's,
  whose other rotation may be still to play) is ever dealt in a challenge. With duplicate deals a
  challenge's deal is played once per seat rotation, one game after the other; a game's record is
  given to its author only once every game of its deal is over.
- **Whose.** A challenge is its author's alone: listed, cancelled and replayed by them. The
  opponent's author is not shown it: it counts for nothing of theirs, and which opponents an author
  studies, and how their bot fared, is their own preparation (as a friendly match on aiarena).
- **Bundles only.** A remote entrant's one connection plays one game at a time and is reserved for
  its ranked games (:mod:`.play_loop`), so neither side of a challenge may be a remote entrant.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace
from datetime import timedelta

from arena.competition import bundles, intake
from arena.competition.desk_port import SubmissionError
from arena.competition.roster import Roster
from arena.ledger import challenges as ch
from arena.ledger import competitions as store
from arena.ledger.rows import ScheduledGame
from arena.ledger.times import stamp
from arena.play.game import GamePlayer, finished
from arena.play.seatings import arrangements, deal_seed

# The round of a challenge's deals' seeds: a competition's ranked pairings are all round 0.
CHALLENGE_ROUND = 1


def challenge_key(deal_key: bytes | None) -> bytes:
    """The key challenge deals are dealt with: derived from the competition's secret, never equal
    to it, so that a challenge's deal is never a ranked one even where their seeds met."""
    return hmac.new(deal_key or b"", b"bezique-arena challenge deals", hashlib.sha256).digest()


def challenge_game(
    spec_seed: int,
    challenge: ch.Challenge,
    number: int,
    seatings: list[tuple[tuple[str, ...], ...]],
) -> ScheduledGame:
    """The challenge's game ``number``: its deal, seat rotation and seed."""
    deal, rotation = divmod(number, challenge.rotations)
    seats = seatings[(rotation if challenge.rotations > 1 else number) % len(seatings)]
    seed = deal_seed(spec_seed, CHALLENGE_ROUND, challenge.id, deal)
    key = f"x{challenge.id:09d}-{number}"
    group = (challenge.bot, challenge.opponent_bot)
    return ScheduledGame(
        key, number, CHALLENGE_ROUND, challenge.id, deal, rotation, seed, seats, group
    )


def _parse_target(text: str, what: str) -> tuple[str, str]:
    """``NAME[@VERSION]``, checked."""
    name, at, version = text.partition("@")
    if not bundles.NAME.fullmatch(name):
        raise SubmissionError(
            f"{what}: expected NAME or NAME@VERSION, {bundles.NAME_RULE}; got {text!r}"
        )
    if at and not bundles.VERSION.fullmatch(version):
        raise SubmissionError(f"{what}: version: expected {bundles.VERSION_RULE}, got {version!r}")
    return name, version


class Challenges(Roster):
    """The challenges' part of a competition's server: the desk's calls and what the play loop
    asks."""

    challenge_player: GamePlayer

    # ------------------------------------------------------------------ the desk

    def _in_play(self, bot: str, version: str, author_id: int | None) -> store.Submission | None:
        """The active submission of this bot (of this version, when given; of this author, when
        given)."""
        for entry in self.entries.values():
            s = entry.submission
            if (
                s.bot == bot
                and (not version or s.version == version)
                and (author_id is None or s.author_id == author_id)
            ):
                return s
        return None

    async def challenge(
        self, author: store.Author, bot: str, against: str, games: int
    ) -> ch.Challenge:
        """Ask for ``games`` unrated games of the author's ``bot`` (NAME[@VERSION], in play) against
        ``against`` (NAME[@VERSION], any entrant in play)."""
        caps = self.spec.submissions
        mine_name, mine_version = _parse_target(bot, "bot")
        theirs_name, theirs_version = _parse_target(against, "against")
        if self.spec.matchmaking.challenge_slots == 0 or caps.challenge_games_per_day == 0:
            raise SubmissionError("this competition plays no challenges (challenge_share = 0)")
        if self.spec.players != 2:
            raise SubmissionError(
                f"challenges are two-bot games; this competition's games take {self.spec.players} "
                "players"
            )
        if not 1 <= games <= caps.max_challenge_games:
            raise SubmissionError(
                f"games: expected 1..{caps.max_challenge_games} (max_challenge_games), got {games}"
            )
        await self._refresh_soon()  # the entrants in play as the ledger has them now
        mine = self._in_play(mine_name, mine_version, author.id)
        if mine is None:
            raise SubmissionError(
                f"you have no bot {bot!r} in play (arena compete submissions lists yours)"
            )
        theirs = self._in_play(theirs_name, theirs_version, None)
        if theirs is None:
            raise SubmissionError(
                f"no entrant {against!r} is in play (arena compete leaderboard lists them)"
            )
        if theirs.id == mine.id:
            raise SubmissionError("a bot cannot be challenged against itself: name another entrant")
        for side in (mine, theirs):
            if side.kind != "bundle":
                raise SubmissionError(
                    f"{side.bot} {side.version} is a remote entrant: its one connection plays its "
                    "ranked games only; challenge a submitted bundle"
                )
        rotations = (
            len(arrangements(self.spec, (mine.bot, theirs.bot)))
            if self.spec.matchmaking.duplicate
            else 1
        )
        async with self._turn(self._taking, author.id):
            since = stamp(ago=timedelta(days=1))
            used = await self.db.call(self.store.challenge_games_since, self.cid, author.id, since)
            if used + games > caps.challenge_games_per_day:
                raise SubmissionError(
                    f"you have asked for {used} challenge games in the last 24 hours and the most "
                    f"is {caps.challenge_games_per_day} (challenge_games_per_day): ask for at most "
                    f"{max(0, caps.challenge_games_per_day - used)} now, or try again later"
                )
            cid = await self.db.call(
                self.store.ask_challenge, self.cid, author.id, mine.id, theirs.id, games, rotations
            )
        found = await self.db.call(self.store.challenge, self.cid, cid)
        assert found is not None
        self.open_challenges[found.id] = found
        self.say(
            f"{author.name} challenged {theirs.bot} {theirs.version} with {mine.bot}: {games} games"
        )
        self._wake.set()
        return found

    async def challenges_of(
        self, author: store.Author
    ) -> list[tuple[ch.Challenge, list[ch.ChallengeGame]]]:
        """An author's challenges, the newest first, each with its games (their details in the
        author's words: no path of the server's)."""
        out = []
        for c in await self.db.call(self.store.challenges_of, self.cid, author.id):
            games = await self.db.call(self.store.challenge_games, c.id)
            games = [replace(g, detail=intake.for_authors(g.detail, self.builds)) for g in games]
            out.append((replace(c, reason=intake.for_authors(c.reason, self.builds)), games))
        return out

    async def _own_challenge(self, author: store.Author, challenge_id: int) -> ch.Challenge:
        found = await self.db.call(self.store.challenge, self.cid, challenge_id)
        if found is None or found.author_id != author.id:
            # Another author's challenge is not told apart from none.
            raise SubmissionError(f"you have no challenge {challenge_id}")
        return found

    async def cancel_challenge(self, author: store.Author, challenge_id: int) -> ch.Challenge:
        """End the author's open challenge: its game under way ends as it would, no other starts."""
        found = await self._own_challenge(author, challenge_id)
        if found.status != ch.OPEN:
            raise SubmissionError(f"challenge {challenge_id} is {found.status} already")
        await self.db.call(
            self.store.end_challenge, challenge_id, ch.CANCELLED, "cancelled by its author"
        )
        self.open_challenges.pop(challenge_id, None)
        ended = await self.db.call(self.store.challenge, self.cid, challenge_id)
        assert ended is not None
        return ended

    async def challenge_replay(
        self, author: store.Author, game_id: int
    ) -> tuple[ch.ChallengeGame, dict[str, object], list[ch.ChallengeOutput]]:
        """A game of the author's challenge, its full record and the output of the author's own
        bots in it (the opponent's, another author's, never; no path of the server's), once every
        game of its deal is over (refused before: the deal's other seat rotation is still to be
        played, and a bot's output may show its cards)."""
        found = await self.db.call(self.store.challenge_game, game_id)
        if found is None:
            raise SubmissionError(f"you have no challenge game {game_id}")
        game, challenge_id = found
        challenge = await self._own_challenge(author, challenge_id)
        if challenge.id in self.challenge_busy:
            # A game of it is under way: its deal may be that game's.
            challenge = replace(challenge, status=ch.OPEN)
        played = await self.db.call(self.store.challenge_games, challenge_id)
        if not ch.deal_done(challenge, played, game.deal):
            raise SubmissionError(
                f"challenge game {game_id}'s deal is still to be played in another seat rotation: "
                "its replay is shown once every game of the deal is over"
            )
        record = await self.db.call(self.store.challenge_record, game_id)
        outputs = [
            replace(o, output=intake.for_authors(o.output, self.builds))
            for o in await self.db.call(self.store.challenge_outputs, game_id)
            if o.author_id == author.id
        ]
        return replace(game, detail=intake.for_authors(game.detail, self.builds)), record, outputs

    # ------------------------------------------------------------------ play

    async def _load_challenges(self) -> None:
        self.open_challenges = {
            c.id: c for c in await self.db.call(self.store.open_challenges, self.cid)
        }

    async def _next_challenge(self) -> tuple[ch.Challenge, ScheduledGame, dict[str, str]] | None:
        """The next challenge game to play (the oldest open challenge with no game under way),
        ending the challenges one of whose bots has left play."""
        for c in list(self.open_challenges.values()):
            if c.id in self.challenge_busy:
                continue
            sides = [self.entries.get(c.entrant_id), self.entries.get(c.opponent_entrant_id)]
            gone = [
                f"{name} {version}"
                for entry, name, version, sid in (
                    (sides[0], c.bot, c.version, c.submission_id),
                    (sides[1], c.opponent_bot, c.opponent_version, c.opponent_id),
                )
                if entry is None or entry.submission.id != sid or not entry.command
            ]
            if gone:
                await self._end_challenge(c.id, ch.STOPPED, f"{', '.join(gone)} left play")
                continue
            assert sides[0] is not None and sides[1] is not None
            seatings = arrangements(self.spec, (c.bot, c.opponent_bot))
            game = challenge_game(self.spec.seed, c, c.played, seatings)
            return c, game, {c.bot: sides[0].command, c.opponent_bot: sides[1].command}
        return None

    def _challenge_waiting(self) -> bool:
        return any(c not in self.challenge_busy for c in self.open_challenges)

    async def _end_challenge(self, challenge_id: int, status: str, reason: str) -> None:
        self.open_challenges.pop(challenge_id, None)
        if await self.db.call(self.store.end_challenge, challenge_id, status, reason):
            self.say(f"challenge {challenge_id}: {status}: {reason}")

    def _start_challenge(
        self, c: ch.Challenge, game: ScheduledGame, commands: dict[str, str]
    ) -> None:
        used = [
            self.entries[c.entrant_id].submission.id,
            self.entries[c.opponent_entrant_id].submission.id,
        ]
        self.disk.build_users.update(used)
        self.challenge_busy.add(c.id)
        self.challenge_running += 1
        self._spawn(self._play_challenge(c, game, commands, used))

    async def _play_challenge(
        self, c: ch.Challenge, game: ScheduledGame, commands: dict[str, str], used: list[int]
    ) -> None:
        try:
            played = await self.challenge_player.play(game, commands)
            if played.record is None:
                why = intake.for_authors(played.error, self.builds)
                await self._end_challenge(
                    c.id, ch.STOPPED, f"the arena could not play game {game.ord}: {why}"
                )
                return
            mine = next(i for i, seat in enumerate(game.seats) if c.bot in seat)
            written = [(o.seat, o.member, o.tail, o.written) for o in played.outputs]
            await self.db.call(
                self.store.record_challenge_game, c.id, game.ord, game.deal, game.rotation,
                game.seed, tuple(seat[0] for seat in game.seats), mine, finished(played.record),
                written,
            )  # fmt: skip
            self.say(
                f"challenge {c.id} game {game.ord}: {c.bot} v {c.opponent_bot}: {played.outcome}"
            )
            now = await self.db.call(self.store.challenge, self.cid, c.id)
            if c.id in self.open_challenges:
                if now is None or now.status != ch.OPEN:
                    self.open_challenges.pop(c.id, None)
                else:
                    self.open_challenges[c.id] = now
        finally:
            self.challenge_running -= 1
            self.challenge_busy.discard(c.id)
            self.disk.build_users.subtract(used)
            self._wake.set()
