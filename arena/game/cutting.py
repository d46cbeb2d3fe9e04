"""Cutting the pack: a chance event drawn by the referee (docs/rules.md §1.6, §3.2).

002: "The players cut for deal, and the highest bezique card deals." 000 (three-handed consultation):
"the one who cuts the highest card plays against the other two". Each player cutting takes a card at
random from the variant's shuffled packs; cards rank for cutting as for play (A T K Q J 9 8 7, suits
equal), and the players who tie for the highest card cut again (*reading*: the books do not say what a
tie does; cutting again is the custom), until one is highest.

A cut is drawn from a seed (the referee's, keyed by its secret, like a deal) and recorded as its rounds
of cards, so that a record replays it without the secret:

>>> cut = draw_cut(seed=5, cutters=(0, 1), packs=2)
>>> cut.winner in (0, 1)
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import NamedTuple

from arena.game.cards import kind_text, parse_kind
from arena.game.errors import ParseError


class Cut(NamedTuple):
    """The rounds of a cut, each the cards cut in it as (cutter, kind), and the cutter who cut highest.
    Cutters are seats when cutting for the deal, players when choosing the single player (§3.2)."""

    rounds: tuple[tuple[tuple[int, int], ...], ...]
    winner: int

    @property
    def text(self) -> str:
        """The exact text form: rounds separated by ``;``, each ``CUTTER:CARD`` pairs (``0:KH 1:9S;
        0:AS 1:TD``); :func:`parse_cut` reads it back."""
        return "; ".join(" ".join(f"{c}:{kind_text(k)}" for c, k in r) for r in self.rounds)


def highest(cards: Sequence[tuple[int, int]]) -> list[int]:
    """The cutters of the highest card cut (several when they tie): rank only, suits are equal."""
    top = max(k & 7 for _, k in cards)
    return [c for c, k in cards if k & 7 == top]


def draw_cut(seed: int, cutters: Sequence[int], packs: int, purpose: str = "deal") -> Cut:
    """Draw a cut among ``cutters`` from ``seed`` (a purpose names what it decides, so that the cut
    for the deal and another cut of the same seed are independent draws)."""
    if len(cutters) < 2 or len(set(cutters)) != len(cutters):
        raise ValueError(f"a cut needs two or more distinct cutters, got {list(cutters)}")
    if packs < 1:
        raise ValueError(f"a cut needs a pack, got {packs}")
    rng = random.Random(f"bezique-cut:{purpose}:{seed}")
    rounds: list[tuple[tuple[int, int], ...]] = []
    left = list(cutters)
    while True:
        cards = rng.sample(range(32 * packs), len(left))  # distinct physical cards of the packs
        cut = tuple((c, card & 31) for c, card in zip(left, cards, strict=True))
        rounds.append(cut)
        left = highest(cut)
        if len(left) == 1:
            return Cut(tuple(rounds), left[0])


def parse_cut(text: str) -> Cut:
    """The cut written as :attr:`Cut.text`; checks that it is a cut: each round's cutters are the
    ones who tied for the highest card of the round before, and the last round has one highest."""
    rounds: list[tuple[tuple[int, int], ...]] = []
    for part in text.split(";"):
        pairs = []
        for word in part.split():
            cutter, sep, card = word.partition(":")
            if not sep or not cutter.isdigit():
                raise ParseError(
                    f"expected CUTTER:CARD (for example 0:KH), got {word!r} in {text!r}"
                )
            pairs.append((int(cutter), parse_kind(card)))
        if len(pairs) < 2 or len({c for c, _ in pairs}) != len(pairs):
            raise ParseError(
                f"a round of a cut needs two or more cutters, each once, got {part.strip()!r}"
            )
        if rounds and sorted(c for c, _ in pairs) != sorted(highest(rounds[-1])):
            raise ParseError(f"only those tied for the highest card cut again, in {text!r}")
        rounds.append(tuple(pairs))
    last = highest(rounds[-1])
    if len(last) != 1:
        raise ParseError(f"a cut ends with one highest card, in {text!r}")
    return Cut(tuple(rounds), last[0])
