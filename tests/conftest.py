"""Suite-wide settings.

Most slow tests wait: for bot processes to start and dial in, for clocks, for a killed run to be
resumed. Two xdist workers per core keep the cores busy while others wait."""

from __future__ import annotations

import fcntl
import functools
import gc
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import typer.main
import typer.testing

# Before any test module imports grpc: the arena's package chooses gRPC's transport (see its __init__),
# so that the servers and clients the tests run in-process use the one the arena's processes do.
import arena  # noqa: F401

WORKERS_PER_CORE = 2

# Typer's CliRunner builds the whole click command tree from the app's functions at every invoke
# (their annotations evaluated again): about 30 ms an invoke, some hundreds of invokes, and 10 of
# the 96 CPU seconds of the CLI, SDK and runner tests. The tree does not change: build it once.
assert hasattr(typer.testing, "_get_command"), "typer.testing no longer builds through _get_command"
typer.testing._get_command = functools.cache(typer.main.get_command)  # type: ignore[attr-defined]


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return WORKERS_PER_CORE * (cores or 1)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Send the tests of one ``xdist_group`` to one worker, as ``--dist loadgroup`` promises.

    xdist (3.8) marks a test's group by adding ``@group`` to its node id in ``_nodeid``, which pytest
    9.2 no longer reads: its node ids come from ``_id``. Without this every group was spread over the
    workers, each building the group's expensive fixture (a Ray cluster, Chromium) again."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        marks = item.iter_markers("xdist_group")
        names = sorted(
            {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in marks}
        )
        if not names or item.nodeid.rfind("@") > item.nodeid.rfind("]"):
            continue
        grouped = f"{item.nodeid}@{'_'.join(names)}"
        if hasattr(item, "_id"):
            item._id = type(item._id).parse(grouped)
        else:
            item._nodeid = grouped
    # The groups are the suite's longest chains (the Ray cluster's tests take minutes one after the
    # other): handed out first, they run beside the rest instead of after it.
    items.sort(key=lambda item: item.nodeid.rfind("@") < item.nodeid.rfind("]"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Leave what lives for the whole run (the modules imported so far, the collected tests) out of
    the garbage collector's later passes: a worker's full collections walk every object it holds,
    and measured over the in-process tests (game, clients, referee, service) they took 2.9 s of a
    worker's time, 1.4 s with this."""
    gc.collect()
    gc.freeze()


BuildOnce = Callable[[str, Callable[[Path], None]], Path]


@pytest.fixture(scope="session")
def build_once(tmp_path_factory: pytest.TempPathFactory) -> BuildOnce:
    """``build_once(name, build)``: see :func:`built_once`."""
    return lambda name, build: built_once(tmp_path_factory, name, build)


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """A folder that ``build`` fills once for the whole run, however many xdist workers ask for it:
    the first to ask builds it under a lock in the run's shared temporary folder, the others wait
    and use it. (A session fixture alone is built once per worker.) Whoever uses it must not change
    what is in it: copy first."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, above each worker's own
    folder = root / f"built-{name}"
    with open(root / f"built-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder
