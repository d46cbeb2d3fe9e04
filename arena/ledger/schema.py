"""The ledger's schema, as numbered migrations applied in order (table ``_migrations`` says which).

Tables (open the file with sqlite-utils or Datasette to browse them):

- ``entrants``: a program: name, command, a hash of its command and version, language, version.
- ``tournaments``: name, the canonical JSON of its spec and that JSON's hash (a tournament is resumed when
  its file is run again unchanged), variant, source file, created and finished times.
- ``planned_games``: the schedule: each game's key, canonical order (``ord``), round, pairing, deal,
  seat rotation, deal seed, the entrant names per seat (JSON) and the pairing's group (JSON).
- ``games``: each finished game: its key and order, variant, seed, outcome (normal, timeout,
  illegal-action, crash, disconnect, protocol-error, adjudicated), detail, culprit seat, finish time, and
  ``rating_seq``: the position of its rating update in the ledger's sequence (NULL until rated; games are
  rated in schedule order, so a game that finishes early waits for those before it).
- ``game_seats``: who played each seat (and player of a shared seat), the seat's side, the side's place
  (0 best) and the seat's score.
- ``game_records``: the full match record of each game, as JSON (deals, every decision with its reply and
  time, the public log, the result).
- ``ratings``: each entrant's current TrueSkill rating per variant, with games played.
- ``rating_history``: every rating update: game, entrant, variant, mu and sigma before and after.
"""

from __future__ import annotations

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
)
