"""Judging a finished match of the conformance check: replaying each game, noting the bot's
decisions, the moments it met and its mistakes (a late reply to a request that had already failed is
not a mistake of its own), and the problems of its Hellos."""

from __future__ import annotations

import re
from collections.abc import Mapping

from arena.game import Action, Combo, GameState, Verb, observe
from arena.game.fields import ASKED
from arena.play.conformance.output_tail import bot_output_tail
from arena.play.conformance.report import (
    CRASH,
    DISCONNECT,
    HELLO,
    ILLEGAL,
    NOT_ASKED,
    PROTOCOL,
    REFEREE,
    TIMEOUT,
    GameSummary,
    HelloInfo,
    Mistake,
    Report,
)
from arena.play.scripted_opponent import (
    CARTE_BLANCHE,
    DECLINE,
    INQUIRY,
    LAST_TRICKS,
    SEVEN,
    SEVERAL,
    ScriptedMatch,
)
from arena.referee import MatchRecord
from arena.referee.record import GameRecord, replay
from arena.service.match_manager import MatchEntry
from arena.service.servicers import PROTOCOL_VERSION

_KIND_OF_FAILURE = {
    "illegal-action": ILLEGAL,
    "timeout": TIMEOUT,
    "protocol-error": PROTOCOL,
    "crash": CRASH,
    "disconnect": DISCONNECT,
}


def note_hellos(
    report: Report,
    entry: MatchEntry,
    hellos: Mapping[str, HelloInfo],
    refusals: Mapping[str, str],
) -> None:
    """The Hello of each of the bot's connections in a match, and its problems (each once)."""
    for port in entry.players[0]:
        hello = hellos.get(port.token)
        if hello is None:
            continue
        report.hellos.append(hello)
        problems = []
        if port.token in refusals:
            problems.append(f"the referee refused the Hello: {refusals[port.token]}")
        if not hello.name.strip():
            problems.append("the bot's name is empty")
        if not hello.version.strip():
            problems.append("the bot's version is empty")
        if hello.protocol_version != PROTOCOL_VERSION:
            problems.append(
                f"protocol_version is {hello.protocol_version}, expected {PROTOCOL_VERSION}"
            )
        for what in problems:
            mistake = Mistake(HELLO, "", what)
            if mistake not in report.mistakes:  # once, not once per connection
                report.mistakes.append(mistake)


def collect(report: Report, scripted: ScriptedMatch, entry: MatchEntry) -> None:
    """Add one finished match, which the bot joined, to the report."""
    bot_ports = entry.players[0]
    if entry.error:
        report.mistakes.append(Mistake(REFEREE, scripted.variant, entry.error))
    record = entry.record
    if record is None:
        return
    # Requests of the bot's that failed (timed out, or failed by a protocol error while pending): a
    # reply to one of them later is late, not a mistake of its own.
    failed = {
        d.request_id
        for game in record.games
        for d in game.decisions
        if d.seat == 0 and d.failure in ("timeout", "protocol-error")
    }
    gone: set[int] = set()  # members whose crash or disconnect is already reported
    for game, scripted_game in zip(record.games, scripted.games, strict=False):
        label = f"{scripted.variant} game {game.index + 1}"
        n = _collect_game(report, record, game, label, gone, failed, entry)
        report.games.append(GameSummary(label, scripted_game.note, n, game.outcome, game.detail))
    for port in bot_ports:
        # A violation after the bot's last decision (a second reply to it, say) is never raised at a
        # decision: the port still holds it.
        for what in list(getattr(port, "_violations", ())):
            if not _late_reply(what, failed):
                report.mistakes.append(
                    Mistake(PROTOCOL, f"{scripted.variant}, after the last decision", what)
                )


_NEVER_ASKED = re.compile(r"a reply to request (\d+), which was never asked")


def _late_reply(detail: str, failed: set[int]) -> bool:
    """Whether a protocol error is only a late reply to a request that had already failed (timed out,
    or failed by an earlier protocol error). The earlier failure is the mistake. The referee's port
    should not count the late reply (it does: when the wait is cancelled by the timeout, or the future
    failed by a violation, the request is not remembered as expired), so it is not counted twice."""
    m = _NEVER_ASKED.fullmatch(detail)
    return m is not None and int(m.group(1)) in failed


def _collect_game(
    report: Report,
    record: MatchRecord,
    game: GameRecord,
    label: str,
    gone: set[int],
    failed: set[int],
    entry: MatchEntry,
) -> int:
    """Replay one game, noting the bot's decisions, the moments it met and its mistakes; the number of
    the bot's decisions."""
    state: GameState = replay(record, game)
    decisions = 0
    for d in game.decisions:
        mine = d.seat == 0
        if mine:
            decisions += 1
            where = _where(state, label, d.request_id)
            _note_moments(report, state, d.reply)
            if d.failure is not None:
                kind = _KIND_OF_FAILURE.get(d.failure, d.failure)
                if d.detail == NOT_ASKED:
                    report.not_asked += 1
                elif kind in (CRASH, DISCONNECT):
                    if d.member in gone:
                        report.gone += 1
                    else:
                        gone.add(d.member)
                        tail = bot_output_tail(entry.players[0][d.member])
                        detail = d.detail + (f"; the bot's output:\n{tail}" if tail else "")
                        report.mistakes.append(Mistake(kind, where, detail))
                elif kind == PROTOCOL and _late_reply(d.detail, failed):
                    report.late_replies += 1
                else:
                    detail = d.detail
                    if kind == ILLEGAL and "legal:" not in detail:
                        detail += f" (legal: {', '.join(d.legal)})"
                    report.mistakes.append(Mistake(kind, where, detail))
        if not d.action:  # a forfeit: the game stopped here
            break
        state.apply(Action.parse(d.action))
    report.decisions += decisions
    return decisions


def _where(state: GameState, label: str, request_id: int) -> str:
    obs = observe(state, state.to_act)
    trick = sum(s.tricks_won for s in obs.seats) + 1
    last = ", last tricks" if obs.stock_size == 0 and obs.phase == "play" else ""
    return f"{label}, deal {obs.deal + 1}, trick {trick} ({obs.phase}{last}), request {request_id}"


def _note_moments(report: Report, state: GameState, reply: str | None) -> None:
    legal = state.legal_actions()
    declarations = [a for a in legal if a.verb is Verb.DECLARE and a.combo != Combo.CARTE_BLANCHE]
    if len(declarations) >= 2:
        report.moments[SEVERAL] += 1
    if any(a.verb is Verb.EXCHANGE for a in legal):
        report.moments[SEVEN] += 1
    if declarations and any(a.verb is Verb.DONE for a in legal):
        report.moments[DECLINE] += 1
        if reply is not None and reply.strip() == "done":
            report.declined += 1
    if any(a.verb is Verb.DECLARE and a.combo == Combo.CARTE_BLANCHE for a in legal):
        report.moments[CARTE_BLANCHE] += 1
    # 003: it may inquire of its partner, or its partner has inquired of it.
    if any(a.verb is Verb.INQUIRE for a in legal) or (
        state.inquiry == ASKED and state.to_act != state.turn_winner
    ):
        report.moments[INQUIRY] += 1
    obs = observe(state, state.to_act)
    if obs.phase == "play" and obs.stock_size == 0 and obs.trick:
        kinds = {r & 31 for r in obs.hand}
        if len(legal) < len(kinds):
            report.moments[LAST_TRICKS] += 1
