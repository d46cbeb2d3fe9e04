"""No hidden card ever leaves the referee (RULES.md section 7, ARCHITECTURE "Hidden information").

Games of every variant are played through the real server by recording bots (tests/service/bots/
recorder.py), which write every message they receive to a file. Each decision request is then checked
against the full state, replayed from the match record:

- the request is exactly what the engine's ``observe`` gives that seat at that point (observation,
  new public events, legal actions, seat and deciding member);
- the observation's hand is that seat's hand, kind for kind;
- every card named anywhere else in the message is public: a physical card (``QS.2``) lying on a table,
  among open cards, in the trick, the last trick, the turn-up or the Rubicon heap, or already named in
  the public log; a card named by kind alone (``QS``, a hidden card) appears only in the seat's own hand
  and legal actions, and only as many times as the seat holds it (or in a carte-blanche event, which
  shows that hand publicly). So no card of another seat's hand and nothing of the stock's order is sent.
"""

from __future__ import annotations

import asyncio
import base64
import re
import shlex
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from arena.bots.limits import Limits
from arena.game import GameState, observe, variant
from arena.game.cards import ANY_COPY, card_text
from arena.game.declarations import COMBO_MARKS
from arena.game.events import event_text
from arena.referee import MatchConfig, MatchRecord, TimeControl
from arena.referee.record import replay
from arena.service.match_manager import PlayerSpec
from arena.service.server import create_server
from arena.wire import serde
from arena.wire.v1 import bot_pb2

RECORDER = Path(__file__).resolve().parent / "bots" / "recorder.py"
GENEROUS = TimeControl(budget_ms=10_000, bank_ms=30_000, grace_ms=1_000)
CARD = re.compile(r"(?<![A-Za-z0-9])([789JQKTA][SHDC])(\.[1-4])?(?![A-Za-z0-9.])")
CASES: list[tuple[str, dict[str, str]]] = [
    ("two-handed", {}),
    ("two-handed", {"declarations_per_trick": "one", "bezique_cards": "trump-dependent"}),
    ("polish", {"game_end": "immediate"}),
    ("rubicon", {}),
    ("three-handed", {}),
    ("three-handed-consultation", {}),
    ("four-handed", {"game_end": "immediate"}),
    ("four-handed-partners", {}),
    ("four-handed-partners", {"inquiry": "on"}),
    ("four-handed-consultation", {}),
]
OWN_PATHS = re.compile(r"request\.(observation\.hand|legal_actions)\[\d+\]")


def play_recorded(
    tmp_path: Path, name: str, options: dict[str, str], seed: int
) -> tuple[MatchRecord, dict[tuple[int, int], list[bot_pb2.RefereeMessage]]]:
    v = variant(name, **options)
    # The recorders run sandboxed, as any bot: they write what they receive to their logs.
    specs = [
        [
            PlayerSpec(f"recorder{s}{m}", shlex.join([sys.executable, str(RECORDER)]))
            for m in range(v.team_size(s))
        ]
        for s in range(v.seats)
    ]
    logs = tmp_path / "logs"
    config = MatchConfig(
        variant=name,
        options=tuple(sorted(options.items())),
        seed=seed,
        games=1,
        time_control=GENEROUS,
    )

    async def go() -> MatchRecord:
        server, _, manager = await create_server("127.0.0.1:0", logs_dir=logs)
        try:
            entry = manager.create(config, specs, 60.0, Limits(log_bytes=100_000_000))
            await manager.start(entry)
            await asyncio.wait_for(entry.done.wait(), timeout=120)
            assert entry.record is not None, entry.error
            return entry.record
        finally:
            await manager.close()
            await server.stop(None)

    record = asyncio.run(go())
    received = {
        (s, m): [
            bot_pb2.RefereeMessage.FromString(base64.b64decode(line.removeprefix("RECORD ")))
            for log in logs.glob(f"{record.match_id}-seat{s}-{m}-*.log")
            for line in log.read_text().splitlines()
            if line.startswith("RECORD ")
        ]
        for s in range(v.seats)
        for m in range(v.team_size(s))
    }
    return record, received


def strings(message: Message, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string set in a message, with its path (the fields' proto names, ``[i]`` for an item)."""
    for field, value in message.ListFields():
        here = f"{path}.{field.name}" if path else field.name
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            for key, item in value.items():  # string maps only in the protocol
                yield here, key
                yield f"{here}.{key}", item
            continue
        items = list(enumerate(value)) if field.is_repeated else [(None, value)]
        for i, item in items:
            at = here if i is None else f"{here}[{i}]"
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                yield from strings(item, at)
            elif field.type == FieldDescriptor.TYPE_STRING:
                yield at, item


class LogCards:
    """The physical cards named in a game's public log, each event read once: the log only grows, and
    reading it whole at every decision made the check quadratic in the game's length."""

    def __init__(self) -> None:
        self.read = 0
        self.cards: set[str] = set()

    def of(self, log: list[Any]) -> set[str]:
        assert len(log) >= self.read, "a public log never shrinks within a game"
        for event in log[self.read :]:
            self.cards.update(m.group(0) for m in CARD.finditer(event_text(event)) if m.group(2))
        self.read = len(log)
        return self.cards


def public_cards(state: GameState, log: LogCards | None = None) -> set[str]:
    """Physical cards anybody can see now or has seen named in this game's public log (``log``: what
    was read of the log at earlier decisions of the same game)."""
    seen = {
        card_text(c)
        for s, hand in enumerate(state.hands)
        for c in hand
        if c < ANY_COPY and state.marks[c] & COMBO_MARKS
    }
    for cards in state.open:
        seen.update(card_text(c) for c in cards)
    seen.update(card_text(c) for c in state.trick)
    seen.update(card_text(c) for c in state.last_trick[1])
    seen.update(card_text(c) for c in state.heap)
    if state.turn_up >= 0:
        seen.add(card_text(state.turn_up))
    seen |= (log or LogCards()).of(state.log)
    return seen


def check_request(
    state: GameState,
    seat: int,
    member: int,
    log_from: int,
    req: bot_pb2.DecisionRequest,
    log: LogCards | None = None,
) -> None:
    obs = observe(state, seat, log_from=log_from)
    # Exactly what observe gives, nothing more.
    assert req.observation == serde.observation_to_pb(obs, member)
    assert list(req.events) == list(obs.log)
    assert [a.text for a in req.legal_actions] == [a.text for a in state.legal_actions()]
    assert (req.seat, req.observation.seat, req.observation.deciding_member) == (seat, seat, member)
    # The hand is this seat's hand.
    own = Counter(c & 31 for c in state.hands[seat])
    shown = Counter(parse_kind(c.split(".")[0]) for c in req.observation.hand)
    assert shown == own
    for s, info in enumerate(req.observation.seats):
        assert info.hand_size == len(state.hands[s])
    scan_cards(state, seat, req, log)


def scan_cards(
    state: GameState, seat: int, req: bot_pb2.DecisionRequest, log: LogCards | None = None
) -> None:
    """Every card named anywhere in the message is the seat's own or public."""
    own = Counter(c & 31 for c in state.hands[seat])
    own_physical = {card_text(c) for c in state.hands[seat] if c < ANY_COPY}
    public = public_cards(state, log)
    in_hand: Counter[int] = Counter()
    for path, text in strings(bot_pb2.RefereeMessage(request=req)):
        kinds_here: Counter[int] = Counter()
        for m in CARD.finditer(text):
            token = m.group(0)
            if m.group(2):  # a physical card
                assert token in public or token in own_physical, (path, text)
                continue
            kind = parse_kind(token)
            if path.startswith("request.events") and " shows carte blanche: " in text:
                continue  # 000: carte blanche is shown to the table
            if path.startswith("request.events") and text.endswith(" for the deal"):
                continue  # 002: the cards cut for the deal are shown, then shuffled back
            own_list = path.startswith(f"request.observation.seats[{seat}].to_score[")
            assert OWN_PATHS.match(path) or own_list, f"a hidden card {token} at {path}: {text!r}"
            kinds_here[kind] += 1
        for kind, n in kinds_here.items():
            assert n <= own[kind], (path, text)
        if path.startswith("request.observation.hand"):
            in_hand.update(kinds_here)
    assert all(n <= own[k] for k, n in in_hand.items()), in_hand


def parse_kind(text: str) -> int:
    return "789JQKTA".index(text[0]) + 8 * "SHDC".index(text[1])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "options"), CASES, ids=[f"{n}{'-opt' * len(o)}" for n, o in CASES]
)
def test_no_hidden_card_reaches_a_bot(tmp_path: Path, name: str, options: dict[str, str]) -> None:
    record, received = play_recorded(tmp_path, name, options, seed=60 + len(name) + len(options))
    v = variant(name, **options)
    game = record.games[0]
    assert game.outcome == "normal", game.detail
    requests: dict[int, tuple[int, int, bot_pb2.DecisionRequest]] = {}
    for (seat, member), messages in received.items():
        kinds = [m.WhichOneof("body") for m in messages]
        # The referee stops local bots as soon as the match ends, so the last messages may not
        # have been read (test_service_e2e checks that they are).
        assert kinds[0] == "welcome" and kinds.count("game_over") <= 1, kinds[-3:]
        welcome = messages[0].welcome
        assert (welcome.seat, welcome.team_member) == (seat, member)
        for m in messages:
            if m.HasField("request"):
                requests[m.request.request_id] = (seat, member, m.request)
    assert sorted(requests) == sorted(d.request_id for d in game.decisions)
    state = replay(record, game)
    seen = [[0] * v.team_size(s) for s in range(v.seats)]  # log sent to each player
    checked = Counter[str]()
    log = LogCards()
    for d in game.decisions:
        seat, member, req = requests[d.request_id]
        assert (seat, member) == (d.seat, d.member) == (state.to_act, state.deciding_member())
        check_request(state, seat, member, seen[seat][member], req, log)
        seen[seat][member] = len(state.log)
        checked[req.observation.phase] += 1
        state.apply(next(a for a in state.legal_actions() if a.text == d.action))
    assert state.is_terminal()
    assert checked["play"] > 100 and (checked["declare"] > 0 or checked["carte-blanche"] > 0)
    # Game over: only public cards (declared, played), never a card by kind alone.
    final = public_cards(state, log)
    for messages in received.values():
        for m in messages:
            if m.HasField("game_over"):
                for path, text in strings(m):
                    for match in CARD.finditer(text):
                        assert match.group(2) and match.group(0) in final, (path, text)


def test_the_checks_catch_a_leak() -> None:
    """The checks above are not vacuous: a request built by observe passes them, and the same request
    with another seat's hidden card or a card of the stock slipped in anywhere fails them."""
    state = GameState.new(variant("two-handed"), seed=5)
    for _ in range(6):  # a few tricks in, so that there is a trick, a last trick and a log
        state.apply(state.legal_actions()[0])
    seat = state.to_act
    obs = observe(state, seat)
    req = bot_pb2.DecisionRequest(
        request_id=1,
        seat=seat,
        observation=serde.observation_to_pb(obs),
        legal_actions=[serde.action_to_pb(a) for a in state.legal_actions()],
        events=obs.log,
    )
    check_request(state, seat, 0, 0, req)
    other = [c & 31 for c in state.hands[1 - seat] if c >= ANY_COPY]
    mine = Counter(c & 31 for c in state.hands[seat])
    hidden = next(k for k in other if mine[k] == 0)
    stock_next = next(k for k in state.stock[state.stock_pos :] if mine[k] == 0)
    leaks = []
    for kind in (hidden, stock_next):
        text = "789JQKTA"[kind & 7] + "SHDC"[kind >> 3]
        physical = f"{text}.{state.next_pack[kind] + 1}"  # a copy nobody has seen yet
        for tamper in (
            lambda r, t=text: r.events.append(f"seat 1 holds {t}"),
            lambda r, t=physical: r.events.append(f"seat 1 plays {t}"),
            lambda r, t=physical: r.observation.seats[1 - seat].table.append(t),
            lambda r, t=text: r.observation.hand.append(t),
            lambda r, t=text: r.observation.seats[0].to_score.append(f"declare bezique {t} JD"),
        ):
            leaked = bot_pb2.DecisionRequest()
            leaked.CopyFrom(req)
            tamper(leaked)
            leaks.append(leaked)
    caught = 0
    for leaked in leaks:
        try:
            scan_cards(state, seat, leaked)
        except AssertionError:
            caught += 1
    assert caught == len(leaks)
