"""A greedy bot: declares the best combination it has, exchanges the seven of trumps, keeps its brisques
and its combination cards while there is stock, and plays sensibly in the last eight tricks.

It looks one decision ahead and no further, and needs nothing but the observation and the legal
actions, so it works for every variant (two-handed, Polish, Rubicon, three- and four-handed, partners
and consultation). Whenever it is unsure it falls back to a legal action: it never answers anything
else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# First, before the rules engine's modules: without the engine package installed (the SDK alone),
# this import fails with a message naming the package to install, not a bare missing module.
from arena_bot.engine import EngineBot

# isort: split

from arena.game import Action, Combo, Observation, Verb, variant
from arena.game.cards import (
    ACE,
    ANY_COPY,
    CLUBS,
    DIAMONDS,
    HEARTS,
    JACK,
    KING,
    QUEEN,
    SEVEN,
    SPADES,
    SUIT_CHARS,
    TEN,
    make_kind,
    parse_card,
)
from arena.game.variants import Family, Variant
from arena_bot.sdk import Clock, main_for
from arena_bot.tracking import deal_log

_BEZIQUE_FIXED = (make_kind(QUEEN, SPADES), make_kind(JACK, DIAMONDS))  # QS + JD
# Option bezique_cards = "trump-dependent": QC + JH when spades or diamonds are trumps.
_BEZIQUE_SWAPPED = (make_kind(QUEEN, CLUBS), make_kind(JACK, HEARTS))
_PLAIN_TEN = TEN + 10  # the keep value of a ten that is not a trump (see GreedyBot._keep_value)


def _rank(card: int) -> int:
    return card & 7


def _suit(card: int) -> int:
    return (card >> 3) & 3


@dataclass(frozen=True, slots=True)
class _Context:
    """What the bot reads off one observation."""

    variant: Variant
    seat: int
    trump: int  # -1: none yet (Rubicon)
    in_stock: bool
    hand_kinds: tuple[int, ...]  # the kinds of the cards in hand, one per card
    bezique: tuple[int, int]
    seven_open: bool  # the seven of trumps can still be exchanged or declared for 10


class GreedyBot(EngineBot):
    name = "greedy"
    version = "1"

    # ------------------------------------------------------------------ the decision

    def decide(self, view: Observation, legal: list[Action], clock: Clock) -> Action:
        if not legal:
            raise ValueError("no legal action to choose from")
        try:
            choice = self._choose(view, legal)
        except Exception:  # an unforeseen position: any legal action beats a crash
            choice = None
        return choice if choice is not None and choice in legal else legal[0]

    def _choose(self, view: Observation, legal: list[Action]) -> Action | None:
        plays = [a for a in legal if a.verb is Verb.PLAY]
        if not plays:
            return self._declaring(view, legal)
        ctx = self._context(view)
        if ctx.in_stock:
            if view.trick:
                return self._stock_follow(view, ctx, plays)
            return self._stock_lead(ctx, plays)
        if view.trick:
            return self._last_follow(view, ctx, plays)
        return self._last_lead(view, ctx, plays)

    # ------------------------------------------------------------------ declaring

    def _declaring(self, view: Observation, legal: list[Action]) -> Action | None:
        """The best-scoring declaration first; then the exchange of the seven; then done."""
        scores = self._variant(view).scores
        declarations = [a for a in legal if a.verb is Verb.DECLARE]
        exchanges = [a for a in legal if a.verb is Verb.EXCHANGE]
        best = _best_declaration(declarations, scores)
        seven = scores.get(Combo.SEVEN_OF_TRUMPS, 0)
        if best is not None and scores.get(Combo(best.combo), 0) > seven:
            return best
        if exchanges:
            # The exchange scores as much as declaring the seven and brings the turn-up into the hand.
            return exchanges[0]
        if best is not None:
            return best
        return next((a for a in legal if a.verb is Verb.DONE), None)

    # ------------------------------------------------------------------ the stock phase

    def _stock_follow(self, view: Observation, ctx: _Context, plays: list[Action]) -> Action:
        """Win a trick holding a brisque if it costs no ace or ten; else throw the cheapest card that
        is not part of a possible combination."""
        trick = [card for _, card in view.trick]
        winner_seat = view.trick[_winning_index(trick, ctx.trump)][0]
        partner_wins = winner_seat in ctx.variant.partners(ctx.seat)
        if not partner_wins and any(_rank(c) >= TEN for c in trick):
            winners = [
                a
                for a in plays
                if _beats(a.refs[0], trick, ctx.trump)
                and _rank(a.refs[0]) < TEN
                and not self._in_combination(a.refs[0], ctx)
            ]
            if not winners:  # a low trump of a possible sequence may still be worth less than a ten
                winners = [
                    a
                    for a in plays
                    if _beats(a.refs[0], trick, ctx.trump)
                    and _rank(a.refs[0]) < TEN
                    and self._keep_value(a.refs[0], ctx) < _PLAIN_TEN
                ]
            if winners:
                return min(winners, key=lambda a: self._keep_value(a.refs[0], ctx))
        return self._throw(ctx, plays)

    def _stock_lead(self, ctx: _Context, plays: list[Action]) -> Action:
        """Lead a low card that is neither a trump nor a brisque nor part of a possible combination."""
        low = [a for a in plays if _rank(a.refs[0]) < TEN]
        plain = [
            a
            for a in low
            if _suit(a.refs[0]) != ctx.trump and not self._in_combination(a.refs[0], ctx)
        ]
        return min(plain or low or plays, key=lambda a: self._keep_value(a.refs[0], ctx))

    def _throw(self, ctx: _Context, plays: list[Action]) -> Action:
        spare = [
            a for a in plays if _rank(a.refs[0]) < TEN and not self._in_combination(a.refs[0], ctx)
        ]
        return min(spare or plays, key=lambda a: self._keep_value(a.refs[0], ctx))

    def _in_combination(self, ref: int, ctx: _Context) -> bool:
        return self._combination_value(ref, ctx) > 0

    def _combination_value(self, ref: int, ctx: _Context) -> int:
        """How much a card may still be worth in a combination (0: nothing)."""
        kind = ref & 31
        rank, suit = _rank(kind), _suit(kind)
        hand = ctx.hand_kinds
        value = 0
        if rank in (KING, QUEEN):
            mate = make_kind(QUEEN if rank == KING else KING, suit)
            value += 4 if mate in hand else 2  # a marriage in hand, or one that may still come
        if kind in ctx.bezique:
            value += 6 if (ctx.bezique[0] + ctx.bezique[1] - kind) in hand else 3
        if suit == ctx.trump and rank >= JACK:
            value += 3  # the trump sequence
        if rank in (ACE, KING, QUEEN, JACK):
            same = sum(1 for k in hand if _rank(k) == rank)
            if same >= 2:
                value += same  # a four of a kind growing
        if rank == SEVEN and suit == ctx.trump and ctx.seven_open:
            value += 8
        if ref < ANY_COPY:
            value = max(0, value - 3)  # already declared: it has scored once
        return value

    def _keep_value(self, ref: int, ctx: _Context) -> int:
        """How much the bot would rather keep a card: rank, brisque, trump, combinations."""
        rank, suit = _rank(ref), _suit(ref)
        value = rank
        if rank >= TEN:
            value += 10
        if suit == ctx.trump:
            value += 6
        if ctx.in_stock:
            value += self._combination_value(ref, ctx)
        return value

    # ------------------------------------------------------------------ the last eight tricks

    def _last_follow(self, view: Observation, ctx: _Context, plays: list[Action]) -> Action:
        """The cheapest card that wins if one does (unless a partner is winning); else the cheapest."""
        trick = [card for _, card in view.trick]
        winner_seat = view.trick[_winning_index(trick, ctx.trump)][0]
        cheapest = min(plays, key=lambda a: self._keep_value(a.refs[0], ctx))
        if winner_seat in ctx.variant.partners(ctx.seat):
            return cheapest
        winners = [a for a in plays if _beats(a.refs[0], trick, ctx.trump)]
        if winners:
            return min(winners, key=lambda a: self._keep_value(a.refs[0], ctx))
        return cheapest

    def _last_lead(self, view: Observation, ctx: _Context, plays: list[Action]) -> Action:
        """A card sure to win (the highest trump left), else one likely to win (the highest card left
        of a plain suit, e.g. an ace), else the lowest card."""
        unseen = _unseen_counts(view, ctx)
        tops = [a for a in plays if _is_top(a.refs[0], unseen)]
        sure = [a for a in tops if _suit(a.refs[0]) == ctx.trump]
        if sure:
            return max(sure, key=lambda a: _rank(a.refs[0]))
        if tops:
            return max(tops, key=lambda a: (_rank(a.refs[0]), -self._keep_value(a.refs[0], ctx)))
        return min(plays, key=lambda a: self._keep_value(a.refs[0], ctx))

    # ------------------------------------------------------------------ helpers

    def _variant(self, view: Observation) -> Variant:
        return variant(view.variant, **dict(view.options))  # built once per variant

    def _context(self, view: Observation) -> _Context:
        v = self._variant(view)
        trump = SUIT_CHARS.index(view.trump) if view.trump else -1
        bezique = _BEZIQUE_FIXED
        if v.bezique_cards == "trump-dependent" and trump in (SPADES, DIAMONDS):
            bezique = _BEZIQUE_SWAPPED
        seven_open = v.family is not Family.RUBICON and view.turn_up is not None
        return _Context(
            variant=v,
            seat=view.seat if view.seat is not None else view.to_act,
            trump=trump,
            in_stock=view.stock_size > 0,
            hand_kinds=tuple(r & 31 for r in view.hand),
            bezique=bezique,
            seven_open=seven_open,
        )


def _best_declaration(actions: Sequence[Action], scores: Mapping[Combo, int]) -> Action | None:
    if not actions:
        return None
    return max(actions, key=lambda a: (scores.get(Combo(a.combo), 0), -len(a.refs)))


def _winning_index(trick: Sequence[int], trump: int) -> int:
    """The card winning the trick so far: the highest trump, else the highest of the suit led; between
    identical cards the first played."""
    best = 0
    for i in range(1, len(trick)):
        c, b = trick[i], trick[best]
        if (_suit(c) == _suit(b) and _rank(c) > _rank(b)) or (
            _suit(c) != _suit(b) and _suit(c) == trump
        ):
            best = i
    return best


def _beats(ref: int, trick: Sequence[int], trump: int) -> bool:
    """Whether playing the card would take the lead of the trick."""
    b = trick[_winning_index(trick, trump)]
    if _suit(ref) == _suit(b):
        return _rank(ref) > _rank(b)
    return _suit(ref) == trump


def _unseen_counts(view: Observation, ctx: _Context) -> list[int]:
    """Copies of each kind neither in the bot's hand nor played in this deal (read off the log)."""
    unseen = [ctx.variant.packs] * 32
    for kind in ctx.hand_kinds:
        unseen[kind] -= 1
    for text in deal_log(view.log):
        words = text.split()
        if len(words) == 4 and words[2] == "plays":
            try:
                unseen[parse_card(words[3]) & 31] -= 1
            except ValueError:
                continue
    return [max(0, n) for n in unseen]


def _is_top(ref: int, unseen: Sequence[int]) -> bool:
    """No higher card of its suit is left anywhere but in the bot's own hand."""
    kind = ref & 31
    suit = _suit(kind)
    return all(unseen[make_kind(r, suit)] == 0 for r in range(_rank(kind) + 1, 8))


def main() -> None:
    main_for(GreedyBot())


if __name__ == "__main__":
    main()
