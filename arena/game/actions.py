"""Actions a seat can take, and their exact text forms.

``play QS``, ``declare royal-marriage KH QH``, ``declare bezique QS.1 JD``, ``exchange 7H``, ``done``,
``inquire``.

An action names cards by *reference* (see :mod:`arena.game.cards`): ``QS`` is any copy of the queen of
spades that the seat has not declared (all such copies are interchangeable, so legal action lists merge
them), ``QS.1`` is the declared copy of pack 1. Actions are named tuples so that equality, hashing and
sorting run at C speed: the engine's legal action lists are the inner loop of every searching bot.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from arena.game.cards import ANY_COPY, parse_ref, ref_text
from arena.game.errors import ParseError


class Verb(IntEnum):
    PLAY = 1
    DECLARE = 2
    EXCHANGE = 3
    DONE = 4
    INQUIRE = 5  # four-handed partners (003): the trick's winner asks his partner to declare first


class Combo(IntEnum):
    """Everything that can be declared. The numbers are stable (they go on the wire)."""

    MARRIAGE = 1
    ROYAL_MARRIAGE = 2
    PLAIN_SEQUENCE = 3
    SEQUENCE = 4
    BEZIQUE = 5
    DOUBLE_BEZIQUE = 6
    TRIPLE_BEZIQUE = 7
    QUADRUPLE_BEZIQUE = 8
    FOUR_KNAVES = 9
    FOUR_QUEENS = 10
    FOUR_KINGS = 11
    FOUR_ACES = 12
    SEVEN_OF_TRUMPS = 13
    CARTE_BLANCHE = 14

    @property
    def text(self) -> str:
        return self.name.lower().replace("_", "-")

    @classmethod
    def parse(cls, text: str) -> Combo:
        try:
            return cls[text.strip().upper().replace("-", "_")]
        except KeyError:
            names = ", ".join(c.text for c in cls)
            raise ParseError(f"expected a combination ({names}), got {text!r}") from None


# Cards appear in a declaration in a fixed order: rank high to low, then suit, then copy.
def _ref_order(ref: int) -> int:
    return (7 - (ref & 7)) * 1024 + ((ref >> 3) & 3) * 256 + ref


class Action(NamedTuple):
    verb: Verb
    combo: int  # a Combo for DECLARE, else 0
    refs: tuple[int, ...]

    def __str__(self) -> str:
        return self.text

    @property
    def text(self) -> str:
        """The exact text form (computed once per distinct action: referee records and bots ask for
        it at every decision)."""
        text = _TEXTS.get(self)
        if text is None:
            if len(_TEXTS) > 100_000:  # declarations name physical cards: keep the cache bounded
                _TEXTS.clear()
            text = _TEXTS[self] = self._format()
        return text

    def _format(self) -> str:
        verb = self.verb
        if verb is Verb.DONE:
            return "done"
        if verb is Verb.INQUIRE:
            return "inquire"
        cards = " ".join(ref_text(r) for r in self.refs)
        if verb is Verb.DECLARE:
            head = f"declare {Combo(self.combo).text}"
            return f"{head} {cards}" if cards else head
        return f"{verb.name.lower()} {cards}"

    @classmethod
    def parse(cls, text: str) -> Action:
        """Parse the text form; the inverse of :attr:`text`. Each distinct text is parsed once: the
        referee parses every reply, and bots every legal action they are sent."""
        action = _PARSED.get(text)
        if action is None:
            action = _parse(text)
            if len(_PARSED) >= 100_000:  # bots choose the texts they send: keep the cache bounded
                _PARSED.clear()
            _PARSED[text] = action
        return action


def _parse(text: str) -> Action:
    words = text.split()
    if not words:
        raise ParseError(
            "expected an action (play, declare, exchange, inquire or done), got an empty string"
        )
    head = words[0].lower()
    if head in ("done", "inquire"):
        if len(words) != 1:
            raise ParseError(f"'{head}' takes no cards, got {text!r}")
        return DONE if head == "done" else INQUIRE
    if head in ("play", "exchange"):
        if len(words) != 2:
            raise ParseError(f"expected '{head} CARD' (for example '{head} 7H'), got {text!r}")
        ref = parse_ref(words[1])
        return PLAY_ACTIONS[ref] if head == "play" else exchange(ref)
    if head == "declare":
        if len(words) < 2:
            raise ParseError(f"expected 'declare COMBINATION CARD...', got {text!r}")
        return declare(Combo.parse(words[1]), [parse_ref(w) for w in words[2:]])
    raise ParseError(f"expected an action (play, declare, exchange, inquire or done), got {text!r}")


_REF_ORDER: tuple[int, ...] = tuple(_ref_order(r) for r in range(ANY_COPY + 32))
_TEXTS: dict[Action, str] = {}
_PARSED: dict[str, Action] = {}


_DECLARED: dict[tuple[int, tuple[int, ...]], Action] = {}


def declare(combo: Combo, refs: list[int] | tuple[int, ...]) -> Action:
    """The action declaring ``combo`` with the cards ``refs`` (in any order). Each distinct one is
    built once: the engine enumerates the same declarations at every declaring turn."""
    key = (combo, tuple(refs))
    action = _DECLARED.get(key)
    if action is None:
        if len(_DECLARED) >= 100_000:  # declarations name physical cards: keep the cache bounded
            _DECLARED.clear()
        action = Action(Verb.DECLARE, combo, tuple(sorted(refs, key=_REF_ORDER.__getitem__)))
        _DECLARED[key] = action
    return action


def exchange(ref: int) -> Action:
    return Action(Verb.EXCHANGE, 0, (ref,))


DONE = Action(Verb.DONE, 0, ())
INQUIRE = Action(Verb.INQUIRE, 0, ())
PLAY_ACTIONS: tuple[Action, ...] = tuple(Action(Verb.PLAY, 0, (r,)) for r in range(ANY_COPY + 32))
