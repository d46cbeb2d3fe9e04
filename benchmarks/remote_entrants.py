"""Remote entrants of a standing competition, each one connection, play until the first of them has
played ``--games`` games, ``games_at_once`` at a time: none may be forfeited while it is connected.

    python benchmarks/remote_entrants.py --games 500 --at-once 4 --entrants 8

Game c000000964-s0 was forfeited as "the bot never connected" while its remote entrant had been
connected for minutes (once in about 390 remote games with games_at_once = 2): the entrant was given a
second game before its first had claimed its connection. Each entrant here is a quick random bot
(``arena_bot.random_bot``) on its own connection, dialled in for the whole run; every game is between
two of them (the matchmaker gives each about as many). Prints the first entrant's games and all the
games played, the time taken, games per second, each outcome's count and the
games forfeited while their bots were connected (the figure that must be 0); exits 1 when any was.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from arena.competition.server import CompetitionServer
from arena.competition.spec import parse
from arena.ledger import Ledger
from arena.ledger import competitions as store


async def run(games: int, at_once: int, entrants: int, folder: Path) -> int:
    led = Ledger(folder / "ledger.sqlite")
    spec = parse(
        {
            "name": "Remote entrants",
            "variant": "rubicon",
            "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
            "matchmaking": {"games_at_once": at_once, "pause_seconds": 0.05},
            "time_control": {"budget_ms": 5000, "bank_ms": 60000, "grace_ms": 500},
        }
    )
    server = CompetitionServer(spec, led, folder / "data")
    await server.start()
    comp = store.Competitions(led)
    bots: list[asyncio.subprocess.Process] = []
    try:
        for i in range(entrants):
            comp.add_author(server.cid, f"author-{i}")
            author = comp.authors(server.cid)[-1]
            sid, token = comp.submit(server.cid, author.id, f"far-{i}", "1", "remote")
            comp.activate(sid, f"remote:{author.id}:far-{i}")
            env = {
                **os.environ,
                "ARENA_ADDRESS": server.bots_address,
                "ARENA_TOKEN": token,
                "BOT_SEED": str(i),
            }
            bots.append(
                await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "arena_bot.random_bot", env=env,
                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
                )
            )  # fmt: skip
        await server._refresh_soon()
        started = time.monotonic()
        while played(led, "far-0") < games:
            if any(b.returncode is not None for b in bots):
                print("a bot's connection ended before the run did", file=sys.stderr)
                return 2
            await asyncio.sleep(0.5)
        elapsed = time.monotonic() - started
        await server.db.call(comp.set_paused, server.cid, True)
        outcomes = dict(
            led.conn.execute(
                "SELECT outcome, count(*) FROM games WHERE tournament_id = ? GROUP BY outcome",
                (server.cid,),
            ).fetchall()
        )
        # Every bot stayed connected throughout (checked above): any game a bot failed to connect
        # to, or forfeited as absent, is one forfeited while connected.
        forfeited = led.conn.execute(
            "SELECT count(*) FROM games WHERE tournament_id = ? AND outcome != 'normal' AND "
            "(detail LIKE '%never connected%' OR detail LIKE '%did not dial in%')",
            (server.cid,),
        ).fetchone()[0]
        total = sum(outcomes.values())
        print(
            f"entrant_games {played(led, 'far-0')} games {total} entrants {entrants} "
            f"games_at_once {at_once}"
        )
        print(f"elapsed_s {elapsed:.1f} games_per_s {total / elapsed:.2f}")
        print("outcomes " + " ".join(f"{k}={v}" for k, v in sorted(outcomes.items())))
        print(f"forfeited_while_connected {forfeited}")
        return 1 if forfeited else 0
    finally:
        for b in bots:
            if b.returncode is None:
                b.kill()
            await b.wait()
        await server.stop()
        led.close()


def played(led: Ledger, name: str) -> int:
    """The games recorded of the entrant ``name``."""
    return int(
        led.conn.execute(
            "SELECT count(*) FROM game_seats s JOIN entrants e ON e.id = s.entrant_id "
            "WHERE e.name = ?",
            (name,),
        ).fetchone()[0]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=500, help="the first entrant's games")
    parser.add_argument("--at-once", type=int, default=4, help="the competition's games_at_once")
    parser.add_argument("--entrants", type=int, default=8, help="remote entrants (one bot each)")
    args = parser.parse_args()
    if args.entrants < 2:
        parser.error("--entrants: at least 2 (a game has two)")
    with tempfile.TemporaryDirectory() as tmp:
        sys.exit(asyncio.run(run(args.games, args.at_once, args.entrants, Path(tmp))))


if __name__ == "__main__":
    main()
