"""Statistics of head-to-head tests: Elo with 95% intervals, normalized Elo, LOS and the GSPRT over
pentanomial (duplicate pairs) or trinomial (games) counts. Pure functions, no I/O, pinned by fastchess's
numbers (tests/stats).

It may use :mod:`arena.common` only.
"""

from arena.stats.counts import Counts, Pentanomial, StatsError, Trinomial, pair_index
from arena.stats.elo import EloEstimate, elo_from_score, elo_text, estimate, score_from_elo
from arena.stats.sprt import Model, Sprt, SprtDecision, SprtReport, llr

__all__ = [
    "Counts",
    "EloEstimate",
    "Model",
    "Pentanomial",
    "Sprt",
    "SprtDecision",
    "SprtReport",
    "StatsError",
    "Trinomial",
    "elo_from_score",
    "elo_text",
    "estimate",
    "llr",
    "pair_index",
    "score_from_elo",
]
