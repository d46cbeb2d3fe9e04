"""The command lines a confined bot process runs (see :mod:`arena.sandbox.core`): the wrappers that
set its limits, its parent-death signal and its OOM score before its program's first instruction, and
the bubblewraps of an isolated one."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from arena.sandbox import mounts, workspace
from arena.sandbox.rlimits import Rlimits

# The kernel's OOM killer takes the process of the highest badness, and this makes a bot's the highest:
# a machine that runs out of memory (a bot that leaks, in many processes) loses bots before the
# referee, its ledger or anything else. Every process a bot starts inherits it. It is no bound: the
# kernel lets any process lower its own adjustment again (to 0 at most: its parent's, the arena's),
# which makes a bot an ordinary process again, and no more.
OOM_SCORE_ADJ = 1000


def oom_first() -> list[str]:
    """The start of a bot's command line that gives it :data:`OOM_SCORE_ADJ` (util-linux's choom,
    which then executes the rest; nothing where it is missing)."""
    choom = shutil.which("choom")
    return [choom, "-n", str(OOM_SCORE_ADJ), "--"] if choom else []


def isolated_argv(
    argv: Sequence[str],
    limits: Rlimits,
    uid: int | None,
    shown: mounts.Mounts,
    chdir: str = mounts.HOME,
    build: Path | None = None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The command line of an isolated process. A build's (``build``: its folder, where ``shown``
    has put a tmpfs, the folder itself bound at :data:`workspace.RESULT`) runs under
    :mod:`arena.sandbox.workspace`, which starts a further bubblewrap: a PID namespace whose first
    process is the build's command (every process of the build dies with it), no ``/proc``, and the
    real folder hidden under an empty tmpfs. ``seccomp_fd``: the filter (:mod:`arena.sandbox.seccomp`)
    that the bubblewrap executing ``argv`` loads for it."""
    bwrap = shutil.which("bwrap") or "bwrap"
    filtered = ["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []
    prlimit = [shutil.which("prlimit") or "prlimit", *limits.prlimit_args(), "--"]
    home = ["--size", str(limits.home_bytes)] if limits.home_bytes else []
    namespaces = [
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--hostname", "bot",
    ]  # fmt: skip
    # What runs between the two bubblewraps of a build, and what the inner one adds. No /proc: the
    # kernel mounts no new one under bubblewrap's, and the outer one shows the processes of the
    # build's uid outside its namespace, and through them the real folder.
    alone = [
        "--unshare-pid", "--as-pid-1", "--size", str(workspace.BLOCK), "--perms", "0555",
        "--tmpfs", "/proc", "--size", str(workspace.BLOCK), "--perms", "0000", "--tmpfs",
        workspace.RESULT,
    ]  # fmt: skip
    between = workspace.argv(build, limits.home_bytes) if build is not None else []
    if uid is None and build is not None:
        # The arena's uid makes both user namespaces; the build's cannot make more.
        return [
            *prlimit, bwrap, *namespaces, "--unshare-user", *shown.args, "--chdir", "/", "--",
            *between, bwrap, "--unshare-user", "--disable-userns", "--die-with-parent",
            "--dev-bind", "/", "/", *alone, *filtered, "--chdir", chdir, "--", *argv,
        ]  # fmt: skip
    if uid is None:
        # One unprivileged bubblewrap, under the arena's own uid.
        return [
            *prlimit, bwrap, *namespaces, "--unshare-user", "--disable-userns", *shown.args,
            *filtered, "--chdir", chdir, "--", *argv,
        ]  # fmt: skip
    # Root: the mounts are made with root's rights (a runtime under a private folder can be shown),
    # then the bot's uid, without capabilities, makes its own user namespace and its home.
    drop = [
        shutil.which("setpriv") or "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
        "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
    ]  # fmt: skip
    inner = [
        bwrap, "--unshare-user", "--disable-userns", "--die-with-parent", "--dev-bind", "/", "/",
        *home, "--tmpfs", mounts.HOME, *(alone if build is not None else []), *filtered,
        "--chdir", chdir, "--",
    ]  # fmt: skip
    return [
        bwrap, *namespaces, *shown.args, "--chdir", "/", "--", *drop, *prlimit, *between, *inner,
        *argv,
    ]  # fmt: skip


# A stand-in for setpriv, prlimit and choom where util-linux is missing: limits, the parent-death
# signal and the OOM score (where the system has one) set before the bot's program is executed.
_WRAPPER = """
import ctypes, os, resource, signal, sys
parent = int(sys.argv[1])
for which, value in zip((resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_NPROC,
                         resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE), map(int, sys.argv[2].split(","))):
    if value > 0:
        resource.setrlimit(which, (value, value))
try:
    with open("/proc/self/oom_score_adj", "w") as oom:
        oom.write(sys.argv[3])
except OSError:
    pass
ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
if os.getppid() != parent:
    os._exit(1)  # the arena died before the signal was armed
os.execvp(sys.argv[4], sys.argv[4:])
"""


def light_wrapper(limits: Rlimits) -> list[str]:
    """The start of a light bot's command line: util-linux's setpriv and prlimit (with choom first),
    or :data:`_WRAPPER` where they are missing."""
    setpriv, prlimit = shutil.which("setpriv"), shutil.which("prlimit")
    if setpriv and prlimit:
        return [
            *oom_first(), setpriv, "--pdeathsig", "KILL", "--", prlimit, *limits.prlimit_args(),
            "--",
        ]  # fmt: skip
    values = ",".join(map(str, limits.values()))
    return [
        sys.executable, "-S", "-c", _WRAPPER, str(os.getpid()), values, str(OOM_SCORE_ADJ),
    ]  # fmt: skip
