"""Issue 14: two clean runs of the shipped quickstart (its bot processes play up to six games each)
give identical ledgers, given the same deal secret: every example bot draws its randomness from the
game it is playing, not from what its process played before."""

from __future__ import annotations

import secrets
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

CONTENT = {
    "games": "SELECT key, ord, variant, seed, outcome, detail, culprit, rating_seq FROM games ORDER BY key",
    "seats": "SELECT g.key, s.seat, s.member, e.name, s.side, s.place, s.score FROM game_seats s "
    "JOIN games g ON g.id = s.game_id JOIN entrants e ON e.id = s.entrant_id ORDER BY g.key, s.seat",
    "ratings": "SELECT b.kind, b.name, e.name, r.mu, r.sigma, r.games FROM ratings r "
    "JOIN boards b ON b.id = r.board_id JOIN entrants e ON e.id = r.entrant_id ORDER BY 1, 2, 3",
    "history": "SELECT b.name, g.key, e.name, h.mu_after, h.sigma_after FROM rating_history h "
    "JOIN boards b ON b.id = h.board_id JOIN games g ON g.id = h.game_id "
    "JOIN entrants e ON e.id = h.entrant_id ORDER BY 1, 2, 3",
}


def content(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(path)
    try:
        return {name: conn.execute(sql).fetchall() for name, sql in CONTENT.items()}
    finally:
        conn.close()


def test_two_clean_quickstart_runs_give_identical_ledgers(tmp_path: Path) -> None:
    secret = secrets.token_hex(32)
    ledgers = []
    for run in ("first", "second"):
        ledger = tmp_path / f"{run}.sqlite"
        done = subprocess.run(
            [sys.executable, "-m", "arena.cli.main", "run", str(ROOT / "tournaments/quickstart.toml"),
             "--ledger", str(ledger), "--deal-secret", secret],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        ledgers.append(content(ledger))
    first, second = ledgers
    assert len(first["games"]) == 12
    assert {g[4] for g in first["games"]} == {"normal"}
    for table in CONTENT:
        assert first[table] == second[table], f"{table} differ"
