"""The ledger, with synthetic games (no bots): migrations, idempotent writes, ratings applied in the
schedule's canonical order whatever order games finish in, exact rebuilds, and clear errors that leave
the file untouched for a corrupt, locked or read-only ledger."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ledger_helpers import (
    REAL_CONNECT,
    Fixture,
    dump,
    make_spec,
    play_in_order,
    ranking_of,
    sides_of,
    synthetic_record,
)

from arena.ledger import LeaseHeld, Ledger, LedgerError, TournamentChanged
from arena.ledger import schema as ledger_schema
from arena.ledger.boards import rate_seats
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.ledger.schema import MIGRATIONS
from arena.rating import Rating, initial, rate_game
from arena.tournament.schedule import full_schedule
from arena.tournament.spec import TournamentSpec, parse


def table(led: Ledger, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in led.conn.execute(sql).fetchall()]


def ratings_by_name(led: Ledger) -> dict[tuple[str, str], tuple[float, float, float, int]]:
    """The pooled boards (every tournament of a variant), by entrant and variant."""
    rows = led.conn.execute(
        "SELECT e.name, b.variant, r.mu, r.sigma, r.exposed, r.games FROM ratings r "
        "JOIN boards b ON b.id = r.board_id AND b.kind = 'pooled' "
        "JOIN entrants e ON e.id = r.entrant_id"
    )
    return {(r[0], r[1]): (r[2], r[3], r[4], r[5]) for r in rows}


def history(led: Ledger) -> list[tuple[Any, ...]]:
    return table(
        led,
        "SELECT g.key, e.name, b.variant, h.mu_before, h.sigma_before, h.mu_after, h.sigma_after "
        "FROM rating_history h JOIN games g ON g.id = h.game_id JOIN entrants e ON e.id = h.entrant_id "
        "JOIN boards b ON b.id = h.board_id AND b.kind = 'pooled' ORDER BY g.rating_seq, e.name",
    )


def expected_ratings(
    spec: TournamentSpec, games: list[ScheduledGame]
) -> dict[tuple[str, str], tuple[float, float, float, int]]:
    """Ratings computed here, straight from the schedule and the synthetic results, in order."""
    current: dict[str, tuple[Rating, int]] = {}
    sides = sides_of(spec.variant)
    for g in sorted(games, key=lambda g: g.ord):
        ranking = ranking_of(g, len(sides))
        teams = [[n for seat in seats for n in g.seats[seat]] for seats in sides]
        # Players sharing a seat (consultation) play one hand: each has its share of the weight.
        weights = [
            [1 / len(g.seats[seat]) for seat in seats for _ in g.seats[seat]] for seats in sides
        ]
        new = rate_game(
            [[current.get(n, (initial(), 0))[0] for n in team] for team in teams], ranking, weights
        )
        for team, rated in zip(teams, new, strict=True):
            for n, r in zip(team, rated, strict=True):
                current[n] = (r, current.get(n, (initial(), 0))[1] + 1)
    return {(n, spec.variant): (r.mu, r.sigma, r.exposed, k) for n, (r, k) in current.items()}


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.sqlite"


@pytest.fixture
def led(ledger_path: Path) -> Iterator[Ledger]:
    ledger = Ledger(ledger_path)
    yield ledger
    ledger.close()


# ---------------------------------------------------------------- schema


def documented_tables() -> set[str]:
    doc = ledger_schema.__doc__ or ""
    return set(re.findall(r"^- ``(\w+)``", doc, flags=re.MULTILINE))


def test_migrations_create_the_documented_tables(led: Ledger) -> None:
    documented = documented_tables()
    assert {"entrants", "tournaments", "games", "game_seats", "game_records", "ratings"} <= (
        documented
    )
    assert {"rating_history", "planned_games"} <= documented
    tables = {
        r[0]
        for r in led.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }
    assert tables == documented | {"_migrations"}
    versions = [r[0] for r in led.conn.execute("SELECT version FROM _migrations ORDER BY version")]
    assert versions == list(range(1, len(MIGRATIONS) + 1))
    columns = {r[1] for r in led.conn.execute("PRAGMA table_info(games)")}
    assert {"key", "ord", "rating_seq", "outcome", "culprit"} <= columns


def test_reopening_applies_nothing_again(ledger_path: Path) -> None:
    Ledger(ledger_path).close()
    before = dump(ledger_path)
    Ledger(ledger_path).close()
    assert dump(ledger_path) == before


def test_a_newer_schema_is_refused_untouched(ledger_path: Path) -> None:
    Ledger(ledger_path).close()
    conn = REAL_CONNECT(ledger_path)
    conn.execute("INSERT INTO _migrations VALUES (?, 'later')", (len(MIGRATIONS) + 1,))
    conn.commit()
    conn.close()
    data = ledger_path.read_bytes()
    with pytest.raises(LedgerError, match="newer") as info:
        Ledger(ledger_path)
    assert str(ledger_path) in str(info.value)
    assert ledger_path.read_bytes() == data


# ---------------------------------------------------------------- tournaments, entrants, plans


def test_a_tournament_is_found_again_by_its_name(led: Ledger) -> None:
    spec = make_spec()
    tid, resumed = led.tournament(spec)
    assert resumed is False
    assert led.tournament(spec) == (tid, True)
    # the same file run from another place is the same tournament
    assert led.tournament(dataclasses.replace(spec, source="elsewhere/t.toml")) == (tid, True)
    other = make_spec(seed=9, name="Other")
    tid2, resumed2 = led.tournament(other)
    assert tid2 != tid and resumed2 is False


def test_a_changed_file_is_refused_naming_the_fields(led: Ledger) -> None:
    """Issue 14: a change that can change the games (the seed, a command, an entrant's version, the
    clock) would replay and rate the same deals again under the same name: refused, naming the fields."""
    tid, _ = led.tournament(make_spec())
    for changed, fields in [
        (make_spec(seed=9), ["seed"]),
        (make_spec(time_control={"budget_ms": 5}), ["time_control.budget_ms"]),
        (make_spec(deals_per_pairing=3), ["deals_per_pairing"]),
        (make_spec(4), ["entrants"]),
    ]:
        with pytest.raises(TournamentChanged) as info:
            led.register(changed)
        assert list(info.value.fields) == fields
        assert all(f in str(info.value) for f in fields)
        assert "--name" in str(info.value)
    assert [t.id for t in led.tournaments()] == [tid]


def test_a_harmless_change_resumes(led: Ledger) -> None:
    """Concurrency and an entrant's language label cannot change any game: the tournament resumes."""
    first = led.register(make_spec())
    changed = make_spec(concurrency=4)
    changed = dataclasses.replace(
        changed,
        entrants=(dataclasses.replace(changed.entrants[0], language="rust"), *changed.entrants[1:]),
    )
    again = led.register(changed)
    assert (again.id, again.resumed, again.deal_key) == (first.id, True, first.deal_key)
    assert set(again.changes) == {"concurrency", "entrants[0].language"}
    assert led.register(changed).changes == ()  # the stored spec now is the new one


def test_each_tournament_has_its_own_secret(led: Ledger) -> None:
    a = led.register(make_spec(name="A"))
    b = led.register(make_spec(name="B"))
    assert a.deal_key and b.deal_key and a.deal_key != b.deal_key and len(a.deal_key) == 32
    assert led.register(make_spec(name="A")).deal_key == a.deal_key
    chosen = bytes(range(32))
    assert led.register(make_spec(name="C"), deal_key=chosen).deal_key == chosen


def test_two_processes_registering_the_same_new_tournament_get_one(ledger_path: Path) -> None:
    """Registering is one transaction: the second process finds the first one's tournament instead of
    failing on the unique name."""
    one, two = Ledger(ledger_path), Ledger(ledger_path)
    try:
        spec = make_spec()
        a = one.register(spec)
        b = two.register(spec)
        assert a.id == b.id and b.resumed and a.deal_key == b.deal_key
    finally:
        one.close()
        two.close()


def test_a_lease_admits_one_process_and_passes_on_when_its_holder_is_gone(
    ledger_path: Path, led: Ledger
) -> None:
    tid, _ = led.tournament(make_spec())
    led.take_lease(tid)
    led.take_lease(tid)  # its own again
    # Another process of this host holds it while it lives.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        led.conn.execute("UPDATE leases SET pid = ?, pid_started = ''", (child.pid,))
        with pytest.raises(LeaseHeld, match=f"process {child.pid}"):
            led.take_lease(tid)
    finally:
        child.kill()
        child.wait()
    led.take_lease(tid)  # its holder is gone: taken over
    holder = table(led, "SELECT pid FROM leases")
    assert holder == [(os.getpid(),)]
    led.release_lease(tid)
    assert table(led, "SELECT count(*) FROM leases") == [(0,)]


def test_another_programs_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    conn = REAL_CONNECT(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.commit()
    conn.close()
    before = dump(path)
    with pytest.raises(LedgerError, match=r"another program.*invoices"):
        Ledger(path)
    assert dump(path) == before


@pytest.mark.parametrize("versions", [[], [1], [20240101]])
def test_another_programs_database_with_its_own_migrations_table_is_refused_untouched(
    tmp_path: Path, versions: list[int]
) -> None:
    """A _migrations table is no proof of a ledger: another program's, empty, had every arena table
    created in it by a command that only reads (arena leaderboard); with versions of its own it was
    told the arena was too old, or that a table was missing."""
    path = tmp_path / "other.sqlite"
    conn = REAL_CONNECT(path)
    conn.execute("CREATE TABLE _migrations (version INTEGER PRIMARY KEY, name TEXT)")
    conn.executemany("INSERT INTO _migrations VALUES (?, 'init')", [(v,) for v in versions])
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)")
    conn.commit()
    conn.close()
    before = dump(path)
    with pytest.raises(LedgerError, match=r"another program.*_migrations, users") as info:
        Ledger(path)
    assert str(path) in str(info.value)
    assert dump(path) == before


def test_entrants_are_programs(led: Ledger) -> None:
    spec = make_spec(2)
    ids = led.entrant_ids(spec.entrants)
    assert led.entrant_ids(spec.entrants) == ids
    changed = parse(
        {
            "name": "x",
            "entrants": [
                {"name": "e0", "command": "bot", "version": "2"},
                {"name": "e1", "command": "bot", "version": "1"},
            ],
        }
    )
    ids2 = led.entrant_ids(changed.entrants)
    assert ids2["e1"] == ids["e1"]
    assert ids2["e0"] != ids["e0"], "another version is another entrant"


def test_plan_and_planned_round_trip(led: Ledger) -> None:
    f = Fixture(led, make_spec(3, deals_per_pairing=2))
    assert led.planned(f.tid, 0) == f.games
    led.plan(f.tid, f.games)  # planning again changes nothing
    assert led.planned(f.tid, 0) == f.games
    assert led.planned(f.tid, 1) == []


def test_a_game_newly_planned_leaves_a_finished_tournament_unfinished(led: Ledger) -> None:
    """An A/B test of --games N, finished, run on with more games: it is not finished while they
    are played (and is finished again when they are)."""
    f = Fixture(led, make_spec(2))
    for game in f.games:
        f.record(game)
    led.finish_tournament(f.tid)
    led.plan(f.tid, f.games)  # nothing new: still finished
    assert led.finished(f.spec.name)
    extra = dataclasses.replace(f.games[-1], key="extra", ord=f.games[-1].ord + 1)
    led.plan(f.tid, [extra])
    assert not led.finished(f.spec.name)
    f.record(extra)
    led.finish_tournament(f.tid)
    assert led.finished(f.spec.name)


# ---------------------------------------------------------------- record_game


def test_record_game_twice_is_a_no_op(ledger_path: Path, led: Ledger) -> None:
    f = Fixture(led, make_spec(2))
    game = f.games[0]
    first = f.record(game)
    before = dump(ledger_path)
    assert f.record(game) == first
    # even with a different record for the same key: the first one stands
    other = synthetic_record(game, "two-handed")
    other["games"][0]["result"]["ranking"] = [1, 0]
    assert led.record_game(f.tid, "two-handed", game, f.ids, FinishedGame.from_data(other)) == first
    assert dump(ledger_path) == before
    assert led.done_keys(f.tid) == {game.key}


def test_record_game_writes_seats_record_and_rating(led: Ledger) -> None:
    f = Fixture(led, make_spec(2))
    game = f.games[0]
    gid = f.record(game)
    seats = table(
        led,
        f"SELECT seat, member, entrant_id, side, place, score FROM game_seats WHERE game_id = {gid} "
        "ORDER BY seat",
    )
    rec = synthetic_record(game, "two-handed")
    ranking = rec["games"][0]["result"]["ranking"]
    scores = rec["games"][0]["result"]["scores"]
    assert seats == [(s, 0, f.ids[game.seats[s][0]], s, ranking[s], scores[s]) for s in range(2)]
    assert led.game_record(gid) == rec
    assert table(led, f"SELECT rating_seq FROM games WHERE id = {gid}") == [(1,)]
    # Two entrants, each on two boards: the tournament's own and the variant's pooled board.
    assert len(table(led, f"SELECT * FROM rating_history WHERE game_id = {gid}")) == 4
    with pytest.raises(LedgerError, match="no game"):
        led.game_record(gid + 100)


def test_record_game_is_one_transaction(led: Ledger) -> None:
    """A record the ledger cannot take (an entrant it does not know) leaves no trace at all."""
    f = Fixture(led, make_spec(2))
    before = table(led, "SELECT count(*) FROM games")
    with pytest.raises(KeyError):
        led.record_game(
            f.tid,
            "two-handed",
            f.games[0],
            {"e0": f.ids["e0"]},
            FinishedGame.from_data(synthetic_record(f.games[0], "two-handed")),
        )
    assert table(led, "SELECT count(*) FROM games") == before
    assert table(led, "SELECT count(*) FROM game_seats") == [(0,)]
    assert table(led, "SELECT count(*) FROM game_records") == [(0,)]
    assert f.record(f.games[0]) > 0, "the ledger is still usable"


# ---------------------------------------------------------------- canonical order


def rated_keys(led: Ledger, tid: int) -> list[str]:
    rows = led.conn.execute(
        "SELECT key FROM games WHERE tournament_id = ? AND rating_seq IS NOT NULL ORDER BY rating_seq",
        (tid,),
    )
    return [r[0] for r in rows]


def prefix_check(f: Fixture) -> None:
    done = f.led.done_keys(f.tid)
    prefix = []
    for g in f.games:
        if g.key not in done:
            break
        prefix.append(g)
    assert rated_keys(f.led, f.tid) == [g.key for g in prefix], "the finished prefix, in order"
    assert ratings_by_name(f.led) == expected_ratings(f.spec, prefix), "and no other game"


def test_games_out_of_order_wait_for_the_prefix(tmp_path: Path) -> None:
    spec = make_spec(3, deals_per_pairing=2)  # 12 games
    order = [3, 1, 0, 5, 2, 4, 11, 7, 6, 8, 10, 9]
    shuffled = Ledger(tmp_path / "shuffled.sqlite")
    f = play_in_order(shuffled, spec, order[:3], prefix_check)
    assert rated_keys(shuffled, f.tid) == [f.games[0].key, f.games[1].key]
    for i in order[3:]:
        f.record(f.games[i])
        prefix_check(f)
    in_order = Ledger(tmp_path / "in_order.sqlite")
    play_in_order(in_order, spec, list(range(12)))
    assert ratings_by_name(shuffled) == ratings_by_name(in_order)
    assert history(shuffled) == history(in_order)
    assert ratings_by_name(shuffled) == expected_ratings(spec, f.games)
    assert rated_keys(shuffled, f.tid) == [g.key for g in f.games]


@settings(max_examples=25, deadline=None)
@given(st.permutations(list(range(12))))
def test_any_finishing_order_gives_the_in_order_ratings(order: list[int]) -> None:
    spec = make_spec(4, duplicate=False, deals_per_pairing=2)  # 12 games
    led = Ledger(":memory:")
    f = play_in_order(led, spec, order, prefix_check)
    assert ratings_by_name(led) == expected_ratings(spec, f.games)
    assert led.rebuild_ratings() == 0.0


def test_two_allies_sharing_a_seat_count_as_one_hand() -> None:
    """Three-handed consultation, all ratings equal: one player against two allies sharing a hand.
    Rated as the sum of the allies (twice a single player's strength), a win moved the single
    player up 8.63 and a loss down only 0.58, and the allies the other way round. Sharing the
    seat's weight, the game is an even one: a win and a loss move each player by the same amount,
    and the two allies alike."""

    def after(single_place: int) -> dict[int, float]:
        seats = [(0, single_place, 1, 0), (1, 1 - single_place, 2, 1), (1, 1 - single_place, 3, 1)]
        updates = rate_seats(seats, [7], lambda board, entrant: (initial(), 0))
        return {u.entrant: u.after.mu - initial().mu for u in updates}

    won, lost = after(0), after(1)
    assert won[1] > 4 and won[1] == pytest.approx(-lost[1])
    assert won[2] == won[3] == pytest.approx(-lost[2]) == pytest.approx(-lost[3])
    assert won[2] < 0


def test_a_ledger_rated_before_seats_were_shared_is_rerated_when_opened(tmp_path: Path) -> None:
    """Migration 8 rebuilds the ratings: a ledger whose consultation games were rated the old way
    is rated the new way once opened, history included."""
    spec = make_spec(3, variant="three-handed-consultation")
    path = tmp_path / "l.sqlite"
    led = Ledger(path)
    f = play_in_order(led, spec, list(range(len(full_schedule(spec)))))
    led.conn.execute("UPDATE ratings SET mu = 0")  # as if rated by another model
    led.conn.execute("UPDATE rating_history SET mu_after = 0")
    led.conn.execute("DELETE FROM _migrations WHERE version = 8")
    led.close()
    again = Ledger(path)
    assert ratings_by_name(again) == expected_ratings(spec, f.games)
    assert again.rebuild_ratings() == 0.0
    assert table(again, "SELECT count(*) FROM rating_history WHERE mu_after = 0") == [(0,)]
    again.close()


@pytest.mark.parametrize(
    "variant", ["three-handed", "four-handed-partners", "three-handed-consultation"]
)
def test_multi_player_games_are_rated_as_their_sides(tmp_path: Path, variant: str) -> None:
    spec = make_spec(4 if variant == "four-handed-partners" else 3, variant=variant)
    led = Ledger(tmp_path / "l.sqlite")
    f = play_in_order(led, spec, list(reversed(range(len(full_schedule(spec))))))
    assert ratings_by_name(led) == expected_ratings(spec, f.games)
    players = sum(len(g.players) for g in f.games)
    assert table(led, "SELECT count(*) FROM game_seats") == [(players,)]
    # each player on two boards: the tournament's and the pooled one
    assert table(led, "SELECT count(*) FROM rating_history") == [(2 * players,)]
    assert led.rebuild_ratings() == 0.0


def test_consultation_seats_record_each_member(led: Ledger) -> None:
    f = Fixture(led, make_spec(3, variant="three-handed-consultation"))
    game = f.games[0]
    gid = f.record(game)
    rows = table(
        led,
        f"SELECT seat, member, entrant_id, side FROM game_seats WHERE game_id = {gid} "
        "ORDER BY seat, member",
    )
    assert rows == [
        (0, 0, f.ids[game.seats[0][0]], 0),
        (1, 0, f.ids[game.seats[1][0]], 1),
        (1, 1, f.ids[game.seats[1][1]], 1),
    ]


# ---------------------------------------------------------------- rebuild


def test_rebuild_reproduces_the_stored_ratings(ledger_path: Path, led: Ledger) -> None:
    spec = make_spec(4, deals_per_pairing=2)
    f = play_in_order(led, spec, [5, 0, 1, 9, 2, 3, 4, 6, 8, 7, *range(10, 24)])
    ratings = table(led, "SELECT * FROM ratings ORDER BY board_id, entrant_id")
    hist = table(led, "SELECT * FROM rating_history ORDER BY board_id, game_id, entrant_id")
    assert led.rebuild_ratings() == 0.0
    assert table(led, "SELECT * FROM ratings ORDER BY board_id, entrant_id") == ratings
    assert table(led, "SELECT * FROM rating_history ORDER BY board_id, game_id, entrant_id") == hist
    assert len(hist) == 2 * 2 * len(f.games)  # two players, on two boards, per game


def test_rebuild_repairs_a_tampered_rating(led: Ledger) -> None:
    play_in_order(led, make_spec(3), list(range(6)))
    good = ratings_by_name(led)
    led.conn.execute("UPDATE ratings SET mu = mu + 0.5 WHERE entrant_id = 1")
    assert led.rebuild_ratings() == pytest.approx(0.5)
    assert ratings_by_name(led) == good
    led.conn.execute("DELETE FROM ratings WHERE entrant_id = 2")
    assert led.rebuild_ratings() == float("inf")
    assert ratings_by_name(led) == good
    assert led.rebuild_ratings() == 0.0


def test_rebuild_with_two_tournaments_sharing_entrants(led: Ledger) -> None:
    """Two tournaments of the same entrants, their games finishing interleaved and out of order:
    each entrant's rating runs through both, and a rebuild gets exactly the stored numbers."""
    a = Fixture(led, make_spec(3, name="A", deals_per_pairing=2))
    b = Fixture(led, make_spec(3, name="B", seed=4))
    assert a.tid != b.tid and a.ids == b.ids
    steps = [(a, 2), (b, 1), (a, 0), (b, 0), (a, 1), (b, 3), (b, 2), (a, 4), (a, 3)]
    steps += [(b, i) for i in range(4, 6)] + [(a, i) for i in range(5, 12)]
    for fx, i in steps:
        fx.record(fx.games[i])
    assert rated_keys(led, a.tid) == [g.key for g in a.games]
    assert rated_keys(led, b.tid) == [g.key for g in b.games]
    stored = ratings_by_name(led)
    assert sum(v[3] for v in stored.values()) == 2 * (12 + 6)
    assert led.rebuild_ratings() == 0.0
    assert ratings_by_name(led) == stored


# ---------------------------------------------------------------- queries


def test_leaderboard_sorted_by_exposed(led: Ledger) -> None:
    play_in_order(led, make_spec(4, deals_per_pairing=2), list(range(24)))
    board = led.leaderboard("two-handed")
    assert len(board) == 4
    assert [r.exposed for r in board] == sorted((r.exposed for r in board), reverse=True)
    stored = ratings_by_name(led)
    assert [(r.entrant, r.mu, r.sigma) for r in board] == sorted(
        ((name, mu, sigma) for (name, _), (mu, sigma, _, _) in stored.items()),
        key=lambda t: -(t[1] - 3 * t[2]),
    )
    for r in board:
        assert r.exposed == pytest.approx(r.mu - 3 * r.sigma, abs=1e-12)
        assert r.games == 12
    assert led.variants() == ["two-handed"]
    assert led.leaderboard("polish") == []


def test_games_and_seat_rows(led: Ledger) -> None:
    f = play_in_order(led, make_spec(2, deals_per_pairing=2), [1, 0, 3, 2])
    listed = led.games()
    assert [g["key"] for g in listed] == [f.games[i].key for i in (2, 3, 0, 1)]
    assert all(g["tournament"] == "Synthetic" for g in listed)
    assert led.games(limit=1)[0]["key"] == f.games[2].key
    rows = led.seat_rows(f.tid)
    assert [r["key"] for r in rows] == [g.key for g in f.games for _ in range(2)]
    assert {r["entrant"] for r in rows} == {"e0", "e1"}


def test_ids_and_limits_beyond_sqlite_integers_name_no_game(led: Ledger) -> None:
    """An id or a limit too large for SQLite (typed by hand: arena replay, arena games --limit,
    arena games void --game) names no game; it is not an OverflowError from binding it."""
    f = play_in_order(led, make_spec(2), [0, 1])
    before = dump(led.path)
    for huge in (2**63, -(2**63) - 1, 10**30):
        with pytest.raises(LedgerError, match=f"no game {huge}"):
            led.game_record(huge)
        with pytest.raises(LedgerError, match=f"no game {huge}"):
            led.void_games(f.tid, "typo", [huge])
        with pytest.raises(LedgerError, match=f"no game {huge}"):
            led.void_games(f.tid, "typo", [1, huge])
    assert len(led.games(limit=10**30)) == 2
    assert len(led.games(f.tid, limit=2**63)) == 2
    assert dump(led.path) == before, "nothing voided"
    with pytest.raises(LedgerError, match=f"no game {2**63 - 1}"):
        led.game_record(2**63 - 1)
