"""The Go starter kit from a bot author's side: the time from its README to a passing check.

In a fresh clone of this repository's committed HEAD (a scratch folder, removed afterwards) it follows
clients/go/README.md: ``make -C clients/go`` with an empty Go build cache (a machine that has never
built Go), then ``arena check-bot clients/go/bot``; then it removes the build (``make clean``) and
builds again with the cache now warm (what a bot author's later builds cost). Nothing is downloaded:
the kit builds offline from Debian's packages. The last line is machine-readable::

    build_cold_s B check_s C readme_to_check_s R build_warm_s W binary_mb M

    .venv/bin/python benchmarks/go_kit.py     # a minute or two; more on a loaded machine
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARENA = Path(sys.executable).with_name("arena")


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return took


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="go-kit-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        env = {**os.environ, "GOCACHE": str(Path(tmp) / "gocache")}
        cold = timed(["make", "-C", "clients/go"], clone, env)
        check = timed([str(ARENA), "check-bot", "clients/go/bot"], clone, env)
        size = (clone / "clients" / "go" / "bot").stat().st_size / 1e6
        timed(["make", "-C", "clients/go", "clean"], clone, env)
        warm = timed(["make", "-C", "clients/go"], clone, env)
    print(f"build from a fresh clone, empty Go cache: {cold:.1f} s")
    print(f"arena check-bot clients/go/bot: {check:.1f} s")
    print(f"README to a passing check: {cold + check:.1f} s")
    print(f"build from clean, warm Go cache: {warm:.1f} s")
    print(f"binary: {size:.1f} MB (static)")
    print(
        f"build_cold_s {cold:.1f} check_s {check:.1f} readme_to_check_s {cold + check:.1f} "
        f"build_warm_s {warm:.1f} binary_mb {size:.1f}"
    )


if __name__ == "__main__":
    main()
