"""Four-handed partners inquiring (issue 48; docs/rules.md §4.2), from 003 ii: "A player may make a
declaration immediately after his partner has taken a trick, and may inquire of his partner if he has
anything to declare, before drawing."

With the option ``inquiry = "on"`` the winner of a stock trick may, first in his declaring turn, send
``inquire``: his partner declares (or answers that he has nothing to declare) before him, and the
winner then declares knowing the answer (a double bezique from the partner's bezique just declared).
Seat 3 deals, seat 0 leads, hearts are trumps; seats 0 and 2 are partners.
"""

from __future__ import annotations

import random

import pytest
from engine_helpers import act, plays, texts
from four_handed_helpers import RANKS, deal

from arena.game import Action, GameState, ParseError, Verb, observe, variant

ASK = variant("four-handed-partners", inquiry="on")
THROW = ["7C", "8C", "9C", "7D", "8D", "9D", "8S", "7S"]
QUIET = ["TS", "TS", "TS", "TS", "TD", "TD", "TD", "TD", "TC", "TC", "TC", "TC"]
BEZIQUE = ["QS", "JD", "7C", "8C", "9C", "7D", "8D", "9D"]
PLAIN = ["7C", "8C", "9C", "7D", "8D", "9D", "8S", "7S"]


def _win(s: GameState, lead: str) -> None:
    """Seat 0 leads ``lead``; each other seat throws its lowest card; seat 0 wins."""
    act(s, f"play {lead}")
    for _ in range(3):
        act(s, f"play {sorted(plays(s), key=lambda c: (RANKS.index(c[0]), c[1]))[0]}")
    assert s.last_trick[2] == 0


def _public(s: GameState) -> tuple[str, ...]:
    return observe(s, None).log


def test_003_the_winner_may_inquire_and_then_declare_on_the_answer() -> None:
    """003 ii: the winner "may inquire of his partner if he has anything to declare, before
    drawing": asked first, the partner declares his bezique; the winner then makes a double bezique
    with it and his own (000: "the béziques may be declared from the hand of either partner")."""
    s = deal(
        [["AS", "AC", "QS", "JD", "7S", "8S", "9S", "7D"], THROW, BEZIQUE, THROW],
        v=ASK,
        stock=QUIET,
    )
    _win(s, "AS")
    assert (s.to_act, texts(s)[-2:]) == (0, ["inquire", "done"])
    act(s, "inquire")
    assert _public(s)[-1] == "seat 0 inquires of seat 2"
    assert s.to_act == 2 and "inquire" not in texts(s)
    act(s, "declare bezique QS JD")  # nothing more to decide: his answer is given
    assert s.to_act == 0 and "inquire" not in texts(s)  # back to the winner; once a trick
    act(s, "declare double-bezique QS.1 QS JD.1 JD")
    assert s.deal_points == [500, 0, 40, 0]
    assert not any("nothing to declare" in e for e in _public(s))


def test_003_a_partner_with_nothing_answers_so() -> None:
    """Asked, a partner with nothing to declare answers so (publicly), and the turn comes back to the
    winner; a partner who declines to declare gives the same answer."""
    s = deal(
        [["AS", "AC", "7S", "8S", "9S", "7D", "8D", "9D"], THROW, PLAIN, THROW], v=ASK, stock=QUIET
    )
    _win(s, "AS")
    assert texts(s) == ["inquire", "done"]  # nothing of his own: the inquiry is his only choice
    act(s, "inquire")
    assert _public(s)[-1] == "seat 2 answers: nothing to declare"
    assert s.phase == 1 and s.to_act == 0  # nothing left to decide: drawn, seat 0 leads
    s = deal(
        [["AS", "AC", "7S", "8S", "9S", "7D", "8D", "9D"], THROW, BEZIQUE, THROW],
        v=ASK,
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "inquire")
    assert s.to_act == 2 and "declare bezique QS JD" in texts(s)
    act(s, "done")
    assert _public(s)[-1] == "seat 2 answers: nothing to declare"


def test_003_inquire_comes_first_or_not_at_all() -> None:
    """The inquiry is made before the winner declares: once he has declared it is no longer
    offered, and his partner declares after him as without the option."""
    s = deal(
        [["AS", "AC", "QS", "JD", "7S", "8S", "9S", "7D"], THROW, BEZIQUE, THROW],
        v=ASK,
        stock=QUIET,
    )
    _win(s, "AS")
    act(s, "declare bezique QS JD")  # nothing else to decide: his turn ends, no inquiry now
    assert s.to_act == 2 and "declare double-bezique QS.1 QS JD.1 JD" in texts(s)
    assert not any("inquires" in e for e in _public(s))


def test_inquiry_off_keeps_the_partner_declaring_after_the_winner() -> None:
    """Without the option (the default) nobody inquires: the partner declares after the winner, and
    a winner with nothing to decide has no turn."""
    s = deal([["AS", "AC", "7S", "8S", "9S", "7D", "8D", "9D"], THROW, BEZIQUE, THROW], stock=QUIET)
    _win(s, "AS")
    assert s.to_act == 2 and "inquire" not in texts(s)
    assert variant("four-handed-partners").inquiry == "off"


def test_inquire_is_offered_only_to_partners_while_the_stock_lasts() -> None:
    """Random games: ``inquire`` is legal only for the trick's winner, with the option, in the stock
    phase, first in his turn; the other variants never offer it, nor take the option."""
    for seed in (1, 2):
        rng = random.Random(seed)
        s = GameState.new(ASK, seed=seed)
        asked = 0
        while not s.is_terminal():
            legal = s.legal_actions()
            inquire = [a for a in legal if a.verb is Verb.INQUIRE]
            if inquire:
                assert s.in_stock_phase and s.to_act == s.turn_winner
                asked += 1
            s.apply(inquire[0] if inquire and rng.random() < 0.5 else rng.choice(legal))
        assert asked > 10
    for name in ("two-handed", "four-handed", "three-handed-consultation"):
        with pytest.raises(ValueError, match="no option 'inquiry'"):
            variant(name, inquiry="on")


def test_inquire_text_form() -> None:
    """The action's one text form: ``inquire``, no cards."""
    a = Action.parse("inquire")
    assert a.verb is Verb.INQUIRE and a.text == "inquire" and a.refs == ()
    with pytest.raises(ParseError, match="'inquire' takes no cards"):
        Action.parse("inquire QS")
