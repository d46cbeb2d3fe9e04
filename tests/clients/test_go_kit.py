"""The Go starter kit (clients/go) as its README has a bot author use it: `make -C clients/go` builds
./bot from the protocol's .proto files with Debian's packages (offline), `arena check-bot` finds no
mistake, and a match against the Python greedy bot is played to the end with no failure.

The build writes only git-ignored files (clients/go/build/, clients/go/bot). Without the toolchain
these tests fail rather than skip: CI installs it (.ci/run), and a kit nobody builds rots unseen."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# A Go build from clean takes a minute or more on a loaded machine; one worker builds the kit once (the
# build writes into clients/go: two at once would trip over each other).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("go-kit")]

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "clients" / "go"
BOT = KIT / "bot"
ARENA = Path(sys.executable).with_name("arena")
# A build from clean (gRPC compiled: about 45 s of CPU, two minutes under load on 2 cores), within
# pytest's own timeout of the first test (600 s).
BUILD_TIMEOUT_S = 540.0
PLAY_TIMEOUT_S = 600.0
# What the kit's Makefile needs, by the Debian package that brings it.
GOCODE = Path("/usr/share/gocode/src")
PACKAGES: dict[str, Callable[[], bool]] = {
    "golang-go": lambda: shutil.which("go") is not None,
    "protobuf-compiler": lambda: shutil.which("protoc") is not None,
    "golang-google-protobuf-dev": lambda: (
        GOCODE / "google.golang.org/protobuf/cmd/protoc-gen-go"
    ).is_dir(),
    "golang-google-grpc-dev": lambda: (
        GOCODE / "google.golang.org/grpc/cmd/protoc-gen-go-grpc"
    ).is_dir(),
    "make": lambda: shutil.which("make") is not None,
}


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def bot() -> Path:
    """clients/go/bot, built by the kit's Makefile (as the README says)."""
    missing = [name for name, present in PACKAGES.items() if not present()]
    if missing:
        pytest.fail(
            f"the Go kit needs Debian's {' '.join(missing)}: apt-get install {' '.join(missing)}"
        )
    done = _run(["make", "-C", str(KIT)], BUILD_TIMEOUT_S)
    assert done.returncode == 0, f"make -C clients/go failed:\n{done.stdout}\n{done.stderr}"
    assert BOT.is_file() and os.access(BOT, os.X_OK)
    return BOT


def test_the_build_leaves_nothing_for_git(bot: Path) -> None:
    """Generated stubs and the binary are ignored: a build leaves the tree clean."""
    done = _run(["git", "status", "--porcelain", "--ignored=no", "--", str(KIT)], 60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    ignored = _run(["git", "check-ignore", str(bot), str(KIT / "build" / "gopath")], 60)
    assert ignored.stdout.split() == [str(bot), str(KIT / "build" / "gopath")]


def test_the_sdk_tests_pass(bot: Path) -> None:
    done = _run(["make", "-C", str(KIT), "test"], BUILD_TIMEOUT_S)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert re.search(r"^ok\s+arenakit/arena\b", done.stdout, re.M), done.stdout
    assert re.search(r"^ok\s+arenakit/greedybot\b", done.stdout, re.M), done.stdout


def test_check_bot_finds_no_mistake(bot: Path) -> None:
    """In the sandbox where the machine has one (the default, as a tournament launches it): the
    static binary needs nothing beyond its own folder."""
    done = _run([str(ARENA), "check-bot", "clients/go/bot"], PLAY_TIMEOUT_S)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert re.search(r"^\d+ decisions, 0 mistakes$", done.stdout, re.M), done.stdout
    assert "hello: name 'greedy-go', version '1', protocol 1" in done.stdout
    # Every tricky moment was met (declarations, the seven's exchange, done, the last tricks,
    # carte blanche), none with a count of 0.
    moments = re.findall(r"^\s+\[(ok|--)\] .*?: (\d+)", done.stdout, re.M)
    assert len(moments) == 5 and all(mark == "ok" and int(n) > 0 for mark, n in moments), (
        done.stdout
    )


def test_a_match_against_the_python_greedy_bot(bot: Path, tmp_path: Path) -> None:
    record = tmp_path / "match.json"
    done = _run(
        [
            str(ARENA),
            "match",
            "--bot",
            "clients/go/bot",
            "--bot",
            "{python} -m arena_bot.greedy_bot",
            "--games",
            "2",
            "--record",
            str(record),
        ],
        PLAY_TIMEOUT_S,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    games = json.loads(record.read_text())["games"]
    assert len(games) == 2
    assert [(g["outcome"], g["culprit"]) for g in games] == [("normal", -1)] * 2
