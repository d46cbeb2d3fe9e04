"""A standing competition's records in the ledger: its authors, their submissions, its pause switch,
and what its matchmaker needs to know of its entrants.

A competition is a row of ``tournaments`` of kind ``competition``: its games are planned one pairing at
a time (``planned_games``, in a growing order) and rated in that order on the competition's own board,
like a tournament's. Authors' and remote entrants' tokens are stored as SHA-256 hashes only: a token is
shown once, when it is made.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from arena.common.secret_tokens import new_token
from arena.ledger import seat_reports, status_history
from arena.ledger.challenges import CompetitionChallenges
from arena.ledger.competition_board import BoardLine as BoardLine  # read as this module's
from arena.ledger.competition_board import CompetitionBoard
from arena.ledger.competition_play import CompetitionPlay
from arena.ledger.db import Ledger, _now
from arena.ledger.errors import LedgerError
from arena.ledger.errors import guarded as _guarded
from arena.ledger.names import skeleton
from arena.ledger.rows import Entrant

# Submission statuses.
BUILDING = "building"
CHECKING = "checking"
ACTIVE = "active"
FAILED = "failed"
SUSPENDED = "suspended"
WITHDRAWN = "withdrawn"
REPLACED = "replaced"
STATUSES = (BUILDING, CHECKING, ACTIVE, FAILED, SUSPENDED, WITHDRAWN, REPLACED)
MAX_LOG = 64 * 1024  # characters of build and check log kept per submission
# Characters of a status's reason kept: a suspension quotes the bot's last failure whole (a traceback),
# which its author needs to see uncut.
MAX_REASON = 8 * 1024


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True, slots=True)
class Author:
    id: int
    name: str
    created_at: str


@dataclass(frozen=True, slots=True)
class LastGame:
    game_id: int
    key: str
    outcome: str
    finished_at: str
    players: str  # each seat's bot, version and score


@dataclass(frozen=True, slots=True)
class PlayFailure:
    """A game an entrant caused to fail."""

    game_id: int
    key: str
    outcome: str
    detail: str
    finished_at: str


@dataclass(frozen=True, slots=True)
class Submission:
    id: int
    author_id: int
    author: str
    bot: str
    version: str
    language: str
    kind: str  # "bundle" or "remote"
    bundle: str  # the bundle's content hash
    run: str
    build: str
    entrant_id: int | None
    status: str
    reason: str
    submitted_at: str
    updated_at: str


_SUBMISSION = (
    "SELECT s.id, s.author_id, a.name, s.bot, s.version, s.language, s.kind, s.bundle, s.run, s.build, "
    "s.entrant_id, s.status, s.reason, s.submitted_at, s.updated_at FROM submissions s "
    "JOIN authors a ON a.id = s.author_id"
)
# The same with the hash of a remote entrant's token last (None for a bundle).
_SUBMISSION_AND_TOKEN = _SUBMISSION.replace(
    " FROM submissions s", ", s.token_hash FROM submissions s"
)

# A submission in intake or in play.
LIVE = (BUILDING, CHECKING, ACTIVE, SUSPENDED)


@dataclass(frozen=True, slots=True)
class Marks:
    """Where a competition's server stands in the ledger's changes (see Competitions.changes); -1:
    not read yet."""

    submission_seq: int = -1
    rating_seq: int = -1
    voided: int = -1


@dataclass(frozen=True, slots=True)
class Changes:
    """What changed in a competition's records since the marks given (Competitions.changes)."""

    paused: bool
    # Changed submissions in the order of their changes (the last of one is its state now), each with
    # its remote entrant's token hash (None for a bundle).
    submissions: list[tuple[Submission, str | None]]
    # (mu, sigma, games, order of the last game) of the entrants rated since; every entrant of the
    # board when ``whole``.
    standings: dict[int, tuple[float, float, int, int]]
    whole: bool
    marks: Marks


class Competitions(CompetitionPlay, CompetitionBoard, CompetitionChallenges):
    """The competition tables of one ledger (its connection, its transactions)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.conn = ledger.conn
        self.path = ledger.path
        self.lock = ledger.lock  # the ledger's calls and these, one thread at a time

    # ------------------------------------------------------------------ authors

    @_guarded
    def add_author(self, competition_id: int, name: str) -> str:
        """A new author; returns the author's token (shown once: only its hash is kept)."""
        name = name.strip()
        # Shown on boards, in terminals and on the web: no control character (an escape sequence).
        if not name or len(name) > 64 or not name.isprintable():
            raise LedgerError(
                f"{self.path}: an author's name is 1-64 printable characters, got {name!r}"
            )
        token = new_token()
        with self.ledger.transaction():
            wanted = skeleton(name)
            for (other,) in self.conn.execute(
                "SELECT name FROM authors WHERE competition_id = ?", (competition_id,)
            ):
                if other == name:
                    raise LedgerError(f"{self.path}: there is already an author named {name!r}")
                if skeleton(other) == wanted:
                    raise LedgerError(
                        f"{self.path}: the author name {name!r} is too like another author's, "
                        f"{other!r}: names must differ by more than case, punctuation or look-alike letters"
                    )
            self.conn.execute(
                "INSERT INTO authors (competition_id, name, token_hash, created_at) VALUES (?, ?, ?, ?)",
                (competition_id, name, hash_token(token), _now()),
            )
        return token

    @_guarded
    def author_of(self, competition_id: int, token: str) -> Author | None:
        row = self.conn.execute(
            "SELECT id, name, created_at FROM authors WHERE competition_id = ? AND token_hash = ?",
            (competition_id, hash_token(token)),
        ).fetchone()
        return Author(*row) if row else None

    @_guarded
    def authors(self, competition_id: int) -> list[Author]:
        rows = self.conn.execute(
            "SELECT id, name, created_at FROM authors WHERE competition_id = ? ORDER BY id",
            (competition_id,),
        )
        return [Author(*r) for r in rows]

    # ------------------------------------------------------------------ submissions

    @_guarded
    def submit(
        self,
        competition_id: int,
        author_id: int,
        bot: str,
        version: str,
        language: str,
        *,
        bundle: str = "",
        run: str = "",
        build: str = "",
    ) -> tuple[int, str]:
        """Record a new submission (a bundle, or a remote entrant when no bundle is given): its id, and
        for a remote entrant the token it dials in with (else ""). A bot's name belongs to the author
        who first submitted it; a version is submitted once."""
        token = "" if bundle else new_token()
        # A bundle with no build command is checked at once; a remote entrant is checked as it plays.
        first = BUILDING if bundle and build else CHECKING
        with self.ledger.transaction():
            owner = self.conn.execute(
                "SELECT a.name, s.author_id FROM submissions s JOIN authors a ON a.id = s.author_id "
                "WHERE s.competition_id = ? AND s.bot = ? LIMIT 1",
                (competition_id, bot),
            ).fetchone()
            if owner is not None and owner[1] != author_id:
                raise LedgerError(f"the bot name {bot!r} belongs to another author ({owner[0]})")
            if owner is None:
                self._name_unlike_others(competition_id, author_id, bot)
            earlier = self.conn.execute(
                "SELECT id, status FROM submissions WHERE competition_id = ? AND bot = ? "
                "AND version = ?",
                (competition_id, bot, version),
            ).fetchone()
            now = _now()
            if earlier is not None and earlier[1] == FAILED and bundle:
                # A version that failed its build or check never played: submitted again (fixed),
                # it is built and checked afresh under the same number.
                self.conn.execute(
                    "UPDATE submissions SET language = ?, bundle = ?, run = ?, build = ?, status = ?, "
                    "reason = '', log = '', submitted_at = ?, updated_at = ? WHERE id = ?",
                    (language, bundle, run, build, first, now, now, earlier[0]),
                )
                status_history.note(self.conn, int(earlier[0]), first, "submitted again", now)
                return int(earlier[0]), ""
            if earlier is not None:
                raise LedgerError(
                    f"{bot} version {version} was submitted already: give a new version"
                )
            cur = self.conn.execute(
                "INSERT INTO submissions (competition_id, author_id, bot, version, language, kind, "
                "bundle, run, build, token_hash, status, submitted_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (competition_id, author_id, bot, version, language,
                 "bundle" if bundle else "remote", bundle, run, build,
                 hash_token(token) if token else None, first, now, now),
            )  # fmt: skip
            status_history.note(
                self.conn, int(cur.lastrowid or 0), first, "submitted" if bundle else "registered",
                now,
            )  # fmt: skip
        return int(cur.lastrowid or 0), token

    def _name_unlike_others(self, competition_id: int, author_id: int, bot: str) -> None:
        """Refuse a new bot name that a reader would take for another author's: the same after case
        folding, punctuation and look-alike folding (:mod:`arena.ledger.names`)."""
        wanted = skeleton(bot)
        for other, owner in self.conn.execute(
            "SELECT DISTINCT s.bot, a.name FROM submissions s JOIN authors a ON a.id = s.author_id "
            "WHERE s.competition_id = ? AND s.author_id != ?",
            (competition_id, author_id),
        ):
            if skeleton(other) == wanted:
                raise LedgerError(
                    f"the bot name {bot!r} is too like {other!r}, another author's ({owner}): "
                    "names must differ by more than case, punctuation or look-alike letters"
                )

    @_guarded
    def set_status(
        self,
        submission_id: int,
        status: str,
        reason: str = "",
        log: str | None = None,
        *,
        when: tuple[str, ...] = (),
        note: str | None = None,
    ) -> bool:
        """Set a submission's status (and reason, and log if given); with ``when``, only while its
        status is one of those. Whether it changed: the server's intake, the author's withdrawal and
        the organiser's commands write the same rows, and a step taken on a status read earlier must
        not undo another's (a withdrawal put back in play by an intake that went on).

        A change of status goes into the submission's history with ``note`` (default: the reason);
        a step that keeps the status (the intake's after a check) does only with a ``note``."""
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        only = f" AND status IN ({', '.join('?' * len(when))})" if when else ""
        reason = reason[:MAX_REASON]
        now = _now()
        with self.ledger.transaction():
            before = self.conn.execute(
                "SELECT status FROM submissions WHERE id = ?", (submission_id,)
            ).fetchone()
            cur = self.conn.execute(
                "UPDATE submissions SET status = ?, reason = ?, updated_at = ?, "
                f"log = CASE WHEN ? IS NULL THEN log ELSE ? END WHERE id = ?{only}",
                (status, reason, now, log, _cap(log), submission_id, *when),
            )
            if cur.rowcount > 0 and (note is not None or before is None or before[0] != status):
                status_history.note(
                    self.conn, submission_id, status, reason if note is None else note, now
                )
        return cur.rowcount > 0

    @_guarded
    def activate(self, submission_id: int, command: str) -> int | None:
        """The submission plays from now on, as a new entrant (``command`` identifies its program),
        if it is still in intake (building or checking: not withdrawn or replaced meanwhile); the
        entrant's id, or None when it does not play.

        Versions are ordered by submission (their ids): the bot's earlier version in play (active or
        suspended) and its earlier ones still in intake are replaced. A later version already in play
        is never replaced: this one is then marked replaced by it (intakes run side by side, and an
        older version whose build is slower finishes last). A later version still in intake is left
        to finish, and replaces this one if it passes."""
        with self.ledger.transaction():
            sub = self._one(submission_id)
            if sub.status not in (BUILDING, CHECKING):
                return None
            later = self.conn.execute(
                "SELECT version FROM submissions WHERE competition_id = "
                "(SELECT competition_id FROM submissions WHERE id = ?) AND bot = ? AND id > ? "
                "AND status IN (?, ?) ORDER BY id DESC LIMIT 1",
                (submission_id, sub.bot, submission_id, ACTIVE, SUSPENDED),
            ).fetchone()
            now = _now()
            if later is not None:
                self.conn.execute(
                    "UPDATE submissions SET status = ?, reason = ?, updated_at = ? WHERE id = ?",
                    (REPLACED, f"replaced by version {later[0]}", now, submission_id),
                )
                status_history.note(
                    self.conn, submission_id, REPLACED, f"replaced by version {later[0]}", now
                )
                return None
            digest = Entrant(sub.bot, command, version=sub.version).command_hash
            self.conn.execute(
                "INSERT OR IGNORE INTO entrants (name, command, command_hash, language, version, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (sub.bot, command, digest, sub.language, sub.version, _now()),
            )  # fmt: skip
            entrant = int(
                self.conn.execute(
                    "SELECT id FROM entrants WHERE name = ? AND command_hash = ?",
                    (sub.bot, digest),
                ).fetchone()[0]
            )
            replaced = self.conn.execute(
                "SELECT id, status, reason FROM submissions WHERE competition_id = "
                "(SELECT competition_id FROM submissions WHERE id = ?) AND bot = ? AND id != ? "
                "AND (status IN (?, ?) OR (status IN (?, ?) AND id < ?))",
                (submission_id, sub.bot, submission_id, ACTIVE, SUSPENDED, BUILDING, CHECKING,
                 submission_id),
            ).fetchall()  # fmt: skip
            why = f"replaced by version {sub.version}"
            for old, status, reason in replaced:
                # A suspended version's reason still says why it was suspended (its history too).
                said = f"{why} (it was {reason})" if status == SUSPENDED and reason else why
                self.conn.execute(
                    "UPDATE submissions SET status = ?, reason = ?, updated_at = ? WHERE id = ?",
                    (REPLACED, said[:MAX_REASON], now, old),
                )
                status_history.note(self.conn, int(old), REPLACED, why, now)
            self.conn.execute(
                "UPDATE submissions SET status = ?, reason = '', entrant_id = ?, updated_at = ? "
                "WHERE id = ?",
                (ACTIVE, entrant, now, submission_id),
            )
            status_history.note(self.conn, submission_id, ACTIVE, "in play", now)
        return entrant

    def _one(self, submission_id: int) -> Submission:
        row = self.conn.execute(f"{_SUBMISSION} WHERE s.id = ?", (submission_id,)).fetchone()
        if row is None:
            raise LedgerError(f"{self.path}: no submission {submission_id}")
        return Submission(*row)

    @_guarded
    def submission(self, submission_id: int) -> Submission:
        return self._one(submission_id)

    @_guarded
    def submissions(
        self, competition_id: int, author_id: int | None = None, statuses: tuple[str, ...] = ()
    ) -> list[Submission]:
        where = ["s.competition_id = ?"]
        args: list[Any] = [competition_id]
        if author_id is not None:
            where.append("s.author_id = ?")
            args.append(author_id)
        if statuses:
            where.append(f"s.status IN ({', '.join('?' * len(statuses))})")
            args.extend(statuses)
        rows = self.conn.execute(f"{_SUBMISSION} WHERE {' AND '.join(where)} ORDER BY s.id", args)
        return [Submission(*r) for r in rows]

    @_guarded
    def submitted_since(self, competition_id: int, author_id: int, since: str) -> int:
        """How many submissions the author has made since ``since`` (an ISO time in UTC, as the
        ledger writes them), whatever became of them."""
        row = self.conn.execute(
            "SELECT count(*) FROM submissions WHERE competition_id = ? AND author_id = ? "
            "AND submitted_at >= ?",
            (competition_id, author_id, since),
        ).fetchone()
        return int(row[0])

    @_guarded
    def log(self, submission_id: int) -> str:
        row = self.conn.execute("SELECT log FROM submissions WHERE id = ?", (submission_id,))
        found = row.fetchone()
        if found is None:
            raise LedgerError(f"{self.path}: no submission {submission_id}")
        return str(found[0])

    @_guarded
    def history(self, submission_id: int) -> list[status_history.StatusChange]:
        """Every change of the submission's status, oldest first, with its reason (its author's)."""
        return status_history.of_submission(self.conn, submission_id)

    @_guarded
    def public_history(self, entrant_id: int) -> list[status_history.StatusChange]:
        """The status history of the version playing as ``entrant_id``, for anyone (see
        :func:`arena.ledger.status_history.public`)."""
        return status_history.public(self.conn, entrant_id)

    @_guarded
    def play_failures(
        self, competition_id: int, entrant_id: int, limit: int = 20
    ) -> list[PlayFailure]:
        """The last ``limit`` games the entrant caused to fail, newest first: the game's key, its
        outcome and the referee's detail (what the bot did, its output's last lines)."""
        rows = self.conn.execute(
            "SELECT g.id, g.key, g.outcome, g.detail, g.finished_at FROM games g "
            "JOIN game_seats s ON s.game_id = g.id WHERE g.tournament_id = ? AND s.entrant_id = ? "
            "AND g.outcome != 'normal' AND g.culprit = s.seat ORDER BY g.ord DESC LIMIT ?",
            (competition_id, entrant_id, limit),
        )
        return [PlayFailure(*r) for r in rows]

    @_guarded
    def last_games(self, competition_id: int, limit: int = 10) -> list[LastGame]:
        """The competition's last ``limit`` games recorded, newest first, with who played them."""
        rows = self.conn.execute(
            "SELECT g.id, g.key, g.outcome, g.finished_at, (SELECT group_concat(e.name || ' ' || "
            "e.version || ':' || s.score, ', ') FROM game_seats s JOIN entrants e "
            "ON e.id = s.entrant_id WHERE s.game_id = g.id) FROM games g WHERE g.tournament_id = ? "
            "ORDER BY g.id DESC LIMIT ?",
            (competition_id, limit),
        )
        return [LastGame(int(i), k, o, f, p or "") for i, k, o, f, p in rows]

    @_guarded
    def record_reports(self, game_id: int, reports: list[seat_reports.SeatReport]) -> None:
        """Store a recorded game's seat reports: its bots' output and time per decision."""
        with self.ledger.transaction():
            seat_reports.write(self.conn, game_id, reports)

    @_guarded
    def prune_outputs(
        self,
        competition_id: int,
        cutoff: str,
        after: int,
        challenges: bool = False,
        limit: int = 1000,
    ) -> seat_reports.PruneStep:
        """One step of removing the bot output of the competition's games (or, with
        ``challenges``, its challenge games) that finished before ``cutoff``: up to ``limit`` games
        after game id ``after``, in one short transaction (:func:`seat_reports.prune_outputs`)."""
        if challenges:
            games_sql = (
                "SELECT g.id, g.finished_at FROM challenge_games g JOIN challenges c "
                "ON c.id = g.challenge_id WHERE c.competition_id = ? AND g.id > ? ORDER BY g.id"
            )
            table = "challenge_outputs"
        else:
            games_sql = (
                "SELECT id, finished_at FROM games WHERE tournament_id = ? AND id > ? ORDER BY id"
            )
            table = "seat_reports"
        with self.ledger.transaction():
            return seat_reports.prune_outputs(
                self.conn, games_sql, table, (competition_id,), after, cutoff, limit
            )

    @_guarded
    def game_outputs(self, game_id: int) -> list[seat_reports.SeatOutput]:
        return seat_reports.outputs(self.conn, game_id)

    @_guarded
    def time_use(self, competition_id: int, entrant_id: int) -> seat_reports.TimeUse:
        return seat_reports.time_use(self.conn, competition_id, entrant_id)

    @_guarded
    def game(self, competition_id: int, game_id: int) -> tuple[str, str] | None:
        """A game of the competition's: (its key, its outcome); None when it has none of that id."""
        row = self.conn.execute(
            "SELECT key, outcome FROM games WHERE id = ? AND tournament_id = ?",
            (game_id, competition_id),
        ).fetchone()
        return (str(row[0]), str(row[1])) if row else None

    @_guarded
    def entrants_of(self, competition_id: int, author_id: int) -> set[int]:
        """The entrants the author's versions play (or played) as."""
        return {
            int(r[0])
            for r in self.conn.execute(
                "SELECT entrant_id FROM submissions WHERE competition_id = ? AND author_id = ? "
                "AND entrant_id IS NOT NULL",
                (competition_id, author_id),
            )
        }

    @_guarded
    def remote_submission(self, competition_id: int, token: str) -> Submission | None:
        row = self.conn.execute(
            f"{_SUBMISSION} WHERE s.competition_id = ? AND s.token_hash = ?",
            (competition_id, hash_token(token)),
        ).fetchone()
        return Submission(*row) if row else None

    @_guarded
    def remote_tokens(self, competition_id: int) -> list[tuple[str, str]]:
        """(token hash, bot name) of every active remote entrant."""
        return [
            (str(r[0]), str(r[1]))
            for r in self.conn.execute(
                "SELECT token_hash, bot FROM submissions WHERE competition_id = ? AND kind = 'remote' "
                "AND status = ? AND token_hash IS NOT NULL",
                (competition_id, ACTIVE),
            )
        ]

    @_guarded
    def changes(self, competition_id: int, since: Marks) -> Changes:
        """What a competition's server needs to bring its pool up to the ledger, since it last read
        it (``since``: the marks that read returned; :class:`Marks` () the first time): its pause
        switch, the submissions changed (all those in intake or in play the first time), and the
        ratings of the entrants rated since (the whole board the first time, or when games were
        voided meanwhile). Costs what changed, not what the competition holds."""
        paused = self.paused(competition_id)
        sub_seq = int(
            self.conn.execute("SELECT coalesce(max(change_seq), 0) FROM submissions").fetchone()[0]
        )
        # Every rating up to this one is written (they are numbered in their transactions, which
        # take turns): the next read starts after it.
        rating_seq = int(
            self.conn.execute("SELECT coalesce(max(rating_seq), 0) FROM games").fetchone()[0]
        )
        voided = int(
            self.conn.execute("SELECT coalesce(max(id), 0) FROM voided_games").fetchone()[0]
        )
        args: list[Any]
        if since.submission_seq < 0:
            where = f"s.competition_id = ? AND s.status IN ({', '.join('?' * len(LIVE))})"
            args = [competition_id, *LIVE]
        else:
            # "+": by the index of what changed, not of the competition's every submission.
            where = "+s.competition_id = ? AND s.change_seq > ? AND s.change_seq <= ?"
            args = [competition_id, since.submission_seq, sub_seq]
        rows = self.conn.execute(
            f"{_SUBMISSION_AND_TOKEN} WHERE {where} ORDER BY s.change_seq", args
        ).fetchall()
        subs = [(Submission(*r[:-1]), r[-1]) for r in rows]
        whole = since.rating_seq < 0 or voided != since.voided
        if whole:
            standings = self.standings(competition_id)
        else:
            standings = self._rated(competition_id, since.rating_seq, rating_seq)
        return Changes(paused, subs, standings, whole, Marks(sub_seq, rating_seq, voided))


def _cap(log: str | None) -> str | None:
    if log is None or len(log) <= MAX_LOG:
        return log
    return log[: MAX_LOG // 2] + "\n[... cut ...]\n" + log[-MAX_LOG // 2 :]
