"""What installing the Python SDK costs a bot author: the time of the install and the size of the
environment it leaves, in a fresh virtual environment, with pip's cache (what a second install on
the same machine costs; the first one also downloads).

    python benchmarks/sdk_install.py                      # the SDK alone, then with the engine
    python benchmarks/sdk_install.py --rev d14f14e --before
        # at an older commit, where the SDK needed the arena itself: pip install . ./clients/python

Each case is ``python3.11 -m venv ENV && time ENV/bin/pip install ... && du -sh ENV`` in a scratch
folder, on a copy of the commit's files (``git archive``: pip builds in the source folder, and the
checkout stays as it is). It prints, per case, the seconds the install took (wall clock, and the
CPU seconds of pip and what it ran: on a loaded machine the wall clock says more about the load),
the environment's size in MiB and the number of distributions installed in it (pip and setuptools
included), first for an empty environment. With ``--repeat N`` each case is installed N times into
fresh environments and the fastest is printed.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = {
    "sdk": ["./clients/python"],
    "sdk+engine": ["./clients/python", "./clients/python/engine"],
}
BEFORE = {"sdk (needed the arena)": [".", "./clients/python"]}


def export(rev: str, into: Path) -> None:
    """The commit's files (symbolic links kept) into ``into``."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="tar")


def size_bytes(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root, name)
            if not path.is_symlink():
                total += path.stat().st_blocks * 512  # on disk, as du counts
    return total


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def measure(
    python: str, source: Path, targets: list[str], scratch: Path
) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, bytes, distributions) of one install into a fresh venv."""
    env_dir = scratch / "env"
    shutil.rmtree(env_dir, ignore_errors=True)
    subprocess.run([python, "-m", "venv", str(env_dir)], check=True)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip"]
    start, cpu = time.perf_counter(), children_cpu()
    if targets:
        subprocess.run(
            [*pip, "install", "--quiet", "--disable-pip-version-check", *targets],
            cwd=source,
            check=True,
        )
    seconds, cpu = time.perf_counter() - start, children_cpu() - cpu
    listed = subprocess.run(
        [*pip, "list", "--format=freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return seconds, cpu, size_bytes(env_dir), len(listed)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rev", default="HEAD", help="the commit to install (default: HEAD)")
    parser.add_argument(
        "--before",
        action="store_true",
        help="measure the install of a commit where the SDK needed the arena (pip install . "
        "./clients/python)",
    )
    parser.add_argument("--python", default="python3.11", help="the interpreter of the venvs")
    parser.add_argument("--repeat", type=int, default=1, help="installs per case; the fastest")
    args = parser.parse_args()
    if shutil.which(args.python) is None and not Path(args.python).is_file():
        sys.exit(f"no interpreter {args.python!r}: pass --python PATH")
    if args.repeat < 1:
        sys.exit(f"--repeat must be 1 or more, got {args.repeat}")
    cases = {"empty venv": [], **(BEFORE if args.before else CASES)}
    with tempfile.TemporaryDirectory(prefix="sdk-install-") as tmp:
        scratch = Path(tmp)
        source = scratch / "src"
        source.mkdir()
        export(args.rev, source)
        print(f"{'case':<24} {'wall s':>7} {'cpu s':>6} {'MiB':>6} {'dists':>6}  command")
        for name, targets in cases.items():
            runs = [measure(args.python, source, targets, scratch) for _ in range(args.repeat)]
            seconds, cpu, size, count = min(runs)
            command = "pip install " + " ".join(targets) if targets else "-"
            print(
                f"{name:<24} {seconds:>7.1f} {cpu:>6.1f} {size / 2**20:>6.1f} {count:>6}  {command}"
            )


if __name__ == "__main__":
    main()
