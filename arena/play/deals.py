"""Deal suites: a fixed list of deals, like a chess openings book, that an A/B test, a tournament or a
match can play, so that two tests compare on the same cards.

A deal is what starts a game: the seed its shuffles are drawn from, optionally the first dealer, and
optionally the explicit shuffled order of its first deals (the later deals of the game come from the
seed). The file is text, one deal per line, with a header naming the format's version and the variant::

    # comments and blank lines are ignored
    bezique-arena-deals 1
    variant two-handed
    deal 40321187315540
    deal 9188023311 dealer=1
    deal 77 dealer=0 deck=7S,8S,9S,...

- ``deal SEED``: a seed, a whole number from 0 to 2^63 - 1;
- ``dealer=N``: the first dealer's seat (default: drawn from the seed, the same for every game of it);
- ``deck=CARDS``: the shuffled order of a deal, top card first, as comma-separated kinds (``QS``,
  ``TD``, ``7H``) each present as many times as the variant has packs: the same form as the ``decks``
  of a match record. Repeat it for the game's second deal, third deal, and so on.

``arena deals make N FILE`` writes a suite of fresh random seeds. :meth:`Deal.settings` gives what a
:class:`~arena.referee.MatchConfig` needs to play a deal (``game_seeds``, ``dealers``, ``decks``).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.common.bounds import MAX_SEED
from arena.game import GameState, ParseError, VariantError, kind_text, parse_kind, variant
from arena.referee import MatchConfig

FORMAT = "bezique-arena-deals"
VERSION = 1
FRESH_SEED_BITS = 48
# The most deals a suite is made with: some seconds and megabytes.
MAX_DEALS = 1_000_000
# The largest deal suite file read: a million deals, each with some explicit decks.
MAX_SUITE_BYTES = 256 * 2**20


class DealFileError(ValueError):
    """A deal suite that cannot be read; the message names the file and the line."""


@dataclass(frozen=True, slots=True)
class Deal:
    seed: int
    dealer: int | None = None
    decks: tuple[tuple[int, ...], ...] = ()  # kinds, top card first, for the game's first deals

    def settings(self, games: int = 1) -> dict[str, Any]:
        """The :class:`~arena.referee.MatchConfig` fields that play this deal in each of ``games``
        games (a duplicate pair: two games, the seats swapped between them)."""
        return {
            "seed": self.seed,
            "game_seeds": (self.seed,) * games,
            "dealers": (self.dealer,) * games if self.dealer is not None else (),
            "decks": (self.decks,) * games if self.decks else (),
        }

    def configure(self, config: MatchConfig) -> MatchConfig:
        """``config`` with every one of its games played on this deal."""
        return replace(config, **self.settings(config.games))

    def line(self) -> str:
        words = [f"deal {self.seed}"]
        if self.dealer is not None:
            words.append(f"dealer={self.dealer}")
        words.extend("deck=" + ",".join(kind_text(k) for k in deck) for deck in self.decks)
        return " ".join(words)


@dataclass(frozen=True, slots=True)
class DealSuite:
    variant: str
    deals: tuple[Deal, ...]
    source: str = ""  # the file it was read from, for messages

    def __len__(self) -> int:
        return len(self.deals)

    def deal(self, index: int) -> Deal:
        if not 0 <= index < len(self.deals):
            where = f" ({self.source})" if self.source else ""
            raise IndexError(f"the deal suite{where} has {len(self.deals)} deals, no deal {index}")
        return self.deals[index]

    def text(self) -> str:
        """The suite in its file format."""
        lines = [
            "# Bezique Arena deal suite: one deal per line (seed, optional dealer and decks).",
            f"{FORMAT} {VERSION}",
            f"variant {self.variant}",
        ]
        lines.extend(d.line() for d in self.deals)
        return "\n".join(lines) + "\n"

    def save(self, path: Path) -> None:
        path.write_text(self.text())


def fresh_deals(count: int, variant_name: str = "two-handed") -> DealSuite:
    """``count`` deals with fresh random seeds (from the operating system's generator)."""
    _check_variant(variant_name, "fresh_deals")
    if not 1 <= count <= MAX_DEALS:
        raise ValueError(
            f"a deal suite needs at least one deal and at most {MAX_DEALS:,}, got {count}"
        )
    return DealSuite(
        variant_name, tuple(Deal(secrets.randbits(FRESH_SEED_BITS)) for _ in range(count))
    )


def seeded_deals(seed: int, count: int, variant_name: str = "two-handed") -> DealSuite:
    """``count`` deals derived from one number: the same ``seed`` gives the same deals."""
    _check_variant(variant_name, "seeded_deals")
    return DealSuite(
        variant_name,
        tuple(Deal(_derived_seed(seed, i)) for i in range(count)),
        source=f"seed {seed}",
    )


def _derived_seed(seed: int, index: int) -> int:
    digest = hashlib.sha256(f"arena-suite:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def _check_variant(name: str, where: str) -> None:
    try:
        variant(name)
    except VariantError as exc:
        raise ValueError(f"{where}: {exc}") from exc


def load_deals(path: Path, variant_name: str | None = None) -> DealSuite:
    """Read a deal suite; with ``variant_name``, it must have been made for that variant."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_SUITE_BYTES + 1)  # not all of /dev/zero or another endless file
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DealFileError(f"{path}: cannot read the deal suite: {exc}") from exc
    if len(data) > MAX_SUITE_BYTES:
        raise DealFileError(
            f"{path}: larger than a deal suite may be ({MAX_SUITE_BYTES // 2**20} MiB)"
        )
    return parse_deals(text, str(path), variant_name)


def parse_deals(text: str, source: str = "<text>", variant_name: str | None = None) -> DealSuite:
    lines = [
        (number, line.split("#", 1)[0].strip())
        for number, line in enumerate(text.splitlines(), start=1)
    ]
    lines = [(number, line) for number, line in lines if line]
    if not lines:
        raise DealFileError(f"{source}: empty; a deal suite starts with '{FORMAT} {VERSION}'")
    number, first = lines[0]
    words = first.split()
    if not words or words[0] != FORMAT:
        raise DealFileError(
            f"{source}:{number}: not a deal suite: expected '{FORMAT} {VERSION}' first, got {first!r}"
        )
    if len(words) != 2 or words[1] != str(VERSION):
        raise DealFileError(
            f"{source}:{number}: unsupported deal suite version {' '.join(words[1:])!r} "
            f"(this arena reads version {VERSION})"
        )
    if len(lines) < 2 or lines[1][1].split()[0] != "variant":
        where = lines[1][0] if len(lines) > 1 else number
        raise DealFileError(f"{source}:{where}: expected 'variant NAME' after the header")
    number, line = lines[1]
    words = line.split()
    if len(words) != 2:
        raise DealFileError(f"{source}:{number}: expected 'variant NAME', got {line!r}")
    try:
        v = variant(words[1])
    except VariantError as exc:
        raise DealFileError(f"{source}:{number}: {exc}") from exc
    if variant_name is not None and variant_name != v.name:
        raise DealFileError(
            f"{source}:{number}: this suite was made for {v.name}, not {variant_name} "
            f"(make one with: arena deals make N FILE --variant {variant_name})"
        )
    deals = []
    for number, line in lines[2:]:
        try:
            deals.append(_parse_deal(line, v.name))
        except (ValueError, ParseError) as exc:
            raise DealFileError(f"{source}:{number}: {exc}") from exc
    if not deals:
        raise DealFileError(f"{source}: no deals (lines 'deal SEED ...' after the header)")
    return DealSuite(v.name, tuple(deals), source)


def _parse_deal(line: str, variant_name: str) -> Deal:
    words = line.split()
    if words[0] != "deal":
        raise ValueError(f"expected 'deal SEED [dealer=N] [deck=CARDS]...', got {line!r}")
    if len(words) < 2:
        raise ValueError("a deal needs its seed: 'deal SEED'")
    seed = _whole(words[1], "the seed", MAX_SEED)
    dealer: int | None = None
    decks: list[tuple[int, ...]] = []
    for word in words[2:]:
        key, eq, value = word.partition("=")
        if not eq:
            raise ValueError(f"expected dealer=N or deck=CARDS, got {word!r}")
        if key == "dealer":
            if dealer is not None:
                raise ValueError("dealer is given twice")
            dealer = _whole(value, "dealer", 10)
        elif key == "deck":
            decks.append(_deck(value, len(decks)))
        else:
            raise ValueError(f"unknown field {key!r} (expected dealer or deck)")
    deal = Deal(seed, dealer, tuple(decks))
    _check_deal(deal, variant_name)
    return deal


def _whole(text: str, what: str, most: int) -> int:
    # ASCII digits only: str.isdigit() also holds for "²" (which int() refuses) and "١٢" (twelve).
    if not (text.isascii() and text.isdigit()) or int(text) > most:
        raise ValueError(f"{what} must be a whole number from 0 to {most}, got {text!r}")
    return int(text)


def _deck(text: str, index: int) -> tuple[int, ...]:
    cards = text.split(",")
    if any(not c for c in cards):
        raise ValueError(f"deck {index}: empty card in {text!r} (cards are separated by commas)")
    try:
        return tuple(parse_kind(c) for c in cards)
    except ParseError as exc:
        raise ValueError(f"deck {index}: {exc}") from exc


def _check_deal(deal: Deal, variant_name: str) -> None:
    """The engine deals it, or says why not (wrong dealer, a deck with the wrong cards)."""
    GameState.new(variant(variant_name), deal.seed, dealer=deal.dealer, decks=deal.decks)
