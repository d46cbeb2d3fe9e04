"""Tournament files (``tournaments/*.toml``): parsing and validation with errors that name the file, the
field and what was expected, every error of a file at once.

    name = "Quickstart"
    variant = "two-handed"          # any engine variant
    format = "round-robin"          # round-robin, double-round-robin, gauntlet, swiss
    deals_per_pairing = 2           # deals per pairing; with duplicate deals each is played once per
                                    # seat rotation (two-handed: 2 deals -> 4 games per pairing)
    duplicate = true                # default: every deal is replayed with the seats rotated
    concurrency = 2                 # games played at once
    matches_per_process = 1         # games a launched bot process may play before it is replaced
    seed = 1                        # the public seed; deals also depend on the ledger's secret
    deals = "deals/book.txt"        # optional: a deal suite (arena deals make N FILE), relative to
                                    # this file's folder: deal d of every pairing plays the suite's
                                    # deal d (its seed, dealer and decks; dealt with the ledger's
                                    # secret). deals_per_pairing defaults to the suite's length and
                                    # may not exceed it; seed is then unused
    cluster = "auto"                # optional: play the games on a Ray cluster (auto, HOST:PORT,
                                    # ray://HOST:PORT or local); arena run --cluster overrides it
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
    on_check_failure = "stop"       # an entrant failing the pre-run check: stop the run, or
                                    # "exclude" it (it forfeits its own games; the others play)

    [limits]                        # per bot process; 0: no limit
    memory_mb = 4096                # address space
    cpu_seconds = 900               # per process, over all the games it plays
    processes = 4096
    file_size_mb = 64
    open_files = 1024
    log_bytes = 1000000             # of its output kept per process
    freeze = false                  # stop (freeze) a bot while it is not its turn

    [[entrants]]
    name = "random"
    command = "{python} -m arena_bot.random_bot"   # {python}: the interpreter running the arena;
                                                   # relative paths: from this file's folder
    language = "python"             # optional
    version = "1"                   # optional

The file is validated with a pydantic model, which reports every problem of a file at once and gives
editors a JSON Schema (``arena schema``); the model is turned into the plain :class:`TournamentSpec`
the rest of the arena uses. ``games_per_pairing``, the field's earlier name, is still read (it always
meant deals per pairing), with a warning.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from arena.bots.launcher import LaunchError, check_command
from arena.bots.limits import Limits
from arena.common.bounds import (
    MAX_CONCURRENCY,
    MAX_DEALS_PER_PAIRING,
    MAX_ENTRANTS,
    MAX_MATCHES_PER_PROCESS,
    MAX_PLANNED_GAMES,
    MAX_ROUNDS,
    MAX_SEED,
)
from arena.game import VARIANT_NAMES, Variant, VariantError, options_help, variant
from arena.ledger.rows import Entrant
from arena.play.cluster_address import address_problem
from arena.play.deals import DealFileError, DealSuite, load_deals
from arena.play.file_models import (
    SERIES_WITH_DUPLICATE,
    STRICT,
    LimitsModel,
    PoliciesModel,
    SpecFile,
    Text,
    TimeControlModel,
    checked,
    entrant_field,
    to_policies,
)
from arena.referee import Policies, TimeControl

FORMATS = ("round-robin", "double-round-robin", "gauntlet", "swiss")


class TournamentFileError(ValueError):
    """A tournament file that cannot be used; the message names the file and the field (one line per
    problem, every problem of the file)."""


@dataclass(frozen=True, slots=True)
class TournamentSpec:
    name: str
    variant: str
    options: tuple[tuple[str, str], ...]
    format: str
    entrants: tuple[Entrant, ...]
    deals_per_pairing: int = 1
    duplicate: bool = True
    concurrency: int = 1
    seed: int = 0
    rounds: int = 0
    challenger: str = ""
    time_control: TimeControl = field(default_factory=TimeControl)
    policies: Policies = field(default_factory=Policies)
    limits: Limits = field(default_factory=Limits)
    matches_per_process: int = 1
    cluster: str = ""  # a Ray cluster's address ("": this machine); not part of its identity
    # An entrant that fails the pre-run check (cannot start, never dials in, no Hello): "stop" the run
    # before its first game, or "exclude" it (it forfeits each of its games, with the check's reason).
    on_check_failure: str = "stop"
    source: str = ""  # the file it came from
    # The deal suite the pairings play (None: deals derived from the seed), and its file (resolved);
    # its content, not its path, is part of the tournament's identity.
    deals: DealSuite | None = None
    deals_file: str = ""
    warnings: tuple[str, ...] = ()  # what the file should say otherwise (not part of its identity)

    @property
    def base_dir(self) -> Path:
        """The folder relative paths in entrants' commands start from: the file's own."""
        return Path(self.source).resolve().parent if self.source else Path.cwd()

    def build_variant(self) -> Variant:
        return variant(self.variant, **dict(self.options))

    @property
    def deals_digest(self) -> str:
        """The SHA-256 of the deal suite's canonical text (comments and layout do not count)."""
        if self.deals is None:
            return ""
        return "sha256:" + hashlib.sha256(self.deals.text().encode()).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        # matches_per_process appears only when set, so that a tournament's identity (this dict) is
        # what it was before the field existed.
        reuse: dict[str, Any] = (
            {"matches_per_process": self.matches_per_process}
            if self.matches_per_process > 1
            else {}
        )
        # The deal suite likewise, when there is one: its content's digest (not its path), so that
        # resuming with an edited suite is refused.
        if self.deals is not None:
            reuse["deals"] = self.deals_digest
        return reuse | {
            "name": self.name,
            "variant": self.variant,
            "options": dict(self.options),
            "format": self.format,
            "deals_per_pairing": self.deals_per_pairing,
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
                # Only when set: the identity of every tournament registered before it existed
                # stays what it was.
                **(
                    {"on_check_failure": self.on_check_failure}
                    if self.on_check_failure != "stop"
                    else {}
                ),
            },
            "limits": asdict(self.limits),
            "entrants": [
                {"name": e.name, "command": e.command, "language": e.language, "version": e.version}
                for e in self.entrants
            ],
        }


# ---------------------------------------------------------------- the file's model


class EntrantModel(BaseModel):
    model_config = STRICT
    name: Text
    command: Text = Field(
        description="{python}: the arena's interpreter; relative paths: from the file's folder"
    )
    language: Annotated[str, StringConstraints(strip_whitespace=True)] = ""
    version: str | int | float = ""


class TournamentPoliciesModel(PoliciesModel):
    """A tournament's [policies]: a match's (per failure), and what an entrant that fails the
    pre-run check does to the run (a competition checks each submission on its own instead)."""

    on_check_failure: Literal["stop", "exclude"] = Field(
        default="stop",
        description=(
            "An entrant that cannot start, never dials in or fails the pre-run check: 'stop' the run "
            "before its first game (the default), or 'exclude' it: it forfeits each of its own "
            "games, recorded with the check's reason, and everyone else plays."
        ),
    )


class TournamentModel(BaseModel):
    """A tournament file."""

    model_config = STRICT
    name: Text
    variant: Literal[VARIANT_NAMES] = "two-handed"  # type: ignore[valid-type]
    options: dict[str, str] = Field(default={}, description=options_help())
    format: Literal[FORMATS] = "round-robin"  # type: ignore[valid-type]
    entrants: Annotated[list[EntrantModel], Field(min_length=1, max_length=MAX_ENTRANTS)]
    deals_per_pairing: Annotated[int, Field(ge=1, le=MAX_DEALS_PER_PAIRING)] = 1
    games_per_pairing: Annotated[int, Field(ge=1, le=MAX_DEALS_PER_PAIRING)] | None = Field(
        default=None, description="The earlier name of deals_per_pairing."
    )
    duplicate: bool = True
    concurrency: Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)] = 1
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)] = 0
    rounds: Annotated[int, Field(ge=0, le=MAX_ROUNDS)] = 0
    challenger: str = ""
    time_control: TimeControlModel = TimeControlModel()
    policies: TournamentPoliciesModel = TournamentPoliciesModel()
    limits: LimitsModel = LimitsModel()
    matches_per_process: Annotated[int, Field(ge=1, le=MAX_MATCHES_PER_PROCESS)] = 1
    cluster: str = Field(
        default="",
        description="Play the games on a Ray cluster: auto, HOST:PORT, ray://HOST:PORT or local",
    )
    deals: str = Field(
        default="",
        description="A deal suite file (arena deals make N FILE), relative to this file's folder: "
        "deal d of every pairing plays its deal d; deals_per_pairing defaults to its length",
    )


def _check(m: TournamentModel, source: str) -> tuple[list[tuple[str, str]], TournamentSpec | None]:
    """What the model alone cannot say: the variant's options, the format's fields, the size of the
    schedule, the limits' own checks."""
    problems: list[tuple[str, str]] = []
    warnings: list[str] = []
    try:
        v: Variant | None = variant(m.variant, **m.options)
    except VariantError as exc:
        problems.append(("options", str(exc)))
        v = None
    if v is not None and v.consultation == "series" and m.duplicate:  # docs/rules.md §3.2
        problems.append(("duplicate", SERIES_WITH_DUPLICATE))
    seen: set[str] = set()
    for i, e in enumerate(m.entrants):
        if e.name in seen:
            problems.append((f"entrants[{i}].name", f"two entrants are named {e.name!r}"))
        seen.add(e.name)
        if isinstance(e.version, float):  # TOML's 1.10 is the number 1.1: another version's
            problems.append(
                (
                    entrant_field(i, e.name, "version"),
                    f"expected a string or a whole number, got {e.version!r}: a decimal number "
                    'loses digits (1.10 reads as 1.1); quote it: version = "1.10"',
                )
            )
        try:
            check_command(e.command, e.name)
        except LaunchError as exc:
            problems.append((entrant_field(i, e.name, "command"), str(exc)))
    per_game = sum(v.team_size(s) for s in range(v.seats)) if v is not None else 2
    if v is not None and len(m.entrants) < per_game:
        problems.append(
            ("entrants", f"{m.variant} needs at least {per_game} entrants, got {len(m.entrants)}")
        )
    deals = m.deals_per_pairing
    if m.games_per_pairing is not None:
        if "deals_per_pairing" in m.model_fields_set:
            problems.append(
                (
                    "games_per_pairing",
                    "give deals_per_pairing only (games_per_pairing is its old name)",
                )
            )
        deals = m.games_per_pairing
        warnings.append(
            "games_per_pairing is now called deals_per_pairing (with duplicate deals each deal is "
            "played once per seat rotation): rename it in the file"
        )
    if m.format == "swiss":
        if m.rounds < 1:
            problems.append(("rounds", "a swiss tournament needs rounds >= 1"))
        if per_game != 2:
            problems.append(
                ("format", f"swiss pairs two players at a time; {m.variant} seats {per_game}")
            )
    elif "rounds" in m.model_fields_set:
        problems.append(("rounds", f"only a swiss tournament has rounds (format is {m.format!r})"))
    if m.format == "gauntlet":
        if not m.challenger:
            problems.append(("challenger", "a gauntlet needs the name of its challenger"))
        elif m.challenger not in seen:
            problems.append(("challenger", f"no entrant is named {m.challenger!r}"))
    elif m.challenger:
        problems.append(
            ("challenger", f"only a gauntlet has a challenger (format is {m.format!r})")
        )
    time_control, limits = checked(problems, m.time_control, m.limits)
    cluster = m.cluster.strip()
    if cluster and (problem := address_problem(cluster)):
        problems.append(("cluster", problem))
    suite: DealSuite | None = None
    deals_file = ""
    if m.deals.strip():
        base = Path(source).resolve().parent
        deals_path = base / m.deals.strip()
        deals_file = str(deals_path)
        try:
            suite = load_deals(deals_path, m.variant)
        except DealFileError as exc:
            problems.append(("deals", str(exc)))
        else:
            explicit = "deals_per_pairing" in m.model_fields_set or m.games_per_pairing is not None
            if not explicit and len(suite) > MAX_DEALS_PER_PAIRING:
                problems.append(
                    (
                        "deals",
                        f"the deal suite {m.deals.strip()!r} holds {len(suite)} deals, more than "
                        f"the {MAX_DEALS_PER_PAIRING} a pairing may play: set deals_per_pairing",
                    )
                )
            elif not explicit:
                deals = len(suite)
            elif deals > len(suite):
                problems.append(
                    (
                        "deals_per_pairing",
                        f"{deals} deals per pairing, but the deal suite {m.deals.strip()!r} holds "
                        f"{len(suite)}: give at most {len(suite)}, leave deals_per_pairing out (it "
                        "then plays the whole suite), or make a longer suite",
                    )
                )
    if problems or v is None or time_control is None or limits is None:
        return problems, None
    spec = TournamentSpec(
        name=m.name,
        variant=m.variant,
        options=v.options,
        format=m.format,
        entrants=tuple(Entrant(e.name, e.command, e.language, str(e.version)) for e in m.entrants),
        deals_per_pairing=deals,
        duplicate=m.duplicate,
        concurrency=m.concurrency,
        seed=m.seed,
        rounds=m.rounds,
        challenger=m.challenger,
        time_control=time_control,
        policies=to_policies(m.policies),
        limits=limits,
        matches_per_process=m.matches_per_process,
        cluster=cluster,
        on_check_failure=m.policies.on_check_failure,
        source=source,
        deals=suite,
        deals_file=deals_file,
        warnings=tuple(warnings),
    )
    planned = planned_games(spec)
    if planned > MAX_PLANNED_GAMES:
        where = "rounds" if spec.format == "swiss" else "deals_per_pairing"
        return [
            (
                where,
                f"the schedule would have {planned:,} games, more than the {MAX_PLANNED_GAMES:,} a "
                "tournament may plan: fewer entrants, deals or rounds",
            )
        ], None
    return [], spec


def planned_games(spec: TournamentSpec) -> int:
    """How many games the schedule has (counted, not built)."""
    v = spec.build_variant()
    sizes = [v.team_size(s) for s in range(v.seats)]
    size = sum(sizes)
    n = len(spec.entrants)
    per_pairing = spec.deals_per_pairing * (size if spec.duplicate else 1)
    if spec.format == "swiss":
        return spec.rounds * (n // 2) * per_pairing
    from math import comb

    if spec.format == "gauntlet":
        groups = comb(n - 1, size - 1)
    else:
        groups = comb(n, size) * (2 if spec.format == "double-round-robin" else 1)
    if v.partnerships or tuple(sizes) == (2, 2):
        groups *= 3  # each group of four meets in its three team splits
    return groups * per_pairing


_FILE = SpecFile(
    "Bezique Arena tournament file", TournamentModel, TournamentFileError, _check, "<tournament>"
)
json_schema = _FILE.json_schema  # for editors (arena schema)
load = _FILE.load  # read and validate a tournament file
parse = _FILE.parse
