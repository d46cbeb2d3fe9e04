"""Command-line options that are out of range are refused before anything is started."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from arena.cli.main import app

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
