"""The arena on the web: leaderboards, entrants' rating history, game replays and live matches, read-only
over the ledger (see :mod:`arena.web.app`)."""
