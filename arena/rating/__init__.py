"""TrueSkill ratings with one explicit environment: 1 vs 1, free-for-all and teams, draws included.

It may use :mod:`arena.common` only.
"""

from arena.rating.trueskill_env import ENV, Rating, conservative, initial, rate_game

__all__ = ["ENV", "Rating", "conservative", "initial", "rate_game"]
