"""Property tests (hypothesis) of the multi-player variants under random legal play (docs/rules.md §3
and §4; sources 000, 003, EB9-643): three-handed, three-handed consultation, four-handed, four-handed
partners and four-handed consultation.

Every game is a seeded deal played by a seeded random policy (``random.Random``); hypothesis draws the
seeds. The invariants: play always terminates as the rules say (sides, side totals, target); cards are
conserved at every step; every brisque is awarded once at the end of each deal; a seat's observation never
shows another seat's hidden card (a partner's included); legal action lists are sorted and unique; text
forms round-trip; the plays offered are those the trick rules allow; declarations are made by the trick's
winner or his partner from their own hands.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from property_helpers import check_pack_numbers, permute_hidden

from arena.game import (
    Action,
    Combo,
    GameState,
    Variant,
    Verb,
    observe,
    parse_ref,
    ref_text,
    variant,
)
from arena.game.cards import ANY_COPY

CONFIGS: list[tuple[str, dict[str, str]]] = [
    ("three-handed", {}),
    ("three-handed-consultation", {}),
    ("four-handed", {}),
    ("four-handed-partners", {}),
    ("four-handed-consultation", {}),
    ("four-handed-partners", {"declarations_per_trick": "one"}),
]
CONFIG_IDS = [
    "three-handed",
    "three-handed-consultation",
    "four-handed",
    "four-handed-partners",
    "four-handed-consultation",
    "four-handed-partners-one",
]

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
EXAMPLES = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MAX_STEPS = 60_000
BEZIQUE_MULTIPLES = (Combo.DOUBLE_BEZIQUE, Combo.TRIPLE_BEZIQUE, Combo.QUADRUPLE_BEZIQUE)

parametrize_configs = pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)


def _variant(config: tuple[str, dict[str, str]]) -> Variant:
    name, options = config
    return variant(name, **options)


def _walk(v: Variant, seed: int, policy: int, deals: int | None = None) -> Iterator[GameState]:
    """The states of a random game, one before each action (and the final state); stops early once
    ``deals`` deals are recorded. The consumer must not change the state."""
    state = GameState.new(v, seed)
    rng = random.Random(policy)
    for _ in range(MAX_STEPS):
        yield state
        if state.is_terminal() or (deals is not None and len(state.deals) >= deals):
            return
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    raise AssertionError(f"no end after {MAX_STEPS} steps (seed {seed}, policy {policy})")


def _final(v: Variant, seed: int, policy: int) -> GameState:
    """The state at the end of a random game."""
    return list(_walk(v, seed, policy))[-1]


# ---------------------------------------------------------------------- termination and the result


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=SEEDS)
def test_random_play_terminates_as_the_rules_say(
    config: tuple[str, dict[str, str]], seed: int, policy: int
) -> None:
    """Random legal play always ends. docs/rules.md §1, §3, §4: deals rotate to the left until, at the end of a
    deal, one side alone has the highest side total at or above the target (2000; 1000 in consultation,
    played as two-handed); partners' scores add up. The result gives the sides, their ranking (tied
    sides share a place), each seat's score, the side scores and the team sizes."""
    v = _variant(config)
    state = _final(v, seed, policy)
    assert state.is_terminal()
    assert state.to_act == -1 and state.legal_actions() == []
    result = state.result()
    assert result.sides == v.sides
    assert result.team_sizes == tuple(v.team_size(s) for s in range(v.seats))
    dealers = [d.dealer for d in result.deals]
    assert all(b == (a + 1) % v.seats for a, b in itertools.pairwise(dealers))
    assert all(d.completed for d in result.deals)

    def side_totals(totals: tuple[int, ...]) -> list[int]:
        return [sum(totals[s] for s in side) for side in v.sides]

    for deal in result.deals[:-1]:
        sides = side_totals(deal.totals)
        assert max(sides) < v.target or sides.count(max(sides)) > 1, deal.totals
    final = result.deals[-1].totals
    sides = side_totals(final)
    assert max(sides) >= v.target and sides.count(max(sides)) == 1
    assert result.scores == final
    assert list(result.side_scores) == sides
    for i, score in enumerate(sides):
        assert result.ranking[i] == len({x for x in sides if x > score})
    best = sides.index(max(sides))
    assert result.winners == v.sides[best]


# ---------------------------------------------------------------------- conservation of cards


def _check_cards(state: GameState) -> None:
    """Every kind is in hands (hidden cards as kind codes 128 + kind), stock, turn-up, trick and won
    piles exactly ``packs`` times; physical cards are distinct."""
    v = state.variant
    counts: Counter[int] = Counter()
    physical: list[int] = []
    for hand in state.hands:
        for code in hand:
            if code >= ANY_COPY:
                assert code < ANY_COPY + 32, code
                counts[code - ANY_COPY] += 1
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
    assert len(set(physical)) == len(physical), "a physical card is in two places"
    for card in physical:
        assert 0 <= card < v.deck_size
        counts[card & 31] += 1
    assert all(counts[k] == v.packs for k in range(32)), counts
    assert sum(counts.values()) == v.deck_size
    assert state.heap == []
    check_pack_numbers(physical)
    hand_sizes = [len(h) for h in state.hands]
    if state.in_stock_phase and not state.trick and state.phase == 1:
        assert hand_sizes == [v.hand_size] * v.seats


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=SEEDS)
def test_cards_are_conserved_at_every_step(
    config: tuple[str, dict[str, str]], seed: int, policy: int
) -> None:
    """Cards are conserved over the first two deals: for each kind the copies in hands, stock, turn-up,
    trick and won piles number ``packs`` (000: three packs for three, four for four, two in
    consultation)."""
    for state in _walk(_variant(config), seed, policy, deals=2):
        _check_cards(state)


# ---------------------------------------------------------------------- brisques and points


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=SEEDS)
def test_brisques_awarded_once_at_the_end_of_each_deal(
    config: tuple[str, dict[str, str]], seed: int, policy: int
) -> None:
    """docs/rules.md §1, §2 (002): brisques are counted at the end of the hand, every one awarded once: a
    "brisques" item per seat that took any, after the last trick's 10, summing to 10 * 8 * packs; the
    last trick scores 10 once. Each deal's points are the sum of its items and the totals add up."""
    v = _variant(config)
    state = _final(v, seed, policy)
    all_brisques = 10 * 8 * v.packs
    totals = [0] * v.seats
    for deal in state.result().deals:
        assert deal.completed
        assert sum(deal.brisques) == all_brisques
        items = list(deal.items)
        brisques = [i for i in items if i.reason == "brisques"]
        assert sum(i.points for i in brisques) == all_brisques
        assert len({i.seat for i in brisques}) == len(brisques), "a seat credited twice"
        got = [sum(i.points for i in brisques if i.seat == s) for s in range(v.seats)]
        assert got == list(deal.brisques)
        last = [n for n, i in enumerate(items) if i.reason == "last-trick"]
        assert len(last) == 1 and items[last[0]].points == 10
        assert all(n > last[0] for n, i in enumerate(items) if i.reason == "brisques")
        per_seat = [0] * v.seats
        for item in items:
            per_seat[item.seat] += item.points
        assert tuple(per_seat) == tuple(deal.points)
        totals = [t + p for t, p in zip(totals, deal.points, strict=True)]
        assert tuple(totals) == tuple(deal.totals)


# ---------------------------------------------------------------------- hidden information


@pytest.mark.slow
@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=SEEDS, shuffle=SEEDS)
def test_observation_never_shows_another_seats_hidden_card(
    config: tuple[str, dict[str, str]], seed: int, policy: int, shuffle: int
) -> None:
    """docs/rules.md §7 / issue 3: a seat sees its own hand, never another seat's (a partner's included) nor the
    order of the stock. At every step of the first deal, for each seat: its observed hand has the
    kinds it holds; its observation, and its legal actions when it is to act, are unchanged when the
    hidden cards of all other seats and the stock are shuffled; the spectator's view is unchanged when
    every hand's hidden cards are shuffled."""
    v = _variant(config)
    rng = random.Random(shuffle)
    for state in _walk(v, seed, policy, deals=1):
        if state.is_terminal() or state.deals:
            break
        for seat in range(v.seats):
            view = observe(state, seat)
            assert sorted(r & 31 for r in view.hand) == sorted(c & 31 for c in state.hands[seat])
            others = [s for s in range(v.seats) if s != seat]
            copy = permute_hidden(state, others, rng)
            _check_cards(copy)
            assert observe(copy, seat).to_dict() == view.to_dict()
            if state.to_act == seat:
                assert copy.legal_actions() == state.legal_actions()
        spectator = permute_hidden(state, list(range(v.seats)), rng)
        assert observe(spectator, None).to_dict() == observe(state, None).to_dict()


# ---------------------------------------------------------------------- legal action lists and text


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=SEEDS)
def test_legal_actions_sorted_without_duplicates(
    config: tuple[str, dict[str, str]], seed: int, policy: int
) -> None:
    """OpenSpiel convention: legal_actions() is sorted, without duplicates, stable, and empty exactly
    when the game is over."""
    for state in _walk(_variant(config), seed, policy):
        legal = state.legal_actions()
        assert legal == sorted(legal)
        assert len(set(legal)) == len(legal)
        assert (legal == []) == state.is_terminal()
        assert (state.to_act == -1) == state.is_terminal()
        assert state.legal_actions() == legal


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=SEEDS)
def test_text_forms_round_trip(config: tuple[str, dict[str, str]], seed: int, policy: int) -> None:
    """docs/rules.md §9 (notation) / API text forms: every legal action's text parses back to the action, and
    every card reference a seat sees in its hand round-trips through its text, over the first two
    deals."""
    for state in _walk(_variant(config), seed, policy, deals=2):
        for action in state.legal_actions():
            text = action.text
            assert Action.parse(text) == action, text
            assert Action.parse(text).text == text
        if state.to_act >= 0:
            for ref in observe(state, state.to_act).hand:
                assert parse_ref(ref_text(ref)) == ref


# ---------------------------------------------------------------------- oracles for play and declaring


def _beats(card: int, best: int, trump: int) -> bool:
    """docs/rules.md §1 (002): a card played later beats the best so far if it is a higher card of the same
    suit, or a trump on a plain card; an identical card does not."""
    cs, bs = (card >> 3) & 3, (best >> 3) & 3
    if cs == bs:
        return card & 7 > best & 7
    return cs == trump


def _allowed_kinds(state: GameState) -> set[int]:
    """docs/rules.md §2, §3, §4: with a stock any card; in the last eight tricks (tricks of three, or duels of two)
    a later player must follow suit and head the trick if able; if void, win by trumping if able
    (over-trumping a trump already played); otherwise any card, never forced to under-trump."""
    hand = {c & 31 for c in state.hands[state.to_act]}
    view = observe(state, None)
    if view.stock_size > 0 or not view.trick:
        return hand
    cards = [c for _, c in view.trick]
    trump = state.trump
    best = cards[0]
    for c in cards[1:]:
        if _beats(c, best, trump):
            best = c
    suit = (cards[0] >> 3) & 3
    same = {k for k in hand if (k >> 3) & 3 == suit}
    if same:
        return {k for k in same if _beats(k, best, trump)} or same
    winning_trumps = {k for k in hand if (k >> 3) & 3 == trump and _beats(k, best, trump)}
    return winning_trumps or hand


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=SEEDS)
def test_plays_follow_the_trick_rules(
    config: tuple[str, dict[str, str]], seed: int, policy: int
) -> None:
    """docs/rules.md §2, §3, §4 (002, 000, EB9-643): the plays offered are exactly those the trick rules allow, for
    every player of a trick of three or four and in the duels; over the first two deals."""
    for state in _walk(_variant(config), seed, policy, deals=2):
        if state.is_terminal():
            break
        if observe(state, None).phase != "play":
            continue
        kinds = {a.refs[0] & 31 for a in state.legal_actions()}
        assert kinds == _allowed_kinds(state), [a.text for a in state.legal_actions()]


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=SEEDS)
def test_tricks_have_every_seat_then_duels(
    config: tuple[str, dict[str, str]], seed: int, policy: int
) -> None:
    """docs/rules.md §3, §4 (000): each stock trick has a card from every seat in playing order from the leader;
    in four-handed the last eight tricks are duels of two cards: the winner of the last stock trick
    against the adversary on his left, then the two others (the player opposite leading)."""
    v = _variant(config)
    n = v.seats
    for state in _walk(v, seed, policy, deals=1):
        if state.deals:
            break
        if state.phase != 1 or state.trick:
            continue
        order = tuple(state.trick_order)
        leader = state.to_act
        assert order[0] == leader
        if state.in_stock_phase or not v.last_duels:
            assert order == tuple((leader + i) % n for i in range(n))
            continue
        w = observe(state, None).last_trick_winner
        assert w is not None
        first, second = set(state.duels[0]), set(state.duels[1])
        assert set(order) in (first, second)
        assert len(order) == 2
        assert first | second == set(range(4))
        if v.partnerships:
            assert v.side_of(order[0]) != v.side_of(order[1])


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=SEEDS)
def test_declarations_by_the_winner_or_his_partner_from_own_hand(
    config: tuple[str, dict[str, str]], seed: int, policy: int
) -> None:
    """docs/rules.md §1, §4 (002, 000, 003): only the winner of the trick, or with partners his partner after him,
    declares; each from his own hand, the cards of the trick excepted; a double (triple, quadruple)
    bezique may take the partner's declared béziques from the table; every declaration has a card not
    declared before."""
    v = _variant(config)
    for state in _walk(v, seed, policy, deals=2):
        if state.is_terminal():
            break
        view = observe(state, None)
        if view.phase != "declare":
            continue
        seat = state.to_act
        winner = view.last_trick_winner
        assert winner is not None
        assert seat == winner or seat in v.partners(winner)
        declarations = [a for a in state.legal_actions() if a.verb is Verb.DECLARE]
        if not declarations:
            continue
        own = observe(state, seat)
        held = Counter(own.hand)
        table = {c for c, _ in own.seats[seat].table}
        partner_table = {c for p in v.partners(seat) for c, _ in own.seats[p].table}
        trick_cards = {c for _, c in view.last_trick}
        for a in declarations:
            need = Counter(a.refs)
            for ref, count in need.items():
                if held[ref] >= count:
                    continue
                assert a.combo in BEZIQUE_MULTIPLES and ref in partner_table, a.text
            assert not set(a.refs) & trick_cards, a.text
            if a.text in own.seats[seat].to_score:
                continue
            undeclared = [r for r in a.refs if r >= ANY_COPY or r not in table | partner_table]
            assert undeclared, a.text
