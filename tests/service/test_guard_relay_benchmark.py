"""The relay benchmark (benchmarks/guard_relay.py) runs and prints both paths' figures: a script whose
figures the README and the issue notes quote is kept working."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "guard_relay.py"


def test_the_relay_benchmark_prints_both_paths() -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--exchanges", "20"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["direct", "guarded"], run.stdout
    for line in lines:
        figures = dict(re.findall(r"(\w+)=(\d+)", line))
        assert set(figures) == {"median_us", "p99_us", "server_cpu_us_per_exchange"}, line
        assert int(figures["median_us"]) > 0


def test_too_few_exchanges_are_refused_by_name() -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--exchanges", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "--exchanges must be at least 10" in run.stderr
