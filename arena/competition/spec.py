"""Competition files (``competitions/*.toml``): a standing competition's rules, limits, matchmaking and
submission settings, validated like tournament files (every problem at once, naming file and field).

    name = "Example Ladder"
    variant = "two-handed"
    seed = 0                      # public seed of the deals (they also depend on the ledger's secret)

    [options]                     # the variant's options
    [time_control]                # as in tournament files
    [policies]
    [limits]                      # per bot process, and the sandbox mode

    [matchmaking]
    games_at_once = 2             # games played at the same time
    duplicate = true              # each pairing's deal is played once per seat rotation
    opponent_window = 4           # opponents: from this many nearest in mu of those needing games
    max_error_rate = 0.5          # a bot that caused more of its recent games' failures is suspended
    error_window = 10             # ... counting its last this many games
    pause_seconds = 1.0           # how long the matchmaker waits when nobody can be paired
    matches_per_process = 1       # games a bundle's process may play before it is replaced
    challenge_share = 0.2         # of games_at_once, the most given to authors' challenges at once
                                  # (at least 1, none when 0)

    [submissions]
    max_bundle_mb = 20            # a bundle's size, packed
    max_unpacked_mb = 100         # ... and unpacked
    max_files = 2000
    build_seconds = 300           # the build command's time limit (no network)
    check_seconds = 180           # the conformance check's time limit
    max_pending = 3               # an author's submissions waiting to be built and checked
    max_bots_per_author = 10      # an author's bots in play or in intake (bundles and remote)
    max_submissions_per_day = 50  # an author's submissions over the last 24 hours, failed included
    output_kib = 64               # each game's bot output kept per seat: the last this many KiB
                                  # (0: none), read by its author (arena compete log --game ID)
    output_days = 30              # ... for this many days after its game, then removed
    languages = ["python", "node", "cpp", "go", "java", "binary"]   # the manifest languages
                                  # accepted (the default: all; arena compete runtimes says which
                                  # this server can build)
    max_challenge_games = 50      # games one challenge may ask for (arena compete challenge)
    challenge_games_per_day = 200 # an author's challenge games over the last 24 hours (0: none)

    [notifications]               # authors' webhooks (arena compete webhook set URL)
    allowed_hosts = ["127.0.0.1"] # hosts a webhook may name over plain http, or on a private or
                                  # loopback address (default: none; https to public hosts only)
    attempts = 8                  # a delivery's attempts before it is given up
    first_retry_seconds = 10.0    # the wait before its second attempt, doubled at each one after
    timeout_seconds = 10.0        # one attempt's time limit (connect, send, the answer's status)
    deliveries_at_once = 4        # deliveries under way at a time, all authors together
    max_queued = 100              # an author's deliveries waiting; the oldest beyond are dropped
    disable_after = 10            # attempts failed in a row before a webhook is disabled

    [server]
    submissions = "127.0.0.1:50061"   # the submission service (authors, organisers)
    bots = "127.0.0.1:50062"          # where remote entrants dial in
    live = "127.0.0.1:50063"          # optional: the live games for arena web --server (the
                                      # games whose deal will not be played again; a token on
                                      # every call); serve --live too
    cluster = "auto"                  # optional: games between bundles on a Ray cluster (auto,
                                      # HOST:PORT, ray://HOST:PORT or local); serve --cluster too
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Annotated, Any, Literal

import pydantic
from pydantic import BaseModel, Field

from arena.bots.limits import Limits
from arena.common.bounds import MAX_SEED
from arena.competition.runtimes import LANGUAGES
from arena.game import VARIANT_NAMES, Variant, VariantError, options_help, variant
from arena.play.cluster_address import address_problem
from arena.play.file_models import (
    SERIES_IN_COMPETITIONS,
    STRICT,
    LimitsModel,
    PoliciesModel,
    SpecFile,
    Text,
    TimeControlModel,
    checked,
    to_policies,
)
from arena.referee import Policies, TimeControl


class CompetitionFileError(ValueError):
    """A competition file that cannot be used; one line per problem, naming the file and the field."""


@dataclass(frozen=True, slots=True)
class Matchmaking:
    games_at_once: int = 2
    duplicate: bool = True
    opponent_window: int = 4
    max_error_rate: float = 0.5
    error_window: int = 10
    pause_seconds: float = 1.0
    # Games a bundle's bot process may play, one after another over its connection (never a deal it
    # has seen), before it is replaced: as a tournament's matches_per_process.
    matches_per_process: int = 1
    # The share of games_at_once that authors' challenges may take at once: at most
    # max(1, floor(share * games_at_once)) challenge games, none when 0 (arena.competition.challenges).
    challenge_share: float = 0.2

    @property
    def challenge_slots(self) -> int:
        """Challenge games at a time, at most."""
        if self.challenge_share <= 0:
            return 0
        return max(1, int(self.challenge_share * self.games_at_once + 1e-9))


@dataclass(frozen=True, slots=True)
class Submissions:
    max_bundle_mb: int = 20
    max_unpacked_mb: int = 100
    max_files: int = 2000
    build_seconds: int = 300
    check_seconds: int = 180
    # An author's submissions not yet built and checked: each takes an intake's time and disk.
    max_pending: int = 3
    # An author's bots in play or in intake, bundles and remote entrants together.
    max_bots_per_author: int = 10
    # An author's submissions (bundles and remote registrations, failed ones too) over the last 24
    # hours: each stays in the ledger, with its log, for good.
    max_submissions_per_day: int = 50
    # The tail of each bot's output kept per game and seat, in KiB, for its author (0: none); it goes
    # with its game.
    output_kib: int = 64
    # Days a game's bot output is kept after the game ends; then it is removed (the game, its record
    # and its time per decision stay), so that a million games do not hold 64 KiB per seat each.
    output_days: int = 30
    # The manifest languages a bundle may be written in (arena.competition.runtimes).
    languages: tuple[str, ...] = LANGUAGES
    # Games one challenge may ask for, and an author's challenge games over the last 24 hours.
    max_challenge_games: int = 50
    challenge_games_per_day: int = 200


@dataclass(frozen=True, slots=True)
class Notifications:
    # Hosts (names or addresses, as a webhook's URL gives them) a webhook may name over plain http
    # or whose address is private or loopback: the organiser's own receivers.
    allowed_hosts: tuple[str, ...] = ()
    attempts: int = 8
    first_retry_seconds: float = 10.0
    timeout_seconds: float = 10.0
    deliveries_at_once: int = 4
    max_queued: int = 100
    disable_after: int = 10


@dataclass(frozen=True, slots=True)
class ServerSettings:
    submissions: str = "127.0.0.1:50061"
    bots: str = "127.0.0.1:50062"
    cluster: str = ""  # a Ray cluster for the games between submitted bundles ("": this machine)
    live: str = ""  # the live games' address, for the web's Live page ("": none)


@dataclass(frozen=True, slots=True)
class CompetitionSpec:
    name: str
    variant: str
    options: tuple[tuple[str, str], ...] = ()
    seed: int = 0
    time_control: TimeControl = field(default_factory=TimeControl)
    policies: Policies = field(default_factory=Policies)
    limits: Limits = field(default_factory=Limits)
    matchmaking: Matchmaking = field(default_factory=Matchmaking)
    submissions: Submissions = field(default_factory=Submissions)
    server: ServerSettings = field(default_factory=ServerSettings)
    source: str = ""
    notifications: Notifications = field(default_factory=Notifications)

    def build_variant(self) -> Variant:
        return variant(self.variant, **dict(self.options))

    @property
    def players(self) -> int:
        """Players in one game (a consultation seat counts each of its players)."""
        v = self.build_variant()
        return sum(v.team_size(s) for s in range(v.seats))

    def to_dict(self) -> dict[str, Any]:
        """The competition's identity in the ledger: what its games depend on. Matchmaking, submission
        and server settings may change between runs without starting a new competition."""
        return {
            "kind": "competition",
            "name": self.name,
            "variant": self.variant,
            "options": dict(self.options),
            "seed": self.seed,
            "time_control": asdict(self.time_control),
            "policies": {
                **{k: v.value for k, v in asdict(self.policies).items() if k != "max_strikes"},
                "max_strikes": self.policies.max_strikes,
            },
            "limits": asdict(self.limits),
        }

    @property
    def identity(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()


_MM, _SUB, _SRV, _NOTE = Matchmaking(), Submissions(), ServerSettings(), Notifications()


class MatchmakingModel(BaseModel):
    model_config = STRICT
    games_at_once: Annotated[int, Field(ge=1, le=256)] = _MM.games_at_once
    duplicate: bool = _MM.duplicate
    opponent_window: Annotated[int, Field(ge=1, le=1000)] = _MM.opponent_window
    max_error_rate: Annotated[float, Field(gt=0, le=1)] = _MM.max_error_rate
    error_window: Annotated[int, Field(ge=1, le=10_000)] = _MM.error_window
    pause_seconds: Annotated[float, Field(gt=0, le=3600)] = _MM.pause_seconds
    matches_per_process: Annotated[int, Field(ge=1, le=10_000)] = _MM.matches_per_process
    challenge_share: Annotated[float, Field(ge=0, le=1)] = Field(
        default=_MM.challenge_share,
        description="The share of games_at_once that authors' challenges may take at once: at most "
        "max(1, floor(share * games_at_once)) challenge games, none when 0",
    )


class SubmissionsModel(BaseModel):
    model_config = STRICT
    max_bundle_mb: Annotated[int, Field(ge=1, le=4096)] = _SUB.max_bundle_mb
    max_unpacked_mb: Annotated[int, Field(ge=1, le=16384)] = _SUB.max_unpacked_mb
    max_files: Annotated[int, Field(ge=1, le=1_000_000)] = _SUB.max_files
    build_seconds: Annotated[int, Field(ge=1, le=86400)] = _SUB.build_seconds
    check_seconds: Annotated[int, Field(ge=10, le=86400)] = _SUB.check_seconds
    max_pending: Annotated[int, Field(ge=1, le=1000)] = _SUB.max_pending
    max_bots_per_author: Annotated[int, Field(ge=1, le=10_000)] = _SUB.max_bots_per_author
    max_submissions_per_day: Annotated[int, Field(ge=1, le=1_000_000)] = (
        _SUB.max_submissions_per_day
    )
    output_kib: Annotated[int, Field(ge=0, le=1024)] = _SUB.output_kib
    output_days: Annotated[int, Field(ge=1, le=3650)] = Field(
        default=_SUB.output_days,
        description="Days a game's bot output is kept after the game, then removed",
    )
    max_challenge_games: Annotated[int, Field(ge=1, le=1000)] = Field(
        default=_SUB.max_challenge_games,
        description="The games one challenge may ask for (arena compete challenge --games)",
    )
    challenge_games_per_day: Annotated[int, Field(ge=0, le=1_000_000)] = Field(
        default=_SUB.challenge_games_per_day,
        description="An author's challenge games over the last 24 hours (0: no challenges)",
    )
    languages: list[Literal[LANGUAGES]] = Field(  # type: ignore[valid-type]
        default=list(_SUB.languages),
        min_length=1,
        description="The manifest languages a bundle may be written in: python, node, cpp, go, "
        "java, binary (a prebuilt executable)",
    )

    @pydantic.field_validator("languages")
    @classmethod
    def _once_each(cls, value: list[str]) -> list[str]:
        twice = sorted({v for v in value if value.count(v) > 1})
        if twice:
            raise ValueError(f"{', '.join(twice)} listed more than once")
        return value


class NotificationsModel(BaseModel):
    model_config = STRICT
    allowed_hosts: list[Text] = Field(
        default=[],
        max_length=100,
        description="Hosts a webhook may name over plain http, or whose address is private or "
        "loopback (the organiser's own receivers); any other webhook is an https URL of a public "
        "host",
    )
    attempts: Annotated[int, Field(ge=1, le=100)] = _NOTE.attempts
    first_retry_seconds: Annotated[float, Field(gt=0, le=3600)] = _NOTE.first_retry_seconds
    timeout_seconds: Annotated[float, Field(gt=0, le=300)] = _NOTE.timeout_seconds
    deliveries_at_once: Annotated[int, Field(ge=1, le=256)] = _NOTE.deliveries_at_once
    max_queued: Annotated[int, Field(ge=1, le=100_000)] = _NOTE.max_queued
    disable_after: Annotated[int, Field(ge=1, le=10_000)] = _NOTE.disable_after

    @pydantic.field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        for host in value:
            if not host or any(c in host for c in "/@?#") or host != host.strip():
                raise ValueError(f"a host name or address, got {host!r}")
        return [h.lower().strip("[]") for h in value]


class ServerModel(BaseModel):
    model_config = STRICT
    submissions: Text = _SRV.submissions
    bots: Text = _SRV.bots
    live: str = Field(
        default="",
        description="HOST:PORT of the live games (the admin service's spectator calls, a token on "
        "every call) that arena web --server follows; empty: none",
    )
    cluster: str = Field(
        default="",
        description="Play the games between submitted bundles on a Ray cluster: auto, "
        "HOST:PORT, ray://HOST:PORT or local",
    )

    @pydantic.field_validator("cluster")
    @classmethod
    def _address(cls, value: str) -> str:
        value = value.strip()
        if value and (problem := address_problem(value)):
            raise ValueError(problem)
        return value


class CompetitionModel(BaseModel):
    """A competition file."""

    model_config = STRICT
    name: Text
    variant: Literal[VARIANT_NAMES] = "two-handed"  # type: ignore[valid-type]
    options: dict[str, str] = Field(default={}, description=options_help())
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)] = 0
    time_control: TimeControlModel = TimeControlModel()
    policies: PoliciesModel = PoliciesModel()
    limits: LimitsModel = LimitsModel()
    matchmaking: MatchmakingModel = MatchmakingModel()
    submissions: SubmissionsModel = SubmissionsModel()
    server: ServerModel = ServerModel()
    notifications: NotificationsModel = NotificationsModel()


def _check(
    m: CompetitionModel, source: str
) -> tuple[list[tuple[str, str]], CompetitionSpec | None]:
    """What the model alone cannot say: the variant's options, the addresses, the limits' own
    checks."""
    problems: list[tuple[str, str]] = []
    try:
        v: Variant | None = variant(m.variant, **m.options)
    except VariantError as exc:
        problems.append(("options", str(exc)))
        v = None
    if v is not None and v.consultation == "series":  # docs/rules.md §3.2
        problems.append(("options", SERIES_IN_COMPETITIONS))
        v = None
    if m.server.submissions == m.server.bots and not m.server.bots.endswith(":0"):
        problems.append(("server.bots", "the bots' address must differ from the submissions'"))
    live = m.server.live.strip()
    if live and not live.endswith(":0") and live in (m.server.submissions, m.server.bots):
        problems.append(("server.live", "the live games' address must differ from the others"))
    if live and not live.startswith("unix:") and not live.rpartition(":")[2].isdigit():
        problems.append(("server.live", f"expected HOST:PORT, got {live!r}"))
    time_control, limits = checked(problems, m.time_control, m.limits)
    if problems or v is None or time_control is None or limits is None:
        return problems, None
    return [], CompetitionSpec(
        name=m.name,
        variant=m.variant,
        options=v.options,
        seed=m.seed,
        time_control=time_control,
        policies=to_policies(m.policies),
        limits=limits,
        matchmaking=Matchmaking(**m.matchmaking.model_dump()),
        submissions=Submissions(
            **{**m.submissions.model_dump(), "languages": tuple(m.submissions.languages)}
        ),
        server=ServerSettings(**m.server.model_dump()),
        source=source,
        notifications=Notifications(
            **{
                **m.notifications.model_dump(),
                "allowed_hosts": tuple(m.notifications.allowed_hosts),
            }
        ),
    )


_FILE = SpecFile(
    "Bezique Arena competition file",
    CompetitionModel,
    CompetitionFileError,
    _check,
    "<competition>",
)
json_schema = _FILE.json_schema  # for editors (arena schema)
load = _FILE.load  # read and validate a competition file
parse = _FILE.parse
