"""The DecisionRequest a bot is sent, written straight to protocol-buffer bytes.

The referee sends one request per decision, and building it as a message and then serialising it
costs more than everything else the referee does for a decision. Most of a request repeats from one
decision to the next (the variant, the seats' views, the legal actions, every card's text), so here
each part is encoded once and kept, and a request is the concatenation of its parts' bytes: what the
protocol-buffer encoding of a message is. Field numbers come from the generated descriptors, never
written out by hand; ``tests/wire/test_request_bytes.py`` checks that the bytes parse to exactly the message
:func:`arena.wire.serde.fill_observation` builds, decision by decision, in every variant.

Only the referee's requests are written this way; every other message is built with the protocol
buffer library as usual.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from arena.game import Action, Observation, SeatInfo
from arena.game.cards import CARD_TEXTS, REF_TEXTS, ref_text
from arena.wire.v1 import bot_pb2, game_pb2

__all__ = ["request_bytes"]

_VARINT, _LEN = 0, 2
_CACHE_LIMIT = 50_000  # entries kept per cache; declarations name physical cards


def _varint(value: int) -> bytes:
    """A varint; a negative value as its 64-bit two's complement (how int32 fields carry one)."""
    if 0 <= value < 1 << 21:  # request ids: three bytes up to two million
        if value < 0x80:
            return bytes((value,))
        if value < 1 << 14:
            return bytes((value & 0x7F | 0x80, value >> 7))
        return bytes((value & 0x7F | 0x80, value >> 7 & 0x7F | 0x80, value >> 14))
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL: Final = tuple(_varint(i) for i in range(1 << 14))  # lengths and small numbers, ready-made


def _uint(value: int) -> bytes:
    """A length or another count (never negative)."""
    return _SMALL[value] if value < 16384 else _varint(value)


_LENGTH_TYPES = (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE)
_VARINT_TYPES = (
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_BOOL,
    FieldDescriptor.TYPE_ENUM,
)


def _tag(message: Descriptor, name: str) -> bytes:
    """The key of a field, from the descriptor: a field whose type this module does not write (it
    would have changed in the .proto) fails at import, not on the wire."""
    field = message.fields_by_name[name]
    if field.type not in _LENGTH_TYPES + _VARINT_TYPES:
        raise TypeError(f"{message.name}.{name}: a field type the request encoder does not write")
    wire = _LEN if field.type in _LENGTH_TYPES or field.is_packed else _VARINT
    return _varint(field.number << 3 | wire)


def _delimited(tag: bytes, body: bytes) -> bytes:
    return tag + _uint(len(body)) + body


def _text(tag: bytes, text: str) -> bytes:
    return _delimited(tag, text.encode())


def _small(tag: bytes) -> tuple[bytes, ...]:
    """An integer field's encodings for 0 to 255, ready-made: ``table[v] if 0 <= v < 256 else
    _number(tag, v)`` is the field (a lookup instead of a call, for the fields of every request)."""
    return (b"", *[tag + _SMALL[v] for v in range(1, 256)])


def _number(tag: bytes, value: int) -> bytes:
    """An integer field as proto3 writes it: nothing for 0 (a negative int32, such as -1 for
    "none", takes ten bytes)."""
    if not value:
        return b""
    return tag + (_SMALL[value] if 0 < value < 16384 else _varint(value))


_OBS: Final = game_pb2.Observation.DESCRIPTOR
_SEAT: Final = game_pb2.SeatView.DESCRIPTOR
_PLAYED: Final = game_pb2.PlayedCard.DESCRIPTOR
_ACTION: Final = game_pb2.Action.DESCRIPTOR
_REQ: Final = bot_pb2.DecisionRequest.DESCRIPTOR
_CLOCK: Final = bot_pb2.Clock.DESCRIPTOR
_options_entry = _OBS.fields_by_name["options"].message_type
assert _options_entry is not None, "Observation.options is a map"
_MAP_ENTRY: Final = _options_entry

T_REQUEST: Final = _tag(bot_pb2.RefereeMessage.DESCRIPTOR, "request")
T_REQUEST_ID: Final = _tag(_REQ, "request_id")
T_MATCH_ID: Final = _tag(_REQ, "match_id")
T_GAME: Final = _tag(_REQ, "game")
T_REQ_SEAT: Final = _tag(_REQ, "seat")
T_OBSERVATION: Final = _tag(_REQ, "observation")
T_LEGAL: Final = _tag(_REQ, "legal_actions")
T_CLOCK: Final = _tag(_REQ, "clock")
T_EVENTS: Final = _tag(_REQ, "events")
T_BUDGET: Final = _tag(_CLOCK, "budget_ms")
T_BANK: Final = _tag(_CLOCK, "bank_ms")

T_VARIANT: Final = _tag(_OBS, "variant")
T_OPTIONS: Final = _tag(_OBS, "options")
T_KEY: Final = _tag(_MAP_ENTRY, "key")
T_VALUE: Final = _tag(_MAP_ENTRY, "value")
T_SEAT: Final = _tag(_OBS, "seat")
T_DEAL: Final = _tag(_OBS, "deal")
T_DEALER: Final = _tag(_OBS, "dealer")
T_PHASE: Final = _tag(_OBS, "phase")
T_TO_ACT: Final = _tag(_OBS, "to_act")
T_TRUMP: Final = _tag(_OBS, "trump")
T_TURN_UP: Final = _tag(_OBS, "turn_up")
T_STOCK: Final = _tag(_OBS, "stock_size")
T_TRICK: Final = _tag(_OBS, "trick")
T_LAST_TRICK: Final = _tag(_OBS, "last_trick")
T_WINNER: Final = _tag(_OBS, "last_trick_winner")
T_SEATS: Final = _tag(_OBS, "seats")
T_MEMBER: Final = _tag(_OBS, "deciding_member")

T_PLAYED_SEAT: Final = _tag(_PLAYED, "seat")
T_PLAYED_CARD: Final = _tag(_PLAYED, "card")

T_SV_SEAT: Final = _tag(_SEAT, "seat")
T_SV_HAND_SIZE: Final = _tag(_SEAT, "hand_size")
T_SV_TABLE_MARKS: Final = _tag(_SEAT, "table_marks")
T_SV_TRICKS: Final = _tag(_SEAT, "tricks_won")
T_SV_POINTS: Final = _tag(_SEAT, "deal_points")
T_SV_TOTAL: Final = _tag(_SEAT, "total")
T_SV_TO_SCORE: Final = _tag(_SEAT, "to_score")
T_SV_CB_TRUE: Final = _tag(_SEAT, "carte_blanche") + b"\x01"
T_SV_BRISQUES: Final = _tag(_SEAT, "brisques")

T_ACTION_TEXT: Final = _tag(_ACTION, "text")
T_ACTION_VERB: Final = _tag(_ACTION, "verb")
T_ACTION_COMBO: Final = _tag(_ACTION, "combination")
T_ACTION_CARDS: Final = _tag(_ACTION, "cards")

F_GAME: Final = _small(T_GAME)
F_REQ_SEAT: Final = _small(T_REQ_SEAT)
F_SEAT: Final = _small(T_SEAT)
F_DEAL: Final = _small(T_DEAL)
F_DEALER: Final = _small(T_DEALER)
F_TO_ACT: Final = _small(T_TO_ACT)
F_STOCK: Final = _small(T_STOCK)
F_WINNER: Final = _small(T_WINNER)
F_MEMBER: Final = _small(T_MEMBER)
F_SV_SEAT: Final = _small(T_SV_SEAT)
F_SV_HAND_SIZE: Final = _small(T_SV_HAND_SIZE)
F_SV_TRICKS: Final = _small(T_SV_TRICKS)

# A card as an entry of each repeated field that lists cards, indexed by card (or card reference).
HAND: Final = tuple(_text(_tag(_OBS, "hand"), t) for t in REF_TEXTS)
HEAP: Final = tuple(_text(_tag(_OBS, "heap"), t) for t in CARD_TEXTS)
TABLE: Final = tuple(_text(_tag(_SEAT, "table"), t) for t in CARD_TEXTS)
OPEN: Final = tuple(_text(_tag(_SEAT, "open_cards"), t) for t in CARD_TEXTS)
TURN_UP: Final = tuple(_text(T_TURN_UP, t) for t in CARD_TEXTS)

# A played card (seat, card) as an entry of Observation.trick and .last_trick, by seat then card.
MAX_SEATS: Final = 8  # more than any variant has: a larger seat number is encoded on the fly
TRICK: Final = tuple(
    tuple(
        _delimited(T_TRICK, _number(T_PLAYED_SEAT, s) + _text(T_PLAYED_CARD, t)) for t in CARD_TEXTS
    )
    for s in range(MAX_SEATS)
)
LAST_TRICK: Final = tuple(
    tuple(
        _delimited(T_LAST_TRICK, _number(T_PLAYED_SEAT, s) + _text(T_PLAYED_CARD, t))
        for t in CARD_TEXTS
    )
    for s in range(MAX_SEATS)
)

# Parts that repeat from one request to the next, encoded once: each cache is bounded (declarations
# name physical cards, and a bot's view takes many values over a long run).
_views: dict[SeatInfo, bytes] = {}
_lists: dict[tuple[tuple[tuple[int, int], ...], tuple[int, ...], tuple[str, ...]], bytes] = {}
_actions: dict[Action, bytes] = {}
_heads: dict[tuple[str, tuple[tuple[str, str], ...]], bytes] = {}
_phases: dict[str, bytes] = {}
_trumps: dict[str, bytes] = {}
_match_ids: dict[str, bytes] = {}
_events: dict[str, bytes] = {}
_clocks: dict[tuple[int, int], bytes] = {}
_fronts: dict[tuple[object, ...], bytes] = {}


def _played_card(table: tuple[tuple[bytes, ...], ...], tag: bytes, seat: int, card: int) -> bytes:
    if 0 <= seat < MAX_SEATS:
        return table[seat][card]
    return _delimited(tag, _number(T_PLAYED_SEAT, seat) + _text(T_PLAYED_CARD, CARD_TEXTS[card]))


def _seat_view(si: SeatInfo) -> bytes:
    """A SeatView entry. A seat's view is often the same as in the request before (only the seat
    that has just played changes), so whole entries are kept."""
    entry = _views.get(si)
    if entry is None:
        if len(_views) > _CACHE_LIMIT:
            _views.clear()
        entry = _views[si] = _build_seat_view(si)
    return entry


def _build_seat_view(si: SeatInfo) -> bytes:
    seat, size, tricks = si.seat, si.hand_size, si.tricks_won
    body = b"".join(
        [
            F_SV_SEAT[seat] if 0 <= seat < 256 else _number(T_SV_SEAT, seat),
            F_SV_HAND_SIZE[size] if 0 <= size < 256 else _number(T_SV_HAND_SIZE, size),
            F_SV_TRICKS[tricks] if 0 <= tricks < 256 else _number(T_SV_TRICKS, tricks),
            _number(T_SV_POINTS, si.deal_points),
            _number(T_SV_TOTAL, si.total),
            T_SV_CB_TRUE if si.carte_blanche else b"",
            # optional: present (0 included) only once the brisques may be counted
            b"" if si.brisques is None else T_SV_BRISQUES + _varint(si.brisques),
            _seat_lists(si.table, si.open_cards, si.to_score)
            if si.table or si.open_cards or si.to_score
            else b"",
        ]
    )
    return T_SEATS + _uint(len(body)) + body


def _seat_lists(
    table: tuple[tuple[int, int], ...], open_cards: tuple[int, ...], to_score: tuple[str, ...]
) -> bytes:
    key = (table, open_cards, to_score)
    entry = _lists.get(key)
    if entry is None:
        if len(_lists) > _CACHE_LIMIT:
            _lists.clear()
        marks = b"".join([_uint(m) for _, m in table])
        entry = _lists[key] = b"".join(
            [
                *[TABLE[c] for c, _ in table],
                *[OPEN[c] for c in open_cards],
                *[_text(T_SV_TO_SCORE, t) for t in to_score],
                _delimited(T_SV_TABLE_MARKS, marks) if marks else b"",
            ]
        )
    return entry


def _action(action: Action) -> bytes:
    entry = _actions.get(action)
    if entry is None:
        if len(_actions) > _CACHE_LIMIT:
            _actions.clear()
        body = b"".join(
            [
                _text(T_ACTION_TEXT, action.text),
                _number(T_ACTION_VERB, int(action.verb)),
                _number(T_ACTION_COMBO, action.combo),
                *[_text(T_ACTION_CARDS, ref_text(r)) for r in action.refs],
            ]
        )
        entry = _actions[action] = _delimited(T_LEGAL, body)
    return entry


def _head(variant: str, options: tuple[tuple[str, str], ...]) -> bytes:
    """The variant and its options, the same in every request of a match."""
    key = (variant, options)
    entry = _heads.get(key)
    if entry is None:
        if len(_heads) > 1000:
            _heads.clear()
        entry = _heads[key] = b"".join(
            [_text(T_VARIANT, variant) if variant else b""]
            + [
                _delimited(T_OPTIONS, _text(T_KEY, k) + _text(T_VALUE, v))
                for k, v in dict(options).items()  # a map keeps the last value of a key
            ]
        )
    return entry


def _short_text(cache: dict[str, bytes], tag: bytes, text: str) -> bytes:
    """A short text field whose values repeat (phases, trumps, match ids): nothing when empty."""
    entry = cache.get(text)
    if entry is None:
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        entry = cache[text] = _text(tag, text) if text else b""
    return entry


def _clock(budget_ms: int, bank_ms: int) -> bytes:
    """The request's Clock field (the bank changes only when a seat is slow)."""
    if len(_clocks) > _CACHE_LIMIT:
        _clocks.clear()
    body = _number(T_BUDGET, budget_ms) + _number(T_BANK, max(bank_ms, 0))
    entry = _clocks[budget_ms, bank_ms] = _delimited(T_CLOCK, body)
    return entry


def _event(text: str) -> bytes:
    """A log entry of Request.events (an entry of a repeated field: written even when empty)."""
    if len(_events) > _CACHE_LIMIT:
        _events.clear()
    entry = _events[text] = _text(T_EVENTS, text)
    return entry


def observation_bytes(obs: Observation, deciding_member: int = 0) -> bytes:
    """The Observation message's fields, encoded (what ``fill_observation`` fills, as bytes)."""
    winner = -1 if obs.last_trick_winner is None else obs.last_trick_winner
    stock, member, hand = obs.stock_size, deciding_member, obs.hand
    # The fields up to the turn-up change a few times a deal: they are looked up whole (a tuple's
    # hash costs far less than a field at a time). Hands and legal actions seldom repeat whole.
    key: tuple[object, ...] = (
        obs.variant,
        obs.options,
        obs.seat,
        obs.deal,
        obs.dealer,
        obs.phase,
        obs.to_act,
        obs.trump,
        obs.turn_up,
    )
    return b"".join(
        [
            _fronts.get(key) or _front(obs),
            F_STOCK[stock] if 0 <= stock < 256 else _number(T_STOCK, stock),
            *[HAND[r] for r in hand],
            *[
                TRICK[s][c] if 0 <= s < MAX_SEATS else _played_card(TRICK, T_TRICK, s, c)
                for s, c in obs.trick
            ],
            *[
                LAST_TRICK[s][c]
                if 0 <= s < MAX_SEATS
                else _played_card(LAST_TRICK, T_LAST_TRICK, s, c)
                for s, c in obs.last_trick
            ],
            F_WINNER[winner] if 0 <= winner < 256 else _number(T_WINNER, winner),
            *[HEAP[c] for c in obs.heap],
            *[_views.get(si) or _seat_view(si) for si in obs.seats],
            F_MEMBER[member] if 0 <= member < 256 else _number(T_MEMBER, member),
        ]
    )


def _front(obs: Observation) -> bytes:
    """The Observation's fields from the variant to the turn-up (see :func:`observation_bytes`)."""
    seat = -1 if obs.seat is None else obs.seat
    deal, dealer, to_act, trump = obs.deal, obs.dealer, obs.to_act, obs.trump
    entry = b"".join(
        [
            _head(obs.variant, obs.options),
            F_SEAT[seat] if 0 <= seat < 256 else _number(T_SEAT, seat),
            F_DEAL[deal] if 0 <= deal < 256 else _number(T_DEAL, deal),
            F_DEALER[dealer] if 0 <= dealer < 256 else _number(T_DEALER, dealer),
            _short_text(_phases, T_PHASE, obs.phase),
            F_TO_ACT[to_act] if 0 <= to_act < 256 else _number(T_TO_ACT, to_act),
            b"" if trump is None else _short_text(_trumps, T_TRUMP, trump),
            TURN_UP[obs.turn_up] if obs.turn_up is not None else b"",
        ]
    )
    if len(_fronts) > _CACHE_LIMIT:
        _fronts.clear()
    key = (obs.variant, obs.options, obs.seat, deal, dealer, obs.phase, to_act, trump, obs.turn_up)
    _fronts[key] = entry
    return entry


def request_bytes(
    request_id: int,
    match_id: str,
    game: int,
    seat: int,
    obs: Observation,
    deciding_member: int,
    legal: Sequence[Action],
    budget_ms: int,
    bank_ms: int,
) -> bytes:
    """The serialised RefereeMessage carrying this DecisionRequest; parsed, it equals the message
    built field by field with the observation filled by ``serde.fill_observation`` and
    ``request.events`` the observation's log."""
    observation = observation_bytes(obs, deciding_member)
    clock = _clocks.get((budget_ms, bank_ms)) or _clock(budget_ms, bank_ms)
    actions, events = _actions, _events
    body = b"".join(
        [
            T_REQUEST_ID + _SMALL[request_id]
            if 0 < request_id < 16384
            else _number(T_REQUEST_ID, request_id),
            _match_ids.get(match_id) or _short_text(_match_ids, T_MATCH_ID, match_id),
            F_GAME[game] if 0 <= game < 256 else _number(T_GAME, game),
            F_REQ_SEAT[seat] if 0 <= seat < 256 else _number(T_REQ_SEAT, seat),
            T_OBSERVATION,
            _uint(len(observation)),
            observation,
            *[actions.get(a) or _action(a) for a in legal],
            clock,
            *[events.get(e) or _event(e) for e in obs.log],
        ]
    )
    return T_REQUEST + _uint(len(body)) + body
