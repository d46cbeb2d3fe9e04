"""gRPC's transport (arena/__init__.py): the arena's package chooses it before grpc is imported in
the arena's processes, the SDK (arena_bot/__init__.py) the same in a bot's, and whoever set
GRPC_EXPERIMENTS keeps their choice."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHOSEN = "-event_engine_client,-event_engine_listener"


def python(code: str, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a new interpreter, with GRPC_EXPERIMENTS only as ``env`` gives it."""
    environ = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    environ.update(env)
    return subprocess.run(
        [sys.executable, *flags, "-c", code],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


# Records GRPC_EXPERIMENTS as it is when grpc is first looked for (grpc reads it as it is imported).
SPY = """
import os, sys
seen = []
class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "grpc" and not seen:
            seen.append(os.environ.get("GRPC_EXPERIMENTS"))
sys.meta_path.insert(0, Spy())
import PACKAGE, grpc
print(repr(seen))
"""


@pytest.mark.parametrize("package", ["arena_bot", "arena.cli.main", "arena.service.server"])
def test_the_transport_is_chosen_before_grpc_is_imported(package: str) -> None:
    """grpc reads GRPC_EXPERIMENTS once, as it is imported: the choice must be made first, in a bot
    (the SDK, which makes it itself: it may run without the arena's package) as in the arena's own
    processes (the arena's package)."""
    done = python(SPY.replace("PACKAGE", package))
    assert done.stdout.strip() == repr([CHOSEN]), "grpc was imported before the choice was made"


def test_the_older_transport_is_chosen_unless_the_environment_says_otherwise() -> None:
    code = "import arena_bot, os; print(repr(os.environ.get('GRPC_EXPERIMENTS')))"
    assert python(code).stdout.strip() == repr(CHOSEN)
    assert python(code, GRPC_EXPERIMENTS="").stdout.strip() == repr("")
    assert python(code, GRPC_EXPERIMENTS="-event_engine_dns").stdout.strip() == repr(
        "-event_engine_dns"
    )
