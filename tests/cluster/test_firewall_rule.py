"""The README's nftables rule for a cluster of several machines (README, "What a cluster exposes")
closes every port the README's own commands fix, and every fixed port of its table, to all but the
cluster's network: a port added to the commands and not to the rule would be left open to anyone.
(Loading the rule needs root and nftables on a node, which no test here has; what it names is checked.)
"""

from __future__ import annotations

import re
from pathlib import Path

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _section(title: str) -> str:
    start = README.index(title)
    end = README.index("\n## ", start)
    return README[start:end]


def _ports(text: str) -> set[int]:
    out: set[int] = set()
    for first, last in re.findall(r"(\d+)(?:-(\d+))?", text):
        out.update(range(int(first), int(last or first) + 1))
    return out


def test_the_rule_drops_every_port_the_commands_and_the_table_fix() -> None:
    rule = re.search(r"tcp dport \{([^}]*)\} drop", README)
    assert rule is not None, "the README's nftables rule is gone"
    dropped = _ports(rule.group(1))
    # The fenced block of the README's ray start commands (the one that fixes the ports).
    blocks = re.findall(r"```[a-z]*\n(.*?)```", README, re.DOTALL)
    commands = next(b for b in blocks if "PORTS=" in b and "ray start" in b)
    fixed = {int(p) for p in re.findall(r"--[a-z-]*port (\d+)", commands)}
    low = re.search(r"--min-worker-port (\d+)", commands)
    high = re.search(r"--max-worker-port (\d+)", commands)
    assert low and high and fixed, commands
    fixed |= set(range(int(low.group(1)), int(high.group(1)) + 1))
    table = _section("### What a cluster exposes")
    # The table's rows whose port is fixed (a number first, not "random" nor a range of defaults).
    fixed |= {int(p) for p in re.findall(r"^\| (\d+) \(", table, re.MULTILINE)}
    assert {6379, 10001, 52365, 44227, 44217, 8265} <= fixed
    assert fixed <= dropped, f"open to anyone: {sorted(fixed - dropped)}"


def test_the_rule_lets_loopback_and_the_clusters_network_through_first() -> None:
    block = re.search(r"table inet ray \{.*?\n  \}", README, re.DOTALL)
    assert block is not None
    lines = [line.strip() for line in block.group(0).splitlines()]
    accepts = [
        i for i, line in enumerate(lines) if line.endswith("accept") and "policy" not in line
    ]
    drop = next(i for i, line in enumerate(lines) if line.endswith("drop"))
    assert any('iifname "lo"' in lines[i] for i in accepts)
    assert any("saddr" in lines[i] for i in accepts)
    assert max(accepts) < drop  # nftables takes the first verdict: the accepts must come first
