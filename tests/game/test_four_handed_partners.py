"""Four-handed Bezique (docs/rules.md §4; sources 000, 003 and EB9-643): declaring on a partner's
trick, béziques formed from either partner's, what a seat sees, side scores and the side's target.

Unless a test says otherwise seat 3 deals, so seat 0 (left of the dealer) leads, hearts are trumps, and
seats 0 and 2 play against seats 1 and 3 in ``four-handed-partners``.
"""

from __future__ import annotations

from engine_helpers import act, finish_turn, first_legal, hand_kinds, last_winner, plays, texts
from four_handed_helpers import RANKS, P, V, deal, play_deal

from arena.game import (
    Action,
    GameState,
    Variant,
    card_text,
    observe,
    variant,
)

# ---------------------------------------------------------------- helpers


def finish_turn_if_seat(s: GameState, seat: int) -> None:
    """End ``seat``'s declaring turn if it is still open."""
    if s.phase == 2 and s.to_act == seat:
        act(s, "done")


# ---------------------------------------------------------------- declaring with partners

# Seat 0 wins by leading an ace; the others throw low cards. Hearts trumps (turn-up 9H).
THROW = ["7C", "8C", "9C", "7D", "8D", "9D", "8S", "7S"]
QUIET = ["TS", "TS", "TS", "TS", "TD", "TD", "TD", "TD", "TC", "TC", "TC", "TC"]


def _win(s: GameState, lead: str) -> None:
    """Seat 0 leads ``lead``; each other seat throws its lowest card; seat 0 wins."""
    act(s, f"play {lead}")
    for _ in range(3):
        act(s, f"play {sorted(plays(s), key=lambda c: (RANKS.index(c[0]), c[1]))[0]}")
    assert last_winner(s) == 0


def test_partner_may_declare_when_his_partner_takes_a_trick() -> None:
    """000, 003 ii: a player may declare when his partner takes a trick (the winner has nothing to
    declare); the partner declares from his own hand and scores for it."""
    s = deal(
        [
            ["AS", "AC", "AD", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["KS", "QS", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
        ],
        stock=QUIET,
    )
    _win(s, "AS")
    assert s.phase == 2
    assert s.to_act == 2
    assert observe(s, 2).phase == "declare"
    assert "declare marriage KS QS" in texts(s)
    act(s, "declare marriage KS QS")
    assert s.deal_points == [0, 0, 20, 0]
    finish_turn(s)
    assert s.to_act == 0  # the winner leads the next trick
    assert s.stock_size == 92


def test_winner_declares_first_then_his_partner_each_from_his_own_hand() -> None:
    """003 iii: declarations are made by each player separately, as in two-handed; the winner of the
    trick first, then his partner (000)."""
    s = deal(
        [
            ["AS", "KC", "QC", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["KS", "QS", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
        ],
        stock=QUIET,
    )
    _win(s, "AS")
    assert s.to_act == 0 and s.phase == 2
    assert [t for t in texts(s) if t.startswith("declare")] == ["declare marriage KC QC"]
    act(s, "declare marriage KC QC")
    finish_turn_if_seat(s, 0)
    assert s.to_act == 2 and s.phase == 2
    assert [t for t in texts(s) if t.startswith("declare")] == ["declare marriage KS QS"]
    act(s, "declare marriage KS QS")
    finish_turn(s)
    assert s.deal_points == [20, 0, 20, 0]


def test_partners_hands_are_not_pooled_for_a_combination() -> None:
    """000: each declares from his own hand: a king held by one partner and the queen by the other make
    no marriage for either."""
    s = deal(
        [
            ["AS", "KD", "AC", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["QD", "9S", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
        ],
        stock=QUIET,
    )
    _win(s, "AS")
    assert s.phase == 1
    assert s.to_act == 0
    assert s.deal_points == [0, 0, 0, 0]


def test_adversaries_of_the_winner_do_not_declare() -> None:
    """000: only the winner of the trick and his partner may declare; the other side holds a marriage
    and gets no declaring turn."""
    s = deal(
        [
            ["AS", "AC", "AD", "7S", "8S", "9S", "7D", "8D"],
            ["KS", "QS", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
            ["KC", "QC", "7C", "8C", "9C", "7D", "8D", "9D"],
        ],
        stock=QUIET,
    )
    _win(s, "AS")
    assert s.phase == 1
    assert s.to_act == 0
    assert s.deal_points == [0, 0, 0, 0]


def test_individual_four_handed_only_the_winner_declares() -> None:
    """docs/rules.md §1, §4: without partners only the winner of the trick declares."""
    s = deal(
        [
            ["AS", "AC", "AD", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["KS", "QS", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
        ],
        v=V,
        stock=QUIET,
    )
    _win(s, "AS")
    assert s.phase == 1
    assert s.to_act == 0


PARTNER_BEZ = ["QS", "JD", "7C", "8C", "9C", "7D", "8D", "9D"]
PARTNER_DOUBLE = ["QS", "QS", "JD", "JD", "7C", "8C", "9C", "7D"]


def test_double_bezique_from_the_partners_declared_bezique() -> None:
    """000 (EB9-643): to form a double bezique the béziques may be declared from the hand of either
    partner: the partner's bezique on the table and one's own make a double (500)."""
    s = deal(
        [["AS", "AC", "QS", "JD", "7S", "8S", "9S", "7D"], THROW, PARTNER_BEZ, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "done")  # seat 0 keeps its bezique in hand
    assert s.to_act == 2
    act(s, "declare bezique QS JD")
    finish_turn(s)
    _win(s, "AC")
    action = "declare double-bezique QS QS.1 JD JD.1"
    assert Action.parse(action) in s.legal_actions(), texts(s)
    act(s, action)
    assert s.deal_points == [500, 0, 40, 0]
    assert s.items[-1].reason == "double-bezique"


def test_partner_adds_his_bezique_to_the_winners_in_the_same_trick() -> None:
    """000: after the winner declares a bezique, his partner may declare a double bezique with his own
    bezique and the winner's on the table."""
    s = deal(
        [["AS", "AC", "QS", "JD", "7S", "8S", "9S", "7D"], THROW, PARTNER_BEZ, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "declare bezique QS JD")
    finish_turn_if_seat(s, 0)
    assert s.to_act == 2 and s.phase == 2
    action = "declare double-bezique QS QS.1 JD JD.1"
    assert Action.parse(action) in s.legal_actions(), texts(s)
    act(s, action)
    assert s.deal_points == [40, 0, 500, 0]


def test_the_partners_bezique_serves_once_in_a_turn() -> None:
    """002, disjoint declarations: no card is part of two declarations in one turn, the partner's
    declared bezique cards included. Once a double bezique has taken the partner's QS.1 and JD.1, the
    same turn may not make them part of a triple too (an audit found 500 + 1500 on one trick)."""
    s = deal(
        [["QS", "QS", "QS", "JD", "JD", "JD", "AS", "AC"], THROW, PARTNER_BEZ, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "done")
    assert s.to_act == 2
    act(s, "declare bezique QS JD")
    finish_turn(s)
    _win(s, "AC")
    act(s, "declare double-bezique QS QS.1 JD JD.1")
    legal = texts(s)
    assert not any("QS.1" in t or "JD.1" in t for t in legal), legal
    assert "declare double-bezique QS QS JD JD" in legal  # the seat's own cards still may


def test_triple_bezique_from_the_partners_double() -> None:
    """000 (EB9-643): a triple bezique may be formed with the partner's declared double bezique and
    one's own bezique (1500)."""
    s = deal(
        [["AS", "AC", "QS", "JD", "7S", "8S", "9S", "7D"], THROW, PARTNER_DOUBLE, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "done")
    act(s, "declare double-bezique QS QS JD JD")
    finish_turn(s)
    _win(s, "AC")
    action = "declare triple-bezique QS QS.1 QS.2 JD JD.1 JD.2"
    assert Action.parse(action) in s.legal_actions(), texts(s)
    act(s, action)
    assert s.deal_points == [1500, 0, 500, 0]


def test_quadruple_bezique_scores_4500_with_the_partners_double() -> None:
    """docs/rules.md §4: quadruple bezique 4500; with partners the béziques of either partner combine (000), so
    one's own two béziques with the partner's declared double make a quadruple."""
    s = deal(
        [["AS", "AC", "QS", "QS", "JD", "JD", "9S", "7D"], THROW, PARTNER_DOUBLE, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "done")
    act(s, "declare double-bezique QS QS JD JD")
    finish_turn(s)
    _win(s, "AC")
    action = "declare quadruple-bezique QS QS QS.1 QS.2 JD JD JD.1 JD.2"
    assert Action.parse(action) in s.legal_actions(), texts(s)
    act(s, action)
    assert s.deal_points == [4500, 0, 500, 0]
    assert s.items[-1].reason == "quadruple-bezique"


def test_triple_bezique_from_each_partners_single_and_a_new_pair() -> None:
    """000 (EB9-643): a triple bezique formed from the bezique declared by each partner and a third
    bezique from the hand scores 1500."""
    s = deal(
        [["AS", "AC", "QS", "JD", "QS", "JD", "9S", "7D"], THROW, PARTNER_BEZ, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "declare bezique QS JD")
    finish_turn_if_seat(s, 0)
    act(s, "declare bezique QS JD")  # the partner's
    finish_turn(s)
    _win(s, "AC")
    action = "declare triple-bezique QS.1 QS.2 QS JD.1 JD.2 JD"
    assert Action.parse(action) in s.legal_actions(), texts(s)
    act(s, action)
    assert s.deal_points == [1540, 0, 40, 0]


def test_a_partners_queen_from_four_queens_is_not_a_bezique() -> None:
    """000: only the béziques declared by either partner combine; a queen of spades the partner declared
    in four queens does not make a double bezique with one's own bezique."""
    s = deal(
        [
            ["AS", "AC", "QS", "JD", "JD", "8S", "9S", "7D"],
            THROW,
            ["QS", "QH", "QD", "QC", "7C", "8C", "9C", "7D"],
            THROW,
        ],
        stock=QUIET,
    )
    _win(s, "AS")
    finish_turn_if_seat(s, 0)
    assert s.to_act == 2
    act(s, "declare four-queens QS QH QD QC")
    finish_turn(s)
    _win(s, "AC")
    assert [t for t in texts(s) if "bezique" in t] == ["declare bezique QS JD"]


def test_partners_beziques_need_a_new_card() -> None:
    """docs/rules.md §1 (002): a declaration needs a card not declared before: two béziques already declared,
    one by each partner, make no double bezique by themselves."""
    s = deal(
        [["AS", "AC", "QS", "JD", "7S", "8S", "9S", "7D"], THROW, PARTNER_BEZ, THROW],
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "declare bezique QS JD")
    finish_turn_if_seat(s, 0)
    act(s, "declare bezique QS JD")  # the partner's own single bezique
    finish_turn(s)
    assert s.deal_points == [40, 0, 40, 0]
    _win(s, "AC")
    assert not any("bezique" in t for t in texts(s))


def test_individual_players_never_use_anothers_bezique() -> None:
    """docs/rules.md §4: only partners form béziques together; playing independently, a bezique declared by
    another player does not help make a double."""
    s = deal(
        [
            ["7S", "AD", "QS", "JD", "8S", "9S", "7D", "8D"],
            ["8S", "9D", "7C", "8C", "9C", "7D", "8D", "7S"],
            ["AS", "8D", "QS", "JD", "7C", "8C", "9C", "7D"],
            ["9S", "8D", "7C", "8C", "9C", "7D", "9D", "7S"],
        ],
        v=V,
        stock=QUIET,
    )
    act(s, "play 7S", "play 8S", "play AS", "play 9S")
    assert last_winner(s) == 2
    act(s, "declare bezique QS JD")
    finish_turn(s)
    act(s, "play 7D", "play 8D", "play AD", "play 9D")
    assert last_winner(s) == 0
    assert [t for t in texts(s) if "bezique" in t] == ["declare bezique QS JD"]


def test_second_double_bezique_as_in_three_handed() -> None:
    """EB9-643: with four players "a second double bezique or triple bezique may be scored as before",
    that is (three-handed) declared to a bezique on the table already used for a double bezique: a new
    bezique with one bezique of the declared double scores 500 again."""
    s = deal(
        [["AS", "AC", "QS", "QS", "QS", "JD", "JD", "JD"], THROW, THROW, THROW],
        v=V,
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "declare double-bezique QS QS JD JD")
    finish_turn(s)
    _win(s, "AC")
    seconds = [
        t
        for t in texts(s)
        if t.startswith("declare double-bezique") and t.count(".") == 2 and " QS " in f"{t} "
    ]
    assert seconds, texts(s)
    act(s, seconds[0])
    assert s.deal_points[0] == 1000


# ---------------------------------------------------------------- what a seat sees


def test_a_partners_hand_is_hidden() -> None:
    """docs/rules.md §7 / issue 3: in partnerships a partner's hand is hidden too: a seat sees its own hand and
    the table, never its partner's cards (all four aces of hearts here)."""
    s = deal(
        [
            ["AS", "AC", "AD", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["AH", "AH", "AH", "AH", "KS", "QS", "9C", "9D"],
            THROW,
        ],
        stock=QUIET,
    )
    for seat in (0, 1, 3, None):
        view = observe(s, seat)
        assert "AH" not in str(view.to_dict())
        assert view.seats[2].hand_size == 8
        assert view.seats[2].table == ()
    assert hand_kinds(s, 2).count("AH") == 4
    _win(s, "AS")
    assert s.to_act == 2
    act(s, "declare marriage KS QS")
    view = observe(s, 0)
    assert "AH" not in str(view.to_dict())
    assert sorted(card_text(c) for c, _ in view.seats[2].table) == ["KS.1", "QS.1"]


# ---------------------------------------------------------------- side scores and the target

SEED = 5


def _dry_run(v: Variant) -> list[int]:
    s = GameState.new(v, seed=SEED, dealer=0)
    play_deal(s)
    return list(s.deals[0].points)


def _with_totals(v: Variant, totals: list[int]) -> GameState:
    s = GameState.new(v, seed=SEED, dealer=0)
    s.totals[:] = totals
    return s


def test_partners_scores_add_and_the_target_applies_to_the_side() -> None:
    """000: partners' scores add up; docs/rules.md §4: the target (2000) applies to the side: the side reaches it
    though neither partner has 2000. The result ranks the sides."""
    p = _dry_run(P)
    s = _with_totals(P, [1000 - p[0], 100 - p[1], 1000 - p[2], 100 - p[3]])
    play_deal(s)
    assert s.is_terminal()
    result = s.result()
    assert result.sides == ((0, 2), (1, 3))
    assert result.scores == (1000, 100, 1000, 100)
    assert result.side_scores == (2000, 200)
    assert result.ranking == (0, 1)
    assert result.winners == (0, 2)
    assert result.team_sizes == (1, 1, 1, 1)


def test_same_totals_do_not_end_an_individual_game() -> None:
    """docs/rules.md §4: playing independently each player's own total must reach 2000."""
    p = _dry_run(V)
    s = _with_totals(V, [1000 - p[0], 100 - p[1], 1000 - p[2], 100 - p[3]])
    play_deal(s)
    assert not s.is_terminal()
    assert s.deal_index == 1
    assert s.dealer == 1


def test_equal_side_totals_play_another_deal() -> None:
    """docs/rules.md §1: equal (side) totals at or above the target play another deal."""
    p = _dry_run(P)
    s = _with_totals(P, [1100 - p[0], 1000 - p[1], 1000 - p[2], 1100 - p[3]])
    play_deal(s)
    assert not s.is_terminal()
    assert [d.totals for d in s.deals] == [(1100, 1000, 1000, 1100)]


def test_higher_side_at_or_above_target_wins() -> None:
    """docs/rules.md §1, §4: the higher side total at or above the target wins, even with both sides above."""
    p = _dry_run(P)
    s = _with_totals(P, [1100 - p[0], 1000 - p[1], 1000 - p[2], 1090 - p[3]])
    play_deal(s)
    assert s.is_terminal()
    result = s.result()
    assert result.side_scores == (2100, 2090)
    assert result.ranking == (0, 1)
    assert result.winners == (0, 2)


def test_immediate_a_side_reaching_the_target_wins_at_once() -> None:
    """docs/rules.md §1 (game_end = immediate) with partners: the partner's declaration brings the side to the
    target mid-hand and the side wins at once."""
    v = variant("four-handed-partners", game_end="immediate")
    s = deal(
        [
            ["AS", "AC", "AD", "7S", "8S", "9S", "7D", "8D"],
            THROW,
            ["KS", "QS", "7C", "8C", "9C", "7D", "8D", "9D"],
            THROW,
        ],
        v=v,
        stock=QUIET,
    )
    s.totals[:] = [1500, 1990, 480, 0]
    _win(s, "AS")
    act(s, "declare marriage KS QS")
    assert s.is_terminal()
    result = s.result()
    assert result.side_scores == (2000, 1990)
    assert result.winners == (0, 2)
    assert s.deals[-1].completed is False


def test_individual_result_ranks_four_sides() -> None:
    """docs/rules.md §4: playing independently, each player is a side; the result ranks the four."""
    s = GameState.new(V, seed=2)
    while not s.is_terminal():
        first_legal(s)
    result = s.result()
    assert result.sides == ((0,), (1,), (2,), (3,))
    assert result.side_scores == result.scores
    best = max(result.scores)
    assert best >= 2000 and result.scores.count(best) == 1
    for i, score in enumerate(result.scores):
        assert result.ranking[i] == len({x for x in result.scores if x > score})
