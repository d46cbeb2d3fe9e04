"""Every field of a game state, declared once.

A :class:`arena.game.state.GameState` is built in layers, each a class inheriting from the one
before: :class:`StateFields` (the fields), :class:`arena.game.scoring.Scoring` (credits, the end of
deals and the game), :class:`arena.game.hands.HandIndex` (each hand's index, card by card),
:class:`arena.game.claims.Claims` (claims held "to score", Rubicon's re-use of declared cards),
:class:`arena.game.declaring_turn.DeclaringTurn` (the declaring turn),
:class:`arena.game.tricks.TrickPlay` (following, winning a trick, the draw, carte blanche) and
:class:`arena.game.state.GameState` (dealing, the legal actions, applying one, copying). One chain
rather than mixins, so that the modules compile with mypyc as well as they run as plain Python.
"""

from __future__ import annotations

from typing import Final

from arena.game.actions import Action
from arena.game.results import DealResult, ScoreItem
from arena.game.variants import Family, Variant

# StateFields.inquiry: where the inquiry of the trick just won stands (four-handed partners, 003).
NOT_ASKED: Final = 0
ASKED: Final = 1
ANSWERED: Final = 2

# The variant's family as a small int (StateFields.fam): compared on every step.
F_ORDINARY: Final = 0
F_POLISH: Final = 1
F_RUBICON: Final = 2
FAMILY_IDS: Final = {
    Family.ORDINARY: F_ORDINARY,
    Family.POLISH: F_POLISH,
    Family.RUBICON: F_RUBICON,
}


class StateFields:
    """Every field of a game state, declared once (GameState's behaviour is spread over mixins)."""

    __slots__ = (
        "_legal",
        "cb_active",
        "cb_queue",
        "deal_index",
        "deal_points",
        "dealer",
        "deals",
        "dealt",
        "decks",
        "declare_queue",
        "declarer",
        "duel_index",
        "duels",
        "fam",
        "first_dealer",
        "fours",
        "fresh",
        "game_tricks",
        "hands",
        "heap",
        "history",
        "immediate_target",
        "in_stock_phase",
        "inquiring",
        "inquiry",
        "items",
        "kind_counts",
        "last_drawn",
        "last_trick",
        "leader",
        "log",
        "marks",
        "n_seats",
        "next_pack",
        "open",
        "open_fours",
        "open_present",
        "partnered",
        "phase",
        "play_refs",
        "plays",
        "present",
        "ref_counts",
        "reformed",
        "reserves",
        "scored_sets",
        "seed",
        "stock",
        "stock_pos",
        "taken_up",
        "to_act",
        "totals",
        "trick",
        "trick_order",
        "trick_tables",
        "tricks_done",
        "tricks_won",
        "trump",
        "trump_dependent",
        "turn_acted",
        "turn_count",
        "turn_done",
        "turn_excluded",
        "turn_marks",
        "turn_new",
        "turn_options",
        "turn_sevens",
        "turn_up",
        "turn_used",
        "turn_winner",
        "variant",
        "winner_seat",
        "won",
    )

    variant: Variant
    fam: int  # the variant's family: F_ORDINARY, F_POLISH or F_RUBICON
    partnered: bool  # the variant has partnerships
    seed: int
    # Read from the variant once (the engine asks at every step; a Variant is a plain Python object).
    n_seats: int
    trump_dependent: bool  # the variant's bezique cards depend on trumps
    immediate_target: int  # game_end "immediate": the target (0: the game ends only after a deal)
    decks: tuple[tuple[int, ...], ...]
    first_dealer: int
    deal_index: int
    dealer: int
    totals: list[int]
    deal_points: list[int]
    items: list[ScoreItem]
    deals: list[DealResult]
    dealt: tuple[tuple[int, ...], ...]  # the hands as dealt in this deal (kind codes)
    phase: int
    to_act: int
    leader: int
    hands: list[list[int]]
    # Each hand indexed for its legal plays: how many cards it holds under each card reference (while
    # the stock lasts the reference a seat plays it by, later its kind; a list indexed by reference),
    # the references it holds, sorted, and their "play" actions in the same order. Kept up to date at
    # every change of a hand (see arena.game.hands.HandIndex).
    ref_counts: list[list[int]]
    play_refs: list[list[int]]
    plays: list[list[Action]]
    # And for the combinations a hand may hold (DeclaringTurn._combos): how many cards of each kind it
    # holds, the kinds it holds (a bit mask), the kinds it holds a copy of under its kind reference
    # (while the stock lasts: never declared), and its knaves, queens, kings and aces counted in 8-bit
    # fields; the same for each seat's open cards (Polish).
    kind_counts: list[list[int]]
    present: list[int]
    fresh: list[int]
    fours: list[int]
    open_present: list[int]
    open_fours: list[int]
    stock: list[int]
    stock_pos: int
    turn_up: int
    taken_up: int  # the turn-up taken in exchange for the seven of trumps in this deal, or -1
    trump: int
    next_pack: list[int]
    marks: list[int]
    trick: list[int]
    last_trick: tuple[
        tuple[int, ...], tuple[int, ...], int
    ]  # (seats, cards, winner); winner -1: none
    tricks_done: int
    won: list[list[int]]
    open: list[list[int]]
    heap: list[int]
    log: list[tuple[object, ...]]
    history: list[tuple[int, Action]]
    declarer: int
    declare_queue: list[int]  # partners still to declare after this trick (four-handed partners)
    # Four-handed partners with inquiry "on" (003): NOT_ASKED, ASKED (the partner answers) or
    # ANSWERED, for the trick just won; and whether the variant's option is on.
    inquiry: int
    inquiring: bool
    turn_acted: bool  # the declarer has acted in this declaring turn (inquire comes first or never)
    turn_winner: int  # the trick's winner, who draws first
    trick_order: tuple[int, ...]  # the seats playing the current trick, in order
    trick_tables: tuple[tuple[int, ...], ...]  # by leader: the seats of a trick in order
    duels: tuple[tuple[int, int], ...]  # 000: four-handed, the last eight tricks as two duels
    duel_index: int
    game_tricks: int  # tricks completed in the whole game (consultation: who decides)
    tricks_won: list[int]
    turn_new: frozenset[int]
    turn_used: set[int]
    turn_count: int
    # Polish: a compound declaration is made "at once" (000), so within the turn each card is judged by
    # its marks at the start of the turn, and may serve once per kind of combination.
    turn_marks: list[int]
    turn_done: set[tuple[int, int]]  # (combination key, card) used this turn
    turn_options: tuple[Action, ...] | None  # Polish: the turn's combinations, enumerated once
    turn_excluded: int
    turn_sevens: list[int]
    reserves: list[list[Action]]  # each seat's combinations held "to score" (004)
    # Rubicon: each seat's scored combinations by combo key, and the broken ones already re-formed.
    scored_sets: list[dict[int, list[frozenset[int]]]]
    reformed: list[set[tuple[int, frozenset[int]]]]
    cb_active: list[bool]
    cb_queue: list[int]
    last_drawn: list[int]
    in_stock_phase: bool
    winner_seat: int
    _legal: list[Action] | None

    # Defined by a later layer (TrickPlay, GameState); declared here so that each part of the state's
    # behaviour (Scoring, HandIndex, Claims, DeclaringTurn, TrickPlay, GameState: one class each, one
    # inheriting from the other) may call them.

    @property
    def bezique_kinds(self) -> tuple[int, int]:
        raise NotImplementedError

    @property
    def stock_size(self) -> int:
        raise NotImplementedError

    def _reveal(self, kind: int) -> int:
        raise NotImplementedError

    def _draw(self, winner: int) -> None:
        raise NotImplementedError

    def _after_turn(self) -> None:
        raise NotImplementedError

    def _start_deal(self) -> None:
        raise NotImplementedError
