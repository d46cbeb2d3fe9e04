"""The ``arena`` commands around tournaments and the ledger, through typer's CliRunner: run,
leaderboard, games, replay, export, ratings rebuild; their errors; their help and the README."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from arena.cli.main import app
from arena.ledger import Ledger

pytestmark = pytest.mark.xdist_group("tournament-cli")  # one played tournament for the module

ROOT = Path(__file__).resolve().parents[2]
REAL_CONNECT: Callable[..., sqlite3.Connection] = sqlite3.connect

TINY = textwrap.dedent(
    """\
    name = "Tiny"
    variant = "two-handed"
    format = "round-robin"
    deals_per_pairing = 1
    concurrency = 2
    seed = 5

    [time_control]
    budget_ms = 10000
    bank_ms = 120000
    grace_ms = 2000

    [[entrants]]
    name = "rnd"
    command = "{python} -m arena_bot.random_bot"

    [[entrants]]
    name = "fst"
    command = "{python} -m arena_bot.first_bot"
    """
)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def flat(text: str) -> str:
    """Output with its line wrapping undone (rich wraps long lines at the console width)."""
    return " ".join(text.split())


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Result]:
    """``arena run`` on a two-game tournament, once for the module."""
    d = tmp_path_factory.mktemp("cli")
    toml = d / "tiny.toml"
    toml.write_text(TINY)
    ledger = d / "ledger.sqlite"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "250")
        result = invoke("run", str(toml), "--ledger", str(ledger))
    return toml, ledger, result


@pytest.fixture
def ledger(played: tuple[Path, Path, Result], tmp_path: Path) -> Path:
    """A copy of the played ledger, for a test to use as it likes."""
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(played[1].read_bytes())
    return copy


def rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = REAL_CONNECT(path)
    try:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


# ---------------------------------------------------------------- arena run


def test_run_prints_the_leaderboard_and_the_pairings(played: tuple[Path, Path, Result]) -> None:
    _, ledger, result = played
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Leaderboard: Tiny" in out, "the tournament's own board"
    assert "Pairings: Tiny" in out
    # without a terminal, progress comes as plain lines
    assert re.search(r"^\[0:00:\d\d\] Tiny: 2/2 games, 0 running, 0 bot failures", out, re.M)
    for header in ("mu - 3 sigma", "W-L-D", "avg points", "duplicate sets W-L-T"):
        assert header in out
    board = [line for line in out.splitlines() if "rnd" in line or "fst" in line]
    assert len(board) >= 3, "two leaderboard lines and a pairing line"
    assert rows(ledger, "SELECT count(*) FROM games") == [(2,)]
    # the pairing line: fst against rnd over the two games of the duplicate set
    pairing = next(line for line in out.splitlines() if "fst" in line and "rnd" in line)
    score = re.search(r"(\d+)-(\d+)-(\d+)", pairing)
    assert score is not None, pairing
    wins, losses, draws = map(int, score.groups())
    assert wins + losses + draws == 2
    # One duplicate pair: no spread, so no Elo interval and no LOS (they would be the
    # regularization's: one pair won twice would read +1041 and 100%).
    assert "- (1 pair, all alike)" in pairing and "%" not in pairing.split("alike")[1]


def test_run_again_resumes_and_plays_nothing(
    played: tuple[Path, Path, Result], ledger: Path
) -> None:
    toml = played[0]
    before = rows(ledger, "SELECT id, key, outcome FROM games ORDER BY id")
    result = invoke("run", str(toml), "--ledger", str(ledger))
    assert result.exit_code == 0, result.output
    assert "resumed: 2 game(s)" in result.stdout
    assert rows(ledger, "SELECT id, key, outcome FROM games ORDER BY id") == before


@pytest.mark.parametrize(
    ("old", "new", "field", "expected"),
    [
        ("deals_per_pairing = 1", "deals_per_pairing = 0", "deals_per_pairing", "integer >= 1"),
        ('format = "round-robin"', 'format = "ko"', "format", "expected one of round-robin"),
        ('variant = "two-handed"', 'variant = "5"', "variant", "expected one of two-handed"),
        (
            "[time_control]",
            "[policies]\non_timeout = 1\n[time_control]",
            "policies.on_timeout",
            "forfeit",
        ),
    ],
    ids=["games", "format", "variant", "policy"],
)
def test_run_a_bad_file(tmp_path: Path, old: str, new: str, field: str, expected: str) -> None:
    toml = tmp_path / "bad.toml"
    assert old in TINY
    toml.write_text(TINY.replace(old, new))
    ledger = tmp_path / "l.sqlite"
    result = invoke("run", str(toml), "--ledger", str(ledger))
    assert result.exit_code == 2, result.output
    message = flat(result.stderr)
    assert f"{toml}: {field}: " in message
    assert expected in message
    assert not ledger.exists(), "nothing is created for a bad file"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('name = "T"\n', "expected at least one [[entrants]] table"),
        (
            TINY.replace("[time_control]", "options = 3\n[time_control]"),
            "expected a table ([options])",
        ),
    ],
    ids=["no-entrants", "options-not-a-table"],
)
def test_run_prints_the_error_message_verbatim(tmp_path: Path, text: str, expected: str) -> None:
    """The messages quote TOML syntax in brackets; the console must not take them for markup."""
    toml = tmp_path / "bad.toml"
    toml.write_text(text)
    result = invoke("run", str(toml), "--ledger", str(tmp_path / "l.sqlite"))
    assert result.exit_code == 2, result.output
    assert expected in flat(result.stderr)


def test_run_a_missing_file(tmp_path: Path) -> None:
    result = invoke("run", str(tmp_path / "none.toml"), "--ledger", str(tmp_path / "l.sqlite"))
    assert result.exit_code == 2
    assert "cannot read the file" in flat(result.stderr)


def test_run_into_a_read_only_ledger(
    played: tuple[Path, Path, Result], ledger: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A ledger that cannot be written (opened read-only, as SQLite opens a file it may not write):
    a clear error and exit 2, not a traceback."""
    toml = tmp_path / "other.toml"
    toml.write_text(played[0].read_text().replace('name = "Tiny"', 'name = "Other"'))
    data = ledger.read_bytes()

    def read_only(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        kwargs["uri"] = True
        return REAL_CONNECT(f"file:{database}?mode=ro", *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only)
    result = invoke("run", str(toml), "--ledger", str(ledger))
    assert result.exit_code == 2, result.output
    assert str(ledger) in flat(result.stderr)
    assert ledger.read_bytes() == data


# ---------------------------------------------------------------- reading the ledger


def test_leaderboard(ledger: Path) -> None:
    result = invoke("leaderboard", "--ledger", str(ledger))
    assert result.exit_code == 0, result.output
    assert "Leaderboard: Tiny" in result.stdout
    led = Ledger(ledger)
    board = led.leaderboard(tournament="Tiny")
    led.close()
    lines = [line for line in result.stdout.splitlines() if "rnd" in line or "fst" in line]
    assert [("rnd" if "rnd" in line else "fst") for line in lines] == [r.entrant for r in board]
    for line, row in zip(lines, board, strict=True):
        assert f"{row.exposed:.2f}" in line and f"{row.mu:.2f}" in line
        assert re.search(rf"\b{row.games}\b", line)


def test_leaderboard_of_an_empty_ledger(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    Ledger(path).close()
    result = invoke("leaderboard", "--ledger", str(path))
    assert result.exit_code == 0
    assert "no rated games yet" in result.stdout
    # An empty file is no ledger: a reading command does not make one in it.
    blank = tmp_path / "blank.sqlite"
    blank.touch()
    for command in (("leaderboard",), ("games",), ("tournaments",)):
        result = invoke(*command, "--ledger", str(blank))
        assert result.exit_code == 2 and "is an empty file, not a ledger" in flat(result.stderr)
    assert blank.stat().st_size == 0


def test_leaderboard_from_the_environment(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_LEDGER", str(ledger))
    result = invoke("leaderboard")
    assert result.exit_code == 0, result.output
    assert "rnd" in result.stdout


def test_games(ledger: Path) -> None:
    result = invoke("games", "--ledger", str(ledger))
    assert result.exit_code == 0, result.output
    for gid, key, outcome in rows(ledger, "SELECT id, key, outcome FROM games"):
        line = next(line for line in result.stdout.splitlines() if key in line)
        assert re.search(rf"\b{gid}\b", line) and outcome in line and "Tiny" in line
    (newest,), (older,) = rows(ledger, "SELECT key FROM games ORDER BY id DESC")
    limited = invoke("games", "--ledger", str(ledger), "--limit", "1")
    assert newest in limited.stdout, "newest first"
    assert older not in limited.stdout


def hand_lines(text: str, seat: int) -> list[str]:
    return [
        line.strip() for line in text.splitlines() if line.strip().startswith(f"seat {seat} hand:")
    ]


def test_replay_full_and_per_seat(ledger: Path) -> None:
    gid = rows(ledger, "SELECT min(id) FROM games")[0][0]
    full = invoke("replay", str(gid), "--ledger", str(ledger))
    assert full.exit_code == 0, full.output
    assert "players: seat 0:" in full.stdout
    assert "game over" in full.stdout
    assert hand_lines(full.stdout, 0) and hand_lines(full.stdout, 1)
    for seat in (0, 1):
        view = invoke("replay", str(gid), "--ledger", str(ledger), "--seat", str(seat))
        assert view.exit_code == 0, view.output
        other = 1 - seat
        assert hand_lines(view.stdout, seat) == hand_lines(full.stdout, seat)
        assert hand_lines(view.stdout, other) == [], "never the other seat's hand"
        for line in hand_lines(full.stdout, other):
            cards = line.split(":", 1)[1].strip()
            assert cards not in view.stdout
        assert "your hand:" in view.stdout
        assert "your hand:" not in full.stdout
        assert "game over" in view.stdout


def test_replay_errors(ledger: Path) -> None:
    missing = invoke("replay", "999", "--ledger", str(ledger))
    assert missing.exit_code == 2
    assert "no game 999" in flat(missing.stderr)
    gid = rows(ledger, "SELECT min(id) FROM games")[0][0]
    bad_seat = invoke("replay", str(gid), "--ledger", str(ledger), "--seat", "2")
    assert bad_seat.exit_code == 2
    assert "--seat must be 0..1" in flat(bad_seat.stderr)
    both = invoke("replay", str(gid), "--record", str(ledger))  # one or the other, never ignored
    assert both.exit_code == 2 and "not both" in flat(both.stderr)


SEAT_ROWS = (
    "SELECT g.id, g.key, s.seat, e.name, s.side, s.place, s.score FROM games g "
    "JOIN game_seats s ON s.game_id = g.id JOIN entrants e ON e.id = s.entrant_id "
    "ORDER BY g.id, s.seat"
)


def test_export_games_csv_and_json(ledger: Path, tmp_path: Path) -> None:
    expected = rows(ledger, SEAT_ROWS)
    assert len(expected) == 4
    as_csv = invoke("export", "--ledger", str(ledger), "--format", "csv")
    assert as_csv.exit_code == 0, as_csv.output
    got = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert [
        (int(r["game_id"]), r["key"], int(r["seat"]), r["entrant"], int(r["side"]),
         int(r["place"]), int(r["score"]))
        for r in got
    ] == expected  # fmt: skip
    assert all(r["tournament"] == "Tiny" and r["variant"] == "two-handed" for r in got)
    as_json = invoke("export", "--ledger", str(ledger), "--format", "json")
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)
    assert [
        (r["game_id"], r["key"], r["seat"], r["entrant"], r["side"], r["place"], r["score"])
        for r in data
    ] == expected
    out = tmp_path / "games.json"
    to_file = invoke("export", "--ledger", str(ledger), "--format", "json", "--output", str(out))
    assert to_file.exit_code == 0
    assert json.loads(out.read_text()) == data
    assert "wrote 4 rows" in to_file.stdout


def test_export_ratings(ledger: Path) -> None:
    result = invoke("export", "--ledger", str(ledger), "--what", "ratings", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    led = Ledger(ledger)
    board = led.leaderboard("two-handed")
    led.close()
    pooled = [r for r in data if r["board_kind"] == "pooled"]
    assert [(r["entrant"], r["mu"], r["sigma"], r["games"]) for r in pooled] == [
        (b.entrant, b.mu, b.sigma, b.games) for b in board
    ]
    assert {(r["board_kind"], r["board"]) for r in data} == {
        ("pooled", "two-handed"),
        ("tournament", "Tiny"),
    }
    as_csv = invoke("export", "--ledger", str(ledger), "--what", "ratings")
    got = [r for r in csv.DictReader(io.StringIO(as_csv.stdout)) if r["board_kind"] == "pooled"]
    assert [(r["entrant"], float(r["mu"])) for r in got] == [(b.entrant, b.mu) for b in board]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xml"], "--format must be csv or json"),
        (["--what", "seats"], "--what must be"),
    ],
)
def test_export_bad_options(ledger: Path, args: list[str], message: str) -> None:
    result = invoke("export", "--ledger", str(ledger), *args)
    assert result.exit_code == 2
    assert message in flat(result.stderr)


def test_ratings_rebuild(ledger: Path) -> None:
    before = rows(ledger, "SELECT * FROM ratings ORDER BY board_id, entrant_id")
    result = invoke("ratings", "rebuild", "--ledger", str(ledger))
    assert result.exit_code == 0, result.output
    assert "identical" in result.stdout
    assert rows(ledger, "SELECT * FROM ratings ORDER BY board_id, entrant_id") == before
    conn = REAL_CONNECT(ledger)
    conn.execute("UPDATE ratings SET sigma = sigma + 1")
    conn.commit()
    conn.close()
    tampered = ledger.read_bytes()
    # --check says so and writes nothing (a read-only ledger or a copy can be checked).
    result = invoke("ratings", "rebuild", "--check", "--ledger", str(ledger))
    assert result.exit_code == 1
    assert "differ from the stored ones by up to 1" in flat(result.stdout)
    assert ledger.read_bytes() == tampered
    result = invoke("ratings", "rebuild", "--ledger", str(ledger))
    assert result.exit_code == 0
    assert "differed" in result.stdout and "identical" not in result.stdout
    assert rows(ledger, "SELECT * FROM ratings ORDER BY board_id, entrant_id") == before
    result = invoke("ratings", "rebuild", "--check", "--ledger", str(ledger))
    assert result.exit_code == 0 and "exactly the stored ratings" in result.stdout


def test_tournaments_and_their_boards(ledger: Path, tmp_path: Path) -> None:
    listed = invoke("tournaments", "--ledger", str(ledger))
    assert listed.exit_code == 0, listed.output
    line = next(line for line in listed.stdout.splitlines() if "Tiny" in line)
    assert "two-handed" in line and "2/2" in line
    assert line.split("│")[3].strip() == "tournament"  # its kind (a competition says so)
    one = invoke("leaderboard", "--ledger", str(ledger), "--tournament", "Tiny")
    assert one.exit_code == 0 and "Leaderboard: Tiny" in one.stdout
    assert "version" in one.stdout
    pooled = invoke("leaderboard", "--ledger", str(ledger), "--pooled")
    assert pooled.exit_code == 0 and "Leaderboard: two-handed (every tournament)" in pooled.stdout
    unknown = invoke("leaderboard", "--ledger", str(ledger), "--tournament", "Nope")
    assert unknown.exit_code == 2
    assert "no tournament 'Nope' (tournaments: 'Tiny')" in flat(unknown.stderr)


def test_void_games_and_run_again(played: tuple[Path, Path, Result], ledger: Path) -> None:
    """Issue 13: the organiser voids games spoiled by the arena; the boards are rebuilt without them and
    running the tournament again plays them again."""
    gid = rows(ledger, "SELECT min(id) FROM games")[0][0]
    refused = invoke(
        "games", "void", "--ledger", str(ledger), "--tournament", "Tiny", "--reason", "x"
    )
    assert refused.exit_code == 2 and "say which games" in flat(refused.stderr)
    result = invoke(
        "games", "void", "--ledger", str(ledger), "--tournament", "Tiny", "--game", str(gid),
        "--reason", "the bots' disk was full",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "voided 1 game(s) of Tiny" in flat(result.stdout)
    assert rows(ledger, "SELECT count(*) FROM games") == [(1,)]
    assert rows(ledger, "SELECT reason FROM voided_games") == [("the bots' disk was full",)]
    again = invoke("run", str(played[0]), "--ledger", str(ledger))
    assert again.exit_code == 0, again.output
    assert "resumed: 1 game(s)" in again.stdout
    assert rows(ledger, "SELECT count(*) FROM games WHERE rating_seq IS NOT NULL") == [(2,)]
    assert "identical" in invoke("ratings", "rebuild", "--ledger", str(ledger)).stdout


def test_bot_text_is_printed_as_it_is(ledger: Path) -> None:
    """Issue 12: a detail holding rich markup (a bot's reply quoted in it) must not crash arena games
    nor be applied."""
    conn = REAL_CONNECT(ledger)
    conn.execute("UPDATE games SET detail = 'illegal action play [/x] then [bold red]QS[/]'")
    conn.commit()
    conn.close()
    result = invoke("games", "--ledger", str(ledger))
    assert result.exit_code == 0, result.output
    assert "play [/x] then [bold red]QS[/]" in result.stdout


def test_games_filtered_by_outcome_and_tournament(ledger: Path) -> None:
    none = invoke("games", "--ledger", str(ledger), "--outcome", "timeout")
    assert none.exit_code == 0 and "r000" not in none.stdout
    both = invoke("games", "--ledger", str(ledger), "--tournament", "Tiny", "--outcome", "normal")
    assert both.stdout.count("r000") == 2
    # An outcome that no game can have is a typo, said so rather than an empty list.
    for command in (("games",), ("games", "void", "--tournament", "Tiny", "--reason", "x")):
        typo = invoke(*command, "--ledger", str(ledger), "--outcome", "crsh")
        assert typo.exit_code == 2, typo.output
        assert "no outcome 'crsh': one of normal, timeout, illegal-action" in flat(typo.stderr)
    assert rows(ledger, "SELECT count(*) FROM games") == [(2,)], "nothing voided"


def test_a_tournaments_board_or_the_pooled_ones_not_both(ledger: Path) -> None:
    result = invoke("leaderboard", "--ledger", str(ledger), "--tournament", "Tiny", "--pooled")
    assert result.exit_code == 2 and "not both" in flat(result.stderr)


def test_export_records(ledger: Path, tmp_path: Path) -> None:
    result = invoke("export", "--ledger", str(ledger), "--what", "records", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [d["game_id"] for d in data] == [
        r[0] for r in rows(ledger, "SELECT id FROM games ORDER BY id")
    ]
    assert all(d["record"]["games"][0]["decisions"] for d in data)
    csv_records = invoke("export", "--ledger", str(ledger), "--what", "records")
    assert csv_records.exit_code == 2 and "--format json" in flat(csv_records.stderr)
    missing = invoke("export", "--ledger", str(ledger), "-o", str(tmp_path / "no" / "where.csv"))
    assert missing.exit_code == 2
    assert "does not exist" in flat(missing.stderr)


def test_replay_of_a_damaged_record(ledger: Path) -> None:
    gid = rows(ledger, "SELECT min(id) FROM games")[0][0]
    conn = REAL_CONNECT(ledger)
    conn.execute("UPDATE game_records SET record = '{oops', encoding = 'json'")
    conn.commit()
    conn.close()
    result = invoke("replay", str(gid), "--ledger", str(ledger))
    assert result.exit_code == 2
    assert f"game {gid}: the stored record is damaged" in flat(result.stderr)


def test_a_changed_file_is_refused_and_can_run_under_a_new_name(
    played: tuple[Path, Path, Result], ledger: Path, tmp_path: Path
) -> None:
    """Issue 14: the same name with another seed would replay and rate the same deals again."""
    toml = tmp_path / "changed.toml"
    toml.write_text(played[0].read_text().replace("seed = 5", "seed = 6"))
    before = rows(ledger, "SELECT id, key FROM games")
    refused = invoke("run", str(toml), "--ledger", str(ledger))
    assert refused.exit_code == 2
    message = flat(refused.stderr)
    assert "seed changed" in message and "--name" in message
    assert rows(ledger, "SELECT id, key FROM games") == before
    harmless = tmp_path / "harmless.toml"
    harmless.write_text(played[0].read_text().replace("concurrency = 2", "concurrency = 1"))
    resumed = invoke("run", str(harmless), "--ledger", str(ledger))
    assert resumed.exit_code == 0 and "resumed: 2 game(s)" in resumed.stdout
    renamed = invoke("run", str(toml), "--ledger", str(ledger), "--name", "Tiny 2")
    assert renamed.exit_code == 0, renamed.output
    assert [r[0] for r in rows(ledger, "SELECT name FROM tournaments ORDER BY id")] == [
        "Tiny",
        "Tiny 2",
    ]


def test_relative_paths_in_commands_start_from_the_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13: an entrant's bot next to the tournament file runs whatever folder arena runs in."""
    season = tmp_path / "mybot"
    season.mkdir()
    (season / "mine.py").write_text(
        "from arena_bot.first_bot import main\nif __name__ == '__main__':\n    main()\n"
    )
    (season / "season.toml").write_text(
        TINY.replace("{python} -m arena_bot.first_bot", "{python} mine.py")
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = invoke("run", "../mybot/season.toml", "--ledger", "l.sqlite")
    assert result.exit_code == 0, result.output
    assert rows(elsewhere / "l.sqlite", "SELECT outcome FROM games") == [("normal",), ("normal",)]


# ---------------------------------------------------------------- unusable ledgers

READERS = [
    ["leaderboard"],
    ["games"],
    ["replay", "1"],
    ["export"],
    ["ratings", "rebuild"],
]


@pytest.mark.parametrize("args", READERS, ids=[" ".join(a) for a in READERS])
def test_a_missing_ledger(tmp_path: Path, args: list[str]) -> None:
    path = tmp_path / "nowhere.sqlite"
    result = invoke(*args, "--ledger", str(path))
    assert result.exit_code == 2
    message = flat(result.stderr)
    assert f"no ledger at {path}" in message
    assert not path.exists(), "reading never creates a ledger"


@pytest.mark.parametrize(
    "args", [*READERS, ["run", "TOML"]], ids=[" ".join(a) for a in [*READERS, ["run"]]]
)
def test_a_corrupt_ledger(tmp_path: Path, args: list[str]) -> None:
    path = tmp_path / "corrupt.sqlite"
    data = b"this is not a database " * 200
    path.write_bytes(data)
    toml = tmp_path / "t.toml"
    toml.write_text(TINY)
    args = [str(toml) if a == "TOML" else a for a in args]
    result = invoke(*args, "--ledger", str(path))
    assert result.exit_code == 2, result.output
    message = flat(result.stderr)
    assert str(path) in message
    assert "not a database" in message
    assert path.read_bytes() == data


# ---------------------------------------------------------------- help and README


def commands() -> Iterator[tuple[str, typer.models.CommandInfo]]:
    for info in app.registered_commands:
        yield info.name or "", info
    for group in app.registered_groups:
        sub = group.typer_instance
        assert sub is not None
        callback = sub.registered_callback
        if callback is not None and sub.info.invoke_without_command:
            yield group.name or "", typer.models.CommandInfo(callback=callback.callback)
        for info in sub.registered_commands:
            yield f"{group.name} {info.name}", info


LEDGER_COMMANDS = [
    "run",
    "tournaments",
    "leaderboard",
    "games",
    "games void",
    "replay",
    "export",
    "ratings rebuild",
]


def test_every_command_has_help_and_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    names = dict(commands())
    assert set(LEDGER_COMMANDS) <= set(names)
    for name in names:
        result = invoke(*name.split(), "--help")
        assert result.exit_code == 0, name
        summary = (names[name].callback.__doc__ or "").strip()
        assert summary, f"arena {name} has no help text"
        assert summary.split()[0] in result.stdout
        assert f"arena {name}" in readme, f"arena {name} is not in the README"
