"""Property tests (hypothesis) of the engine's legal action lists under random legal play, for
two-handed (002, both declarations_per_trick options), Polish (000) and Rubicon (000, 004): lists are
sorted and without duplicates; an illegal action raises and changes nothing; a clone is independent of
its original; the plays and declarations offered obey the rules of play and of declaring.

The tests that observe every seat at every step are marked ``slow`` (they still run in CI).
"""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from hypothesis import example, given
from property_helpers import (
    EXAMPLES,
    POLICIES,
    SEEDS,
    Policy,
    _variant,
    _walk,
    parametrize_configs,
)

from arena.game import (
    DONE,
    Action,
    Combo,
    Family,
    GameState,
    IllegalActionError,
    ScoreItem,
    Variant,
    Verb,
    observe,
)
from arena.game.actions import PLAY_ACTIONS, declare, exchange
from arena.game.cards import ANY_COPY, SEVEN, card_text, make_kind

# ---------------------------------------------------------------------- legal action lists


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=POLICIES)
def test_legal_actions_sorted_without_duplicates(
    config: tuple[str, dict[str, str]], seed: int, policy: Policy
) -> None:
    """OpenSpiel: legal_actions() is sorted and has no duplicates; it is empty exactly when the game
    is over, and it is stable (asking twice gives the same list)."""
    for state in _walk(_variant(config), seed, policy):
        legal = state.legal_actions()
        assert legal == sorted(legal)
        assert len(set(legal)) == len(legal)
        assert all(isinstance(a, Action) for a in legal)
        assert (legal == []) == state.is_terminal()
        assert (state.to_act == -1) == state.is_terminal()
        assert state.legal_actions() == legal


def _candidate_actions(v: Variant) -> list[Action]:
    """Actions of every shape, most of them illegal in any given situation."""
    out: list[Action] = [DONE, declare(Combo.CARTE_BLANCHE, ())]
    out += [PLAY_ACTIONS[ANY_COPY + k] for k in range(32)]
    out += [PLAY_ACTIONS[c] for c in range(v.deck_size)]
    for suit in range(4):
        seven = make_kind(SEVEN, suit)
        out += [exchange(ANY_COPY + seven), declare(Combo.SEVEN_OF_TRUMPS, (ANY_COPY + seven,))]
    out += [
        Action.parse(t)
        for t in (
            "declare marriage KS QS",
            "declare royal-marriage KH QH",
            "declare bezique QS JD",
            "declare bezique QS.1 JD.1",
            "declare four-aces AS AH AD AC",
            "declare four-knaves JS JH JD JC",
            "declare sequence AD TD KD QD JD",
            "declare double-bezique QS QS JD JD",
        )
    ]
    return out


@pytest.mark.slow
@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=POLICIES, pick=SEEDS)
def test_illegal_action_raises_and_changes_nothing(
    config: tuple[str, dict[str, str]], seed: int, policy: Policy, pick: int
) -> None:
    """apply() of an action not in legal_actions() raises IllegalActionError (quoting the action) and
    leaves every seat's observation, the legal actions and the history unchanged (about half of the
    steps of the first deal are tried, three illegal actions each)."""
    v = _variant(config)
    rng = random.Random(pick)
    candidates = _candidate_actions(v)
    for state in _walk(v, seed, policy, deals=1):
        if state.is_terminal():
            break
        if rng.random() < 0.5:  # observing every seat is costly: try about half of the steps
            continue
        legal = list(state.legal_actions())
        illegal = [a for a in candidates if a not in legal]
        views = [observe(state, s).to_dict() for s in [None, *range(v.seats)]]
        history = list(state.history)
        for action in rng.sample(illegal, 3):
            with pytest.raises(IllegalActionError, match=re.escape(repr(action.text))):
                state.apply(action)
        assert state.legal_actions() == legal
        assert state.history == history
        assert [observe(state, s).to_dict() for s in [None, *range(v.seats)]] == views


# ---------------------------------------------------------------------- clone


def _canonical(value: object) -> object:
    """A deep, order-stable copy of a field: sets become sorted lists."""
    if isinstance(value, set | frozenset):
        return ("set", sorted((_canonical(v) for v in value), key=repr))
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def _text(value: object) -> str:
    """The field as order-stable text: its repr, made at C speed, unless a set (or a dict) is inside."""
    text = repr(value)
    return text if "{" not in text else repr(_canonical(value))


def _fingerprint(state: GameState) -> dict[str, str]:
    """Every field of the state, as text (a deep snapshot)."""
    names = {n for cls in type(state).__mro__ for n in getattr(cls, "__slots__", ())}
    return {n: _text(getattr(state, n)) for n in sorted(names) if hasattr(state, n)}


@pytest.mark.slow
@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=POLICIES, branch=SEEDS)
def test_clone_is_independent(
    config: tuple[str, dict[str, str]], seed: int, policy: Policy, branch: int
) -> None:
    """clone() is a faithful, independent copy: at steps of the first deal, a clone has every field
    equal to the original's; playing on a clone leaves the original unchanged, and playing on the
    original leaves an earlier clone unchanged."""
    v = _variant(config)
    rng = random.Random(branch)
    held: tuple[GameState, dict[str, str]] | None = None
    for state in _walk(v, seed, policy, deals=1):
        if held is not None:
            assert _fingerprint(held[0]) == held[1], "applying to the original changed a clone"
            held = None
        if state.is_terminal():
            break
        if rng.random() > 0.3:  # a deep snapshot is costly: check about a third of the steps
            continue
        state.legal_actions()
        before = _fingerprint(state)
        copy = state.clone()
        assert _fingerprint(copy) == before
        for _ in range(rng.randrange(1, 5)):
            if copy.is_terminal():
                break
            legal = copy.legal_actions()
            copy.apply(legal[rng.randrange(len(legal))])
        assert _fingerprint(state) == before, "applying to a clone changed the original"
        fresh = state.clone()
        held = (fresh, before)


# ---------------------------------------------------------------------- oracles for play and declaring


def _allowed_kinds(state: GameState) -> set[int]:
    """002 (and 000 for Polish and Rubicon): in the stock phase any card may be played; in the last
    eight (nine) tricks the follower must follow suit and win if able, and if void must win by
    trumping if able; otherwise he plays any card. Between identical cards the first played wins."""
    hand = {c & 31 for c in state.hands[state.to_act]}
    if state.stock_size > 0 or not state.trick:
        return hand
    led = state.trick[0]
    suit, rank, trump = (led >> 3) & 3, led & 7, state.trump
    same = {k for k in hand if (k >> 3) & 3 == suit}
    if same:
        higher = {k for k in same if k & 7 > rank}
        return higher or same
    trumps = {k for k in hand if (k >> 3) & 3 == trump}
    return trumps or hand


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=POLICIES)
def test_plays_follow_the_trick_rules(
    config: tuple[str, dict[str, str]], seed: int, policy: Policy
) -> None:
    """002: the plays offered are exactly those the rules allow: any card in the stock phase, follow
    suit and win if able in the last eight tricks (000: last nine in Rubicon), over two deals."""
    for state in _walk(_variant(config), seed, policy, deals=2):
        if state.is_terminal():
            break
        if observe(state, None).phase != "play":
            continue
        kinds = {a.refs[0] & 31 for a in state.legal_actions()}
        assert kinds == _allowed_kinds(state), [a.text for a in state.legal_actions()]


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=POLICIES)
@example(
    seed=7041, policy=(7041, False)
)  # two-handed "one": a combination held to score, scored later
def test_declarations_use_cards_the_declarer_may_declare(
    config: tuple[str, dict[str, str]], seed: int, policy: Policy
) -> None:
    """002: a declaration is made from the hand by the winner of the trick just played (a card led
    or played cannot be declared), with at least one card not declared before. 000 (Polish): only
    from open cards, every declaration including a card of the trick last won."""
    v = _variant(config)
    for state in _walk(v, seed, policy, deals=2):
        if state.is_terminal():
            break
        declarations = [
            a
            for a in state.legal_actions()
            if a.verb is Verb.DECLARE and a.combo != Combo.CARTE_BLANCHE
        ]
        if not declarations:
            continue
        seat = state.to_act
        obs = observe(state, seat)
        assert obs.phase == "declare"
        assert obs.last_trick_winner == seat
        trick_cards = {c for _, c in obs.last_trick}
        if v.family is Family.POLISH:
            open_cards = set(obs.seats[seat].open_cards)
            for a in declarations:
                if a.combo == Combo.SEVEN_OF_TRUMPS:
                    continue
                assert set(a.refs) <= open_cards, a.text
                assert set(a.refs) & trick_cards, a.text
            continue
        held = Counter(obs.hand)
        table = {c for c, _ in obs.seats[seat].table}
        for a in declarations:
            need = Counter(a.refs)
            assert all(held[r] >= n for r, n in need.items()), a.text
            assert not set(a.refs) & trick_cards, a.text
            if a.text in obs.seats[seat].to_score:
                continue  # 004: held "to score" when its cards were laid, scored on a later trick
            if v.family is Family.ORDINARY and a.combo != Combo.SEVEN_OF_TRUMPS:
                # 002 (not Rubicon, where 004 lets a combination be re-formed from the table).
                assert any(r >= ANY_COPY or r not in table for r in a.refs), a.text


_LEVELS = {
    "marriage": ("A", 1),
    "royal-marriage": ("A", 1),
    "sequence": ("A", 2),
    "plain-sequence": ("A", 2),
    "bezique": ("B", 1),
    "double-bezique": ("B", 2),
    "triple-bezique": ("B", 3),
    "quadruple-bezique": ("B", 4),
    "four-knaves": ("knaves", 1),
    "four-queens": ("queens", 1),
    "four-kings": ("kings", 1),
    "four-aces": ("aces", 1),
}


def _declarations_by_turn(v: Variant, seed: int, policy: Policy) -> list[list[list[ScoreItem]]]:
    """Per deal, per declaring turn (the trick just won), the declaration items scored in it."""
    turns: dict[tuple[int, int], list[ScoreItem]] = {}
    seen = 0
    key = (0, 0)
    for state in _walk(v, seed, policy):
        items = [i for d in state.deals for i in d.items]
        if not state.is_terminal():
            items += state.items
        for item in items[seen:]:  # scored by the action applied to the state of ``key``
            if item.reason in _LEVELS:
                turns.setdefault(key, []).append(item)
        seen = len(items)
        key = (state.deal_index, state.tricks_done)
    deals: list[list[list[ScoreItem]]] = []
    for (deal, _), items in sorted(turns.items()):
        deals.extend([] for _ in range(deal + 1 - len(deals)))
        deals[deal].append(items)
    return deals


@parametrize_configs
@EXAMPLES
@given(seed=SEEDS, policy=POLICIES)
def test_a_card_never_scores_twice_in_the_same_kind(
    config: tuple[str, dict[str, str]], seed: int, policy: Policy
) -> None:
    """002 (and 000 for Polish): a card is never used twice in the same kind of combination (a queen
    marries once, takes part in one four queens, one single bezique), and moves only up within a
    class: the K-Q of a sequence never marry afterwards, the cards of a double bezique never make a
    single one. Two-handed: no card is part of two declarations in one turn (002), and every
    declaration holds a card not declared before (002; not checked under the one-per-trick option,
    where a claim held "to score" is scored later from cards already laid). Polish: a compound
    declaration is made at once (000), so within a turn each card is judged by its level before the
    turn and serves once per kind. Rubicon (004): a combination may be re-formed with other cards and
    score again, but never lower in its class and never the same cards twice. With one declaration
    per trick (Portland Club, Rubicon) a turn scores at most one combination."""
    v = _variant(config)
    polish = v.family is Family.POLISH
    rubicon = v.family is Family.RUBICON
    for turns in _declarations_by_turn(v, seed, policy):
        level: dict[tuple[int, str], int] = {}
        declared: set[int] = set()
        scored: set[tuple[tuple[str, int], frozenset[int]]] = set()
        for turn in turns:
            if v.declarations_per_trick == "one":
                assert len(turn) == 1, [i.text for i in turn]
            start = dict(level)
            used: set[tuple[int, str]] = set()
            in_turn: set[int] = set()
            for item in turn:
                klass, lvl = _LEVELS[item.reason]
                key = ((klass, lvl), frozenset(item.cards))
                assert key not in scored, f"{item.text}: these cards scored this before"
                scored.add(key)
                for card in item.cards:
                    before = (start if polish else level).get((card, klass), 0)
                    ok = lvl >= before if rubicon else lvl > before
                    assert ok, f"{item.text}: {card_text(card)} was at level {before}"
                    assert (card, item.reason) not in used, f"{item.text}: twice in one turn"
                    used.add((card, item.reason))
                    level[card, klass] = max(lvl, level.get((card, klass), 0))
                if not polish:
                    assert not set(item.cards) & in_turn, f"{item.text}: a card twice in a turn"
                    in_turn.update(item.cards)
                    if v.declarations_per_trick != "one":
                        assert set(item.cards) - declared, f"{item.text}: no new card"
                declared.update(item.cards)
