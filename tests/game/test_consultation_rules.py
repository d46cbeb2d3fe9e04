"""Bezique in consultation (docs/rules.md §3 and §4; source 000): three players, one alone against two
allies sharing a hand (``three-handed-consultation``), or four players in two teams sharing a hand each
(``four-handed-consultation``). Two packs, played exactly as two-handed; the decision alternates between
the players of a shared seat trick by trick (``GameState.deciding_member``), and both see the hand.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import pytest

from arena.game import GameState, Variant, observe, variant

THREE = variant("three-handed-consultation")
FOUR = variant("four-handed-consultation")
TWO = variant("two-handed")
CONSULTATION = [THREE, FOUR]
IDS = ["three-handed-consultation", "four-handed-consultation"]


def _walk(v: Variant, seed: int, policy: int) -> Iterator[GameState]:
    """The states of a game under a seeded random legal policy, one before each action, and the
    final state."""
    state = GameState.new(v, seed)
    rng = random.Random(policy)
    for _ in range(20_000):
        yield state
        if state.is_terminal():
            return
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    raise AssertionError("the game did not end")


def _tricks_in_log(state: GameState) -> int:
    """Tricks completed in the whole game so far, counted from the public log."""
    return sum(1 for line in observe(state, None).log if " wins trick " in line)


# ---------------------------------------------------------------- the variants


def test_three_handed_consultation_one_against_two_allies_two_packs() -> None:
    """000 / docs/rules.md §3: the highest cutter plays alone against the other two in consultation; only two
    packs are used; the allies' seat is played by a team of two."""
    assert THREE.packs == 2
    assert THREE.deck_size == 64
    assert THREE.seats == 2
    assert THREE.hand_size == 8
    assert THREE.team_sizes == (1, 2)
    assert THREE.team_size(0) == 1
    assert THREE.team_size(1) == 2
    assert THREE.sides == ((0,), (1,))
    assert not THREE.last_duels


def test_four_handed_consultation_two_teams_two_packs() -> None:
    """000 / docs/rules.md §4: four people may play in pairs by consultation, only two packs being required; each
    side is a team of two sharing a hand."""
    assert FOUR.packs == 2
    assert FOUR.seats == 2
    assert FOUR.team_sizes == (2, 2)
    assert FOUR.sides == ((0,), (1,))
    assert not FOUR.last_duels


@pytest.mark.parametrize("v", CONSULTATION, ids=IDS)
def test_scores_and_target_as_two_handed(v: Variant) -> None:
    """docs/rules.md §3, §4: consultation is played exactly as two-handed (002): the same scores and the target
    1000, no triple bezique with two packs."""
    assert dict(v.scores) == dict(TWO.scores)
    assert v.target == TWO.target == 1000
    assert v.last_trick == 10
    s = GameState.new(v, seed=3)
    assert s.stock_size == 48
    assert [len(observe(s, seat).hand) for seat in (0, 1)] == [8, 8]


@pytest.mark.parametrize("v", CONSULTATION, ids=IDS)
@pytest.mark.parametrize("seed", [1, 2])
def test_played_exactly_as_two_handed(v: Variant, seed: int) -> None:
    """000 / docs/rules.md §3, §4: the game in consultation is played exactly as two-handed: the same seed and the
    same answers give the same deals, the same legal actions at every step, the same public log and
    the same scores; only the result's team sizes differ."""
    a = GameState.new(v, seed)
    b = GameState.new(TWO, seed)
    rng = random.Random(seed)
    steps = 0
    while not a.is_terminal():
        legal = a.legal_actions()
        assert legal == b.legal_actions()
        assert a.to_act == b.to_act
        action = legal[rng.randrange(len(legal))]
        a.apply(action)
        b.apply(action)
        steps += 1
    assert b.is_terminal()
    assert observe(a, None).log == observe(b, None).log
    ra, rb = a.result(), b.result()
    assert ra.scores == rb.scores
    assert ra.ranking == rb.ranking
    assert ra.sides == rb.sides
    assert ra.team_sizes == v.team_sizes
    assert rb.team_sizes == (1, 1)
    assert steps > 100


# ---------------------------------------------------------------- who decides


@pytest.mark.parametrize("v", CONSULTATION, ids=IDS)
@pytest.mark.parametrize("seed", [4, 5])
def test_decisions_alternate_trick_by_trick_within_a_shared_seat(v: Variant, seed: int) -> None:
    """000 / docs/rules.md §3, §4: the referee alternates the decision between the two allies trick by trick: every
    decision of a shared seat in one trick (its play, and the declaring turn after the trick, which
    belongs to that trick) is taken by the same player, and the next trick's by the other. A seat
    played alone always has its one player decide."""
    members: dict[int, dict[int, set[int]]] = {0: {}, 1: {}}
    for state in _walk(v, seed, seed + 100):
        if state.is_terminal():
            break
        seat = state.to_act
        member = state.deciding_member()
        assert 0 <= member < v.team_size(seat)
        trick = _tricks_in_log(state)
        if observe(state, None).phase == "declare":
            trick -= 1  # the declaring turn after a trick belongs to that trick
        members[seat].setdefault(trick, set()).add(member)
    for seat in (0, 1):
        by_trick = members[seat]
        assert by_trick, seat
        assert all(len(m) == 1 for m in by_trick.values()), seat
        if v.team_size(seat) == 1:
            assert set().union(*by_trick.values()) == {0}
            continue
        tricks = sorted(by_trick)
        assert tricks == list(range(len(tricks)))  # a two-handed seat plays to every trick
        sequence = [next(iter(by_trick[t])) for t in tricks]
        assert sequence[0] == 0
        assert all(x != y for x, y in itertools.pairwise(sequence))
        assert len(sequence) > 64  # over more than one deal


def test_the_declaring_turn_belongs_to_the_trick_just_won() -> None:
    """000 / docs/rules.md §3: the player of the allies who played to the trick decides the declaring turn after
    it, then the other ally plays to the next trick."""
    for state in _walk(THREE, 9, 9):
        if state.is_terminal():
            pytest.fail("no declaring turn for the allies in this game")
        if observe(state, None).phase == "declare" and state.to_act == 1:
            played_by = [seat for seat, _ in observe(state, None).last_trick]
            assert 1 in played_by
            decl = state.deciding_member()
            assert decl == (_tricks_in_log(state) - 1) % 2
            while state.phase == 2:
                state.apply(state.legal_actions()[-1])  # done
            if state.to_act == 1 and state.phase == 1:
                assert state.deciding_member() == 1 - decl
            break


@pytest.mark.parametrize("v", [variant("three-handed"), TWO], ids=["three-handed", "two-handed"])
def test_no_consultation_one_player_per_seat(v: Variant) -> None:
    """docs/rules.md §3: outside consultation each seat is one player: the deciding member is always the first
    and the result's team sizes are all 1."""
    state = None
    for state in _walk(v, 2, 2):
        if state.is_terminal():
            break
        assert state.deciding_member() == 0
    assert state is not None
    assert state.result().team_sizes == (1,) * v.seats


# ---------------------------------------------------------------- what the allies see


@pytest.mark.parametrize("v", CONSULTATION, ids=IDS)
def test_both_allies_see_the_shared_hand(v: Variant) -> None:
    """000 / docs/rules.md §3: the allies share one hand and both see it: the seat's observation is the whole hand
    whichever ally decides, and never shows the other seat's hand."""
    seen_members: set[int] = set()
    for state in _walk(v, 6, 6):
        if state.is_terminal() or len(state.deals) > 0:
            break
        for seat in (0, 1):
            view = observe(state, seat)
            assert sorted(r & 31 for r in view.hand) == sorted(c & 31 for c in state.hands[seat])
            assert len(view.hand) == len(state.hands[seat])
        if v.team_size(state.to_act) == 2:
            seen_members.add(state.deciding_member())
    assert seen_members == {0, 1}


@pytest.mark.parametrize("v", CONSULTATION, ids=IDS)
def test_result_names_the_teams(v: Variant) -> None:
    """Issue 3 / docs/rules.md §3, §4: a game's result says which seats form a side, how many players share each
    seat, and the ranking of the sides, for a TrueSkill team update."""
    state = list(_walk(v, 8, 8))[-1]
    assert state.is_terminal()
    result = state.result()
    assert result.team_sizes == v.team_sizes
    assert result.sides == ((0,), (1,))
    final = result.deals[-1].totals
    assert result.scores == final
    winner = 0 if final[0] > final[1] else 1
    assert max(final) >= 1000
    assert result.ranking[winner] == 0 and result.ranking[1 - winner] == 1
    assert result.winners == (winner,)
