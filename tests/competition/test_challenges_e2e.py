"""Challenges end to end (issue 45): two authors' real bundles in play, one asks for a challenge over
the submission service, the server plays it with the real referee between ranked games, and the
author replays its games; the board counts the ranked games alone, and no challenge game was dealt a
ranked game's cards."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc
import pytest
from test_competition_e2e import TIMEOUT, ada_and_bob, bot_folder, running, until

from arena.competition import bundles
from arena.referee.record import MatchRecord
from arena.wire.v1 import competition_pb2 as pb

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


def test_a_challenge_is_played_by_real_bots_unrated_and_replayed(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(challenge_played(tmp_path), 3 * TIMEOUT))


async def challenge_played(tmp_path: Path) -> None:
    async with running(tmp_path) as (server, led):
        comp, ada, bob = ada_and_bob(server, led)
        one = await ada.submit(bundles.pack(bot_folder(tmp_path, "ada-bot"), 2**20))
        two = await bob.submit(bundles.pack(bot_folder(tmp_path, "bob-bot"), 2**20))
        assert (await ada.wait(one.submission_id)).status == "active"
        assert (await bob.wait(two.submission_id)).status == "active"
        asked = await ada.stub.Challenge(
            pb.ChallengeRequest(bot="ada-bot", against="bob-bot@1", games=2), metadata=ada.md
        )
        assert (asked.status, asked.games) == ("open", 2)

        def over() -> bool:
            found = comp.challenge(server.cid, asked.challenge_id)
            return found is not None and found.status != "open"

        await until(over, state=lambda: comp.challenge(server.cid, asked.challenge_id))
        listed = await ada.stub.ListChallenges(pb.ListChallengesRequest(), metadata=ada.md)
        [mine] = listed.challenges
        assert (mine.status, mine.played, mine.wins + mine.losses + mine.draws) == ("done", 2, 2)
        assert {tuple(g.seats) for g in mine.game_list} == {
            ("ada-bot", "bob-bot"),
            ("bob-bot", "ada-bot"),
        }
        theirs = await bob.stub.ListChallenges(pb.ListChallengesRequest(), metadata=bob.md)
        assert not theirs.challenges
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await bob.stub.ChallengeReplay(
                pb.ChallengeReplayRequest(game_id=mine.game_list[0].game_id), metadata=bob.md
            )
        assert err.value.code() is grpc.StatusCode.NOT_FOUND
        decks = []
        for g in mine.game_list:
            replay = await ada.stub.ChallengeReplay(
                pb.ChallengeReplayRequest(game_id=g.game_id), metadata=ada.md
            )
            record = MatchRecord.from_dict(json.loads(replay.record))
            assert record.games[0].decisions, "a real game was played"
            decks.append(record.games[0].decks)
        assert decks[0] == decks[1]  # one deal, in both seat rotations
        # The board counts the ranked games alone; no ranked game was dealt the challenge's cards.
        server.store.set_paused(server.cid, True)

        def ranked_games() -> int:
            row = led.conn.execute(
                "SELECT count(*) FROM games WHERE tournament_id = ? AND rating_seq IS NOT NULL",
                (server.cid,),
            ).fetchone()
            return int(row[0])

        await until(lambda: ranked_games() >= 2 and server.running == 0)
        ranked = led.conn.execute(
            "SELECT g.id FROM games g WHERE g.tournament_id = ?", (server.cid,)
        ).fetchall()
        board_games = sum(line.games for line in comp.board(server.cid))
        assert ranked and board_games == 2 * len(ranked)
        for (game_id,) in ranked:
            assert MatchRecord.from_dict(led.game_record(game_id)).games[0].decks != decks[0]
        await ada.channel.close()
        await bob.channel.close()
