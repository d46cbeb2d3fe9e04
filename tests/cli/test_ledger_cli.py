"""The ``arena`` commands that read the ledger, through typer's CliRunner: leaderboard, games,
replay, export, ratings rebuild, tournaments, games void; and their errors on a ledger that is
missing or corrupt. (``arena run`` itself: test_tournament_cli.py.)"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from tournament_helpers import REAL_CONNECT, TINY, flat, invoke, rows
from typer.testing import Result

from arena.ledger import Ledger

pytestmark = pytest.mark.xdist_group("ledger-cli")  # one played tournament for the module

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")


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


def test_a_pooled_board_of_a_variant_not_played_says_so(ledger: Path) -> None:
    typo = invoke("leaderboard", "--ledger", str(ledger), "--pooled", "--variant", "two-hand")
    assert typo.exit_code == 2, typo.output
    assert "no variant 'two-hand': one of two-handed, polish" in flat(typo.stderr)
    unplayed = invoke("leaderboard", "--ledger", str(ledger), "--pooled", "--variant", "polish")
    assert unplayed.exit_code == 0, unplayed.output
    assert "no rated games of polish yet (pooled boards: two-handed)" in flat(unplayed.stdout)
    assert "Leaderboard" not in unplayed.stdout


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
