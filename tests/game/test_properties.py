"""Property tests (hypothesis) of the rules engine under random legal play, for two-handed (002, both
declarations_per_trick options), Polish (000) and Rubicon (000, 004).

Every game here is a seeded deal played by a seeded random policy (``random.Random``, never global
randomness), uniform or eager to declare; hypothesis draws the seeds and the kind of policy. The
invariants: play always terminates and ends as the rules say; cards are conserved at every step; every
brisque is awarded exactly once and every point is accounted for; text forms round-trip; a seat's
observation never shows a hidden card (docs/rules.md §7); legal action lists are sorted and without
duplicates; an illegal action raises and changes nothing; a clone is independent of its original; the
plays and declarations offered obey the rules of play and of declaring.

The tests that observe every seat at every step are marked ``slow`` (they still run in CI).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from hypothesis import given
from property_helpers import (
    EXAMPLES,
    POLICIES,
    SEEDS,
    Policy,
    _variant,
    _walk,
    check_pack_numbers,
    parametrize_configs,
    permute_hidden,
)

from arena.game import (
    DONE,
    Action,
    Family,
    GameState,
    IllegalActionError,
    observe,
    parse_ref,
    ref_text,
)
from arena.game.cards import ACE, ANY_COPY, JACK, TEN

# Bounds on a whole game: a deal gives at least 170 points (all brisques and the last trick), so a
# seat reaches the target within a dozen deals unless totals keep tying; a deal has at most 32 (64)
# tricks and a declare turn per trick.
MAX_DEALS = 60


def _scoring_card(card: int, trump: int) -> bool:
    """000 (Polish): aces, kings, queens, knaves and the ten of trumps are laid face up when won."""
    rank = card & 7
    return rank >= JACK and (rank != TEN or (card >> 3) & 3 == trump)


# ---------------------------------------------------------------------- termination and game end


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=POLICIES)
def test_random_play_terminates_as_the_rules_say(
    config: tuple[str, dict[str, str]], seed: int, policy: Policy
) -> None:
    """Random legal play always ends, within a bounded number of steps and deals. 002: the game ends
    when a deal leaves one seat alone at the highest total at or above the target (equal totals play
    another deal); Rubicon (000) is one deal. A finished game offers no action and refuses any."""
    v = _variant(config)
    for state in _walk(v, seed, policy):  # raises if the game runs past MAX_STEPS
        assert (state.to_act == -1) == state.is_terminal()
    assert state.is_terminal()
    assert state.legal_actions() == []
    with pytest.raises(IllegalActionError):
        state.apply(DONE)
    result = state.result()
    assert len(result.deals) <= MAX_DEALS
    assert all(d.completed for d in result.deals)
    assert [d.index for d in result.deals] == list(range(len(result.deals)))
    dealers = [d.dealer for d in result.deals]
    # 002: the deal alternates.
    assert all(b == (a + 1) % v.seats for a, b in itertools.pairwise(dealers))
    if v.family is Family.RUBICON:
        assert len(result.deals) == 1
        return
    for deal in result.deals[:-1]:
        best = max(deal.totals)
        assert best < v.target or list(deal.totals).count(best) > 1, deal.totals
    final = result.deals[-1].totals
    best = max(final)
    assert best >= v.target and list(final).count(best) == 1
    assert tuple(result.scores) == tuple(final)
    winner = final.index(best)
    assert result.winners == (winner,)
    assert result.ranking[winner] == 0


# ---------------------------------------------------------------------- conservation of cards


def _check_cards(state: GameState) -> None:
    v = state.variant
    counts: Counter[int] = Counter()
    physical: list[int] = []
    for hand in state.hands:
        for code in hand:
            if code >= ANY_COPY:
                assert code < ANY_COPY + 32, code
                counts[code - ANY_COPY] += 1  # a hidden card: kind code 128 + kind
            else:
                physical.append(code)
    for kind in state.stock[state.stock_pos :]:
        assert 0 <= kind < 32
        counts[kind] += 1
    if state.turn_up >= 0:
        physical.append(state.turn_up)
    physical.extend(state.trick)
    for pile in state.won:
        physical.extend(pile)
    # Rubicon (004): tricks lie face up in one heap until a brisque is played; the winner of that
    # trick takes the heap into his pile.
    physical.extend(state.heap)
    assert len(set(physical)) == len(physical), "a physical card is in two places"
    for card in physical:
        assert 0 <= card < v.deck_size
        counts[card & 31] += 1
    assert all(counts[k] == v.packs for k in range(32)), counts
    assert sum(counts.values()) == v.deck_size
    check_pack_numbers(physical)
    if v.family is Family.POLISH:
        # 000: every scoring card won lies face up among the winner's open cards, and only those.
        for seat in range(v.seats):
            assert len(set(state.open[seat])) == len(state.open[seat])
            expected = {c for c in state.won[seat] if _scoring_card(c, state.trump)}
            assert set(state.open[seat]) == expected
    if v.family is Family.RUBICON:
        # 004: the heap never holds a brisque: the trick that brings one takes the heap.
        assert not any(c & 7 >= TEN for c in state.heap)
    else:
        assert state.heap == []


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=POLICIES)
def test_cards_are_conserved_at_every_step(
    config: tuple[str, dict[str, str]], seed: int, policy: Policy
) -> None:
    """Every physical card and every kind is exactly once in hands + stock + turn-up + trick + won
    piles (+ the Rubicon heap) at every step of the first two deals: each kind ``packs`` times,
    physical ids distinct, pack numbers given lowest first; Polish open cards are exactly the scoring
    cards won (000)."""
    for state in _walk(_variant(config), seed, policy, deals=2):
        _check_cards(state)


# ---------------------------------------------------------------------- every point accounted for


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=POLICIES)
def test_brisques_awarded_once_and_points_accounted(
    config: tuple[str, dict[str, str]], seed: int, policy: Policy
) -> None:
    """All brisques are awarded once in every completed deal (002: "all 160 brisque points ... are
    always awarded"; Rubicon 320 for four packs): two-handed credits a "brisques" item per seat at
    the end of the deal, Polish (000) a "brisque" item for each ace or ten when won, Rubicon (000)
    keeps them in DealResult.brisques for the settlement. The last trick scores once (002: 10,
    Rubicon 50). Each deal's points are the sum of its items, and the totals add up."""
    v = _variant(config)
    *_, state = _walk(v, seed, policy)
    all_brisques = 10 * 8 * v.packs  # aces and tens of every suit, in every pack
    totals = [0] * v.seats
    for deal in state.result().deals:
        assert deal.completed
        assert sum(deal.brisques) == all_brisques
        per_seat = [0] * v.seats
        for item in deal.items:
            per_seat[item.seat] += item.points
        assert tuple(per_seat) == tuple(deal.points)
        totals = [t + p for t, p in zip(totals, deal.points, strict=True)]
        assert tuple(totals) == tuple(deal.totals)
        last = [i for i in deal.items if i.reason == "last-trick"]
        assert len(last) == 1 and last[0].points == v.last_trick
        ordinary = [i for i in deal.items if i.reason == "brisques"]
        polish = [i for i in deal.items if i.reason == "brisque"]
        if v.family is Family.ORDINARY:
            assert not polish
            got = [sum(i.points for i in ordinary if i.seat == s) for s in range(v.seats)]
            assert got == list(deal.brisques)
            assert len({i.seat for i in ordinary}) == len(ordinary), "a seat credited twice"
        elif v.family is Family.POLISH:
            assert not ordinary
            got = [sum(i.points for i in polish if i.seat == s) for s in range(v.seats)]
            assert got == list(deal.brisques)
            cards = [c for i in polish for c in i.cards]
            assert all(i.points == 10 and len(i.cards) == 1 for i in polish)
            assert len(set(cards)) == len(cards) == 8 * v.packs, "a brisque credited twice"
            assert all(c & 7 in (TEN, ACE) for c in cards)
        else:
            assert not ordinary and not polish
            assert all(i.reason != "brisques" for i in deal.items)


# ---------------------------------------------------------------------- text forms


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=POLICIES)
def test_text_forms_round_trip(
    config: tuple[str, dict[str, str]], seed: int, policy: Policy
) -> None:
    """Every legal action's text parses back to the action (python-chess style), and every card
    reference a seat sees in its hand round-trips through its text."""
    for state in _walk(_variant(config), seed, policy, deals=2):
        for action in state.legal_actions():
            text = action.text
            assert Action.parse(text) == action, text
            assert str(action) == text
            assert Action.parse(text).text == text
        if state.to_act >= 0:
            for ref in observe(state, state.to_act).hand:
                assert parse_ref(ref_text(ref)) == ref


# ---------------------------------------------------------------------- hidden information


@pytest.mark.slow
@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=POLICIES, shuffle=SEEDS)
def test_observation_never_shows_a_hidden_card(
    config: tuple[str, dict[str, str]], seed: int, policy: Policy, shuffle: int
) -> None:
    """docs/rules.md §7: a seat sees its own hand, never another seat's hand or the order of the
    stock. At every step of the first deal, for each seat: the kinds of its observed hand are those it
    holds; its observation (and, when it is to act, its legal actions) is unchanged when the other
    seats' hidden cards and the stock are shuffled; the spectator's view is unchanged when every
    hand's hidden cards are shuffled."""
    v = _variant(config)
    rng = random.Random(shuffle)
    for state in _walk(v, seed, policy, deals=1):
        if state.is_terminal():
            break
        for seat in range(v.seats):
            obs = observe(state, seat)
            assert sorted(r & 31 for r in obs.hand) == sorted(c & 31 for c in state.hands[seat])
            others = [s for s in range(v.seats) if s != seat]
            copy = permute_hidden(state, others, rng)
            _check_cards(copy)
            assert observe(copy, seat).to_dict() == obs.to_dict()
            if state.to_act == seat:
                assert copy.legal_actions() == state.legal_actions()
        spectator = permute_hidden(state, list(range(v.seats)), rng)
        assert observe(spectator, None).to_dict() == observe(state, None).to_dict()
