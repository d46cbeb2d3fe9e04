"""A match's settings: variant, seed, games, time control and failure policies."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from enum import Enum, IntEnum

from arena.game import Variant, variant


class Outcome(IntEnum):
    """Why a game ended: a closed set (numbers as on the wire), with a free-text detail beside it."""

    NORMAL = 1
    TIMEOUT = 2
    ILLEGAL_ACTION = 3
    CRASH = 4
    DISCONNECT = 5
    PROTOCOL_ERROR = 6
    ADJUDICATED = 7

    @property
    def text(self) -> str:
        return self.name.lower().replace("_", "-")


class FailurePolicy(Enum):
    FORFEIT = "forfeit"  # the failing seat's side loses the game
    RANDOM_ACTION = "random-action"  # a random legal action is played for the seat; one strike


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A budget per decision plus a bank for the game, measured by the referee from request sent to
    reply received; the grace covers transport and is never charged."""

    budget_ms: int = 1000
    bank_ms: int = 10_000
    grace_ms: int = 100

    def __post_init__(self) -> None:
        for name in ("budget_ms", "bank_ms", "grace_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.budget_ms == 0 and self.bank_ms == 0:
            raise ValueError("a time control needs a budget or a bank above 0 ms")


@dataclass(frozen=True, slots=True)
class Policies:
    """What happens when a seat fails, by kind of failure; crash covers disconnects too."""

    on_timeout: FailurePolicy = FailurePolicy.FORFEIT
    on_illegal_action: FailurePolicy = FailurePolicy.FORFEIT
    on_crash: FailurePolicy = FailurePolicy.FORFEIT
    on_protocol_error: FailurePolicy = FailurePolicy.FORFEIT
    max_strikes: int = 3  # forfeit on this many strikes in one game; 0: never

    def for_outcome(self, outcome: Outcome) -> FailurePolicy:
        if outcome is Outcome.TIMEOUT:
            return self.on_timeout
        if outcome is Outcome.ILLEGAL_ACTION:
            return self.on_illegal_action
        if outcome in (Outcome.CRASH, Outcome.DISCONNECT):
            return self.on_crash
        return self.on_protocol_error


@dataclass(frozen=True, slots=True)
class MatchConfig:
    variant: str = "two-handed"
    options: tuple[tuple[str, str], ...] = ()
    seed: int = 0
    games: int = 1
    time_control: TimeControl = field(default_factory=TimeControl)
    policies: Policies = field(default_factory=Policies)
    # Per game, the seed of its deals; empty: derived from ``seed``. Tournaments set them to replay a
    # deal with the seats rotated (duplicate deals).
    game_seeds: tuple[int, ...] = ()
    # Per game, the first dealer; empty: drawn from the game's seed.
    dealers: tuple[int, ...] = ()
    # Per game, explicit shuffled orders (kinds, top first) for its first deals (see arrange_deck); the
    # deals after them come from the game's seed. For scripted sessions such as a bot's conformance check.
    decks: tuple[tuple[tuple[int, ...], ...], ...] = ()
    # The secret the deals are drawn with: a game is dealt from HMAC-SHA256(deal_key, its public seed),
    # so that knowing the seeds (published in tournament files, recorded in records) reveals no deal,
    # and the same seed with the same key deals the same cards (duplicate deals, replays). Empty: the
    # public seed alone, which anyone can compute deals from (reproducible tests). Never recorded,
    # never shown (the records keep every deal's shuffled cards, enough to replay).
    deal_key: bytes = field(default=b"", repr=False)
    # A consultation series (docs/rules.md §3.2) played on from a game before this match: that game's
    # seating and whether its allies won it. A tournament plays each game of a series as a match of
    # its own; its first game then follows the series as the match's next game would. Empty: the
    # series starts with this match (the three players cut).
    series_before: tuple[tuple[tuple[int, ...], ...], bool] | None = None

    def build_variant(self) -> Variant:
        return variant(self.variant, **dict(self.options))

    def game_seed(self, game: int) -> int:
        if game < len(self.game_seeds):
            return self.game_seeds[game]
        return self.seed * 1_000_003 + game

    def deal_seed(self, game: int) -> int:
        """The seed the engine deals game ``game`` from: its public seed, keyed by the secret when
        there is one."""
        seed = self.game_seed(game)
        if not self.deal_key:
            return seed
        digest = hmac.new(self.deal_key, b"bezique-arena deal %d" % seed, hashlib.sha256).digest()
        return int.from_bytes(digest, "big")

    @property
    def predictable(self) -> bool:
        """Whether anyone who knows the seeds can compute the deals (no deal key)."""
        return not self.deal_key

    def seeds(self) -> tuple[int, ...]:
        """Every game's deal seed."""
        return tuple(self.game_seed(g) for g in range(self.games))

    def dealer(self, game: int) -> int | None:
        return self.dealers[game] if game < len(self.dealers) else None

    def game_decks(self, game: int) -> tuple[tuple[int, ...], ...]:
        return self.decks[game] if game < len(self.decks) else ()
