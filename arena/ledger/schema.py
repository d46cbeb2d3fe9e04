"""The ledger's schema, as numbered migrations applied in order (table ``_migrations`` says which).

Tables (open the file with sqlite-utils or Datasette to browse them):

- ``entrants``: a program: name, command, a hash of its command and version, language, version.
- ``tournaments``: a tournament's (or a standing competition's: ``kind``) unique name, the canonical JSON of its spec and that JSON's hash,
  variant, source file, created and finished times, and ``deal_key``: the secret its deals are drawn
  with (hex; NULL for tournaments recorded before secret deals, whose deals follow the public seed).
  The key never leaves the ledger, which no bot can read.
- ``leases``: which process is running a tournament now (host, pid, its start time), taken atomically
  and renewed while it runs; a second run of the same tournament is refused while the lease is held.
- ``planned_games``: the schedule: each game's key, canonical order (``ord``), round, pairing, deal,
  seat rotation, deal seed, the entrant names per seat (JSON) and the pairing's group (JSON).
- ``games``: each finished game: its key and order, variant, seed, outcome (normal, timeout,
  illegal-action, crash, disconnect, protocol-error, adjudicated), detail, culprit seat, finish time, and
  ``rating_seq``: the position of its rating update in the ledger's sequence (NULL until rated; games are
  rated in schedule order, so a game that finishes early waits for those before it).
- ``game_seats``: who played each seat (and player of a shared seat), the seat's side, the side's place
  (0 best) and the seat's score.
- ``game_records``: the full match record of each game (deals, every decision with its reply and time,
  the public log, the result): ``encoding`` says how ``record`` is stored (``json``: text;
  ``json+zlib``: zlib-compressed JSON), ``schema`` the record's layout version.
- ``voided_games``: games taken out of the results by the organiser (``arena games void``), with the
  reason, the time and their record: they count nowhere and a later run plays them again.
- ``authors``: a competition's authors, with a hash of each one's secret token (never the token).
- ``submissions``: every bot version an author submitted to a competition: a bundle (its content hash,
  run and build commands) or a remote entrant (a hash of the token it dials in with), its status
  (building, checking, active, failed, suspended, withdrawn, replaced) with the reason and the build and
  check log, the entrant it plays as once active, and ``change_seq``: the order of its last change
  (set by triggers at every insert and update), so that a server reads only what changed.
- ``submission_history``: every change of a submission's status (building, checking, active,
  suspended, reinstated as active, replaced, withdrawn, failed) with its time and reason; ``public``
  marks a reason that quotes nothing of a bot's output (shown on the public entrant page).
- ``seat_reports``: per game and seat (and member) of a competition: the tail of what the bot wrote
  during the game (zlib-compressed, at most the competition's ``output_kib``; ``output_bytes`` is how
  much it wrote in all), its time per decision in milliseconds (packed 32-bit little-endian integers)
  and its bank left at the end. Removed with its game.
- ``competition_state``: whether a competition's matchmaking is paused.
- ``boards``: the leaderboards: one per tournament (``kind`` tournament, named after it), one per
  variant pooling every tournament of that variant (``kind`` pooled), and one per competition (``kind``
  competition; its games count on no other board).
- ``ratings``: each entrant's current TrueSkill rating on each board, with games played.
- ``rating_history``: every rating update: board, game, entrant, mu and sigma before and after.
- ``head_to_head``: each event's head to head, every two entrants that met in its two-seat games,
  kept as games are recorded (:mod:`arena.ledger.head_to_head`).
- ``head_to_head_sets``: the duplicate sets those lines count (a pairing's games on one deal).
- ``webhooks``: an author's webhook (URL; a nonce the server derives its secret from, with a key
  kept outside the ledger; its failures in a row, whether disabled and why, counts of deliveries
  made, dropped and abandoned; when its last daily digest was looked for).
- ``webhook_deliveries``: the notifications queued for a webhook: event kind, JSON payload, attempts
  and when the next is due (:mod:`arena.ledger.webhooks`).
- ``challenges``: an author's challenges (:mod:`arena.ledger.challenges`): their bot's submission, the
  opponent's, the games asked, seat rotations per deal, status (open, done, cancelled, stopped) with
  its reason, asked and finished times.
- ``challenge_games``: each challenge game played: number, deal, rotation, seed, seats (JSON), outcome,
  detail, culprit, the challenger's seat, scores and places (JSON) and the record (as in
  ``game_records``). Never rated, never in ``games``.
- ``event_counts``: each event's games planned, played, failed and voided, kept by triggers on the
  tables they count.
- ``challenge_outputs``: per challenge game and seat (and member): the tail of what the bot wrote
  (zlib, capped by the competition's ``output_kib``), how much it wrote, and the submission that sat
  there (its author alone reads it).
"""

from __future__ import annotations

from arena.ledger import head_to_head, webhooks
from arena.ledger.challenges import OUTPUTS_SCHEMA as CHALLENGE_OUTPUTS_SCHEMA
from arena.ledger.challenges import SCHEMA as CHALLENGES_SCHEMA

MIGRATIONS: tuple[str, ...] = (
    # 1: the first schema.
    """
    CREATE TABLE entrants (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        command TEXT NOT NULL,
        command_hash TEXT NOT NULL,
        language TEXT NOT NULL DEFAULT '',
        version TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        UNIQUE (name, command_hash)
    );
    CREATE TABLE tournaments (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        spec_hash TEXT NOT NULL UNIQUE,
        spec TEXT NOT NULL,
        variant TEXT NOT NULL,
        source TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        finished_at TEXT
    );
    CREATE TABLE planned_games (
        tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
        key TEXT NOT NULL,
        ord INTEGER NOT NULL,
        round INTEGER NOT NULL,
        pairing INTEGER NOT NULL,
        deal INTEGER NOT NULL,
        rotation INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        seats TEXT NOT NULL,
        grp TEXT NOT NULL,
        PRIMARY KEY (tournament_id, key)
    );
    CREATE TABLE games (
        id INTEGER PRIMARY KEY,
        tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
        key TEXT NOT NULL,
        ord INTEGER NOT NULL,
        round INTEGER NOT NULL,
        pairing INTEGER NOT NULL,
        deal INTEGER NOT NULL,
        rotation INTEGER NOT NULL,
        variant TEXT NOT NULL,
        seed INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        culprit INTEGER NOT NULL DEFAULT -1,
        finished_at TEXT NOT NULL,
        rating_seq INTEGER UNIQUE,
        UNIQUE (tournament_id, key)
    );
    CREATE INDEX games_by_order ON games (tournament_id, ord);
    CREATE TABLE game_seats (
        game_id INTEGER NOT NULL REFERENCES games(id),
        seat INTEGER NOT NULL,
        member INTEGER NOT NULL,
        entrant_id INTEGER NOT NULL REFERENCES entrants(id),
        side INTEGER NOT NULL,
        place INTEGER NOT NULL,
        score INTEGER NOT NULL,
        PRIMARY KEY (game_id, seat, member)
    );
    CREATE INDEX game_seats_by_entrant ON game_seats (entrant_id);
    CREATE TABLE game_records (
        game_id INTEGER PRIMARY KEY REFERENCES games(id),
        record TEXT NOT NULL
    );
    CREATE TABLE ratings (
        entrant_id INTEGER NOT NULL REFERENCES entrants(id),
        variant TEXT NOT NULL,
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        exposed REAL NOT NULL,
        games INTEGER NOT NULL,
        PRIMARY KEY (entrant_id, variant)
    );
    CREATE INDEX ratings_board ON ratings (variant, exposed DESC);
    CREATE TABLE rating_history (
        game_id INTEGER NOT NULL REFERENCES games(id),
        entrant_id INTEGER NOT NULL REFERENCES entrants(id),
        variant TEXT NOT NULL,
        mu_before REAL NOT NULL,
        sigma_before REAL NOT NULL,
        mu_after REAL NOT NULL,
        sigma_after REAL NOT NULL,
        PRIMARY KEY (game_id, entrant_id)
    );
    """,
    # 2: rating games in schedule order looks up the first unfinished planned game by its order.
    """
    CREATE INDEX planned_by_order ON planned_games (tournament_id, ord);
    """,
    # 3: tournaments known by their name, with a secret for their deals and a lease for the process
    # running them; a leaderboard per tournament beside the pooled one per variant (the ratings are
    # rebuilt from the games into both, see REBUILD_AFTER); compressed records; voided games.
    """
    UPDATE tournaments SET name = name || ' (' || id || ')'
        WHERE id NOT IN (SELECT min(id) FROM tournaments GROUP BY name);
    CREATE UNIQUE INDEX tournaments_by_name ON tournaments (name);
    ALTER TABLE tournaments ADD COLUMN deal_key TEXT;
    CREATE TABLE leases (
        tournament_id INTEGER PRIMARY KEY REFERENCES tournaments(id),
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        pid_started TEXT NOT NULL,
        taken_at TEXT NOT NULL,
        renewed_at REAL NOT NULL
    );
    ALTER TABLE game_records ADD COLUMN encoding TEXT NOT NULL DEFAULT 'json';
    ALTER TABLE game_records ADD COLUMN schema INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE voided_games (
        id INTEGER PRIMARY KEY,
        tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
        key TEXT NOT NULL,
        variant TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL,
        players TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        reason TEXT NOT NULL,
        voided_at TEXT NOT NULL,
        encoding TEXT NOT NULL,
        record BLOB NOT NULL
    );
    CREATE TABLE boards (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        variant TEXT NOT NULL,
        tournament_id INTEGER REFERENCES tournaments(id),
        UNIQUE (kind, name)
    );
    DROP TABLE rating_history;
    DROP TABLE ratings;
    CREATE TABLE ratings (
        board_id INTEGER NOT NULL REFERENCES boards(id),
        entrant_id INTEGER NOT NULL REFERENCES entrants(id),
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        exposed REAL NOT NULL,
        games INTEGER NOT NULL,
        PRIMARY KEY (board_id, entrant_id)
    );
    CREATE INDEX ratings_board ON ratings (board_id, exposed DESC);
    CREATE TABLE rating_history (
        board_id INTEGER NOT NULL REFERENCES boards(id),
        game_id INTEGER NOT NULL REFERENCES games(id),
        entrant_id INTEGER NOT NULL REFERENCES entrants(id),
        mu_before REAL NOT NULL,
        sigma_before REAL NOT NULL,
        mu_after REAL NOT NULL,
        sigma_after REAL NOT NULL,
        PRIMARY KEY (board_id, game_id, entrant_id)
    );
    CREATE INDEX rating_history_by_entrant ON rating_history (entrant_id, board_id);
    CREATE INDEX games_by_rating ON games (rating_seq);
    """,
    # 4: standing competitions live beside tournaments: a competition's games are planned as it pairs
    # them, rated in that order on its own board, and pooled with nothing else.
    """
    ALTER TABLE tournaments ADD COLUMN kind TEXT NOT NULL DEFAULT 'tournament';
    """,
    # 5: a competition's authors and their submissions.
    """
    CREATE TABLE authors (
        id INTEGER PRIMARY KEY,
        competition_id INTEGER NOT NULL REFERENCES tournaments(id),
        name TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        UNIQUE (competition_id, name)
    );
    CREATE TABLE submissions (
        id INTEGER PRIMARY KEY,
        competition_id INTEGER NOT NULL REFERENCES tournaments(id),
        author_id INTEGER NOT NULL REFERENCES authors(id),
        bot TEXT NOT NULL,
        version TEXT NOT NULL,
        language TEXT NOT NULL,
        kind TEXT NOT NULL,
        bundle TEXT NOT NULL DEFAULT '',
        run TEXT NOT NULL DEFAULT '',
        build TEXT NOT NULL DEFAULT '',
        token_hash TEXT UNIQUE,
        entrant_id INTEGER REFERENCES entrants(id),
        status TEXT NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        log TEXT NOT NULL DEFAULT '',
        submitted_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (competition_id, bot, version)
    );
    CREATE INDEX submissions_by_status ON submissions (competition_id, status);
    CREATE TABLE competition_state (
        competition_id INTEGER PRIMARY KEY REFERENCES tournaments(id),
        paused INTEGER NOT NULL DEFAULT 0,
        changed_at TEXT NOT NULL
    );
    """,
    # 6: the web's questions: an entrant's author, a deal's duplicate games, games by outcome.
    """
    CREATE INDEX submissions_by_entrant ON submissions (entrant_id);
    CREATE INDEX planned_by_deal ON planned_games (tournament_id, round, pairing, deal);
    CREATE INDEX games_by_outcome ON games (outcome);
    """,
    # 7: the web's sealed games: a deal's games by its seed (a deal suite's deal is every pairing's).
    """
    CREATE INDEX IF NOT EXISTS planned_by_seed ON planned_games (tournament_id, seed);
    """,
    # 8: no table changes; the ratings are rebuilt (REBUILD_AFTER): players sharing a seat in
    # consultation now share its weight, where two allies were rated as twice a single player.
    "",
    # 9: the author's side of a competition: every change of a submission's status with its time and
    # reason (the submissions there were start with their status now), and per game and seat what
    # the bot wrote (its tail) and the time it took for each decision.
    """
    CREATE TABLE IF NOT EXISTS submission_history (
        id INTEGER PRIMARY KEY,
        submission_id INTEGER NOT NULL REFERENCES submissions(id),
        status TEXT NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        public INTEGER NOT NULL DEFAULT 0,
        at TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS submission_history_by_submission ON submission_history (submission_id, id);
    INSERT INTO submission_history (submission_id, status, reason, public, at)
        SELECT id, status, reason, 0, updated_at FROM submissions
        WHERE NOT EXISTS (SELECT 1 FROM submission_history) ORDER BY id;
    CREATE TABLE IF NOT EXISTS seat_reports (
        game_id INTEGER NOT NULL REFERENCES games(id),
        seat INTEGER NOT NULL,
        member INTEGER NOT NULL,
        entrant_id INTEGER NOT NULL REFERENCES entrants(id),
        output BLOB NOT NULL,
        output_bytes INTEGER NOT NULL,
        times BLOB NOT NULL,
        bank_left_ms INTEGER,
        PRIMARY KEY (game_id, seat, member)
    );
    CREATE INDEX IF NOT EXISTS seat_reports_by_entrant ON seat_reports (entrant_id, game_id);
    """,
    # 10: head to head kept as games are recorded (arena.ledger.head_to_head), built from the games of
    # a ledger made before (BUILD_AFTER): a page reads the lines it shows, never an event's games.
    head_to_head.SCHEMA,
    # 11: a competition's server reads only the submissions changed since its last look: each insert
    # or update of a submission takes the next change_seq (its triggers; writers take turns, so the
    # numbers appear in the order they were written), where it read them all every 2 s (issue 47).
    """
    ALTER TABLE submissions ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
    UPDATE submissions SET change_seq = id;
    CREATE INDEX submissions_by_change ON submissions (change_seq);
    CREATE TRIGGER submissions_added AFTER INSERT ON submissions
    BEGIN
        UPDATE submissions SET change_seq = (SELECT max(change_seq) FROM submissions) + 1
            WHERE id = NEW.id;
    END;
    CREATE TRIGGER submissions_changed AFTER UPDATE ON submissions
        WHEN NEW.change_seq = OLD.change_seq
    BEGIN
        UPDATE submissions SET change_seq = (SELECT max(change_seq) FROM submissions) + 1
            WHERE id = NEW.id;
    END;
    """,
    # 12: notifications (issue 45): an author's webhook and the deliveries queued for it
    # (arena.ledger.webhooks).
    webhooks.SCHEMA,
    # 13: an author's challenges (arena.ledger.challenges): unrated games of a bot of theirs against
    # another entrant, kept apart from the competition's games (no board, standings, head to head or
    # public list reads them), each with its record.
    CHALLENGES_SCHEMA,
    # 14: each challenge game's bots' output per seat, as a ranked game's (seat_reports), readable by
    # the challenge's author for their own bots.
    CHALLENGE_OUTPUTS_SCHEMA,
    # 15: each event's counts (games planned, played, failed, voided) kept by triggers as rows come
    # and go, where `arena tournaments` and `arena compete status` counted every game of every event
    # on each call (1.5 s at two million games); counted once here for a ledger made before.
    """
    CREATE TABLE event_counts (
        tournament_id INTEGER PRIMARY KEY REFERENCES tournaments(id),
        planned INTEGER NOT NULL DEFAULT 0,
        played INTEGER NOT NULL DEFAULT 0,
        failures INTEGER NOT NULL DEFAULT 0,
        voided INTEGER NOT NULL DEFAULT 0
    );
    INSERT INTO event_counts (tournament_id, planned, played, failures, voided)
        SELECT t.id,
            (SELECT count(*) FROM planned_games p WHERE p.tournament_id = t.id),
            (SELECT count(*) FROM games g WHERE g.tournament_id = t.id),
            (SELECT count(*) FROM games g WHERE g.tournament_id = t.id AND g.outcome != 'normal'),
            (SELECT count(*) FROM voided_games v WHERE v.tournament_id = t.id)
        FROM tournaments t;
    CREATE TRIGGER event_counts_opened AFTER INSERT ON tournaments
    BEGIN
        INSERT OR IGNORE INTO event_counts (tournament_id) VALUES (NEW.id);
    END;
    CREATE TRIGGER event_counts_planned AFTER INSERT ON planned_games
    BEGIN
        UPDATE event_counts SET planned = planned + 1 WHERE tournament_id = NEW.tournament_id;
    END;
    CREATE TRIGGER event_counts_unplanned AFTER DELETE ON planned_games
    BEGIN
        UPDATE event_counts SET planned = planned - 1 WHERE tournament_id = OLD.tournament_id;
    END;
    CREATE TRIGGER event_counts_played AFTER INSERT ON games
    BEGIN
        UPDATE event_counts SET played = played + 1, failures = failures + (NEW.outcome != 'normal')
            WHERE tournament_id = NEW.tournament_id;
    END;
    CREATE TRIGGER event_counts_unplayed AFTER DELETE ON games
    BEGIN
        UPDATE event_counts SET played = played - 1, failures = failures - (OLD.outcome != 'normal')
            WHERE tournament_id = OLD.tournament_id;
    END;
    CREATE TRIGGER event_counts_outcome AFTER UPDATE OF outcome ON games
    BEGIN
        UPDATE event_counts
            SET failures = failures - (OLD.outcome != 'normal') + (NEW.outcome != 'normal')
            WHERE tournament_id = NEW.tournament_id;
    END;
    CREATE TRIGGER event_counts_voided AFTER INSERT ON voided_games
    BEGIN
        UPDATE event_counts SET voided = voided + 1 WHERE tournament_id = NEW.tournament_id;
    END;
    """,
    # 16: an event's games newest first (its last games, its games page) read from an index of the
    # event's games in the order they were recorded: they were found by walking every game of the
    # ledger back from the newest (113 ms for an event of the first million games of two million).
    "CREATE INDEX games_by_event ON games (tournament_id, id);",
)

# Migrations after which the ratings are rebuilt from the games (they, or how they are computed,
# changed).
REBUILD_AFTER = frozenset({3, 8})

# Migrations after which head to head is counted from the games (its tables are new).
HEAD_TO_HEAD_AFTER = frozenset({10})

# Marks the file as a Bezique Arena ledger (PRAGMA application_id): "BZQA".
APPLICATION_ID = 0x425A5141
