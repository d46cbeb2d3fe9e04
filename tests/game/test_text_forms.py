"""Text forms of cards, card references, actions and variants (docs/rules.md §9; arena.game API).

Cards are written rank then suit (``QS``, ``TD``, ``7H``; ranks A T K Q J 9 8 7, suits S H D C); a physical
copy carries its pack number (``QS.2``). Every action has one exact text form that round-trips.
"""

from __future__ import annotations

import pytest

from arena.game import (
    DONE,
    Action,
    Combo,
    GameState,
    IllegalActionError,
    ParseError,
    VariantError,
    Verb,
    arrange_deck,
    card_text,
    kind_text,
    observe,
    parse_card,
    parse_kind,
    parse_ref,
    ref_text,
    variant,
    variant_options,
)
from arena.game.events import EV_TRICK, event_text, event_texts

RANKS = "789JQKTA"
SUITS = "SHDC"
ALL_KINDS = [r + s for s in SUITS for r in RANKS]


# ---------------------------------------------------------------- cards


def test_notation_every_card_of_a_pack_round_trips() -> None:
    """docs/rules.md §9: ranks A T K Q J 9 8 7, suits S H D C; the 32 kinds are distinct and round-trip."""
    kinds = [parse_kind(t) for t in ALL_KINDS]
    assert sorted(kinds) == list(range(32))
    for text, kind in zip(ALL_KINDS, kinds, strict=True):
        assert kind_text(kind) == text


def test_every_spelling_parses_as_its_canonical_text_does() -> None:
    """Canonical texts are looked up, others parsed: both give the same number for every card,
    physical card and reference, in every pack."""
    texts = [kind_text(k) for k in range(32)]
    assert sorted(texts) == sorted(ALL_KINDS)
    for kind, text in enumerate(texts):
        for spelling in (text, text.lower(), f" {text} "):
            assert parse_kind(spelling) == kind
            assert parse_ref(spelling) == parse_ref(text)
        for pack in range(1, 5):
            card = parse_card(f"{text}.{pack}")
            assert card_text(card) == f"{text}.{pack}"
            assert parse_card(f" {text.lower()}.{pack}") == card == parse_ref(f"{text}.{pack}")
            assert ref_text(parse_ref(f"{text.lower()}.{pack}")) == f"{text}.{pack}"


@pytest.mark.parametrize("text", ["QS", "TD", "7H", "AC", "JD", "9S"])
def test_notation_examples_parse(text: str) -> None:
    """docs/rules.md §9: ``QS`` is the queen of spades, ``TD`` the ten of diamonds, ``7H`` the seven of hearts."""
    kind = parse_kind(text)
    assert kind_text(kind) == text
    assert ref_text(parse_ref(text)) == text


def test_notation_ten_is_t_not_10() -> None:
    """docs/rules.md §9: the ten is written T (``TD``); ``10D`` is not a card."""
    with pytest.raises(ParseError):
        parse_kind("10D")


@pytest.mark.parametrize("pack", [1, 2, 3, 4])
def test_physical_copies_carry_their_pack_number(pack: int) -> None:
    """docs/rules.md §9 / API: ``QS.2`` is the physical copy of pack 2; every copy round-trips."""
    seen = set()
    for text in ALL_KINDS:
        full = f"{text}.{pack}"
        card = parse_card(full)
        assert card_text(card) == full
        assert ref_text(parse_ref(full)) == full
        seen.add(card)
    assert len(seen) == 32


def test_kind_reference_differs_from_every_physical_copy() -> None:
    """API: ``QS`` (any undeclared copy) and ``QS.1``/``QS.2`` (physical copies) are different references."""
    refs = {parse_ref("QS"), parse_ref("QS.1"), parse_ref("QS.2")}
    assert len(refs) == 3


@pytest.mark.parametrize("bad", ["", "Q", "QX", "XS", "1S", "QSS", "10S", "Q S", "S Q"])
def test_bad_card_is_a_parse_error_saying_what_was_expected(bad: str) -> None:
    """API: a malformed card raises ParseError whose message says a card such as QS was expected."""
    with pytest.raises(ParseError) as err:
        parse_kind(bad)
    msg = str(err.value)
    assert "expected" in msg
    assert "QS" in msg


@pytest.mark.parametrize("bad", ["QS", "QS.", "QS.0", "QS.5", "QS.x", "QX.1", ".1"])
def test_bad_physical_card_is_a_parse_error(bad: str) -> None:
    """API: a physical card needs a valid kind and a pack 1..4 (``QS.2``); else ParseError naming the form."""
    with pytest.raises(ParseError) as err:
        parse_card(bad)
    assert "expected" in str(err.value)


def test_parse_errors_are_value_errors() -> None:
    """House style (narrow exceptions, python-chess model): ParseError and VariantError are ValueErrors."""
    assert issubclass(ParseError, ValueError)
    assert issubclass(VariantError, ValueError)
    assert issubclass(IllegalActionError, ValueError)


# ---------------------------------------------------------------- actions

ACTION_TEXTS = [
    "play QS",
    "play TD",
    "play 7H",
    "play QS.2",
    "play AC.1",
    "declare marriage KS QS",
    "declare royal-marriage KH QH",
    "declare royal-marriage KH.1 QH",
    "declare plain-sequence AS TS KS QS JS",
    "declare sequence AH TH KH QH JH",
    "declare sequence AH TH KH.1 QH.1 JH",
    "declare bezique QS JD",
    "declare bezique QS.1 JD",
    "declare double-bezique QS QS JD JD",
    "declare double-bezique QS.1 QS JD.1 JD",
    "declare triple-bezique QS QS QS JD JD JD",
    "declare quadruple-bezique QS QS QS QS JD JD JD JD",
    "declare four-knaves JS JH JD JC",
    "declare four-queens QS QH QD QC",
    "declare four-queens QS.1 QH QD QC",
    "declare four-kings KS KH KD KC",
    "declare four-aces AS AH AD AC",
    "declare seven-of-trumps 7H",
    "exchange 7H",
    "declare carte-blanche",
    "done",
]


@pytest.mark.parametrize("text", ACTION_TEXTS)
def test_every_action_form_round_trips(text: str) -> None:
    """API brief: every action text form parses and prints back exactly (``Action.parse(t).text == t``)."""
    action = Action.parse(text)
    assert action.text == text
    assert str(action) == text
    assert Action.parse(action.text) == action


def test_action_verbs_and_combinations() -> None:
    """API brief: the text forms map onto verbs and combinations as named."""
    assert Action.parse("play QS").verb is Verb.PLAY
    assert Action.parse("exchange 7H").verb is Verb.EXCHANGE
    assert Action.parse("done") == DONE
    assert Action.parse("done").verb is Verb.DONE
    declared = Action.parse("declare four-aces AS AH AD AC")
    assert declared.verb is Verb.DECLARE
    assert declared.combo == Combo.FOUR_ACES


def test_every_combination_name_parses() -> None:
    """API brief: the combination names marriage ... carte-blanche are exactly the Combo names."""
    names = [
        "marriage",
        "royal-marriage",
        "plain-sequence",
        "sequence",
        "bezique",
        "double-bezique",
        "triple-bezique",
        "quadruple-bezique",
        "four-knaves",
        "four-queens",
        "four-kings",
        "four-aces",
        "seven-of-trumps",
        "carte-blanche",
    ]
    assert sorted(c.text for c in Combo) == sorted(names)
    for name in names:
        assert Combo.parse(name).text == name


def test_declaration_cards_are_put_in_canonical_order() -> None:
    """API: a declaration's cards print in one fixed order, so equal declarations have one text form."""
    a = Action.parse("declare royal-marriage QH KH")
    b = Action.parse("declare royal-marriage KH QH")
    assert a == b
    assert a.text == "declare royal-marriage KH QH"
    c = Action.parse("declare four-aces AC AD AH AS")
    assert c.text == "declare four-aces AS AH AD AC"
    d = Action.parse("declare bezique JD QS.1")
    assert d.text == "declare bezique QS.1 JD"


def test_action_words_are_split_on_any_whitespace() -> None:
    """API: extra spaces between words do not change the action."""
    assert Action.parse("  play   QS ") == Action.parse("play QS")


@pytest.mark.parametrize(
    ("bad", "expected_words"),
    [
        ("", ["expected", "action"]),
        ("   ", ["expected", "action"]),
        ("jump QS", ["expected", "action"]),
        ("play", ["expected", "play"]),
        ("play QS JD", ["expected", "play"]),
        ("play QX", ["expected", "card"]),
        ("play QS.9", ["expected", "pack"]),
        ("exchange", ["expected", "exchange"]),
        ("declare", ["expected", "declare"]),
        ("declare wedding KS QS", ["expected", "combination"]),
        ("declare marriage KS QX", ["expected", "card"]),
        ("done QS", ["done"]),
    ],
)
def test_bad_action_is_a_parse_error_saying_what_was_expected(
    bad: str, expected_words: list[str]
) -> None:
    """API brief: parse errors are ParseError with a message saying what was expected."""
    with pytest.raises(ParseError) as err:
        Action.parse(bad)
    msg = str(err.value).lower()
    for word in expected_words:
        assert word in msg


def _first_legal_walk(seed: int, steps: int) -> list[GameState]:
    v = variant("two-handed")
    state = GameState.new(v, seed)
    states = []
    for _ in range(steps):
        if state.is_terminal():
            break
        states.append(state.clone())
        legal = state.legal_actions()
        state.apply(legal[(len(states) * 7) % len(legal)])
    return states


def test_every_legal_action_of_a_played_deal_round_trips() -> None:
    """API brief: every action the engine offers has a text form that parses back to the same action."""
    states = _first_legal_walk(seed=11, steps=140)
    assert len(states) == 140
    seen_forms = set()
    for state in states:
        for action in state.legal_actions():
            assert Action.parse(action.text) == action
            seen_forms.add(action.text.split()[0])
    assert "play" in seen_forms


def test_first_revealed_copy_is_pack_one_then_pack_two() -> None:
    """API brief: a hidden card takes the lowest pack number not yet used for its kind in the deal."""
    v = variant("two-handed")
    deck = arrange_deck(
        v,
        dealer=1,
        hands=[
            ["QS", "8S", "9S", "7S", "8D", "9D", "7D", "8C"],
            ["QS", "7C", "9C", "7C", "9C", "8C", "8D", "9D"],
        ],
        turn_up="9H",
        stock=["7D", "7S"],
    )
    state = GameState.new(v, seed=0, dealer=1, decks=[deck])
    assert card_text(state.turn_up) == "9H.1"
    state.apply(Action.parse("play QS"))
    assert observe(state, 1).trick == ((0, parse_card("QS.1")),)
    state.apply(Action.parse("play QS"))
    view = observe(state, 0).to_dict()
    assert view["last_trick"] == [[0, "QS.1"], [1, "QS.2"]]
    assert view["turn_up"] == "9H.1"


def test_illegal_action_message_names_action_and_situation() -> None:
    """API brief: apply raises IllegalActionError naming the action and the situation."""
    state = GameState.new(variant("two-handed"), seed=5)
    legal = {a.text for a in state.legal_actions()}
    bad = next(f"play {k}" for k in ALL_KINDS if f"play {k}" not in legal)
    with pytest.raises(IllegalActionError) as err:
        state.apply(Action.parse(bad))
    assert bad in str(err.value)
    assert "seat" in str(err.value)
    with pytest.raises(IllegalActionError):
        state.apply(DONE)


# ---------------------------------------------------------------- variants


def test_two_handed_defaults() -> None:
    """docs/rules.md §1, §2: defaults are declarations_per_trick=disjoint, bezique_cards=fixed, game_end=end-of-deal."""
    v = variant("two-handed")
    assert v.declarations_per_trick == "disjoint"
    assert v.bezique_cards == "fixed"
    assert v.game_end == "end-of-deal"
    assert dict(v.options) == {
        "declarations_per_trick": "disjoint",
        "bezique_cards": "fixed",
        "game_end": "end-of-deal",
    }
    assert v.packs == 2
    assert v.target == 1000


def test_two_handed_option_values_default_first() -> None:
    """docs/rules.md §8: every option has a stable name; the default is the first accepted value."""
    opts = variant_options("two-handed")
    assert opts["declarations_per_trick"] == ("disjoint", "one")
    assert opts["bezique_cards"] == ("fixed", "trump-dependent")
    assert opts["game_end"] == ("end-of-deal", "immediate")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("declarations_per_trick", "one"),
        ("bezique_cards", "trump-dependent"),
        ("game_end", "immediate"),
    ],
)
def test_two_handed_options_are_recorded(option: str, value: str) -> None:
    """docs/rules.md §8: the chosen option values are recorded in the variant (and so in every record)."""
    v = variant("two-handed", **{option: value})
    assert getattr(v, option) == value
    assert dict(v.options)[option] == value


def test_option_names_may_use_dashes() -> None:
    """API: option names may be given with dashes or underscores."""
    v = variant("two-handed", **{"game-end": "immediate"})
    assert v.game_end == "immediate"


@pytest.mark.parametrize("name", ["two_handed", "Two-Handed", "bezique", "", "three-card"])
def test_unknown_variant_name_is_a_variant_error(name: str) -> None:
    """API brief: variant() raises VariantError for an unknown name, listing the known ones."""
    with pytest.raises(VariantError) as err:
        variant(name)
    assert "two-handed" in str(err.value)


def test_unknown_option_is_a_variant_error() -> None:
    """API brief: an option the variant does not take raises VariantError naming it."""
    with pytest.raises(VariantError) as err:
        variant("two-handed", target="500")
    assert "target" in str(err.value)


def test_bad_option_value_is_a_variant_error_listing_accepted_values() -> None:
    """API brief: a value the option does not take raises VariantError naming the accepted values."""
    with pytest.raises(VariantError) as err:
        variant("two-handed", declarations_per_trick="many")
    msg = str(err.value)
    assert "many" in msg
    assert "disjoint" in msg
    assert "one" in msg
    with pytest.raises(VariantError):
        variant("two-handed", game_end="never")
    with pytest.raises(VariantError):
        variant("two-handed", bezique_cards="QC JH")


def test_options_belong_to_their_variants() -> None:
    """docs/rules.md §5, §6: Polish takes only game_end; Rubicon takes no options."""
    assert variant("polish", game_end="immediate").game_end == "immediate"
    with pytest.raises(VariantError):
        variant("polish", declarations_per_trick="one")
    with pytest.raises(VariantError):
        variant("rubicon", game_end="immediate")
    with pytest.raises(VariantError):
        variant_options("piquet")


def test_a_run_of_events_reads_as_its_events_one_by_one() -> None:
    """event_texts (an observation's log, a replayed log) gives each event's event_text, whether or
    not every text was built before."""
    state = GameState.new(variant("two-handed"), seed=11)
    while not state.is_terminal() and len(state.log) < 120:
        state.apply(state.legal_actions()[-1])
    log = list(state.log)
    fresh = (EV_TRICK, 1, 9_999)  # no game logs it: its text is not built yet
    run = [*log[:5], fresh, *log[5:]]
    first = event_texts(run)  # the text of ``fresh`` is built on the way
    assert first == tuple(event_text(e) for e in run)
    assert first[5] == "seat 1 wins trick 9999"
    assert event_texts(run) == first  # every text built: looked up
    assert event_texts(log[40:]) == tuple(event_text(e) for e in log[40:])
    assert event_texts([]) == ()


@pytest.mark.parametrize("name", ["two-handed", "three-handed", "four-handed-partners"])
def test_a_view_from_a_later_log_entry_differs_only_in_its_log(name: str) -> None:
    """observe's log_from cuts the log and nothing else (the referee sends only the new events, and a
    replay's frames take their views without the log)."""
    state = GameState.new(variant(name), seed=5)
    step = 0
    while not state.is_terminal() and step < 400:
        if step % 37 == 0:
            end = len(state.log)
            for seat in [None, *range(state.variant.seats)]:
                full = observe(state, seat).to_dict()
                for start in (end // 2, end):
                    cut = observe(state, seat, log_from=start).to_dict()
                    assert cut["log"] == full["log"][start:]
                    assert {**cut, "log": None} == {**full, "log": None}
        state.apply(state.legal_actions()[step % len(state.legal_actions())])
        step += 1
    assert step > 100
