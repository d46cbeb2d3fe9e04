"""``arena sprt`` and ``arena deals``: the report from given counts (its figures are fastchess's, see
tests/stats), usage errors, and A/B tests between real bot processes, including a failing bot."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.abtest.duplicate_pairs import AbTestState, GameReport, PairReport
from arena.cli.main import app
from arena.cli.sprt_lines import progress_line
from arena.ledger import Ledger
from arena.play.deals import fresh_deals, load_deals
from arena.stats import Sprt

ROOT = Path(__file__).resolve().parents[2]
PYTHON = shlex.quote(sys.executable)
FIRST = "{python} -m arena_bot.first_bot"
RANDOM = f"{PYTHON} -m arena_bot.random_bot"
BROKEN = f"{PYTHON} {shlex.quote(str(ROOT / 'tests' / 'play' / 'fixtures' / 'broken_bot.py'))}"
SLOW_CLOCK = ["--budget-ms", "10000", "--bank-ms", "60000"]  # a loaded machine is never a timeout

runner = CliRunner()


def values(output: str) -> dict[str, str]:
    out = {}
    for line in output.splitlines():
        key, _, value = line.partition(" ")
        out[key] = value
    return out


def test_report_from_pentanomial_counts() -> None:
    # Counts and figures from fastchess's own tests ("EloPentanomial 1"), see tests/stats.
    result = runner.invoke(
        app, ["sprt", "--pentanomial", "34,54,63,64,75", "--elo0", "0", "--elo1", "5"]
    )
    assert result.exit_code == 0, result.output
    v = values(result.output)
    assert v["pairs"] == "290" and v["pentanomial"] == "34,54,63,64,75"
    assert v["model"] == "normalized"
    assert float(v["llr"]) == pytest.approx(1.301436377, rel=1e-4)
    assert float(v["lower"]) == pytest.approx(-2.944438979, rel=1e-5)
    assert float(v["upper"]) == pytest.approx(2.944438979, rel=1e-5)
    assert float(v["elo"]) == pytest.approx(55.57978042, rel=1e-4)
    assert float(v["elo_error"]) == pytest.approx(27.65342951, rel=1e-4)
    assert float(v["nelo"]) == pytest.approx(57.93559994, rel=1e-4)
    assert float(v["los"]) == pytest.approx(99.997, abs=0.001)  # fastchess: "100.00 %"
    assert v["decision"] == "continue"
    # At least four significant figures on every number.
    for key in ("llr", "lower", "upper", "elo", "elo_error", "nelo", "los"):
        digits = v[key].lstrip("-").replace(".", "").lstrip("0")
        assert len(digits) >= 4, (key, v[key])


def test_report_with_the_logistic_model_and_a_decision() -> None:
    # fastchess test "logistic pentanomial 2": LLR -4.98 with [0, 2]: H0 accepted.
    result = runner.invoke(
        app,
        ["sprt", "--pentanomial", "871,26175,55983,26678,821", "--elo0", "0", "--elo1", "2",
         "--model", "logistic"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    v = values(result.output)
    assert float(v["llr"]) == pytest.approx(-4.979611872, rel=1e-3)
    assert v["decision"] == "H0 accepted"
    result = runner.invoke(app, ["sprt", "--pentanomial", "0,0,0,0,200", "--elo1", "5"])
    assert values(result.output)["decision"] == "H1 accepted"


def test_report_from_trinomial_counts_and_other_alpha_beta() -> None:
    result = runner.invoke(
        app, ["sprt", "--trinomial", "89,123,76", "--alpha", "0.01", "--beta", "0.1"]
    )
    assert result.exit_code == 0, result.output
    v = values(result.output)
    assert v["games"] == "288" and v["trinomial"] == "89,123,76"
    assert float(v["nelo"]) == pytest.approx(-20.75644978, rel=1e-4)  # fastchess test "EloWDL 1"
    assert float(v["los"]) == pytest.approx(15.53, abs=0.005)
    assert float(v["upper"]) == pytest.approx(4.49980967, rel=1e-5)


# What the regularization alone would give while every pair (game) scored alike: not the games'.
REGULARIZED = ("elo", "elo_low", "elo_high", "elo_error", "nelo", "nelo_error", "los")


@pytest.mark.parametrize(
    ("args", "score", "llr"),
    [
        (["--pentanomial", "0,0,5,0,0"], "0.5", -0.00121038),
        (["--pentanomial", "0,0,0,0,5"], "1", 0.100728),  # the regularized score read 0.9995
        (["--pentanomial", "1,0,0,0,0"], "0", -0.0205685),
        (["--trinomial", "0,0,7"], "1", 0.100002),
    ],
)
def test_a_report_where_every_pair_scored_alike_shows_no_elo(
    args: list[str], score: str, llr: float
) -> None:
    result = runner.invoke(app, ["sprt", *args])
    assert result.exit_code == 0, result.output
    v = values(result.output)
    assert v["score"] == score  # the games' own score, not the regularized one
    assert {key: v[key] for key in REGULARIZED} == dict.fromkeys(REGULARIZED, "-")
    unit = "pair" if "--pentanomial" in args else "game"
    assert v["regularized"].startswith(f"yes: every {unit} scored alike"), v["regularized"]
    assert float(v["llr"]) == pytest.approx(llr, rel=1e-4)  # the LLR still counts them as 0.001
    assert v["decision"] == "continue"
    v = values(runner.invoke(app, ["sprt", "--pentanomial", "0,0,0,0,147"]).output)
    assert v["decision"] == "H1 accepted" and v["elo"] == "-"  # the decision is the LLR's
    v = values(runner.invoke(app, ["sprt", "--pentanomial", "0,0,4,1,0"]).output)
    assert v["regularized"] == "no" and v["score"] == "0.55" and float(v["elo"]) > 0


@pytest.mark.parametrize(
    ("counts", "elo", "low", "high", "error"),
    [
        ("0,1,7", "470.437", "266.868", ">2400", ">1066.57"),
        ("7,1,0", "-470.437", "<-2400", "-266.868", ">1066.57"),
        ("1,0,1", "0", "<-2400", ">2400", ">2400"),
    ],
)
def test_an_interval_held_at_the_elo_limit_says_so(
    counts: str, elo: str, low: str, high: str, error: str
) -> None:
    """Elo is held within +-2400 (a score 1e-6 from 0 or 1): an end of the interval beyond it is
    shown as beyond, and half its width as at least what is shown, not as estimates."""
    v = values(runner.invoke(app, ["sprt", "--trinomial", counts]).output)
    assert (v["elo"], v["elo_low"], v["elo_high"], v["elo_error"]) == (elo, low, high, error)


def pair(index: int, *points: float) -> PairReport:
    return PairReport(index, index, tuple(GameReport((), p, "normal") for p in points))


def test_the_line_after_each_pair() -> None:
    state = AbTestState(Sprt(0, 5))
    lines = []
    for p in (pair(0, 1, 1), pair(1, 1, 0), pair(2, 1, 1)):
        state.add(p)
        lines.append(progress_line(p, state))
    assert lines[0] == (
        "pair 1 (deal 0): pair score 2-0 | penta 0,0,0,0,1 | LLR 0.020 (-2.94, 2.94) | "
        "Elo - | nElo - | LOS - (every pair alike so far)"
    )
    # The interval's upper end is held at the Elo limit, as in the report.
    assert lines[1] == (
        "pair 2 (deal 1): pair score 1-1 | penta 0,0,1,0,1 | LLR 0.028 (-2.94, 2.94) | "
        "Elo 190.8 +/- >1233.9 [-67.9, >2400] | nElo 245.7 +/- 340.5 | LOS 92.1%"
    )
    assert lines[2].endswith(
        "| Elo 279.6 +/- >1176.7 [46.6, >2400] | nElo 347.4 +/- 278.0 | LOS 99.3%"
    )


CLOSING = re.compile(
    r"result: (?P<new>\S+) \(new\) against (?P<old>\S+) \(old\) W-L-D (?P<w>\d+)-(?P<l>\d+)-"
    r"(?P<d>\d+) in (?P<pairs>\d+) pairs; (?P<games>\d+) games played in (?P<s>[\d.]+) s, "
    r"(?P<rate>[\d.]+) games per second"
)
PAIR_LINE = re.compile(r"pair \d+ \(deal \d+\): pair score (?P<new>[\d.]+)-(?P<old>[\d.]+) \| ")


def test_a_fixed_test_ends_with_its_result_and_is_finished_in_the_ledger(tmp_path: Path) -> None:
    """The last line: W-L-D of the new version against the old, the pairs, the games played with
    their time and rate; each pair's score is labelled; and a test of --games N, all played, is
    finished in ``arena tournaments`` (it was not: only an SPRT decision finished a test)."""
    ledger = tmp_path / "ab.sqlite"
    result = runner.invoke(
        app,
        ["sprt", "--bot", FIRST, "--bot", RANDOM, "--name", "first", "--name", "random",
         "--variant", "rubicon", "--games", "4", "--concurrency", "2", "--ledger", str(ledger),
         "--test", "fixed", *SLOW_CLOCK],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    m = CLOSING.fullmatch(lines[-1])
    assert m is not None, lines[-1]
    assert (m["new"], m["old"], m["pairs"], m["games"]) == ("first", "random", "2", "4")
    w, l_, d = int(m["w"]), int(m["l"]), int(m["d"])
    assert w + l_ + d == 4
    pairs = [line for line in lines if line.startswith("pair ")]
    scores = [PAIR_LINE.match(p) for p in pairs]
    assert all(scores), pairs
    assert sum(float(s["new"]) + float(s["old"]) for s in scores if s) == 4  # two games a pair
    assert sum(float(s["new"]) for s in scores if s) == w + d / 2
    seconds, rate = float(m["s"]), float(m["rate"])
    assert seconds > 0 and rate == pytest.approx(4 / seconds, rel=0.06)  # (both rounded)
    assert lines[lines.index(pairs[0]) - 1].startswith("each pair's score, NEW-OLD: ")
    listed = runner.invoke(app, ["tournaments", "--ledger", str(ledger)], env={"COLUMNS": "300"})
    assert listed.exit_code == 0, listed.output
    row = next(line for line in listed.output.splitlines() if " fixed " in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[1:5] == ["fixed", "sprt", "rubicon", "4/4"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d.*", cells[-1]), row  # finished: a time, not "-"
    led = Ledger(ledger)
    assert led.finished("fixed")
    led.close()


def test_a_short_test_of_a_broken_version_says_so_too() -> None:
    # Two games, both failed by the new version: the pair limit came first, exit 0.
    result = runner.invoke(
        app,
        ["sprt", "--bot", f"{BROKEN} play-7h", "--bot", FIRST, "--variant", "rubicon",
         "--games", "2", *SLOW_CLOCK],
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert values(result.output)["stopped:"] == "the new version failed each of its first 2 games"


def test_a_version_that_cannot_start_stops_the_test(tmp_path: Path) -> None:
    """Its command is broken, as one that fails each of its first games: exit code 3, before any
    game is played."""
    bot = tmp_path / "bot"
    bot.write_text("#!/bin/sh\n")  # not executable
    for role, bots in (("new", [str(bot), FIRST]), ("old", [FIRST, str(bot)])):
        result = runner.invoke(
            app, ["sprt", "--bot", bots[0], "--bot", bots[1], "--games", "20", *SLOW_CLOCK]
        )
        assert result.exit_code == 3, result.output
        output = " ".join(result.output.split())
        assert f"cannot start '{bot}': it is not an executable file" in output
        assert f"the {role} version cannot start" in output
        assert "pair " not in result.output
    # A mistyped absolute path to a script: refused before any game too, naming the script, not
    # played as four forfeits recorded in the ledger.
    missing = tmp_path / "mybot" / "bot.py"
    ledger = tmp_path / "ab.sqlite"
    result = runner.invoke(
        app,
        ["sprt", "--bot", FIRST, "--bot", f"{{python}} {missing}", "--games", "20",
         "--ledger", str(ledger), *SLOW_CLOCK],
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    output = " ".join(result.output.split())
    expected = f"the old version cannot start: bot 'mybot': cannot start it: its script '{missing}'"
    assert expected in output
    assert "pair " not in result.output
    assert not ledger.exists()
    result = runner.invoke(
        app,
        ["sprt", "--bot", FIRST, "--bot", FIRST, "--variant", "three-handed", "--opponent",
         str(bot)],
    )  # fmt: skip
    assert result.exit_code == 2, result.output  # the opponent is no version: a usage error
    assert "it is not an executable file" in " ".join(result.output.replace("│", " ").split())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give --bot NEW --bot OLD to play, or --pentanomial"),
        (["--pentanomial", "1,2,3,4,5", "--bot", "x"], "give --bot NEW --bot OLD to play"),
        (["--pentanomial", "1,2,3,4,5", "--bot", "x"], "--bot and --pentanomial cannot be given"),
        (
            ["--pentanomial", "1,2,3,4,5", "--trinomial", "1,2,3"],
            "--pentanomial and --trinomial cannot be given together",
        ),
        (["--pentanomial", "1,2,3,4"], "expected five counts"),
        (["--pentanomial", "0,0,0,0,0"], "every count is 0"),
        (["--trinomial", "1,2"], "expected three whole numbers"),
        # Digits to str.isdigit() that int() refuses (a traceback) or reads (silently a 1).
        (["--trinomial", "1,2,\u00b2"], "the count of wins must be a whole number >= 0"),
        (["--trinomial", "\u0661,2,3"], "the count of losses must be a whole number >= 0"),
        (["--trinomial", "1,2," + "9" * 5000], "the count of wins must be at most 1000000000"),
        (
            ["--pentanomial", "1,2,3,4,5", "--elo0", "5", "--elo1", "0"],
            "elo0 must be less than elo1",
        ),
        (["--pentanomial", "1,2,3,4,5", "--alpha", "0"], "alpha must be between 0 and 1"),
        (["--bot", FIRST], "give two: --bot NEW --bot OLD"),
        (["--bot", FIRST, "--bot", FIRST, "--games", "3"], "a duplicate pair is two games"),
        (["--bot", FIRST, "--bot", FIRST, "--max-games", "1"], "from 2 to 1,000,000, got 1"),
        (["--bot", FIRST, "--bot", FIRST, "--max-games", "0"], "from 2 to 1,000,000, got 0"),
        (["--bot", FIRST, "--bot", FIRST, "--games", "0"], "from 2 to 1,000,000, got 0"),
        (["--bot", FIRST, "--bot", FIRST, "--games", "2", "--max-games", "4"], "not both"),
        (["--bot", FIRST, "--bot", FIRST, "--variant", "five-handed"], "unknown variant"),
        (["--bot", FIRST, "--bot", FIRST, "--name", "a"], "give two names"),
        (
            ["--bot", FIRST, "--bot", FIRST, "--deals", "deals.txt", "--seed", "5"],
            "--deals and --seed both choose the deals: give one of them",
        ),
        (["--bot", FIRST, "--bot", FIRST, "--deals", "d.txt", "--seed", "1"], "give one of them"),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["sprt", *args])
    assert result.exit_code == 2
    assert message in " ".join(result.output.replace("│", " ").split())


def test_a_bad_deal_suite_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "deals.txt"
    bad.write_text("bezique-arena-deals 1\nvariant two-handed\ndeal 5 dealer=7\n")
    result = runner.invoke(app, ["sprt", "--bot", FIRST, "--bot", FIRST, "--deals", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:3: dealer must be a seat 0..1, got 7" in " ".join(result.output.split())


def test_deals_make_and_check(tmp_path: Path) -> None:
    path = tmp_path / "suites" / "three.txt"
    result = runner.invoke(app, ["deals", "make", "25", str(path), "--variant", "three-handed"])
    assert result.exit_code == 0, result.output
    suite = load_deals(path, "three-handed")
    assert len(suite) == 25 and len({d.seed for d in suite.deals}) == 25
    result = runner.invoke(app, ["deals", "make", "5", str(path)])
    assert result.exit_code == 2 and "exists" in result.output
    result = runner.invoke(app, ["deals", "make", "5", str(path), "--force"])
    assert result.exit_code == 0 and len(load_deals(path)) == 5
    result = runner.invoke(app, ["deals", "check", str(path)])
    assert result.exit_code == 0 and "5 two-handed deals" in result.output
    result = runner.invoke(app, ["deals", "check", str(path), "--variant", "polish"])
    assert result.exit_code == 2 and "made for two-handed, not polish" in result.output
    result = runner.invoke(app, ["deals", "make", "5", str(path), "--variant", "x", "--force"])
    assert result.exit_code == 2 and "unknown variant" in result.output


# ------------------------------------------------------------------------------ with real bots


def test_a_fixed_test_between_real_bots_on_a_deal_suite(tmp_path: Path) -> None:
    suite = tmp_path / "deals.txt"
    fresh_deals(3, "rubicon").save(suite)
    result = runner.invoke(
        app,
        ["sprt", "--bot", FIRST, "--bot", RANDOM, "--name", "first", "--name", "random",
         "--variant", "rubicon", "--deals", str(suite), "--games", "4", "--concurrency", "2",
         *SLOW_CLOCK],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("rubicon: first (new) against random (old)")
    pairs = [line for line in lines if line.startswith("pair ")]
    assert len(pairs) == 2
    assert all(
        " | LLR " in p and " | Elo " in p and " | nElo " in p and "| LOS " in p for p in pairs
    )
    # One pair has no spread: its Elo and LOS would be the regularization's, so none is shown.
    assert pairs[0].endswith("| Elo - | nElo - | LOS - (every pair alike so far)")
    v = values(result.output)
    assert v["stopped:"] == "pair limit"
    assert v["pairs"] == "2" and sum(map(int, v["pentanomial"].split(","))) == 2
    assert v["decision"] in ("continue", "H0 accepted", "H1 accepted")
    assert "first (new): average points" in result.output


def test_a_suite_shorter_than_the_games_asked_for_is_said_once(tmp_path: Path) -> None:
    suite = tmp_path / "deals.txt"
    fresh_deals(1, "rubicon").save(suite)
    result = runner.invoke(
        app,
        ["sprt", "--bot", FIRST, "--bot", RANDOM, "--variant", "rubicon", "--deals", str(suite),
         "--games", "10", *SLOW_CLOCK],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "the deal suite holds 1 deal: at most 1 pair"
    assert "; 1 pair on deals of " in lines[1], lines[1]  # not the 5 of --games
    assert values(result.output)["pairs"] == "1"


def test_a_failing_bot_loses_its_games_and_is_shown() -> None:
    result = runner.invoke(
        app,
        ["sprt", "--bot", f"{BROKEN} play-7h", "--bot", FIRST, "--variant", "rubicon",
         "--elo0", "-100", "--elo1", "100", *SLOW_CLOCK],
    )  # fmt: skip
    assert result.exit_code == 3, result.output  # a broken version: no result a script may trust
    assert "illegal-action" in result.output and "-> counted as its loss" in result.output
    v = values(result.output)
    assert v["stopped:"] == "the new version failed each of its first 4 games"
    assert v["pentanomial"] == "2,0,0,0,0"
    assert "games ended by a bot's failure: broken_bot (new) 4" in result.output


@pytest.mark.slow
def test_three_handed_seats_both_versions_with_an_opponent() -> None:
    result = runner.invoke(
        app,
        ["sprt", "--bot", FIRST, "--bot", RANDOM, "--opponent", RANDOM, "--variant",
         "three-handed", "--games", "2", "--seed", "4", *SLOW_CLOCK],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "opponents random_bot#2" in result.output
    assert "first_bot (new): average place" in result.output
    assert values(result.output)["pairs"] == "1"


def test_a_test_recorded_in_a_ledger_resumes(tmp_path: Path) -> None:
    ledger = tmp_path / "arena.db"
    common = ["sprt", "--bot", FIRST, "--bot", RANDOM, "--name", "first", "--name", "random",
              "--variant", "rubicon", "--ledger", str(ledger), "--test", "t1", *SLOW_CLOCK]  # fmt: skip
    result = runner.invoke(app, [*common, "--games", "2"])
    assert result.exit_code == 0, result.output
    assert "recording test 't1'" in result.output
    first = values(result.output)["pentanomial"]
    led = Ledger(ledger)
    assert led.finished("t1")  # every game it was given played
    led.close()
    # Run again with a higher limit: the pair recorded counts and one more is played.
    result = runner.invoke(app, [*common, "--games", "4", "--concurrency", "1"])
    assert result.exit_code == 0, result.output
    assert "resuming test 't1'" in result.output and "1 pair recorded" in result.output
    assert [line for line in result.output.splitlines() if line.startswith("pair ")] == [
        line for line in result.output.splitlines() if line.startswith("pair 2 (deal 1)")
    ]
    v = values(result.output)
    assert v["pairs"] == "2"
    counts = [
        int(a) - int(b) for a, b in zip(v["pentanomial"].split(","), first.split(","), strict=True)
    ]
    assert sorted(counts) == [0, 0, 0, 0, 1]  # the earlier pair plus exactly one new one
    led = Ledger(ledger)
    test = led.find_tournament("t1")
    assert (test.kind, test.played) == ("sprt", 4)
    assert led.finished("t1")  # unfinished while its new pair was played, then finished again
    assert {r.entrant: r.games for r in led.leaderboard(tournament="t1")} == {
        "first": 4,
        "random": 4,
    }
    led.close()
    # Other hypotheses make another test: refused under the same name, nothing played.
    result = runner.invoke(app, [*common, "--games", "4", "--elo1", "10"])
    assert result.exit_code == 2
    assert "(sprt.elo1 changed)" in result.output and "--test NAME" in result.output
    assert "pair " not in result.output


@pytest.mark.slow
def test_the_deal_secret_decides_the_cards(tmp_path: Path) -> None:
    """Two tests with the same secret play the same cards; another secret deals others (the seeds
    are the same in all three: without the secret they reveal nothing)."""

    def decks(secret: str, where: str) -> list[list[str]]:
        ledger = tmp_path / f"{where}.db"
        result = runner.invoke(
            app,
            ["sprt", "--bot", FIRST, "--bot", FIRST, "--name", "a", "--name", "b", "--games", "2",
             "--variant", "rubicon", "--deal-secret", secret, "--ledger", str(ledger), *SLOW_CLOCK],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        led = Ledger(ledger)
        try:
            games = sorted(led.games(limit=-1), key=lambda g: str(g["key"]))
            return [led.game_record(int(g["id"]))["games"][0]["decks"][0] for g in games]
        finally:
            led.close()

    first = decks("ab" * 16, "one")
    assert first[0] == first[1], "both games of a pair are dealt the same cards"
    assert decks("ab" * 16, "two") == first
    assert decks("cd" * 16, "three") != first
