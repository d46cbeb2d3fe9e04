"""An author's challenges in a standing competition: N unrated games of a bot of theirs against
another entrant in play, asked over the submission service and played between ranked games.

A challenge's games are kept apart from the competition's (``challenge_games``, not ``games``): no
board, standings, head to head, failure count or public list reads them, so they are never rated
and never suspend a bot. Each is recorded with its full record, as a competition's game is. A
challenge's deals come from a stream of their own (a key derived from the competition's secret, see
:mod:`arena.competition.challenges`): no ranked deal is ever played in one.

A challenge is its author's alone: listed, cancelled and replayed only by them (the opponent's
author is not shown it; see the README's "Challenges"). A game's record is given only once every
game of its deal is over (with duplicate deals, the deal's other seat rotations in the challenge),
or the challenge ended without them.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena.ledger import records, seat_reports
from arena.ledger.errors import LedgerError
from arena.ledger.errors import guarded as _guarded
from arena.ledger.rows import FinishedGame
from arena.ledger.times import stamp

if TYPE_CHECKING:
    from arena.ledger.db import Ledger

# A challenge's statuses: open (games still to play), then done (all played), cancelled (by its
# author) or stopped (one of its bots left play, or could not be played).
OPEN = "open"
DONE = "done"
CANCELLED = "cancelled"
STOPPED = "stopped"
ENDED = (DONE, CANCELLED, STOPPED)

SCHEMA = """
CREATE TABLE IF NOT EXISTS challenges (
    id INTEGER PRIMARY KEY,
    competition_id INTEGER NOT NULL REFERENCES tournaments(id),
    author_id INTEGER NOT NULL REFERENCES authors(id),
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    opponent_id INTEGER NOT NULL REFERENCES submissions(id),
    games INTEGER NOT NULL,
    rotations INTEGER NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE INDEX IF NOT EXISTS challenges_by_author ON challenges (competition_id, author_id, created_at);
CREATE INDEX IF NOT EXISTS challenges_by_status ON challenges (competition_id, status);
CREATE TABLE IF NOT EXISTS challenge_games (
    id INTEGER PRIMARY KEY,
    challenge_id INTEGER NOT NULL REFERENCES challenges(id),
    number INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    seats TEXT NOT NULL,
    outcome TEXT NOT NULL,
    detail TEXT NOT NULL,
    culprit INTEGER NOT NULL,
    challenger_seat INTEGER NOT NULL,
    scores TEXT NOT NULL,
    places TEXT NOT NULL,
    record BLOB NOT NULL,
    encoding TEXT NOT NULL,
    schema INTEGER NOT NULL,
    finished_at TEXT NOT NULL,
    UNIQUE (challenge_id, number)
);
"""

# Migration 14: each challenge game's bots' output, per seat (and member), as a ranked game's
# (seat_reports): the tail of what it wrote (zlib), capped by the competition's output_kib, and how
# much it wrote in all; with the submission that sat there, whose author alone may read it. Kept for
# the competition's output_days after its game, as a ranked game's.
OUTPUTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS challenge_outputs (
    game_id INTEGER NOT NULL REFERENCES challenge_games(id),
    seat INTEGER NOT NULL,
    member INTEGER NOT NULL,
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    output BLOB NOT NULL,
    output_bytes INTEGER NOT NULL,
    PRIMARY KEY (game_id, seat, member)
);
"""


@dataclass(frozen=True, slots=True)
class ChallengeGame:
    """A challenge's game as recorded, from the challenger's side."""

    id: int
    challenge_id: int
    number: int  # 0 .. games - 1
    deal: int
    rotation: int
    seats: tuple[str, ...]  # each seat's bot, in seat order
    outcome: str
    detail: str
    challenger_score: int
    opponent_score: int
    result: str  # "win", "loss" or "draw", the challenger's
    finished_at: str


@dataclass(frozen=True, slots=True)
class ChallengeOutput:
    """What a seat's bot wrote during a challenge game (the tail kept), and whose it is."""

    seat: int
    member: int
    submission_id: int
    author_id: int
    bot: str
    version: str
    output: str  # decoded, undecodable bytes replaced
    output_bytes: int  # how much it wrote in all


@dataclass(frozen=True, slots=True)
class Challenge:
    id: int
    competition_id: int
    author_id: int
    submission_id: int
    entrant_id: int
    bot: str
    version: str
    opponent_id: int  # the opponent's submission
    opponent_entrant_id: int
    opponent_bot: str
    opponent_version: str
    games: int
    rotations: int  # seat rotations per deal (1: every game a deal of its own)
    status: str
    reason: str
    created_at: str
    finished_at: str
    played: int
    wins: int
    losses: int
    draws: int


_CHALLENGE = (
    "SELECT c.id, c.competition_id, c.author_id, c.submission_id, s.entrant_id, s.bot, s.version, "
    "c.opponent_id, o.entrant_id, o.bot, o.version, c.games, c.rotations, c.status, c.reason, "
    "c.created_at, coalesce(c.finished_at, ''), "
    "(SELECT count(*) FROM challenge_games g WHERE g.challenge_id = c.id) "
    "FROM challenges c JOIN submissions s ON s.id = c.submission_id "
    "JOIN submissions o ON o.id = c.opponent_id"
)
_GAME = (
    "SELECT id, challenge_id, number, deal, rotation, seats, outcome, detail, challenger_seat, "
    "scores, places, finished_at FROM challenge_games"
)


def _game(row: tuple[Any, ...]) -> ChallengeGame:
    gid, cid, number, deal, rotation, seats, outcome, detail, mine, scores, places, at = row
    scores_, places_ = json.loads(scores), json.loads(places)
    others = [s for i, s in enumerate(scores_) if i != mine]
    other_places = [p for i, p in enumerate(places_) if i != mine]
    best_other = min(other_places) if other_places else places_[mine]
    result = (
        "win" if places_[mine] < best_other else "loss" if places_[mine] > best_other else "draw"
    )
    return ChallengeGame(
        int(gid), int(cid), int(number), int(deal), int(rotation), tuple(json.loads(seats)),
        str(outcome), str(detail), int(scores_[mine]), int(max(others, default=0)), result,
        str(at),
    )  # fmt: skip


class CompetitionChallenges:
    """The challenges' reads and writes of :class:`arena.ledger.competitions.Competitions`."""

    ledger: Ledger
    conn: sqlite3.Connection
    path: str
    lock: threading.RLock

    def _challenge(self, row: tuple[Any, ...]) -> Challenge:
        games = [_game(r) for r in self.conn.execute(f"{_GAME} WHERE challenge_id = ?", (row[0],))]
        results = [g.result for g in games]
        return Challenge(
            int(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4] or 0), str(row[5]),
            str(row[6]), int(row[7]), int(row[8] or 0), str(row[9]), str(row[10]), int(row[11]),
            int(row[12]), str(row[13]), str(row[14]), str(row[15]), str(row[16]), int(row[17]),
            results.count("win"), results.count("loss"), results.count("draw"),
        )  # fmt: skip

    @_guarded
    def ask_challenge(
        self,
        competition_id: int,
        author_id: int,
        submission_id: int,
        opponent_id: int,
        games: int,
        rotations: int,
    ) -> int:
        """A new open challenge; its id."""
        if games < 1 or rotations < 1:
            raise LedgerError(f"{self.path}: a challenge needs games and rotations, got {games}")
        with self.ledger.transaction():
            cur = self.conn.execute(
                "INSERT INTO challenges (competition_id, author_id, submission_id, opponent_id, "
                "games, rotations, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (competition_id, author_id, submission_id, opponent_id, games, rotations, OPEN,
                 stamp()),
            )  # fmt: skip
        return int(cur.lastrowid or 0)

    @_guarded
    def challenge_games_since(self, competition_id: int, author_id: int, since: str) -> int:
        """The games an author's challenges asked for since ``since`` (an ISO time), less those an
        ended challenge will never play: what counts against their daily quota."""
        row = self.conn.execute(
            "SELECT coalesce(sum(CASE WHEN c.status = ? THEN c.games ELSE "
            "(SELECT count(*) FROM challenge_games g WHERE g.challenge_id = c.id) END), 0) "
            "FROM challenges c WHERE c.competition_id = ? AND c.author_id = ? AND c.created_at >= ?",
            (OPEN, competition_id, author_id, since),
        ).fetchone()
        return int(row[0])

    @_guarded
    def challenge(self, competition_id: int, challenge_id: int) -> Challenge | None:
        row = self.conn.execute(
            f"{_CHALLENGE} WHERE c.id = ? AND c.competition_id = ?",
            (challenge_id, competition_id),
        ).fetchone()
        return self._challenge(row) if row is not None else None

    @_guarded
    def challenges_of(
        self, competition_id: int, author_id: int, limit: int = 100
    ) -> list[Challenge]:
        """An author's challenges, the newest first."""
        rows = self.conn.execute(
            f"{_CHALLENGE} WHERE c.competition_id = ? AND c.author_id = ? "
            "ORDER BY c.id DESC LIMIT ?",
            (competition_id, author_id, limit),
        ).fetchall()
        return [self._challenge(r) for r in rows]

    @_guarded
    def open_challenges(self, competition_id: int) -> list[Challenge]:
        """The challenges with games still to play, the oldest first."""
        rows = self.conn.execute(
            f"{_CHALLENGE} WHERE c.competition_id = ? AND c.status = ? ORDER BY c.id",
            (competition_id, OPEN),
        ).fetchall()
        return [self._challenge(r) for r in rows]

    @_guarded
    def end_challenge(self, challenge_id: int, status: str, reason: str) -> bool:
        """End an open challenge (cancelled, stopped or done); whether it was open."""
        if status not in ENDED:
            raise LedgerError(f"{self.path}: {status!r} is not how a challenge ends")
        with self.ledger.transaction():
            cur = self.conn.execute(
                "UPDATE challenges SET status = ?, reason = ?, finished_at = ? "
                "WHERE id = ? AND status = ?",
                (status, reason, stamp(), challenge_id, OPEN),
            )
        return cur.rowcount > 0

    @_guarded
    def record_challenge_game(
        self,
        challenge_id: int,
        number: int,
        deal: int,
        rotation: int,
        seed: int,
        seats: tuple[str, ...],
        challenger_seat: int,
        played: FinishedGame,
        outputs: Sequence[tuple[int, int, bytes, int]] = (),
    ) -> int:
        """Write a challenge's game with its record and its bots' output (``outputs``: (seat,
        member, tail kept, bytes written) of each bot process), a game recorded twice left as it is;
        the challenge is done with its last game. The game's id."""
        places = [0] * len(seats)
        for side, side_seats in enumerate(played.sides):
            for seat in side_seats:
                places[seat] = int(played.ranking[side])
        encoding, schema, blob = records.encode(played.record)
        with self.ledger.transaction():
            found = self.conn.execute(
                "SELECT id FROM challenge_games WHERE challenge_id = ? AND number = ?",
                (challenge_id, number),
            ).fetchone()
            if found is not None:
                return int(found[0])
            cur = self.conn.execute(
                "INSERT INTO challenge_games (challenge_id, number, deal, rotation, seed, seats, "
                "outcome, detail, culprit, challenger_seat, scores, places, record, encoding, "
                "schema, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (challenge_id, number, deal, rotation, seed, json.dumps(list(seats)),
                 played.outcome, played.detail, played.culprit, challenger_seat,
                 json.dumps([int(s) for s in played.scores]), json.dumps(places), blob,
                 encoding, schema, stamp()),
            )  # fmt: skip
            game_id = int(cur.lastrowid or 0)
            mine, theirs = self.conn.execute(
                "SELECT submission_id, opponent_id FROM challenges WHERE id = ?", (challenge_id,)
            ).fetchone()
            self.conn.executemany(
                "INSERT OR IGNORE INTO challenge_outputs (game_id, seat, member, submission_id, "
                "output, output_bytes) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (game_id, seat, member, mine if seat == challenger_seat else theirs,
                     zlib.compress(tail), written)
                    for seat, member, tail, written in outputs
                ],
            )  # fmt: skip
            self.conn.execute(
                "UPDATE challenges SET status = ?, finished_at = ? WHERE id = ? AND status = ? "
                "AND games <= (SELECT count(*) FROM challenge_games WHERE challenge_id = ?)",
                (DONE, stamp(), challenge_id, OPEN, challenge_id),
            )
        return game_id

    @_guarded
    def challenge_outputs(self, game_id: int) -> list[ChallengeOutput]:
        """What each seat's bot wrote during a challenge game, by seat, with whose it is."""
        rows = self.conn.execute(
            "SELECT o.seat, o.member, o.submission_id, s.author_id, s.bot, s.version, o.output, "
            "o.output_bytes FROM challenge_outputs o JOIN submissions s ON s.id = o.submission_id "
            "WHERE o.game_id = ? ORDER BY o.seat, o.member",
            (game_id,),
        )
        return [
            ChallengeOutput(
                int(seat), int(member), int(sid), int(author), str(bot), str(version),
                seat_reports.tail_text(blob), int(written),
            )
            for seat, member, sid, author, bot, version, blob, written in rows
        ]  # fmt: skip

    @_guarded
    def challenge_games(self, challenge_id: int) -> list[ChallengeGame]:
        rows = self.conn.execute(
            f"{_GAME} WHERE challenge_id = ? ORDER BY number", (challenge_id,)
        ).fetchall()
        return [_game(r) for r in rows]

    @_guarded
    def challenge_game(self, game_id: int) -> tuple[ChallengeGame, int] | None:
        """A challenge's game and its challenge's id (None: no such game)."""
        row = self.conn.execute(f"{_GAME} WHERE id = ?", (game_id,)).fetchone()
        return (_game(row), int(row[1])) if row is not None else None

    @_guarded
    def challenge_record(self, game_id: int) -> dict[str, Any]:
        row = self.conn.execute(
            "SELECT encoding, record FROM challenge_games WHERE id = ?", (game_id,)
        ).fetchone()
        if row is None:
            raise LedgerError(f"{self.path}: no challenge game {game_id}")
        return records.decode(str(row[0]), row[1])


def deal_done(challenge: Challenge, played: list[ChallengeGame], deal: int) -> bool:
    """Whether every game of a challenge's deal is over: each of its seat rotations recorded, or
    the challenge ended (its games left unplayed never will be)."""
    if challenge.status != OPEN:
        return True
    numbers = {g.number for g in played if g.deal == deal}
    wanted = {
        n
        for n in range(deal * challenge.rotations, (deal + 1) * challenge.rotations)
        if n < challenge.games
    }
    return wanted <= numbers
