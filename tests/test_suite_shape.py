"""The suite's own machinery (tests/conftest.py)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.mark.xdist_group("suite-shape")
def test_a_group_is_sent_to_one_worker(request: pytest.FixtureRequest) -> None:
    """Under ``--dist loadgroup`` a grouped test carries its group in its node id, which is what
    sends the whole group to one worker (the expensive fixtures of the Ray cluster and Chromium
    tests are built once); without xdist its node id is left as it is."""
    grouped = bool(os.environ.get("PYTEST_XDIST_WORKER")) and request.config.option.loadgroup
    assert request.node.nodeid.endswith("@suite-shape") == grouped


def test_built_once_builds_once(build_once: Callable[[str, Callable[[Path], None]], Path]) -> None:
    calls = []

    def build(folder: Path) -> None:
        calls.append(folder)
        (folder / "made").write_text("yes")

    first = build_once("suite-shape-check", build)
    second = build_once("suite-shape-check", build)
    assert first == second and (first / "made").read_text() == "yes"
    assert len(calls) <= 1  # (another worker may have built it first)
