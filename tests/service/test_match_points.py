"""MatchOver's points: per seat in a match whose players keep their seats, per player of the match in
a consultation series (docs/rules.md §3.2), whose single player moves between seats game by game."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from arena.game import GameResult
from arena.referee import GameEnd, Match, MatchConfig, MatchRecord, Outcome, TimeControl
from arena.service.stream_port import Outgoing, StreamPort
from arena.wire.v1 import bot_pb2

SINGLE, ALLIES = (0, 1), (1, 0)  # each side's place (side 0: the single seat) when it wins
DRAW = (0, 0)
EASY = TimeControl(budget_ms=5000, bank_ms=5000, grace_ms=1000)


def _result(ranking: tuple[int, ...], sides: tuple[tuple[int, ...], ...]) -> GameResult:
    seats = sum(map(len, sides))
    return GameResult(
        sides=sides,
        ranking=ranking,
        scores=(0,) * seats,
        side_scores=(0,) * len(sides),
        deals=(),
        team_sizes=(1,) * seats,
    )


def _consultation(ranking: tuple[int, ...], seating: tuple[tuple[int, ...], ...] = ()) -> GameEnd:
    result = _result(ranking, ((0,), (1,)))
    return GameEnd(0, result, Outcome.NORMAL, "", -1, seating)


def _listen(port: StreamPort, answers: bool = False) -> list[bot_pb2.MatchOver]:
    """Attach the port to a fake stream; the MatchOvers it writes (and, if ``answers``, it replies
    to every request at once with the first legal action)."""
    over: list[bot_pb2.MatchOver] = []

    async def write(message: Outgoing) -> None:
        if isinstance(message, bytes):
            message = bot_pb2.RefereeMessage.FromString(message)
        body = message.WhichOneof("body")
        if body == "match_over":
            over.append(message.match_over)
        elif body == "request" and answers:
            r = message.request
            reply = bot_pb2.Reply(
                request_id=r.request_id, match_id=r.match_id, action=r.legal_actions[0].text
            )
            asyncio.get_running_loop().call_soon(port.on_reply, reply)

    port.attach(write)
    return over


def _points(games: Sequence[GameEnd]) -> list[float]:
    async def run() -> list[float]:
        port = StreamPort("ann", "m1", 0, 0, "t0")
        over = _listen(port)
        await port.match_over("m1", games)
        (message,) = over
        return list(message.points)

    return asyncio.run(run())


def test_a_series_gives_points_per_player_of_the_match() -> None:
    """The players (0, 1, 2 as given) move between seats: the points follow them, not the seats."""
    games = [
        _consultation(SINGLE, ((2,), (0, 1))),  # player 2 alone wins
        _consultation(ALLIES, ((2,), (0, 1))),  # players 0 and 1 win
        _consultation(SINGLE, ((1,), (0, 2))),  # the allies cut: player 1 alone, and wins
        _consultation(DRAW, ((1,), (0, 2))),  # a draw: each side's half to each of its players
    ]
    assert _points(games) == [1.5, 2.5, 1.5]


def test_a_match_whose_players_keep_their_seats_gives_points_per_seat() -> None:
    """No seating (per-game consultation, or any other match): per seat, as before."""
    assert _points([_consultation(SINGLE), _consultation(ALLIES), _consultation(DRAW)]) == [
        1.5,
        1.5,
    ]
    three = _result((0, 1, 1), ((0,), (1,), (2,)))
    tie = _result((0, 0, 2), ((0,), (1,), (2,)))
    ends = [GameEnd(g, r, Outcome.NORMAL, "", -1) for g, r in enumerate((three, tie))]
    assert _points(ends) == [1.5, 0.5, 0.0]
    assert _points([]) == []


def test_every_player_of_a_series_is_told_the_points_of_the_players() -> None:
    """A series played through: each of the three bots gets one MatchOver whose points are each
    player's games won (shared on a draw) by the seating the record keeps."""

    async def run() -> tuple[list[list[bot_pb2.MatchOver]], MatchRecord]:
        ann = StreamPort("ann", "m1", 0, 0, "t0")
        bob, cy = (StreamPort(n, "m1", 1, m, f"t{m + 1}") for m, n in enumerate(("bob", "cy")))
        overs = [_listen(p, answers=True) for p in (ann, bob, cy)]
        config = MatchConfig(
            variant="three-handed-consultation",
            options=(("consultation", "series"),),
            seed=31,
            games=4,
            time_control=EASY,
            deal_key=b"k",
        )
        return overs, await Match("m1", config, [[ann], [bob, cy]]).run()

    overs, record = asyncio.run(run())
    expected = [0.0, 0.0, 0.0]
    for game in record.games:
        ranking = game.result["ranking"]
        firsts = [side for side, place in enumerate(ranking) if place == 0]
        for side in firsts:
            for player in game.seating[side]:  # side i is seat i in three-handed consultation
                expected[player] += 1 / len(firsts)
    assert len({tuple(g.seating[0]) for g in record.games}) > 1  # the single player moved
    for over in overs:
        assert len(over) == 1 and list(over[0].points) == expected
