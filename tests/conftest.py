"""Suite-wide settings.

Most slow tests wait: for bot processes to start and dial in, for clocks, for a killed run to be
resumed. Two xdist workers per core keep the cores busy while others wait."""

from __future__ import annotations

import os

import pytest

WORKERS_PER_CORE = 2


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return WORKERS_PER_CORE * (cores or 1)
