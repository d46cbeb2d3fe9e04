"""What the sandbox tests share: they run only where bubblewrap isolates (and fail on CI, where
.ci/run installs it), and write the bots they start as small Python scripts."""

from __future__ import annotations

import os
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from arena.sandbox import probe

PY = shlex.quote(sys.executable)


def require_the_sandbox() -> None:
    """Skip the calling test module where bubblewrap cannot isolate a bot; on CI, fail it."""
    found = probe("auto")
    if found.isolated:
        return
    if os.environ.get("CI"):
        pytest.fail(
            f"the sandbox is unavailable ({found.reason}): .ci/run installs bubblewrap",
            pytrace=False,
        )
    pytest.skip(f"the sandbox is unavailable: {found.reason}", allow_module_level=True)


def bot_script(folder: Path, body: str) -> str:
    """The command line of a bot whose Python is ``body``, written in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "probe.py"
    path.write_text(textwrap.dedent(body))
    return f"{PY} {shlex.quote(str(path))}"
