"""Tournament files: every shipped example loads, and every kind of bad input gives a
TournamentFileError whose message names the file, the field and what was expected."""

from __future__ import annotations

import importlib.util
import shlex
from pathlib import Path

import pytest

from arena.ledger.rows import Entrant
from arena.play import file_models as files
from arena.referee import FailurePolicy
from arena.tournament.schedule import full_schedule
from arena.tournament.spec import TournamentFileError, json_schema, load, parse

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "tournaments").glob("*.toml"))

TWO = """
[[entrants]]
name = "a"
command = "{python} -m arena_bot.random_bot"

[[entrants]]
name = "b"
command = "{python} -m arena_bot.first_bot"
"""

THREE = (
    TWO
    + """
[[entrants]]
name = "c"
command = "{python} -m arena_bot.random_bot"
version = "2"
"""
)


def write(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- shipped files


def test_the_shipped_examples_are_there() -> None:
    names = {p.name for p in SHIPPED}
    assert "quickstart.toml" in names
    specs = [load(p) for p in SHIPPED]
    assert any(s.format == "gauntlet" for s in specs), "an example gauntlet"
    assert any(s.build_variant().seats > 2 for s in specs), "an example for a multi-player variant"


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_file_loads_and_schedules(path: Path) -> None:
    spec = load(path)
    assert spec.source == str(path)
    assert spec.name
    assert len(spec.entrants) >= 2
    if spec.format != "swiss":
        games = full_schedule(spec)
        assert games, "a shipped tournament plays at least one game"
        players = {n for g in games for n in g.players}
        assert players == {e.name for e in spec.entrants}, "every entrant plays"


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_shipped_bots_exist(path: Path) -> None:
    """Each shipped entrant's command runs a module that can be imported here."""
    for e in load(path).entrants:
        words = shlex.split(e.command)
        assert words[0] == "{python}", e.command
        assert words[1] == "-m", e.command
        assert importlib.util.find_spec(words[2]) is not None, f"{path.name}: {e.command}"


def test_quickstart_is_small() -> None:
    """The quickstart finishes in under two minutes: a handful of games of the example bots."""
    spec = load(ROOT / "tournaments" / "quickstart.toml")
    assert spec.variant == "two-handed"
    assert len(full_schedule(spec)) <= 40


def test_defaults(tmp_path: Path) -> None:
    spec = load(write(tmp_path, 'name = "T"\n' + TWO))
    assert spec.variant == "two-handed"
    assert spec.format == "round-robin"
    assert spec.duplicate is True
    assert spec.deals_per_pairing == 1
    assert spec.concurrency == 1
    assert spec.rounds == 0
    assert spec.challenger == ""
    assert spec.matches_per_process == 1
    assert spec.entrants[0] == Entrant("a", "{python} -m arena_bot.random_bot")


def test_matches_per_process_is_part_of_the_identity_only_when_set(tmp_path: Path) -> None:
    # A tournament written before the field existed keeps its identity (and resumes).
    plain = load(write(tmp_path, 'name = "T"\n' + TWO))
    assert "matches_per_process" not in plain.to_dict()
    reused = load(write(tmp_path, 'name = "T"\nmatches_per_process = 8\n' + TWO, "r.toml"))
    assert reused.to_dict()["matches_per_process"] == 8
    assert {
        k: v for k, v in reused.to_dict().items() if k != "matches_per_process"
    } == plain.to_dict()


def test_a_full_file(tmp_path: Path) -> None:
    text = (
        """
name = "  Full  "
variant = "three-handed"
format = "swiss"
rounds = 2
deals_per_pairing = 3
duplicate = false
concurrency = 4
seed = 99

[options]
game_end = "immediate"

[time_control]
budget_ms = 500
bank_ms = 0
grace_ms = 50

[policies]
on_timeout = "random-action"
max_strikes = 0
"""
        + THREE
    )
    # Swiss pairs two players; three-handed seats three: rejected, naming format.
    with pytest.raises(TournamentFileError, match="format"):
        load(write(tmp_path, text))
    spec = load(write(tmp_path, text.replace("three-handed", "two-handed")))
    assert spec.name == "Full"
    assert spec.format == "swiss" and spec.rounds == 2
    assert spec.deals_per_pairing == 3 and spec.duplicate is False
    assert spec.concurrency == 4 and spec.seed == 99
    assert dict(spec.options)["game_end"] == "immediate"
    assert (spec.time_control.budget_ms, spec.time_control.bank_ms) == (500, 0)
    assert spec.time_control.grace_ms == 50
    assert spec.policies.on_timeout is FailurePolicy.RANDOM_ACTION
    assert spec.policies.on_crash is FailurePolicy.FORFEIT
    assert spec.policies.max_strikes == 0
    assert spec.entrants[2].version == "2"


def test_command_hash_names_a_program() -> None:
    a = Entrant("x", "python bot.py", version="1")
    assert a.command_hash == Entrant("y", "python bot.py", version="1").command_hash
    assert a.command_hash != Entrant("x", "python bot.py", version="2").command_hash
    assert a.command_hash != Entrant("x", "python other.py", version="1").command_hash


# ---------------------------------------------------------------- bad input

GAUNTLET_HEAD = 'name = "T"\nformat = "gauntlet"\n'

# (id, file text, the field named, what was expected: fragments of the message)
BAD: list[tuple[str, str, str, tuple[str, ...]]] = [
    ("missing-name", TWO, "name", ("missing", "string")),
    ("empty-name", 'name = "  "\n' + TWO, "name", ("non-empty string",)),
    ("name-not-string", "name = 3\n" + TWO, "name", ("string", "3")),
    ("unknown-field", 'name = "T"\ncolour = "red"\n' + TWO, "colour", ("unknown field", "variant")),
    (
        "bad-variant",
        'name = "T"\nvariant = "five-handed"\n' + TWO,
        "variant",
        ("two-handed", "'five-handed'"),
    ),
    (
        "bad-option-value",
        'name = "T"\n[options]\ngame_end = "never"\n' + TWO,
        "options",
        ("game_end", "end-of-deal", "'never'"),
    ),
    (
        "unknown-option",
        'name = "T"\n[options]\nfoo = "bar"\n' + TWO,
        "options",
        ("'foo'", "declarations_per_trick"),
    ),
    (
        "option-not-string",
        'name = "T"\n[options]\ngame_end = 1\n' + TWO,
        "options.game_end",
        ("string",),
    ),
    ("options-not-table", 'name = "T"\noptions = 3\n' + TWO, "options", ("table",)),
    (
        "bad-format",
        'name = "T"\nformat = "knockout"\n' + TWO,
        "format",
        ("round-robin", "gauntlet", "swiss", "'knockout'"),
    ),
    ("no-entrants", 'name = "T"\n', "entrants", ("[[entrants]]",)),
    ("entrants-not-tables", 'name = "T"\nentrants = ["a", "b"]\n', "entrants[0]", ("table",)),
    (
        "too-few-entrants",
        'name = "T"\n[[entrants]]\nname = "a"\ncommand = "x"\n',
        "entrants",
        ("at least 2", "got 1"),
    ),
    (
        "too-few-for-partners",
        'name = "T"\nvariant = "four-handed-partners"\n' + THREE,
        "entrants",
        ("at least 4", "got 3"),
    ),
    (
        "duplicate-entrant-names",
        'name = "T"\n' + TWO + '[[entrants]]\nname = "a"\ncommand = "y"\n',
        "entrants[2].name",
        ("'a'",),
    ),
    (
        "entrant-without-command",
        'name = "T"\n[[entrants]]\nname = "a"\n' + TWO.replace('"a"', '"z"'),
        "entrants[0].command ('a')",
        ("missing",),
    ),
    (
        "entrant-unknown-field",
        'name = "T"\n[[entrants]]\nname = "z"\ncommand = "x"\nlang = "py"\n' + TWO,
        "entrants[0].lang ('z')",
        ("unknown field", "language"),
    ),
    (
        "entrant-version-decimal",  # 1.10 was read as 1.1, merging two versions in the ledger
        'name = "T"\n[[entrants]]\nname = "z"\ncommand = "x"\nversion = 1.10\n' + TWO,
        "entrants[0].version ('z')",
        ("1.1", 'version = "1.10"'),
    ),
    (
        "entrant-version-table",
        'name = "T"\n[[entrants]]\nname = "z"\ncommand = "x"\nversion = { major = 1 }\n' + TWO,
        "entrants[0].version ('z')",
        ("string",),
    ),
    ("gauntlet-without-challenger", GAUNTLET_HEAD + TWO, "challenger", ("gauntlet",)),
    (
        "gauntlet-unknown-challenger",
        GAUNTLET_HEAD + 'challenger = "zed"\n' + TWO,
        "challenger",
        ("'zed'",),
    ),
    (
        "challenger-on-round-robin",
        'name = "T"\nchallenger = "a"\n' + TWO,
        "challenger",
        ("only a gauntlet", "round-robin"),
    ),
    ("swiss-without-rounds", 'name = "T"\nformat = "swiss"\n' + TWO, "rounds", ("swiss", ">= 1")),
    (
        "swiss-zero-rounds",
        'name = "T"\nformat = "swiss"\nrounds = 0\n' + TWO,
        "rounds",
        (">= 1",),
    ),
    (
        "rounds-on-round-robin",
        'name = "T"\nrounds = 3\n' + TWO,
        "rounds",
        ("only a swiss", "round-robin"),
    ),
    (
        "rounds-on-gauntlet",
        GAUNTLET_HEAD + 'challenger = "a"\nrounds = 3\n' + TWO,
        "rounds",
        ("only a swiss", "gauntlet"),
    ),
    (
        "swiss-three-handed",
        'name = "T"\nvariant = "three-handed"\nformat = "swiss"\nrounds = 2\n' + THREE,
        "format",
        ("two players",),
    ),
    ("negative-seed", 'name = "T"\nseed = -1\n' + TWO, "seed", (">= 0", "-1")),
    (
        "fractional-games",
        'name = "T"\ndeals_per_pairing = 1.5\n' + TWO,
        "deals_per_pairing",
        ("integer", "1.5"),
    ),
    ("zero-games", 'name = "T"\ndeals_per_pairing = 0\n' + TWO, "deals_per_pairing", (">= 1",)),
    (
        "string-games",
        'name = "T"\ndeals_per_pairing = "2"\n' + TWO,
        "deals_per_pairing",
        ("integer",),
    ),
    ("boolean-concurrency", 'name = "T"\nconcurrency = true\n' + TWO, "concurrency", ("integer",)),
    ("zero-concurrency", 'name = "T"\nconcurrency = 0\n' + TWO, "concurrency", (">= 1",)),
    ("negative-rounds", 'name = "T"\nformat = "swiss"\nrounds = -2\n' + TWO, "rounds", (">= 0",)),
    (
        "duplicate-not-bool",
        'name = "T"\nduplicate = "yes"\n' + TWO,
        "duplicate",
        ("true or false",),
    ),
    (
        "bad-policy-value",
        'name = "T"\n[policies]\non_timeout = "ignore"\n' + TWO,
        "policies.on_timeout",
        ("forfeit", "random-action", "'ignore'"),
    ),
    (
        "policy-value-a-list",
        'name = "T"\n[policies]\non_crash = ["forfeit"]\n' + TWO,
        "policies.on_crash",
        ("forfeit", "random-action"),
    ),
    (
        "unknown-policy",
        'name = "T"\n[policies]\non_lag = "forfeit"\n' + TWO,
        "policies.on_lag",
        ("unknown field", "on_timeout"),
    ),
    (
        "negative-strikes",
        'name = "T"\n[policies]\nmax_strikes = -1\n' + TWO,
        "policies.max_strikes",
        (">= 0",),
    ),
    (
        "fractional-strikes",
        'name = "T"\n[policies]\nmax_strikes = 2.5\n' + TWO,
        "policies.max_strikes",
        ("integer",),
    ),
    (
        "time-control-string",
        'name = "T"\n[time_control]\nbudget_ms = "fast"\n' + TWO,
        "time_control.budget_ms",
        ("integer", "'fast'"),
    ),
    (
        "time-control-negative",
        'name = "T"\n[time_control]\nbank_ms = -5\n' + TWO,
        "time_control.bank_ms",
        (">= 0",),
    ),
    (
        "time-control-float",
        'name = "T"\n[time_control]\ngrace_ms = 0.5\n' + TWO,
        "time_control.grace_ms",
        ("integer",),
    ),
    (
        "time-control-no-time",
        'name = "T"\n[time_control]\nbudget_ms = 0\nbank_ms = 0\n' + TWO,
        "time_control",
        ("budget or a bank",),
    ),
    (
        "time-control-unknown",
        'name = "T"\n[time_control]\nbudget_s = 1\n' + TWO,
        "time_control.budget_s",
        ("unknown field", "budget_ms"),
    ),
    (
        "time-control-beyond-the-protocol",  # a bot is told its times in 32 bits
        'name = "T"\n[time_control]\nbank_ms = 4294967296\n' + TWO,
        "time_control.bank_ms",
        ("<= 4294967295", "4294967296"),
    ),
    ("time-control-not-table", 'name = "T"\ntime_control = 5\n' + TWO, "time_control", ("table",)),
    (
        "limits-unknown",
        'name = "T"\n[limits]\ncpu = 1\n' + TWO,
        "limits.cpu",
        ("unknown field", "cpu_seconds"),
    ),
    (
        "limits-negative",
        'name = "T"\n[limits]\nmemory_mb = -1\n' + TWO,
        "limits.memory_mb",
        (">= 0",),
    ),
    (
        "limits-beyond-a-resource-limit",  # its bytes past 2^63: no bot could start
        'name = "T"\n[limits]\nmemory_mb = 9223372036854775807\n' + TWO,
        "limits.memory_mb",
        ("<= 8796093022207",),
    ),
    (
        "limits-sandbox",
        'name = "T"\n[limits]\nsandbox = "docker"\n' + TWO,
        "limits.sandbox",
        ("bubblewrap", "'docker'"),
    ),
    (
        "limits-freeze",
        'name = "T"\n[limits]\nfreeze = "yes"\n' + TWO,
        "limits.freeze",
        ("true or false",),
    ),
    ("limits-not-table", 'name = "T"\nlimits = 5\n' + TWO, "limits", ("table",)),
    (
        "matches-per-process-zero",
        'name = "T"\nmatches_per_process = 0\n' + TWO,
        "matches_per_process",
        (">= 1",),
    ),
    (
        "matches-per-process-text",
        'name = "T"\nmatches_per_process = "many"\n' + TWO,
        "matches_per_process",
        ("integer",),
    ),
    (  # an escape sequence in a name would act on every terminal showing the boards
        "control-character-in-a-name",
        'name = "T\\u001b[31mRED"\n' + TWO,
        "name",
        ("must be printable text, without control characters", "'\\x1b'"),
    ),
]


@pytest.mark.parametrize(
    ("text", "field", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD]
)
def test_bad_input_names_file_field_and_expectation(
    tmp_path: Path, text: str, field: str, expected: tuple[str, ...]
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(TournamentFileError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {field}: "), message
    for fragment in expected:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def test_parse_names_its_source() -> None:
    with pytest.raises(TournamentFileError, match=r"^here\.toml: name: missing"):
        parse({"entrants": []}, "here.toml")


def test_invalid_toml(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "T\n' + TWO)
    with pytest.raises(TournamentFileError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert "not valid TOML" in message
    assert "line 1" in message


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.toml"
    with pytest.raises(TournamentFileError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}: cannot read the file")


def test_a_directory_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(TournamentFileError) as info:
        load(tmp_path)
    assert str(info.value).startswith(f"{tmp_path}: cannot read the file")


def test_a_ledger_given_as_the_file_is_named_as_one(tmp_path: Path) -> None:
    """`arena run arena.sqlite` said "not UTF-8 text (byte 99): save it as UTF-8"."""
    from arena.ledger import Ledger

    path = tmp_path / "arena.sqlite"
    Ledger(path).close()
    with pytest.raises(TournamentFileError) as info:
        load(path)
    assert str(info.value) == (
        f"{path}: a SQLite database (a ledger?), not a TOML file; give a ledger with --ledger"
    )


def test_a_file_not_in_utf8(tmp_path: Path) -> None:
    """A file that is not text (here Latin-1 bytes) is reported like any unreadable file, not as a
    UnicodeDecodeError escaping ``load``."""
    path = tmp_path / "latin1.toml"
    path.write_bytes('name = "Tournoi d\'été"\n'.encode("latin-1") + TWO.encode())
    with pytest.raises(TournamentFileError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}: ")
    assert "UTF-8" in str(info.value) or "utf-8" in str(info.value)


def test_every_problem_of_a_file_is_reported_at_once(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'name = "T"\nseed = -1\nconcurrency = 0\n[time_control]\nbudget_ms = "x"\n' + TWO,
    )
    with pytest.raises(TournamentFileError) as info:
        load(path)
    lines = str(info.value).splitlines()
    assert [line.split(": ")[1] for line in lines] == [
        "concurrency",
        "seed",
        "time_control.budget_ms",
    ]
    assert all(line.startswith(f"{path}: ") for line in lines)


def test_every_problem_of_the_limits_is_reported_at_once(tmp_path: Path) -> None:
    """Those the limits check themselves (beyond their types) came one per run."""
    path = write(tmp_path, 'name = "T"\n[limits]\nsandbox = "docker"\ncpus = 5000\n' + TWO)
    with pytest.raises(TournamentFileError) as info:
        load(path)
    lines = str(info.value).splitlines()
    assert [line.split(": ")[1] for line in lines] == ["limits.cpus", "limits.sandbox"]
    assert "cpus must be at most 1024, got 5000" in lines[0]


def test_counts_are_bounded(tmp_path: Path) -> None:
    """A slip such as 10**12 deals is refused at once, before any schedule is built."""
    with pytest.raises(TournamentFileError, match=r"deals_per_pairing: expected an integer <= "):
        load(write(tmp_path, f'name = "T"\ndeals_per_pairing = {10**12}\n' + TWO))
    many = "".join(f'[[entrants]]\nname = "e{i}"\ncommand = "x"\n' for i in range(400))
    with pytest.raises(TournamentFileError, match=r"the schedule would have [\d,]+ games"):
        load(write(tmp_path, 'name = "T"\ndeals_per_pairing = 10000\n' + many, "big.toml"))


def test_the_old_name_of_deals_per_pairing_still_reads(tmp_path: Path) -> None:
    spec = load(write(tmp_path, 'name = "T"\ngames_per_pairing = 3\n' + TWO))
    assert spec.deals_per_pairing == 3
    assert len(full_schedule(spec)) == 6, "3 deals, each played with the seats both ways"
    assert any("deals_per_pairing" in w for w in spec.warnings)
    with pytest.raises(TournamentFileError, match="games_per_pairing: give deals_per_pairing only"):
        load(write(tmp_path, 'name = "T"\ngames_per_pairing = 3\ndeals_per_pairing = 3\n' + TWO))


def test_the_json_schema_describes_the_file() -> None:
    schema = json_schema()
    assert "deals_per_pairing" in schema["properties"]
    assert schema["additionalProperties"] is False
    assert "entrants" in schema["required"]


def test_a_file_past_the_bound_is_not_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was read whole: arena run /dev/zero grew until a MemoryError traceback.
    path = write(tmp_path, 'name = "T"\n' + TWO)
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 50, raising=False)
    with pytest.raises(TournamentFileError, match=r"t\.toml: larger than a file the arena reads"):
        load(path)
