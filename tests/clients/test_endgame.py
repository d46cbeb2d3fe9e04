"""The exact endgame (arena_bot.endgame): alpha-beta over bit masks must give the minimax value of
the last tricks under RULES.md section 2 (follow suit and win if able, else trump if able; brisques
10 each and 10 for the last trick), agree with a plain search on constructed and random positions,
and keep agreeing when one solver is asked about many positions of one deal."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

from arena.game import GameState, variant
from arena.game.cards import TEN, parse_kind
from arena_bot.endgame import EndgameSolver, brute_force

Hand = tuple[int, ...]
Reference = Callable[[Hand, Hand], int]


def hand(*cards: str) -> Hand:
    return tuple(sorted(parse_kind(c) for c in cards))


def reference(trump: int, last: int, brisque: int = 10) -> Reference:
    """A memoized plain minimax over sorted hands (no pruning): slow but obviously right, for eight
    cards a hand where brute force without a table takes too long."""
    rules = EndgameSolver(trump, last, brisque)

    @functools.cache
    def value(leader: Hand, follower: Hand) -> int:
        if not leader:
            return 0
        best = -(10**9)
        for lead in set(leader):
            worst = 10**9
            for card in rules.follows(follower, lead):
                rest_l = list(leader)
                rest_l.remove(lead)
                rest_f = list(follower)
                rest_f.remove(card)
                points = (brisque if lead & 7 >= TEN else 0) + (brisque if card & 7 >= TEN else 0)
                if not rest_l:
                    points += last
                if rules.follower_wins(lead, card):
                    v = -points - value(tuple(rest_f), tuple(rest_l))
                else:
                    v = points + value(tuple(rest_l), tuple(rest_f))
                worst = min(worst, v)
            best = max(best, worst)
        return best

    return value


def test_a_constructed_position() -> None:
    """002: hearts trumps; the leader holds AH and 7S, the follower TS and 8C. Leading AH, the
    follower throws 8C (10 to the leader), then wins 7S with TS (10) and the last trick (10): -10.
    Leading 7S, the follower must win it with TS (10), leads 8C, which AH must trump (10 + 10 for
    the last trick): +10, the better line."""
    solver = EndgameSolver(1, 10)
    leader, follower = hand("AH", "7S"), hand("TS", "8C")
    assert solver.after_lead(leader, follower, parse_kind("AH")) == -10
    assert solver.after_lead(leader, follower, parse_kind("7S")) == 10
    assert solver.value(leader, follower) == 10
    assert solver.best_lead(leader, follower) == (parse_kind("7S"), 10)


def test_the_follower_must_win_and_may_not_underplay() -> None:
    """002: holding the suit led, the follower must win if able: to KS led with AS and 9S in hand,
    only AS is legal; void in spades, it must trump; void in both, anything."""
    solver = EndgameSolver(1, 10)  # hearts
    led = parse_kind("KS")
    assert solver.follows(hand("AS", "9S", "7H"), led) == [parse_kind("AS")]
    assert solver.follows(hand("QS", "9S", "7H"), led) == sorted(hand("QS", "9S"))
    assert solver.follows(hand("7H", "TH", "AC"), led) == sorted(hand("7H", "TH"))
    assert solver.follows(hand("AC", "TD"), led) == sorted(hand("AC", "TD"))


def test_a_constructed_last_eight() -> None:
    """Eight cards a hand, spades trumps: the solver's value and every lead's value equal the plain
    minimax, and its chosen lead attains the optimum."""
    leader = hand("AS", "TS", "KS", "9H", "AH", "TD", "7D", "QC")
    follower = hand("JS", "8S", "AD", "KD", "TH", "KH", "AC", "TC")
    solver = EndgameSolver(0, 10)
    ref = reference(0, 10)
    best = ref(leader, follower)
    assert solver.value(leader, follower) == best
    for lead in set(leader):
        expected = min(
            ref_after(ref, solver, leader, follower, lead, card)
            for card in solver.follows(follower, lead)
        )
        assert solver.after_lead(leader, follower, lead) == expected
    kind, value = solver.best_lead(leader, follower)
    assert value == best
    assert solver.after_lead(leader, follower, kind) == best


def ref_after(
    ref: Reference,
    rules: EndgameSolver,
    leader: Hand,
    follower: Hand,
    lead: int,
    card: int,
) -> int:
    rest_l = list(leader)
    rest_l.remove(lead)
    rest_f = list(follower)
    rest_f.remove(card)
    points = (10 if lead & 7 >= TEN else 0) + (10 if card & 7 >= TEN else 0)
    points += 0 if rest_l else rules.last_trick
    if rules.follower_wins(lead, card):
        return int(-points - ref(tuple(sorted(rest_f)), tuple(sorted(rest_l))))
    return int(points + ref(tuple(sorted(rest_l)), tuple(sorted(rest_f))))


def test_agrees_with_brute_force_on_random_positions() -> None:
    """One to four cards a hand, two packs' worth of copies, any trump: the value equals plain
    minimax; so does the follower's best answer to each lead."""
    rng = random.Random(7)
    deck = [k for k in range(32) for _ in range(2)]
    for size in (1, 2, 3, 4):
        for _ in range(25):
            rng.shuffle(deck)
            a, b = tuple(sorted(deck[:size])), tuple(sorted(deck[size : 2 * size]))
            trump = rng.randrange(4)
            solver = EndgameSolver(trump, 10)
            assert solver.value(a, b) == brute_force(trump, 10, a, b)
            lead = rng.choice(a)
            card, v = solver.best_follow(a, b, lead)
            assert card in solver.follows(b, lead)
            assert v == solver.after_lead(a, b, lead)


def test_one_solver_follows_a_whole_deal() -> None:
    """A solver kept between decisions (its table reused) answers every position of a played-out
    last eight as a fresh search would, whoever leads."""
    rng = random.Random(11)
    deck = [k for k in range(32) for _ in range(2)]
    for _ in range(6):
        rng.shuffle(deck)
        trump = rng.randrange(4)
        ref = reference(trump, 10)
        leader, follower = list(deck[:8]), list(deck[8:16])
        solver = EndgameSolver(trump, 10)
        while leader:
            assert solver.value(leader, follower) == ref(
                tuple(sorted(leader)), tuple(sorted(follower))
            )
            lead = rng.choice(leader)
            card = rng.choice(solver.follows(follower, lead))
            leader.remove(lead)
            follower.remove(card)
            if solver.follower_wins(lead, card):
                leader, follower = follower, leader


def test_more_packs_and_rubicon_scoring() -> None:
    """Three and four packs (identical cards in both hands: the first played wins), no trumps yet
    (Rubicon), and Rubicon's scoring (the last trick 50, brisques weighed 1): the solver equals the
    plain search."""
    for packs, last, brisque in ((3, 10, 10), (4, 50, 1)):
        rng = random.Random(packs)
        deck = [k for k in range(32) for _ in range(packs)]
        for _ in range(40):
            rng.shuffle(deck)
            a, b = tuple(sorted(deck[:4])), tuple(sorted(deck[4:8]))
            trump = rng.randrange(-1, 4)
            expected = brute_force(trump, last, a, b, brisque=brisque)
            assert EndgameSolver(trump, last, brisque).value(a, b) == expected


def test_follows_match_the_engine() -> None:
    """In the last eight tricks of real games the solver's answers to a card led are exactly the
    engine's legal plays."""
    rng = random.Random(3)
    compared = 0
    for seed in range(6):
        state = GameState.new(variant("two-handed"), seed=seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            if not state.in_stock_phase and state.phase == 1 and state.trick:
                solver = EndgameSolver(state.trump, 10)
                mine = tuple(c & 31 for c in state.hands[state.to_act])
                kinds = solver.follows(mine, state.trick[0] & 31)
                assert kinds == sorted(a.refs[0] & 31 for a in legal)
                compared += 1
            state.apply(rng.choice(legal))
    assert compared > 30
