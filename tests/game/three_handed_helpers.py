"""Helpers shared by test_three_handed_rules.py, test_three_handed_endgame.py."""

from __future__ import annotations

from arena.game import variant

V = variant("three-handed")


RANKS = "789JQKTA"
