"""Variants as data: packs, seats, hand size, deal pattern, turn-up, scores, target and options.

Every option has a stable name and is recorded, with :data:`RULES_VERSION`, in every match record
(docs/rules.md §8). :func:`variant` builds a :class:`Variant` from a name and option strings and rejects
anything it does not know with a :class:`VariantError` that names the option and the accepted values.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from arena.game.actions import Combo
from arena.game.errors import VariantError

RULES_VERSION = "4"


class Family(Enum):
    """How declaring and scoring work; the variants of one family differ only in data."""

    ORDINARY = "ordinary"  # docs/rules.md §2: declare from the hand, brisques counted at the end
    POLISH = "polish"  # section 5: open cards, compound declarations, immediate brisques
    RUBICON = "rubicon"  # section 6: four packs, one deal, settlement with rubicon


ORDINARY_SCORES: Mapping[Combo, int] = {
    Combo.MARRIAGE: 20,
    Combo.ROYAL_MARRIAGE: 40,
    Combo.SEQUENCE: 250,
    Combo.BEZIQUE: 40,
    Combo.DOUBLE_BEZIQUE: 500,
    Combo.TRIPLE_BEZIQUE: 1500,
    Combo.QUADRUPLE_BEZIQUE: 4500,
    Combo.FOUR_KNAVES: 40,
    Combo.FOUR_QUEENS: 60,
    Combo.FOUR_KINGS: 80,
    Combo.FOUR_ACES: 100,
    Combo.SEVEN_OF_TRUMPS: 10,
}

RUBICON_SCORES: Mapping[Combo, int] = {
    **{c: s for c, s in ORDINARY_SCORES.items() if c is not Combo.SEVEN_OF_TRUMPS},
    Combo.PLAIN_SEQUENCE: 150,
    Combo.CARTE_BLANCHE: 50,
}


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    family: Family
    packs: int
    seats: int
    hand_size: int
    deal_packets: tuple[int, ...]  # cards per packet, dealt in rounds starting left of the dealer
    turn_up: bool
    target: int
    last_trick: int
    scores: Mapping[Combo, int]
    # "disjoint" (002), "one" (Portland Club; "to score" reserves), "compound" (Polish, fixed)
    declarations_per_trick: str = "disjoint"
    bezique_cards: str = (
        "fixed"  # "fixed" (QS + JD) or "trump-dependent" (QC + JH with S or D trumps)
    )
    game_end: str = "end-of-deal"  # "end-of-deal" or "immediate"
    # Three-handed consultation: "per-game" or "series" (the referee's, docs/rules.md §3.2).
    consultation: str = "per-game"
    # Four-handed partners: "off" or "on" (003: the winner may inquire first, docs/rules.md §4.2).
    inquiry: str = "off"
    # Sides of seats whose scores add (partners); empty: every seat alone.
    partnerships: tuple[tuple[int, ...], ...] = ()
    # Players sharing each seat's hand in consultation (the decision alternates trick by trick); empty:
    # one player per seat.
    team_sizes: tuple[int, ...] = ()
    # 000: four-handed, the last eight tricks are played as two duels.
    last_duels: bool = False
    # The players cut for the first deal where the books say so (002: "The players cut for deal, and
    # the highest bezique card deals"; Polish and Rubicon deal as ordinary bezique, 000).
    cut_for_deal: bool = False
    options: tuple[tuple[str, str], ...] = field(default=())
    # Derived from the above once (the engine asks for them at every step of partnership games).
    _sides: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    _side_of: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _partners: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sides = self.partnerships or tuple((s,) for s in range(self.seats))
        side_of = tuple(
            next(i for i, side in enumerate(sides) if s in side) for s in range(self.seats)
        )
        partners = tuple(tuple(p for p in sides[side_of[s]] if p != s) for s in range(self.seats))
        object.__setattr__(self, "_sides", sides)
        object.__setattr__(self, "_side_of", side_of)
        object.__setattr__(self, "_partners", partners)

    @property
    def sides(self) -> tuple[tuple[int, ...], ...]:
        """The sides, each a tuple of seats; a seat alone is a side of one."""
        return self._sides

    def side_of(self, seat: int) -> int:
        if not 0 <= seat < self.seats:
            raise ValueError(f"seat {seat} is not in {self.name}")
        return self._side_of[seat]

    def partners(self, seat: int) -> tuple[int, ...]:
        """The other seats on ``seat``'s side."""
        if not 0 <= seat < self.seats:
            raise ValueError(f"seat {seat} is not in {self.name}")
        return self._partners[seat]

    def team_size(self, seat: int) -> int:
        return self.team_sizes[seat] if self.team_sizes else 1

    @property
    def deck_size(self) -> int:
        return 32 * self.packs

    def describe(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.options)
        return f"{self.name} ({opts})" if opts else self.name


_OPTION_VALUES: dict[str, tuple[str, ...]] = {
    "declarations_per_trick": ("disjoint", "one"),
    "bezique_cards": ("fixed", "trump-dependent"),
    "game_end": ("end-of-deal", "immediate"),
    # Polish (000: "The game is not less than 2000 up"): how far up the game is played.
    "target": ("2000", "2500", "3000", "4000", "5000"),
    # Three-handed consultation (000): who plays alone in each game: the schedule's choice, or a
    # series in which the single player "continues to do so till the allies win a game" (the referee
    # seats the players game by game, docs/rules.md §3.2). One game plays the same either way.
    "consultation": ("per-game", "series"),
    # Four-handed partners (003: the winner of a trick "may inquire of his partner if he has
    # anything to declare"): "off", the partner declares after the winner; "on", the winner may first
    # ask him, and declares after the answer (docs/rules.md §4.2).
    "inquiry": ("off", "on"),
}
# Options whose value is a number of the Variant (its field of the same name); the others are words.
_NUMBER_OPTIONS = frozenset({"target"})

# What every variant of the ordinary rules shares: 8 cards dealt 3-2-3, a turn-up, the last trick 10.
_ORDINARY: dict[str, object] = dict(
    family=Family.ORDINARY,
    hand_size=8,
    deal_packets=(3, 2, 3),
    turn_up=True,
    last_trick=10,
    scores=ORDINARY_SCORES,
)
_ORDINARY_OPTIONS = ("declarations_per_trick", "bezique_cards", "game_end")

# name -> (fields, the options it takes)
_BASES: dict[str, tuple[dict[str, object], tuple[str, ...]]] = {
    "two-handed": (
        dict(_ORDINARY, packs=2, seats=2, target=1000, cut_for_deal=True),
        _ORDINARY_OPTIONS,
    ),
    "polish": (
        dict(
            _ORDINARY,
            family=Family.POLISH,
            packs=2,
            seats=2,
            target=2000,
            declarations_per_trick="compound",
            cut_for_deal=True,
        ),
        ("game_end", "target"),
    ),
    # docs/rules.md §3 (000, EB9-643).
    "three-handed": (dict(_ORDINARY, packs=3, seats=3, target=2000), _ORDINARY_OPTIONS),
    "three-handed-consultation": (
        dict(_ORDINARY, packs=2, seats=2, target=1000, team_sizes=(1, 2)),
        (*_ORDINARY_OPTIONS, "consultation"),
    ),
    # docs/rules.md §4 (000, 003).
    "four-handed": (
        dict(_ORDINARY, packs=4, seats=4, target=2000, last_duels=True),
        _ORDINARY_OPTIONS,
    ),
    "four-handed-partners": (
        dict(
            _ORDINARY,
            packs=4,
            seats=4,
            target=2000,
            last_duels=True,
            partnerships=((0, 2), (1, 3)),
        ),
        (*_ORDINARY_OPTIONS, "inquiry"),
    ),
    "four-handed-consultation": (
        dict(_ORDINARY, packs=2, seats=2, target=1000, team_sizes=(2, 2)),
        _ORDINARY_OPTIONS,
    ),
    # docs/rules.md §6 (000, 004).
    "rubicon": (
        dict(
            family=Family.RUBICON,
            packs=4,
            seats=2,
            hand_size=9,
            deal_packets=(3, 3, 3),
            turn_up=False,
            target=0,
            last_trick=50,
            scores=RUBICON_SCORES,
            declarations_per_trick="one",
            cut_for_deal=True,
        ),
        (),
    ),
}

VARIANT_NAMES: tuple[str, ...] = tuple(_BASES)


def variant_options(name: str) -> dict[str, tuple[str, ...]]:
    """The options a variant takes, each with its accepted values (the first is the default)."""
    if name not in _BASES:
        raise VariantError(f"unknown variant {name!r}; expected one of {', '.join(VARIANT_NAMES)}")
    return {opt: _OPTION_VALUES[opt] for opt in _BASES[name][1]}


def options_help() -> str:
    """Every option with its accepted values (the first the default) and the variants taking it: the
    help text of the ``options`` table of tournament and competition files."""
    parts = []
    for opt, values in _OPTION_VALUES.items():
        names = [n for n, (_, opts) in _BASES.items() if opt in opts]
        parts.append(f"{opt} = {' | '.join(values)} ({', '.join(names)})")
    return "The variant's options (the first value is the default): " + "; ".join(parts)


def variant(name: str, **options: str) -> Variant:
    """Build a variant from its name and option values (``variant("two-handed", game_end="immediate")``).

    Option names may be given with dashes or underscores. Variants are immutable, so each distinct one
    is built once (bots ask for the variant of every observation they get).
    """
    return _variant(name, tuple(sorted(options.items())))


@functools.lru_cache(maxsize=256)
def _variant(name: str, options: tuple[tuple[str, str], ...]) -> Variant:
    accepted = variant_options(name)
    base, _ = _BASES[name]
    chosen: dict[str, str] = {}
    for raw_key, value in options:
        key = raw_key.replace("-", "_")
        if key not in accepted:
            known = ", ".join(accepted) or "none"
            raise VariantError(f"variant {name!r} has no option {raw_key!r} (its options: {known})")
        if value not in accepted[key]:
            raise VariantError(
                f"option {key!r} of variant {name!r} must be one of {', '.join(accepted[key])}, "
                f"got {value!r}"
            )
        chosen[key] = value
    full = {opt: chosen.get(opt, values[0]) for opt, values in accepted.items()}
    fields: dict[str, object] = {**base}
    for opt, value in full.items():
        fields[opt] = int(value) if opt in _NUMBER_OPTIONS else value
    return Variant(name=name, options=tuple(sorted(full.items())), **fields)  # type: ignore[arg-type]
