"""Command-line options that are out of range are refused before anything is started or made."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.common.bounds import MAX_CONCURRENCY
from arena.play.deals import MAX_DEALS, fresh_deals

runner = CliRunner()
FIRST = "{python} -m arena_bot.first_bot"


@pytest.mark.parametrize("command", ["match", "sprt"])
@pytest.mark.parametrize("option", ["--budget-ms", "--bank-ms", "--grace-ms"])
def test_a_time_beyond_what_a_bot_can_be_told_is_refused(command: str, option: str) -> None:
    # The bot protocol carries times as 32-bit unsigned integers: 2^32 ms reached the bot wrong and
    # its games ended as its crash.
    result = runner.invoke(app, [command, "--bot", FIRST, "--bot", FIRST, option, str(2**32)])
    assert result.exit_code == 2, result.output
    assert option in result.output
    assert "4294967295" in " ".join(result.output.split())


@pytest.mark.parametrize("option", ["--games", "--max-games"])
def test_an_sprt_of_more_games_than_a_tournament_may_plan_is_refused(
    option: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its deals were derived before the first game, all of them: --max-games 10^11 ran for ever
    # without a word.
    def derive(*args: object) -> None:
        raise AssertionError("deals derived for a test that is refused")

    monkeypatch.setattr("arena.cli.sprt.seeded_deals", derive)
    result = runner.invoke(app, ["sprt", "--bot", FIRST, "--bot", FIRST, option, str(10**11)])
    assert result.exit_code == 2, result.output
    assert option in result.output
    assert "1,000,000" in " ".join(result.output.split())


def test_a_deal_suite_of_more_than_a_million_deals_is_not_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def make(*args: object) -> None:
        raise AssertionError("a suite made past the bound")

    monkeypatch.setattr("arena.cli.deals.fresh_deals", make)
    result = runner.invoke(app, ["deals", "make", str(10**11), str(tmp_path / "d.txt")])
    assert result.exit_code == 2, result.output
    assert "1000000" in " ".join(result.output.split())
    assert not (tmp_path / "d.txt").exists()


def test_fresh_deals_has_a_bound() -> None:
    with pytest.raises(ValueError, match="at most 1,000,000"):
        fresh_deals(MAX_DEALS + 1)


def test_an_address_space_past_what_a_resource_limit_takes_is_refused() -> None:
    # Its bytes past 2^63: prlimit could not read it and no bot started.
    result = runner.invoke(app, ["serve", "--memory-mb", str(2**63 - 1)])
    assert result.exit_code == 2, result.output
    assert "--memory-mb" in result.output
    assert "8796093022207" in " ".join(result.output.split())


def test_an_sprt_plays_no_more_games_at_once_than_a_tournament(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # --concurrency 100000 started that many pairs at once, two bot processes a game.
    def derive(*args: object) -> None:
        raise AssertionError("deals derived for a test that is refused")

    monkeypatch.setattr("arena.cli.sprt.seeded_deals", derive)
    result = runner.invoke(
        app, ["sprt", "--bot", FIRST, "--bot", FIRST, "--concurrency", str(MAX_CONCURRENCY + 1)]
    )
    assert result.exit_code == 2, result.output
    assert "--concurrency" in result.output
    assert str(MAX_CONCURRENCY) in " ".join(result.output.split())


@pytest.mark.parametrize("command", ["play", "match", "sprt"])
def test_a_variant_option_given_twice_is_refused(command: str) -> None:
    # The last one won without a word, even after a value the variant would refuse.
    bots = [] if command == "play" else ["--bot", FIRST, "--bot", FIRST]
    options = ["-o", "declarations_per_trick=bogus", "-o", "declarations_per_trick=one"]
    result = runner.invoke(app, [command, *bots, *options])
    assert result.exit_code == 2, result.output
    assert "declarations_per_trick is given twice" in " ".join(result.output.split())


@pytest.mark.parametrize("text", ["=one", " =one", "declarations_per_trick= ", "one"])
def test_a_variant_option_needs_a_name_and_a_value(text: str) -> None:
    result = runner.invoke(app, ["play", "-o", text])
    assert result.exit_code == 2, result.output
    assert "expected NAME=VALUE" in " ".join(result.output.split())
