"""The conformance check's report: the mistakes it found (each of a closed set of kinds), the bot's
Hellos, the games played and the moments of the game met, and its text form."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from arena.play.scripted_opponent import DECLINE, MOMENTS

GIVE_UP_AFTER = (
    5  # timeouts in a row after which a match asks the bot no more (see harness._GivesUp)
)
NOT_ASKED = f"not asked: it timed out {GIVE_UP_AFTER} times in a row in this match"

# Mistake kinds.
ILLEGAL = "illegal action"
TIMEOUT = "timeout"
PROTOCOL = "protocol error"
CRASH = "crash"
DISCONNECT = "disconnect"
HELLO = "hello"
REFEREE = "referee error"


@dataclass(frozen=True, slots=True)
class Mistake:
    kind: str
    where: str
    detail: str

    def __str__(self) -> str:
        return (
            f"{self.kind} at {self.where}: {self.detail}"
            if self.where
            else f"{self.kind}: {self.detail}"
        )


@dataclass(frozen=True, slots=True)
class HelloInfo:
    name: str
    version: str
    protocol_version: int


@dataclass(frozen=True, slots=True)
class GameSummary:
    label: str
    note: str
    decisions: int
    outcome: str
    detail: str


@dataclass(slots=True)
class Report:
    command: str
    decisions: int = 0
    mistakes: list[Mistake] = field(default_factory=list)
    moments: Counter[str] = field(default_factory=Counter)
    possible: set[str] = field(default_factory=lambda: set(MOMENTS))  # in the session's variants
    declined: int = 0  # times the bot answered done while it could declare
    hellos: list[HelloInfo] = field(default_factory=list)
    games: list[GameSummary] = field(default_factory=list)
    gone: int = 0  # decisions after the bot crashed or disconnected (consequences, not counted)
    # decisions not asked of it after GIVE_UP_AFTER timeouts in a row in their match (nor counted)
    not_asked: int = 0
    late_replies: int = 0  # replies to requests that had failed (the failure is the mistake)

    @property
    def ok(self) -> bool:
        return not self.mistakes

    def summary(self) -> str:
        return f"{self.decisions} decisions, {len(self.mistakes)} mistakes"

    def lines(self, per_kind: int = 10) -> list[str]:
        """The report as text lines, at most ``per_kind`` mistakes of each kind spelt out; the last line
        is the summary."""
        out = [f"bot command: {self.command}"]
        for h, n in Counter(self.hellos).items():
            times = f" ({n} connections)" if n > 1 else ""
            out.append(
                f"hello: name {h.name!r}, version {h.version!r}, "
                f"protocol {h.protocol_version}{times}"
            )
        for g in self.games:
            end = g.outcome if not g.detail else f"{g.outcome} ({g.detail})"
            out.append(f"{g.label}: {g.decisions} decisions, {end} - {g.note}")
        out.append("moments:")
        for m in MOMENTS:
            seen = self.moments[m]
            if m not in self.possible:
                out.append(f"  [n/a] {m}")
                continue
            mark = "ok" if seen else "--"
            extra = f", declined {self.declined}" if m == DECLINE and seen else ""
            out.append(f"  [{mark}] {m}: {seen}{extra}")
        if any(not self.moments[m] for m in self.possible) and self.decisions:
            out.append("  (-- : not reached in this session; the bot's own choices steer the play)")
        if self.mistakes:
            out.append("mistakes:")
            shown: Counter[str] = Counter()
            for mistake in self.mistakes:
                shown[mistake.kind] += 1
                if shown[mistake.kind] <= per_kind:
                    out.append(f"  {mistake}")
            for kind, n in shown.items():
                if n > per_kind:
                    out.append(f"  ... and {n - per_kind} more of kind {kind}")
        if self.late_replies:
            out.append(f"({self.late_replies} late replies to failed requests were not counted)")
        if self.gone:
            out.append(f"({self.gone} decisions after the bot was gone were played at random)")
        if self.not_asked:
            out.append(
                f"({self.not_asked} decisions after {GIVE_UP_AFTER} timeouts in a row were played "
                "at random without asking the bot)"
            )
        out.append(self.summary())
        return out
