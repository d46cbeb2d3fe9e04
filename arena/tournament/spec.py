"""Tournament files (``tournaments/*.toml``): parsing and validation with errors that name the file, the
field and what was expected.

    name = "Quickstart"
    variant = "two-handed"          # any engine variant
    format = "round-robin"          # round-robin, double-round-robin, gauntlet, swiss
    games_per_pairing = 2           # deals per pairing (each played once per seat rotation if duplicate)
    duplicate = true                # default: every deal is replayed with the seats rotated
    concurrency = 2                 # games played at once
    matches_per_process = 1         # games a launched bot process may play before it is replaced
    seed = 1
    rounds = 3                      # swiss only
    challenger = "greedy"           # gauntlet only: the entrant who meets the whole field

    [options]                       # the variant's options
    declarations_per_trick = "one"

    [time_control]                  # milliseconds
    budget_ms = 1000
    bank_ms = 10000
    grace_ms = 100

    [policies]                      # forfeit or random-action, per failure
    on_timeout = "forfeit"
    max_strikes = 3

    [limits]                        # per bot process; 0: no limit
    memory_mb = 4096                # address space
    cpu_seconds = 900               # per process, over all the games it plays
    processes = 4096
    file_size_mb = 64
    open_files = 1024
    log_bytes = 1000000             # of its output kept per process
    sandbox = "auto"                # isolated where possible; "required": or refuse; "none": light
    freeze = false                  # SIGSTOP a bot while it is not its turn

    [[entrants]]
    name = "random"
    command = "{python} -m arena_bot.random_bot"   # {python}: the interpreter running the arena
    language = "python"             # optional
    version = "1"                   # optional
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from arena.bots.launcher import bubblewrap_available
from arena.bots.limits import Limits
from arena.game import VARIANT_NAMES, Variant, VariantError, variant
from arena.referee import FailurePolicy, Policies, TimeControl
from arena.sandbox import MODES as SANDBOX_MODES

FORMATS = ("round-robin", "double-round-robin", "gauntlet", "swiss")


class TournamentFileError(ValueError):
    """A tournament file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class Entrant:
    name: str
    command: str
    language: str = ""
    version: str = ""

    @property
    def command_hash(self) -> str:
        """Identifies a program: the same name with another command or version is another entrant."""
        return hashlib.sha256(f"{self.command}\0{self.version}".encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class TournamentSpec:
    name: str
    variant: str
    options: tuple[tuple[str, str], ...]
    format: str
    entrants: tuple[Entrant, ...]
    games_per_pairing: int = 1
    duplicate: bool = True
    concurrency: int = 1
    seed: int = 0
    rounds: int = 0
    challenger: str = ""
    time_control: TimeControl = field(default_factory=TimeControl)
    policies: Policies = field(default_factory=Policies)
    limits: Limits = field(default_factory=Limits)
    matches_per_process: int = 1
    source: str = ""  # the file it came from

    def build_variant(self) -> Variant:
        return variant(self.variant, **dict(self.options))

    def to_dict(self) -> dict[str, Any]:
        # matches_per_process appears only when set, so that a tournament's identity (the hash of this
        # dict) is what it was before the field existed.
        reuse = (
            {"matches_per_process": self.matches_per_process}
            if self.matches_per_process > 1
            else {}
        )
        return reuse | {
            "name": self.name,
            "variant": self.variant,
            "options": dict(self.options),
            "format": self.format,
            "games_per_pairing": self.games_per_pairing,
            "duplicate": self.duplicate,
            "concurrency": self.concurrency,
            "seed": self.seed,
            "rounds": self.rounds,
            "challenger": self.challenger,
            "time_control": {
                "budget_ms": self.time_control.budget_ms,
                "bank_ms": self.time_control.bank_ms,
                "grace_ms": self.time_control.grace_ms,
            },
            "policies": {
                "on_timeout": self.policies.on_timeout.value,
                "on_illegal_action": self.policies.on_illegal_action.value,
                "on_crash": self.policies.on_crash.value,
                "on_protocol_error": self.policies.on_protocol_error.value,
                "max_strikes": self.policies.max_strikes,
            },
            "limits": asdict(self.limits),
            "entrants": [
                {"name": e.name, "command": e.command, "language": e.language, "version": e.version}
                for e in self.entrants
            ],
        }


def load(path: str | Path) -> TournamentSpec:
    """Read and validate a tournament file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise TournamentFileError(f"{p}: cannot read the file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TournamentFileError(
            f"{p}: not UTF-8 text (byte {exc.start}): save it as UTF-8"
        ) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TournamentFileError(f"{p}: not valid TOML: {exc}") from exc
    return parse(data, str(p))


def parse(data: dict[str, Any], source: str = "<tournament>") -> TournamentSpec:
    r = _Reader(data, source)
    known = {
        "name", "variant", "options", "format", "entrants", "games_per_pairing", "duplicate",
        "concurrency", "seed", "rounds", "challenger", "time_control", "policies", "limits",
        "matches_per_process",
    }  # fmt: skip
    for key in data:
        if key not in known:
            raise r.error(key, f"unknown field; expected one of {', '.join(sorted(known))}")
    name = r.string("name")
    vname = r.string("variant", "two-handed")
    if vname not in VARIANT_NAMES:
        raise r.error("variant", f"expected one of {', '.join(VARIANT_NAMES)}, got {vname!r}")
    options_raw = r.table("options")
    options = {}
    for key, value in options_raw.items():
        if not isinstance(value, str):
            raise r.error(f"options.{key}", f"expected a string, got {value!r}")
        options[key] = value
    try:
        v = variant(vname, **options)
    except VariantError as exc:
        raise r.error("options", str(exc)) from exc
    fmt = r.string("format", "round-robin")
    if fmt not in FORMATS:
        raise r.error("format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    entrants = _entrants(r, data.get("entrants"))
    per_game = sum(v.team_size(s) for s in range(v.seats))
    if len(entrants) < per_game:
        raise r.error(
            "entrants", f"{vname} needs at least {per_game} entrants, got {len(entrants)}"
        )
    games = r.integer("games_per_pairing", 1, minimum=1)
    concurrency = r.integer("concurrency", 1, minimum=1)
    seed = r.integer("seed", 0, minimum=0)
    rounds = r.integer("rounds", 0, minimum=0)
    challenger = r.string("challenger", "")
    if fmt == "swiss":
        if rounds < 1:
            raise r.error("rounds", "a swiss tournament needs rounds >= 1")
        if per_game != 2:
            raise r.error("format", f"swiss pairs two players at a time; {vname} seats {per_game}")
    elif "rounds" in data:
        raise r.error("rounds", f"only a swiss tournament has rounds (format is {fmt!r})")
    if fmt == "gauntlet":
        if not challenger:
            raise r.error("challenger", "a gauntlet needs the name of its challenger")
        if challenger not in {e.name for e in entrants}:
            raise r.error("challenger", f"no entrant is named {challenger!r}")
    elif challenger:
        raise r.error("challenger", f"only a gauntlet has a challenger (format is {fmt!r})")
    return TournamentSpec(
        name=name,
        variant=vname,
        options=v.options,
        format=fmt,
        entrants=tuple(entrants),
        games_per_pairing=games,
        duplicate=r.boolean("duplicate", True),
        concurrency=concurrency,
        seed=seed,
        rounds=rounds,
        challenger=challenger,
        time_control=_time_control(r),
        policies=_policies(r),
        limits=_limits(r),
        matches_per_process=r.integer("matches_per_process", 1, minimum=1),
        source=source,
    )


class _Reader:
    def __init__(self, data: dict[str, Any], source: str) -> None:
        self.data = data
        self.source = source

    def error(self, key: str, message: str) -> TournamentFileError:
        return TournamentFileError(f"{self.source}: {key}: {message}")

    def string(self, key: str, default: str | None = None) -> str:
        if key not in self.data:
            if default is None:
                raise self.error(key, "missing; expected a string")
            return default
        value = self.data[key]
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, f"expected a non-empty string, got {value!r}")
        return value.strip()

    def integer(self, key: str, default: int, minimum: int) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"expected an integer, got {value!r}")
        if value < minimum:
            raise self.error(key, f"expected an integer >= {minimum}, got {value}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value

    def table(self, key: str) -> dict[str, Any]:
        value = self.data.get(key, {})
        if not isinstance(value, dict):
            raise self.error(key, f"expected a table ([{key}]), got {value!r}")
        return value


def _entrants(r: _Reader, raw: Any) -> list[Entrant]:
    if not isinstance(raw, list) or not raw:
        raise r.error(
            "entrants", "expected at least one [[entrants]] table with a name and a command"
        )
    out: list[Entrant] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        where = f"entrants[{i}]"
        if not isinstance(item, dict):
            raise r.error(where, f"expected a table, got {item!r}")
        sub = _Reader(item, r.source)
        for key in item:
            if key not in ("name", "command", "language", "version"):
                raise r.error(
                    f"{where}.{key}", "unknown field; expected name, command, language, version"
                )
        try:
            name = sub.string("name")
            command = sub.string("command")
            language = sub.string("language", "")
            raw_version = item.get("version", "")
            if isinstance(raw_version, bool) or not isinstance(raw_version, str | int | float):
                raise TournamentFileError(
                    f"{r.source}: version: expected a string or a number, got {raw_version!r}"
                )
            version = str(raw_version)
        except TournamentFileError as exc:
            raise TournamentFileError(
                str(exc).replace(f"{r.source}: ", f"{r.source}: {where}.", 1)
            ) from None
        if name in seen:
            raise r.error(f"{where}.name", f"two entrants are named {name!r}")
        seen.add(name)
        out.append(Entrant(name, command, language, version))
    return out


def _time_control(r: _Reader) -> TimeControl:
    raw = r.table("time_control")
    d = TimeControl()
    sub = _Reader(raw, r.source)
    for key in raw:
        if key not in ("budget_ms", "bank_ms", "grace_ms"):
            raise r.error(
                f"time_control.{key}", "unknown field; expected budget_ms, bank_ms, grace_ms"
            )
    try:
        return TimeControl(
            budget_ms=sub.integer("budget_ms", d.budget_ms, 0),
            bank_ms=sub.integer("bank_ms", d.bank_ms, 0),
            grace_ms=sub.integer("grace_ms", d.grace_ms, 0),
        )
    except TournamentFileError as exc:
        raise TournamentFileError(
            str(exc).replace(f"{r.source}: ", f"{r.source}: time_control.", 1)
        ) from None
    except ValueError as exc:
        raise r.error("time_control", str(exc)) from exc


def _policies(r: _Reader) -> Policies:
    raw = r.table("policies")
    d = Policies()
    values = {p.value: p for p in FailurePolicy}
    chosen: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "max_strikes":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise r.error("policies.max_strikes", f"expected an integer >= 0, got {value!r}")
            chosen[key] = value
        elif key in ("on_timeout", "on_illegal_action", "on_crash", "on_protocol_error"):
            if not isinstance(value, str) or value not in values:
                raise r.error(
                    f"policies.{key}", f"expected one of {', '.join(values)}, got {value!r}"
                )
            chosen[key] = values[value]
        else:
            raise r.error(
                f"policies.{key}",
                "unknown field; expected on_timeout, on_illegal_action, on_crash, on_protocol_error, "
                "max_strikes",
            )
    return replace(d, **chosen)


def _limits(r: _Reader) -> Limits:
    raw = r.table("limits")
    d = Limits()
    known = [f.name for f in fields(Limits)]
    chosen: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise r.error(f"limits.{key}", f"unknown field; expected one of {', '.join(known)}")
        if key == "sandbox":
            if value not in SANDBOX_MODES:
                raise r.error(
                    "limits.sandbox", f"expected one of {', '.join(SANDBOX_MODES)}, got {value!r}"
                )
            if value in ("required", "bubblewrap") and not bubblewrap_available():
                raise r.error(
                    "limits.sandbox",
                    "bubblewrap was asked for but bwrap is not installed (Debian package: bubblewrap)",
                )
        elif key == "freeze":
            if not isinstance(value, bool):
                raise r.error("limits.freeze", f"expected true or false, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise r.error(f"limits.{key}", f"expected an integer >= 0, got {value!r}")
        chosen[key] = value
    return replace(d, **chosen)
