"""Cards as small integers, and their exact text forms.

A *kind* is one of the 32 cards of a piquet pack (``QS``, ``TD``, ``7H``); a *card* is one physical copy:
several packs are shuffled together, so ``card = pack * 32 + kind``. Legality depends on which copy was
declared in what (docs/rules.md §1.4, §9), so the engine tracks copies; a seat usually refers to a card in its
hand by kind alone (``QS``), and to a copy it has already declared by kind and pack (``QS.2``).

Ranks are numbered in the order of play, 7 lowest (0) to ace highest (7): A > T > K > Q > J > 9 > 8 > 7.
"""

from __future__ import annotations

from typing import Final

from arena.game.errors import ParseError

RANK_CHARS: Final = "789JQKTA"
SUIT_CHARS: Final = "SHDC"
SUIT_NAMES: Final = ("spades", "hearts", "diamonds", "clubs")
RANK_NAMES: Final = ("seven", "eight", "nine", "knave", "queen", "king", "ten", "ace")

# Final literals: the compiled engine modules use them as constants (a name bound by unpacking would
# be looked up in a dictionary at every use).
SEVEN: Final = 0
EIGHT: Final = 1
NINE: Final = 2
JACK: Final = 3
QUEEN: Final = 4
KING: Final = 5
TEN: Final = 6
ACE: Final = 7
SPADES: Final = 0
HEARTS: Final = 1
DIAMONDS: Final = 2
CLUBS: Final = 3
KINDS_PER_PACK: Final = 32
MAX_PACKS: Final = 4

# A reference to "a copy of this kind that the seat has not declared" (merged choice in legal action
# lists): ANY_COPY + kind. Physical cards are below ANY_COPY.
ANY_COPY: Final = 128  # MAX_PACKS * KINDS_PER_PACK, as a literal: a constant in compiled code
assert ANY_COPY == MAX_PACKS * KINDS_PER_PACK


def make_kind(rank: int, suit: int) -> int:
    return suit * 8 + rank


def _kind_text(kind: int) -> str:
    return RANK_CHARS[kind & 7] + SUIT_CHARS[(kind >> 3) & 3]


# Text forms are looked up, not formatted: they are on the path of every observation a bot is sent.
_KIND_TEXTS: Final = tuple(_kind_text(k) for k in range(KINDS_PER_PACK))
CARD_TEXTS: Final = tuple(f"{_KIND_TEXTS[c & 31]}.{(c >> 5) + 1}" for c in range(ANY_COPY))
REF_TEXTS: Final = CARD_TEXTS + _KIND_TEXTS  # indexed by a card reference
# The canonical texts back to numbers: what the referee sends is always canonical, so a Python bot
# reading its requests finds every card here in one lookup; other spellings are parsed below.
_KIND_BY_TEXT: Final = {t: k for k, t in enumerate(_KIND_TEXTS)}
_CARD_BY_TEXT: Final = {t: c for c, t in enumerate(CARD_TEXTS)}
_REF_BY_TEXT: Final = {t: r for r, t in enumerate(REF_TEXTS)}


def kind_text(kind: int) -> str:
    return _KIND_TEXTS[kind & 31]


def card_text(card: int) -> str:
    """Text of a physical card with its pack number (1-based): ``QS.2``."""
    return CARD_TEXTS[card]


def ref_text(ref: int) -> str:
    """Text of a card reference: a kind (``QS``, any undeclared copy) or a physical card (``QS.2``)."""
    return REF_TEXTS[ref]


def parse_kind(text: str) -> int:
    """Parse ``QS``, ``TD``, ``7H`` into a kind number."""
    kind = _KIND_BY_TEXT.get(text)
    if kind is not None:
        return kind
    t = text.strip().upper()
    if len(t) != 2 or t[0] not in RANK_CHARS or t[1] not in SUIT_CHARS:
        raise ParseError(
            f"expected a card such as QS, TD or 7H (rank one of {RANK_CHARS}, suit one of "
            f"{SUIT_CHARS}), got {text!r}"
        )
    return make_kind(RANK_CHARS.index(t[0]), SUIT_CHARS.index(t[1]))


def parse_card(text: str) -> int:
    """Parse a physical card ``QS.2`` (pack 1..4)."""
    card = _CARD_BY_TEXT.get(text)
    if card is not None:
        return card
    kind_part, dot, pack_part = text.strip().partition(".")
    if not dot or not pack_part.isdigit() or not 1 <= int(pack_part) <= MAX_PACKS:
        raise ParseError(
            f"expected a physical card such as QS.2 (pack 1 to {MAX_PACKS}), got {text!r}"
        )
    return (int(pack_part) - 1) * KINDS_PER_PACK + parse_kind(kind_part)


def parse_ref(text: str) -> int:
    """Parse a card reference: ``QS`` (an undeclared copy) or ``QS.2`` (that physical copy)."""
    ref = _REF_BY_TEXT.get(text)
    if ref is not None:
        return ref
    if "." in text:
        return parse_card(text)
    return ANY_COPY + parse_kind(text)
