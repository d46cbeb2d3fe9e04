"""A competition's intake of the example bundle of each language, as the server does it: the build in
the sandbox (no network, the toolchain and gRPC libraries read-only, ``disk_mb`` of tmpfs, one CPU
where control groups allow), then the conformance check. Every build is cold: each submission builds
in a folder of its own, and Go's cache lives and dies there. The binary bundle's executable is built
first, outside the sandbox, as its author would (``make -C competitions/examples/binary-bot``).

One line per language, the last machine-readable::

    LANGUAGE build_s B check_s C result_mb M

    .venv/bin/python benchmarks/bundle_builds.py              # every language; minutes
    .venv/bin/python benchmarks/bundle_builds.py cpp go       # some of them
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.bots.limits import Limits
from arena.competition import bundles, intake, runtimes
from arena.sandbox import probe

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "competitions" / "examples"
FOLDERS = {
    "python": "python-bot",
    "node": "js-bot",
    "cpp": "cpp-bot",
    "go": "go-bot",
    "java": "java-bot",
    "binary": "binary-bot",
}


def binary(scratch: Path) -> Path:
    folder = scratch / "binary-bot"
    shutil.copytree(EXAMPLES / "binary-bot", folder, ignore=shutil.ignore_patterns("bot", "build"))
    subprocess.run(
        ["make", "-s", "-C", str(folder), f"ROOT={ROOT}", f"GO_BOT={EXAMPLES / 'go-bot'}"],
        check=True,
        capture_output=True,
    )
    return folder


async def measure(language: str, source: Path, scratch: Path, limits: Limits) -> str:
    manifest = bundles.read_manifest(source)
    built = scratch / "builds" / language
    start = time.perf_counter()
    outcome = await intake.build(manifest, source, built, limits, 3600)
    build_s = time.perf_counter() - start
    if not outcome.ok:
        return f"{language} build failed after {build_s:.1f} s: {outcome.reason}"
    size = sum(p.stat().st_size for p in built.rglob("*") if p.is_file() and not p.is_symlink())
    command = intake.runtime_command(manifest, built)
    start = time.perf_counter()
    checked = await intake.check(command, "two-handed", limits, 1800, shown=manifest.run)
    check_s = time.perf_counter() - start
    intake._remove(built)
    if not checked.ok:
        return f"{language} check failed after {check_s:.1f} s: {checked.reason}"
    return f"{language} build_s {build_s:.1f} check_s {check_s:.1f} result_mb {size / 2**20:.1f}"


def main() -> None:
    languages = sys.argv[1:] or list(FOLDERS)
    mode = "required" if probe("required").isolated else "none"
    print(f"sandbox: {mode}")
    limits = Limits(sandbox=mode)
    with tempfile.TemporaryDirectory(prefix="bundle-builds-") as tmp:
        scratch = Path(tmp)
        for language in languages:
            why = runtimes.refusal(language)
            if why is not None:
                print(f"{language} skipped: {why}")
                continue
            source = binary(scratch) if language == "binary" else EXAMPLES / FOLDERS[language]
            print(asyncio.run(measure(language, source, scratch, limits)), flush=True)


if __name__ == "__main__":
    main()
