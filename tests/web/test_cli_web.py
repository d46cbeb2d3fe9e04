"""``arena web``: refuses a missing ledger with a clear error, and serves the ledger on the address it
prints (loopback, a free port with --port 0) until interrupted."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner
from web_helpers import arena_web

from arena.cli.main import app


def test_web_refuses_a_missing_ledger(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["web", "--ledger", str(tmp_path / "none.sqlite")])
    assert result.exit_code == 2
    assert "no ledger at" in result.output


def test_web_refuses_a_file_that_is_no_ledger(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_text("hello")
    result = CliRunner().invoke(app, ["web", "--ledger", str(junk)])
    assert result.exit_code == 2
    assert "junk.sqlite" in result.output


def test_web_serves_the_ledger_on_the_address_it_prints(built_ledger: Path) -> None:
    with arena_web("--ledger", str(built_ledger)) as (process, line):
        assert line.startswith(f"arena web: {built_ledger} at http://127.0.0.1:"), line
        url = line.split(" at ", 1)[1].strip()
        with urllib.request.urlopen(url + "api/events", timeout=60) as response:
            events = json.load(response)["events"]
        assert [e["name"] for e in events] == ["Web <fixture> & co"]
        with urllib.request.urlopen(url, timeout=60) as response:
            assert "Web &lt;fixture&gt; &amp; co" in response.read().decode()
        # a request that names another site (a page that pointed its name at 127.0.0.1: DNS
        # rebinding) is not answered
        rebound = urllib.request.Request(url + "api/events", headers={"Host": "evil.example"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(rebound, timeout=60)
        assert refused.value.code == 421
    assert process.returncode == 0, process.stderr.read() if process.stderr else ""
