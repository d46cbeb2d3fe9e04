"""gRPC's transport (arena/__init__.py): the arena's package chooses it before grpc is imported, in
the arena's processes and in a bot's, and whoever set GRPC_EXPERIMENTS keeps their choice."""

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


@pytest.mark.parametrize("package", ["arena_bot", "arena.cli.main", "arena.service.server"])
def test_the_transport_is_chosen_before_grpc_is_imported(package: str) -> None:
    """grpc reads GRPC_EXPERIMENTS once, as it is imported: the arena's package must come first,
    in a bot (the SDK) as in the arena's own processes."""
    done = python(f"import {package}, grpc", "-X", "importtime")
    # -X importtime prints a module as its import completes, the modules it imports before it.
    names = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if "|" in line]
    first_grpc = next(i for i, n in enumerate(names) if n == "grpc" or n.startswith("grpc."))
    assert "arena" in names[:first_grpc], "grpc was imported before the arena's package"


def test_the_older_transport_is_chosen_unless_the_environment_says_otherwise() -> None:
    code = "import arena_bot, os; print(repr(os.environ.get('GRPC_EXPERIMENTS')))"
    assert python(code).stdout.strip() == repr(CHOSEN)
    assert python(code, GRPC_EXPERIMENTS="").stdout.strip() == repr("")
    assert python(code, GRPC_EXPERIMENTS="-event_engine_dns").stdout.strip() == repr(
        "-event_engine_dns"
    )
