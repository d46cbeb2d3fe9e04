"""arena compete's commands as an author or organiser meets them: their errors name the problem."""

from __future__ import annotations

import socket
import time
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.ledger import Ledger
from arena.ledger.rows import FinishedGame
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]


def test_submitting_a_folder_without_a_manifest_names_the_folder_once(tmp_path: Path) -> None:
    folder = tmp_path / "nomanifest"
    folder.mkdir()
    result = CliRunner().invoke(
        app, ["compete", "submit", str(folder), "--server", "127.0.0.1:1", "--token", "t"]
    )
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert f"error: {folder}: no arena-bot.toml (the manifest" in message
    assert message.count(str(folder)) == 1


def test_a_ledger_without_a_competition_says_so(tmp_path: Path) -> None:
    Ledger(tmp_path / "l.sqlite").close()
    for command in ("status", "leaderboard"):
        result = CliRunner().invoke(
            app, ["compete", command, "--ledger", str(tmp_path / "l.sqlite")]
        )
        assert result.exit_code == 2
        assert "no competition in" in result.output and "arena compete serve FILE" in result.output


def test_a_missing_ledger_says_the_competition_is_to_be_started(tmp_path: Path) -> None:
    """An organiser who adds authors before serving is told what makes the ledger: the
    competition's server, not a tournament's run."""
    missing = tmp_path / "competition.sqlite"
    for command in (["author", "add", "ada"], ["author", "list"], ["status"], ["pause"]):
        result = CliRunner().invoke(app, ["compete", *command, "--ledger", str(missing)])
        assert result.exit_code == 2, result.output
        message = " ".join(result.output.split())
        assert f"no ledger at {missing} (start the competition first: arena compete serve" in (
            message
        )
        assert "arena run" not in message
    assert not missing.exists()


def test_a_competition_that_cannot_listen_is_refused_before_it_is_registered(
    tmp_path: Path,
) -> None:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    taken = f"127.0.0.1:{busy.getsockname()[1]}"
    text = (ROOT / "competitions" / "example.toml").read_text()
    text = text.replace('submissions = "127.0.0.1:50061"', f'submissions = "{taken}"')
    text = text.replace('bots = "127.0.0.1:50062"', 'bots = "127.0.0.1:0"')
    assert taken in text
    file = tmp_path / "c.toml"
    file.write_text(text)
    ledger = tmp_path / "l.sqlite"
    try:
        result = CliRunner().invoke(app, ["compete", "serve", str(file), "--ledger", str(ledger)])
    finally:
        busy.close()
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert f"error: cannot listen for submissions on {taken}: the address is in use" in message
    led = Ledger(ledger)
    try:
        assert led.conn.execute("SELECT COUNT(*) FROM tournaments").fetchone()[0] == 0
    finally:
        led.close()


def test_an_authors_leaderboard_with_a_token_asks_the_running_competition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An author has a token, not the ledger: `leaderboard --token T` asks the competition at
    submit's default address, not an ./arena.sqlite that has no competition."""
    from arena.cli.compete import shared

    asked: list[tuple[str, str]] = []

    def call(server: str, token: str, _: object) -> object:
        asked.append((server, token))
        raise shared.fail("stop here", 1)

    monkeypatch.setattr(shared, "call", call)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_LEDGER", raising=False)
    result = CliRunner().invoke(app, ["compete", "leaderboard", "--token", "t"])
    assert asked == [("127.0.0.1:50061", "t")]
    assert "no competition in" not in result.output
    # The organiser's --ledger is read as before, whatever token is in the environment.
    Ledger(tmp_path / "l.sqlite").close()
    result = CliRunner().invoke(
        app,
        ["compete", "leaderboard", "--ledger", str(tmp_path / "l.sqlite")],
        env={"ARENA_AUTHOR_TOKEN": "t"},
    )
    assert asked == [("127.0.0.1:50061", "t")]
    assert result.exit_code == 2 and "no competition in" in result.output


def test_a_submissions_log_is_printed_with_its_escape_sequences_shown_not_acted_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A build's output is its author's: printed raw, an escape sequence in it moved the cursor,
    set the terminal's title or wrote its clipboard (OSC 52) wherever the log was read."""
    from arena.cli.compete import shared
    from arena.wire.v1 import competition_pb2 as pb

    log = "step 1\n\x1b]52;c;cHduZWQ=\x07\x1b[1Aok\tdone\nlast"
    monkeypatch.setattr(shared, "call", lambda *_: pb.GetLogResponse(log=log))
    result = CliRunner().invoke(app, ["compete", "log", "3", "--token", "t"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert result.output == "step 1\n\ufffd]52;c;cHduZWQ=\ufffd\ufffd[1Aok\tdone\nlast\n"


class _StuckCompetition(competition_pb2_grpc.CompetitionServicer):
    """A competition whose submission stays building (issue 47: a submission stayed "building" for
    good, and whoever waited for it waited for ever)."""

    def Submit(self, request: pb.SubmitRequest, context: object) -> pb.SubmitResponse:
        return pb.SubmitResponse(submission_id=7, bot="b", version="1", status="building")

    def ListSubmissions(
        self, request: pb.ListSubmissionsRequest, context: object
    ) -> pb.ListSubmissionsResponse:
        info = pb.SubmissionInfo(submission_id=7, bot="b", version="1", status="building")
        return pb.ListSubmissionsResponse(submissions=[info])


def test_submit_waits_within_its_timeout(tmp_path: Path) -> None:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    competition_pb2_grpc.add_CompetitionServicer_to_server(_StuckCompetition(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        bundle = tmp_path / "b.tar.gz"
        bundle.write_bytes(b"not read by this server")
        started = time.monotonic()
        result = CliRunner().invoke(
            app,
            ["compete", "submit", str(bundle), "--server", f"127.0.0.1:{port}", "--token", "t",
             "--wait-timeout", "2"],
        )  # fmt: skip
        assert result.exit_code == 1, result.output
        assert "submission 7 is still building after 2 s" in " ".join(result.output.split())
        assert time.monotonic() - started < 60
    finally:
        server.stop(None)


@pytest.mark.parametrize(
    "args",
    [
        ["submit", "no-such-folder"],
        ["submissions"],
        ["log", "3"],
        ["withdraw", "bot"],
        ["remote", "bot", "--version", "1"],
    ],
)
def test_an_authors_command_without_a_token_asks_nothing(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each author's command (arena.cli.compete.author) wants the author's token before it packs or
    sends anything: refused with the one-line usage error, nothing asked of a competition."""
    from arena.cli.compete import shared

    def call(*_: object) -> object:
        raise AssertionError("a competition was asked without a token")

    monkeypatch.setattr(shared, "call", call)
    monkeypatch.delenv("ARENA_AUTHOR_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["compete", *args])
    assert result.exit_code == 2, result.output
    assert "give your author token: --token or $ARENA_AUTHOR_TOKEN" in result.output


def test_a_submissions_log_shows_its_history_its_failures_in_play_and_its_time_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """compete log showed only the build and check: an author could not see why their bot failed
    in play. Now its status history, each failure's game and detail (whole) and its time use."""
    from arena.cli.compete import shared
    from arena.wire.v1 import competition_pb2 as pb

    trace = "crash: its output:\n" + "\n".join(f"    | frame {i}" for i in range(40))
    answer = pb.GetLogResponse(
        log="built",
        history=[
            pb.StatusChange(status="active", reason="in play", at="2026-01-01T00:00:00+00:00"),
            pb.StatusChange(status="suspended", reason="suspended: " + "x" * 500, at="t2"),
        ],
        failures=[pb.PlayFailure(game_id=7, key="c000000007-s0", outcome="crash", detail=trace)],
        time_use=pb.TimeUse(
            games=3, decisions=60, median_ms=12, p99_ms=480, bank_left_ms=51000,
            failures={"crash": 2, "timeout": 1},
        ),
    )  # fmt: skip
    monkeypatch.setattr(shared, "call", lambda *_: answer)
    result = CliRunner().invoke(app, ["compete", "log", "3", "--token", "t"])
    assert result.exit_code == 0, result.output
    assert "2026-01-01T00:00:00+00:00  active: in play" in result.output
    assert "suspended: " + "x" * 500 in result.output, "the reason is not cut"
    assert "game 7 (c000000007-s0), : crash" in result.output
    assert "    | frame 39" in result.output and "    | frame 0" in result.output
    assert (
        "60 decisions, median 12 ms, 99th percentile 480 ms, bank left at a game's end 51000 ms "
        "(median); games it caused to fail: crash 2, timeout 1"
    ) in result.output


def test_a_submissions_reason_is_shown_whole_at_any_width(monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.cli.compete import shared
    from arena.wire.v1 import competition_pb2 as pb

    reason = "suspended: the last: crash: " + " ".join(f"word{i}" for i in range(80))
    listed = pb.ListSubmissionsResponse(
        submissions=[pb.SubmissionInfo(submission_id=1, bot="b", status="suspended", reason=reason)]
    )
    monkeypatch.setattr(shared, "call", lambda *_: (listed, None))  # no webhook (ShowWebhook)
    for width in ("80", "400"):
        result = CliRunner().invoke(
            app, ["compete", "submissions", "--token", "t"], env={"COLUMNS": width}
        )
        assert result.exit_code == 0, result.output
        flat = "".join(ch for ch in result.output if ch.isalnum())
        assert "word79" in flat and "…" not in result.output, width


def test_a_game_log_needs_a_token_or_the_ledger_and_one_of_id_or_game() -> None:
    result = CliRunner().invoke(app, ["compete", "log"])
    assert result.exit_code == 2 and "give a submission's id, or --game GAME_ID" in result.output
    result = CliRunner().invoke(app, ["compete", "log", "3", "--game", "4"])
    assert result.exit_code == 2 and "give a submission's id, or --game GAME_ID" in result.output
    result = CliRunner().invoke(app, ["compete", "log", "--game", "4"], env={})
    assert result.exit_code == 2 and "(the organiser: --ledger)" in result.output


def test_the_board_lists_out_of_play_versions_apart_with_last_played_and_rank_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from arena.cli.compete import shared
    from arena.wire.v1 import competition_pb2 as pb

    rows = [
        pb.LeaderboardRow(rank=1, bot="up", version="1", author="ada", status="active",
                          in_play=True, last_played="2026-01-02T10:00:00+00:00", rank_change=2),
        pb.LeaderboardRow(rank=2, bot="fresh", version="1", author="bob", status="active",
                          in_play=True),
        pb.LeaderboardRow(rank=0, bot="gone", version="3", author="cy", status="withdrawn",
                          in_play=False, exposed=30.0, last_played="2026-01-01T09:00:00+00:00"),
    ]  # fmt: skip
    answer = pb.LeaderboardResponse(competition="L", rows=rows)
    asked: list[str] = []

    def call(server: str, token: str, _: object) -> pb.LeaderboardResponse:
        asked.append(token)
        return answer

    monkeypatch.setattr(shared, "call", call)
    result = CliRunner().invoke(
        app, ["compete", "leaderboard", "--server", "h:1"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert asked == [""], "the public board needs no token"
    lines = result.output.splitlines()
    up = next(line for line in lines if " up " in line)
    assert "2026-01-02 10:00:00" in up and "+2" in up
    fresh = next(line for line in lines if " fresh " in line)
    assert "never" in fresh and "new" in fresh
    gone = next(line for line in lines if " gone " in line)
    assert gone.split()[1] == "-" and "withdrawn" in gone and "30.00" in gone
    assert lines.index(gone) > lines.index(fresh)


def test_remote_help_says_which_languages_it_accepts() -> None:
    from arena.competition import bundles

    result = CliRunner().invoke(app, ["compete", "remote", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for language in (*bundles.LANGUAGES, "remote"):
        assert language in result.output
    result = CliRunner().invoke(
        app, ["compete", "remote", "b", "--version", "1", "--language", "c++", "--token", "t"]
    )
    assert result.exit_code == 2
    assert "--language: expected one of" in result.output and "'c++'" in result.output


def test_status_shows_the_games_played_and_the_last_games(tmp_path: Path) -> None:
    """compete status promised the games played and the last games, and showed neither list."""
    from arena.competition.spec import parse
    from arena.ledger.competitions import Competitions
    from arena.ledger.rows import ScheduledGame

    led = Ledger(tmp_path / "l.sqlite")
    cid = led.register(parse({"name": "Ladder"}), kind="competition").id
    comp = Competitions(led)
    ids = {}
    for author, bot in (("ada", "smart"), ("bob", "bold")):
        who = comp.author_of(cid, comp.add_author(cid, author))
        assert who is not None
        sid, _ = comp.submit(cid, who.id, bot, "1", "python", bundle=bot * 8, run="r")
        ids[bot] = comp.activate(sid, f"bundle:{bot}")
    result = {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 600]}
    for order in range(12):
        game = ScheduledGame(
            f"c{order:09d}-s0", order, 0, order, 0, 0, order + 1, (("smart",), ("bold",)),
            ("smart", "bold"),
        )  # fmt: skip
        led.plan(cid, [game])
        rec = {"games": [{"outcome": "normal", "detail": "", "culprit": -1, "result": result}]}
        led.record_game(cid, "two-handed", game, ids, FinishedGame.from_data(rec))
    led.close()
    result_ = CliRunner().invoke(
        app, ["compete", "status", "--ledger", str(tmp_path / "l.sqlite")], env={"COLUMNS": "200"}
    )
    assert result_.exit_code == 0, result_.output
    assert "12 games" in result_.output
    assert "The last 10 games" in result_.output
    assert "c000000011-s0" in result_.output and "c000000001-s0" not in result_.output
    assert "smart 1:1000, bold 1:600" in result_.output


def test_history_prints_every_change_of_status(monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.cli.compete import shared
    from arena.wire.v1 import competition_pb2 as pb

    answer = pb.GetLogResponse(
        history=[
            pb.StatusChange(status="building", reason="submitted", at="t1"),
            pb.StatusChange(status="active", reason="reinstated by the organiser", at="t2"),
        ]
    )
    monkeypatch.setattr(shared, "call", lambda *_: answer)
    result = CliRunner().invoke(app, ["compete", "history", "4", "--token", "t"])
    assert result.exit_code == 0, result.output
    assert result.output == "t1  building: submitted\nt2  active: reinstated by the organiser\n"
