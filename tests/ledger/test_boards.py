"""Issue 13: a board per tournament beside the pooled one, voiding games, compact records, and a ledger
written by an earlier version of the arena upgraded in place with nothing lost."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from ledger_helpers import REAL_CONNECT, Fixture, make_spec, play_in_order, synthetic_record
from typer.testing import CliRunner

from arena.cli.main import app
from arena.ledger import Ledger, LedgerError
from arena.ledger import records as ledger_records
from arena.ledger.rows import FinishedGame
from arena.ledger.schema import MIGRATIONS
from arena.rating import Rating, initial, rate_game


def board(led: Ledger, **which: str) -> dict[str, tuple[float, float, int]]:
    return {r.entrant: (r.mu, r.sigma, r.games) for r in led.leaderboard(**which)}


def test_a_second_tournament_leaves_the_first_ones_board_alone(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    a = play_in_order(led, make_spec(3, name="A"), list(range(6)))
    first = board(led, tournament="A")
    b = play_in_order(led, make_spec(3, name="B", seed=5), list(range(6)))
    assert board(led, tournament="A") == first, "B's games do not move A's board"
    assert {n: g for n, (_, _, g) in board(led, tournament="B").items()} == {
        "e0": 4,
        "e1": 4,
        "e2": 4,
    }
    pooled = board(led, variant="two-handed")
    assert {n: g for n, (_, _, g) in pooled.items()} == {"e0": 8, "e1": 8, "e2": 8}
    assert pooled != first
    assert [x.name for x in led.boards() if x.kind == "tournament"] == ["A", "B"]
    assert led.rebuild_ratings() == 0.0
    assert a.tid != b.tid


def test_versions_of_one_bot_show_as_such(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    spec = make_spec(2)
    spec2 = make_spec(2, name="Later")
    entrants = (spec2.entrants[0], type(spec2.entrants[0])("e1", "bot", version="2"))
    import dataclasses

    play_in_order(led, spec, [0, 1])
    play_in_order(led, dataclasses.replace(spec2, entrants=entrants), [0, 1])
    rows = led.leaderboard("two-handed")
    assert sorted((r.entrant, r.version) for r in rows) == [("e0", "1"), ("e1", "1"), ("e1", "2")]
    assert len({r.entrant_id for r in rows}) == 3


def test_voiding_takes_games_out_and_a_rerun_plays_them_again(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    spec = make_spec(3, deals_per_pairing=2)  # 12 games
    f = play_in_order(led, spec, list(range(12)))
    clean = Ledger(tmp_path / "clean.sqlite")
    reference = play_in_order(clean, spec, list(range(12)))
    voided_ids = [
        r[0] for r in led.conn.execute("SELECT id FROM games WHERE ord IN (3, 7) ORDER BY ord")
    ]
    keys = led.void_games(f.tid, "the bots' folder was unmounted", voided_ids)
    assert keys == [f.games[3].key, f.games[7].key]
    assert led.done_keys(f.tid) == {g.key for i, g in enumerate(f.games) if i not in (3, 7)}
    rated = [r[0] for r in led.conn.execute("SELECT ord FROM games WHERE rating_seq IS NOT NULL")]
    assert sorted(rated) == [0, 1, 2], "games after the first voided one wait to be rated again"
    # The board is exactly the ratings of the first three games alone.
    current: dict[str, tuple[Rating, int]] = {}
    for g in f.games[:3]:
        ranking = synthetic_record(g, "two-handed")["games"][0]["result"]["ranking"]
        names = [g.seats[0][0], g.seats[1][0]]
        new = rate_game([[current.get(n, (initial(), 0))[0]] for n in names], ranking)
        for n, (r,) in zip(names, new, strict=True):
            current[n] = (r, current.get(n, (initial(), 0))[1] + 1)
    assert board(led, tournament=spec.name) == {
        n: (r.mu, r.sigma, k) for n, (r, k) in current.items()
    }
    assert [r[0] for r in led.conn.execute("SELECT reason FROM voided_games")] == [
        "the bots' folder was unmounted"
    ] * 2
    assert led.tournaments()[0].voided == 2
    # Played again (a rerun), everything is as if nothing had been voided.
    f.record(f.games[7])
    f.record(f.games[3])
    assert board(led, tournament=spec.name) == board(clean, tournament=spec.name)
    assert board(led, variant="two-handed") == board(clean, variant="two-handed")
    assert led.rebuild_ratings() == 0.0
    assert reference.tid == f.tid


def test_voiding_by_outcome_and_unknown_games(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    f = Fixture(led, make_spec(2))
    rec = synthetic_record(f.games[0], "two-handed")
    rec["games"][0].update(outcome="crash", detail="bot process exited with code 127", culprit=0)
    led.record_game(f.tid, "two-handed", f.games[0], f.ids, FinishedGame.from_data(rec))
    f.record(f.games[1])
    assert led.void_games(f.tid, "command not found", outcomes=["crash"]) == [f.games[0].key]
    assert led.done_keys(f.tid) == {f.games[1].key}
    with pytest.raises(LedgerError, match="no game 999"):
        led.void_games(f.tid, "x", [999])
    assert led.void_games(f.tid, "nothing", outcomes=["timeout"]) == []


def test_records_are_stored_compressed_and_read_back(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    f = Fixture(led, make_spec(2))
    rec = synthetic_record(f.games[0], "two-handed")
    rec["games"][0]["decisions"] = [{"legal": [f"play {c}" for c in "ABCDEFGH"] * 4}] * 200
    gid = led.record_game(f.tid, "two-handed", f.games[0], f.ids, FinishedGame.from_data(rec))
    encoding, schema, size = led.conn.execute(
        "SELECT encoding, schema, length(record) FROM game_records WHERE game_id = ?", (gid,)
    ).fetchone()
    assert (encoding, schema) == (ledger_records.ENCODING, ledger_records.SCHEMA)
    assert size * 10 < len(json.dumps(rec))
    assert led.game_record(gid) == rec


def test_a_damaged_record_is_reported_not_raised(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    f = Fixture(led, make_spec(2))
    gid = f.record(f.games[0])
    led.conn.execute("UPDATE game_records SET record = ? WHERE game_id = ?", (b"\x00junk", gid))
    with pytest.raises(LedgerError, match=f"game {gid}: the stored record is damaged"):
        led.game_record(gid)
    led.conn.execute(
        "UPDATE game_records SET record = '{not json', encoding = 'json' WHERE game_id = ?", (gid,)
    )
    with pytest.raises(LedgerError, match="damaged"):
        led.game_record(gid)


# ---------------------------------------------------------------- upgrading an earlier ledger


def earlier_ledger(path: Path, games: int = 6) -> list[dict[str, Any]]:
    """A ledger as schema version 2 wrote it (the first two migrations, plain JSON records, one
    rating per entrant and variant), filled with a synthetic tournament played in order."""
    spec = make_spec(3)
    from arena.tournament.schedule import full_schedule

    conn = REAL_CONNECT(path, isolation_level=None)
    for sql in MIGRATIONS[:2]:
        for statement in sql.split(";"):
            if statement.strip():
                conn.execute(statement)
    conn.execute("CREATE TABLE _migrations (version INTEGER PRIMARY KEY, applied_at TEXT)")
    conn.executemany("INSERT INTO _migrations VALUES (?, 'then')", [(1,), (2,)])
    conn.execute(
        "INSERT INTO tournaments VALUES (1, 'Synthetic', 'h', ?, 'two-handed', '', 'then', NULL)",
        (json.dumps({"games_per_pairing": 1}),),
    )
    for i, e in enumerate(spec.entrants, start=1):
        conn.execute(
            "INSERT INTO entrants VALUES (?, ?, ?, ?, '', ?, 'then')",
            (i, e.name, e.command, e.command_hash, e.version),
        )
    ids = {e.name: i for i, e in enumerate(spec.entrants, start=1)}
    current: dict[int, Rating] = {}
    records = []
    for n, g in enumerate(full_schedule(spec)[:games], start=1):
        rec = synthetic_record(g, "two-handed")
        records.append(rec)
        res = rec["games"][0]["result"]
        conn.execute(
            "INSERT INTO games VALUES (?, 1, ?, ?, 0, ?, ?, ?, 'two-handed', ?, 'normal', '', -1, "
            "'then', ?)",
            (n, g.key, g.ord, g.pairing, g.deal, g.rotation, g.seed, n),
        )
        players = [ids[g.seats[s][0]] for s in range(2)]
        for s in range(2):
            conn.execute(
                "INSERT INTO game_seats VALUES (?, ?, 0, ?, ?, ?, ?)",
                (n, s, players[s], s, res["ranking"][s], res["scores"][s]),
            )
        conn.execute("INSERT INTO game_records VALUES (?, ?)", (n, json.dumps(rec)))
        new = rate_game([[current.get(p, initial())] for p in players], res["ranking"])
        for p, (r,) in zip(players, new, strict=True):
            conn.execute(
                "INSERT OR REPLACE INTO ratings VALUES (?, 'two-handed', ?, ?, ?, ?)",
                (p, r.mu, r.sigma, r.exposed, n),
            )
            current[p] = r
    conn.close()
    return records


def test_an_earlier_ledger_is_upgraded_with_nothing_lost(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    records = earlier_ledger(path)
    conn = REAL_CONNECT(path)
    old = {
        r[0]: (r[1], r[2])
        for r in conn.execute(
            "SELECT e.name, r.mu, r.sigma FROM ratings r JOIN entrants e ON e.id = r.entrant_id"
        )
    }
    conn.close()
    led = Ledger(path)
    assert {n: (mu, s) for n, (mu, s, _) in board(led, variant="two-handed").items()} == old
    assert {n: (mu, s) for n, (mu, s, _) in board(led, tournament="Synthetic").items()} == old
    assert [led.game_record(i) for i in range(1, 7)] == records, "plain-JSON records still read"
    assert led.rebuild_ratings() == 0.0
    versions = [r[0] for r in led.conn.execute("SELECT version FROM _migrations")]
    assert versions == list(range(1, len(MIGRATIONS) + 1))


def test_duplicate_names_from_an_earlier_ledger_are_kept_apart(tmp_path: Path) -> None:
    """Before, a changed file made a second tournament of the same name: both are kept, the later one
    renamed, since a name now identifies a tournament."""
    path = tmp_path / "old.sqlite"
    earlier_ledger(path, games=2)
    conn = REAL_CONNECT(path)
    conn.execute(
        "INSERT INTO tournaments VALUES (2, 'Synthetic', 'h2', '{}', 'two-handed', '', 'then', NULL)"
    )
    conn.commit()
    conn.close()
    led = Ledger(path)
    assert [t.name for t in led.tournaments()] == ["Synthetic", "Synthetic (2)"]


def test_locked_and_full_are_named(tmp_path: Path) -> None:
    from arena.ledger.errors import explain

    assert "locked by another program" in explain(sqlite3.OperationalError("database is locked"))
    assert explain(sqlite3.OperationalError("database or disk is full")).startswith("disk full")


def test_a_tournament_named_like_another_ones_id_is_never_mistaken_for_it(tmp_path: Path) -> None:
    """--tournament takes a name or an id: "1" naming tournament #2 while #1 is another tournament
    is refused as ambiguous (arena games void --tournament 1 --all voided the other one's games),
    and each is found by what is its alone."""
    led = Ledger(tmp_path / "l.sqlite")
    first = play_in_order(led, make_spec(2, name="t"), [0, 1])
    second = play_in_order(led, make_spec(2, name="1", seed=7), [0, 1])
    assert (first.tid, second.tid) == (1, 2)
    with pytest.raises(LedgerError, match="'1' is both the name of tournament #2 and the id of"):
        led.find_tournament("1")
    assert led.find_tournament("2").name == "1"
    assert led.find_tournament("t").id == 1
    assert led.done_keys(1) == {g.key for g in first.games}
    result = CliRunner().invoke(
        app,
        ["games", "void", "--tournament", "1", "--all", "--reason", "x", "--ledger", led.path],
    )
    assert result.exit_code == 2, result.output
    assert "both the name of tournament #2" in " ".join(result.output.split())
    assert led.done_keys(1) == {g.key for g in first.games}, "the other tournament's games stay"
    assert led.done_keys(2) == {g.key for g in second.games}
