"""A referee's match record handed to the ledger as the ledger's own type (``arena.play.game.finished``):
what is stored is what was stored when the record was handed over as plain data, byte for byte."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from test_record import CASES, run_match

from arena.ledger import Ledger, records, seat_reports
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.play.game import finished
from arena.referee import MatchRecord
from arena.tournament.spec import parse


def _stored(led: Ledger, game_id: int) -> bytes:
    encoding, blob = led.conn.execute(
        "SELECT encoding, record FROM game_records WHERE game_id = ?", (game_id,)
    ).fetchone()
    assert encoding == records.ENCODING
    return zlib.decompress(blob)


@pytest.mark.parametrize(("name", "options"), CASES[:1] + CASES[-2:])
def test_the_record_is_stored_byte_for_byte_as_its_plain_data_was(
    tmp_path: Path, name: str, options: dict[str, str]
) -> None:
    record, _ = run_match(name, options, seed=5)
    # A detail no ASCII escape may touch: the text is stored as the referee wrote it.
    record.games[0].detail = "déjà vu ♠"
    seats = [[f"p{s}{m}" for m in range(len(team))] for s, team in enumerate(record.players)]
    names = [n for seat in seats for n in seat]
    spec = parse(
        {
            "name": "stored",
            "variant": name,
            "options": options,
            "entrants": [{"name": n, "command": "bot"} for n in names],
        },
        "stored.toml",
    )
    led = Ledger(tmp_path / "l.sqlite")
    try:
        tid, _ = led.tournament(spec)
        ids = led.entrant_ids(spec.entrants)
        game = ScheduledGame("g0", 0, 0, 0, 0, 0, 5, tuple(map(tuple, seats)), tuple(names))
        led.plan(tid, [game])
        played = finished(record)
        # What the ledger was handed before: the record's plain data, dumped by the ledger.
        before = json.dumps(record.to_dict(), separators=(",", ":"), ensure_ascii=False)
        assert played.record == before
        assert played == FinishedGame.from_data(record.to_dict())  # the two ways agree
        g = record.games[0]
        assert (played.outcome, played.detail, played.culprit) == (g.outcome, g.detail, g.culprit)
        assert played.sides == tuple(tuple(s) for s in g.result["sides"])
        assert played.ranking == tuple(g.result["ranking"]) and played.scores == tuple(
            g.result["scores"]
        )
        assert [(t.seat, t.member, t.elapsed_ms, t.bank_ms) for t in played.times] == [
            (d.seat, d.member, d.elapsed_ms, d.bank_ms) for d in g.decisions
        ]
        game_id = led.record_game(tid, name, game, ids, played)
        assert _stored(led, game_id) == before.encode("utf-8")
        assert MatchRecord.from_dict(led.game_record(game_id)) == record
        # The seats' places and scores, as the result gives them.
        rows = led.conn.execute(
            "SELECT seat, member, side, place, score FROM game_seats WHERE game_id = ? "
            "ORDER BY seat, member",
            (game_id,),
        ).fetchall()
        side_of = {seat: side for side, seat_list in enumerate(played.sides) for seat in seat_list}
        assert rows == [
            (s, m, side_of[s], played.ranking[side_of[s]], played.scores[s])
            for s, seat in enumerate(seats)
            for m in range(len(seat))
        ]
        # A seat's reports: its time per decision, rounded, and its bank after its last one.
        reports = seat_reports.from_game(played, [[ids[n] for n in seat] for seat in seats], [])
        first = reports[0]
        mine = [d for d in g.decisions if (d.seat, d.member) == (first.seat, first.member)]
        assert first.times_ms == tuple(round(d.elapsed_ms) for d in mine)
        assert first.bank_left_ms == round(mine[-1].bank_ms)
    finally:
        led.close()
