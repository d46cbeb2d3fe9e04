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

from arena.ledger.boards import COMPETITION
from arena.ledger.db import PLANNED_COLUMNS, Ledger, _now, planned_game
from arena.ledger.errors import LedgerError
from arena.ledger.errors import guarded as _guarded
from arena.ledger.leaderboard import competition_board, placings
from arena.ledger.names import skeleton
from arena.tokens import new_token
from arena.tournament.schedule import ScheduledGame
from arena.tournament.spec import Entrant

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


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True, slots=True)
class Author:
    id: int
    name: str
    created_at: str


@dataclass(frozen=True, slots=True)
class BoardLine:
    rank: int
    bot: str
    version: str
    author: str
    exposed: float
    mu: float
    sigma: float
    games: int
    status: str
    entrant_id: int


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


class Competitions:
    """The competition tables of one ledger (its connection, its transactions)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.conn = ledger.conn
        self.path = ledger.path

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
                    (language, bundle, run, build, BUILDING, now, now, earlier[0]),
                )
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
                 hash_token(token) if token else None, BUILDING if bundle else CHECKING, now, now),
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
    ) -> bool:
        """Set a submission's status (and reason, and log if given); with ``when``, only while its
        status is one of those. Whether it changed: the server's intake, the author's withdrawal and
        the organiser's commands write the same rows, and a step taken on a status read earlier must
        not undo another's (a withdrawal put back in play by an intake that went on)."""
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        only = f" AND status IN ({', '.join('?' * len(when))})" if when else ""
        with self.ledger.transaction():
            cur = self.conn.execute(
                "UPDATE submissions SET status = ?, reason = ?, updated_at = ?, "
                f"log = CASE WHEN ? IS NULL THEN log ELSE ? END WHERE id = ?{only}",
                (status, reason[:500], _now(), log, _cap(log), submission_id, *when),
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
            if later is not None:
                self.conn.execute(
                    "UPDATE submissions SET status = ?, reason = ?, updated_at = ? WHERE id = ?",
                    (REPLACED, f"replaced by version {later[0]}", _now(), submission_id),
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
            self.conn.execute(
                "UPDATE submissions SET status = ?, reason = ?, updated_at = ? "
                "WHERE competition_id = (SELECT competition_id FROM submissions WHERE id = ?) "
                "AND bot = ? AND id != ? AND (status IN (?, ?) OR (status IN (?, ?) AND id < ?))",
                (REPLACED, f"replaced by version {sub.version}", _now(), submission_id, sub.bot,
                 submission_id, ACTIVE, SUSPENDED, BUILDING, CHECKING, submission_id),
            )  # fmt: skip
            self.conn.execute(
                "UPDATE submissions SET status = ?, reason = '', entrant_id = ?, updated_at = ? "
                "WHERE id = ?",
                (ACTIVE, entrant, _now(), submission_id),
            )
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
    def remote_submission(self, competition_id: int, token: str) -> Submission | None:
        row = self.conn.execute(
            f"{_SUBMISSION} WHERE s.competition_id = ? AND s.token_hash = ?",
            (competition_id, hash_token(token)),
        ).fetchone()
        return Submission(*row) if row else None

    @_guarded
    def board(self, competition_id: int) -> list[BoardLine]:
        """The competition's leaderboard by mu - 3 sigma: every version that has played or is in
        play, with its author and status (an entrant in play with no game yet has the initial
        rating). Read by :func:`arena.ledger.leaderboard.placings`, as every leaderboard is."""
        board = competition_board(self.conn, competition_id)
        return [
            BoardLine(p.rank, p.name, p.version, p.author, p.exposed, p.mu, p.sigma, p.games,
                      p.status, p.entrant_id)
            for p in placings(self.conn, board, competition_id=competition_id)
        ]  # fmt: skip

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

    # ------------------------------------------------------------------ matchmaking

    @_guarded
    def paused(self, competition_id: int) -> bool:
        row = self.conn.execute(
            "SELECT paused FROM competition_state WHERE competition_id = ?", (competition_id,)
        ).fetchone()
        return bool(row and row[0])

    @_guarded
    def set_paused(self, competition_id: int, paused: bool) -> None:
        with self.ledger.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO competition_state VALUES (?, ?, ?)",
                (competition_id, int(paused), _now()),
            )

    @_guarded
    def standings(self, competition_id: int) -> dict[int, tuple[float, float, int, int]]:
        """Per entrant on the competition's board: (mu, sigma, games, order of its last game)."""
        last = {
            int(r[0]): int(r[1])
            for r in self.conn.execute(
                "SELECT s.entrant_id, max(g.ord) FROM games g JOIN game_seats s ON s.game_id = g.id "
                "WHERE g.tournament_id = ? GROUP BY s.entrant_id",
                (competition_id,),
            )
        }
        out = {}
        for entrant, mu, sigma, games in self.conn.execute(
            "SELECT r.entrant_id, r.mu, r.sigma, r.games FROM ratings r JOIN boards b "
            "ON b.id = r.board_id WHERE b.kind = ? AND b.tournament_id = ?",
            (COMPETITION, competition_id),
        ):
            out[int(entrant)] = (float(mu), float(sigma), int(games), last.get(int(entrant), -1))
        return out

    @_guarded
    def failures(self, competition_id: int, entrant_id: int, window: int) -> tuple[int, int]:
        """Of the entrant's last ``window`` games: how many it caused to fail, and how many there were."""
        rows = self.conn.execute(
            "SELECT g.outcome, g.culprit, s.seat FROM games g JOIN game_seats s ON s.game_id = g.id "
            "WHERE g.tournament_id = ? AND s.entrant_id = ? ORDER BY g.ord DESC LIMIT ?",
            (competition_id, entrant_id, window),
        ).fetchall()
        caused = sum(
            1 for outcome, culprit, seat in rows if outcome != "normal" and culprit == seat
        )
        return caused, len(rows)

    @_guarded
    def last_failure(self, competition_id: int, entrant_id: int) -> str:
        """The last game the entrant caused to fail: its outcome and why (empty when none)."""
        row = self.conn.execute(
            "SELECT g.outcome, g.detail FROM games g JOIN game_seats s ON s.game_id = g.id "
            "WHERE g.tournament_id = ? AND s.entrant_id = ? AND g.outcome != 'normal' "
            "AND g.culprit = s.seat ORDER BY g.ord DESC LIMIT 1",
            (competition_id, entrant_id),
        ).fetchone()
        return f"{row[0]}: {row[1]}" if row else ""

    @_guarded
    def next_ord(self, competition_id: int) -> int:
        row = self.conn.execute(
            "SELECT coalesce(max(ord), -1) FROM planned_games WHERE tournament_id = ?",
            (competition_id,),
        ).fetchone()
        return int(row[0]) + 1

    @_guarded
    def unplan_unplayed(
        self, competition_id: int, keys: tuple[str, ...] = (), *, keep_begun: bool = False
    ) -> int:
        """Forget planned games that were never recorded (all of them, or these keys): a competition
        that stopped mid-game pairs afresh, and the games after them can be rated. With
        ``keep_begun`` the rest of a pairing begun (a deal played in some of its seat rotations)
        stays planned, for :meth:`begun_pairings` to finish."""
        where = f"AND key IN ({', '.join('?' * len(keys))})" if keys else ""
        if keep_begun:
            where += (
                " AND NOT EXISTS (SELECT 1 FROM games g WHERE g.tournament_id = "
                "planned_games.tournament_id AND g.pairing = planned_games.pairing)"
            )
        with self.ledger.transaction():
            cur = self.conn.execute(
                "DELETE FROM planned_games WHERE tournament_id = ? AND NOT EXISTS "
                "(SELECT 1 FROM games g WHERE g.tournament_id = planned_games.tournament_id "
                f"AND g.key = planned_games.key) {where}",
                (competition_id, *keys),
            )
            self.ledger._rate_ready(competition_id)
        return int(cur.rowcount)

    @_guarded
    def begun_pairings(
        self, competition_id: int
    ) -> list[tuple[list[ScheduledGame], dict[str, int]]]:
        """The rest of every pairing a stop cut short: its planned games never recorded, in order,
        with the entrant that played under each name in its recorded games."""
        rows = self.conn.execute(
            f"SELECT {PLANNED_COLUMNS} FROM planned_games p WHERE p.tournament_id = ? "
            "AND NOT EXISTS (SELECT 1 FROM games g WHERE g.tournament_id = p.tournament_id "
            "AND g.key = p.key) AND EXISTS (SELECT 1 FROM games g WHERE g.tournament_id = "
            "p.tournament_id AND g.pairing = p.pairing) ORDER BY p.ord",
            (competition_id,),
        ).fetchall()
        pairings: dict[int, list[ScheduledGame]] = {}
        for row in rows:
            game = planned_game(row)
            pairings.setdefault(game.pairing, []).append(game)
        out = []
        for pairing, games in pairings.items():
            played = self.conn.execute(
                "SELECT DISTINCT e.name, e.id FROM games g JOIN game_seats s ON s.game_id = g.id "
                "JOIN entrants e ON e.id = s.entrant_id "
                "WHERE g.tournament_id = ? AND g.pairing = ?",
                (competition_id, pairing),
            ).fetchall()
            out.append((games, {str(name): int(entrant) for name, entrant in played}))
        return out


def _cap(log: str | None) -> str | None:
    if log is None or len(log) <= MAX_LOG:
        return log
    return log[: MAX_LOG // 2] + "\n[... cut ...]\n" + log[-MAX_LOG // 2 :]
