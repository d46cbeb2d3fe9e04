"""The arena on the web: leaderboards, entrants' rating history, game replays and live matches, read-only
over the ledger (see :mod:`arena.web.app`).

It may use the ledger, the ratings, the statistics, the referee's records, the wire and the
rules, and the tournament's summaries; never cli/.
"""
