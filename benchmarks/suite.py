"""What the test suite costs, beside a yardstick of the machine's speed at the time.

    python benchmarks/suite.py [-- PYTEST ARGS...]

Runs the suite as ``make test`` does (pytest on every worker, bytecode written), and reads the
machine's CPU counters (``/proc/stat``) before and after: the wall time, the CPU seconds every process
of the machine spent meanwhile (the suite is the only load when nothing else runs), the idle CPU
seconds (how much of the two cores the suite left unused) and the processes and threads started.

A shared machine's speed moves a lot from hour to hour: the same pure-Python loop has been seen to
take 1.3 s and 2.6 s on the same machine the same day, and the suite's wall time moves with it. So
the yardstick, one fixed single-threaded pure-Python workload timed just before and just after the
suite, is printed too, and the suite's CPU seconds divided by it: a figure that a change in the
machine's speed moves far less than the wall time, to compare runs of different days.

The last line is ``suite_seconds W cpu_seconds C idle_seconds I yardstick_seconds Y cpu_in_yardsticks
C/Y``. Any arguments after ``--`` go to pytest (a part of the suite: ``-- tests/game``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]


class Counters(NamedTuple):
    busy: float  # CPU seconds spent by anything (user, nice, system, interrupts, stolen)
    idle: float  # CPU seconds idle or waiting for I/O
    started: int  # processes and threads started since boot


def counters() -> Counters:
    tick = os.sysconf("SC_CLK_TCK")
    with open("/proc/stat") as f:
        lines = f.read().splitlines()
    v = [int(x) for x in lines[0].split()[1:]]
    started = next(int(line.split()[1]) for line in lines if line.startswith("processes "))
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return Counters(
        (user + nice + system + irq + softirq + steal) / tick, (idle + iowait) / tick, started
    )


def yardstick() -> float:
    """Seconds of one fixed pure-Python workload in a fresh interpreter: the interpreter's loop,
    calls, dictionaries and small integers, as the suite's own code uses them."""
    code = (
        "import time\n"
        "t = time.process_time()\n"
        "x, d = 0, {}\n"
        "for i in range(3_000_000):\n"
        "    x += i * i % 7\n"
        "    d[i & 4095] = x\n"
        "print(time.process_time() - t)\n"
    )
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, timeout=600
            ).stdout
        )
        for _ in range(3)
    ]
    return min(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    args = parser.parse_args()
    if not Path("/proc/stat").is_file():
        sys.exit("suite.py reads the CPU counters of /proc/stat: Linux only")
    before = yardstick()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.pytest_args]
    print("running:", " ".join(argv[1:]), flush=True)
    c0, t0 = counters(), time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=4 * 3600)
    wall, c1 = time.monotonic() - t0, counters()
    after = yardstick()
    tail = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
    print(f"pytest: exit {done.returncode}: {tail[0]}")
    if done.returncode != 0:
        print(done.stdout[-4000:], done.stderr[-2000:], sep="\n")
    busy, idle = c1.busy - c0.busy, c1.idle - c0.idle
    stick = (before + after) / 2
    print(f"wall {wall:.1f} s; CPU {busy:.1f} s (every process of the machine); idle {idle:.1f} s")
    print(f"processes and threads started: {c1.started - c0.started}")
    print(f"yardstick: {before:.2f} s before the suite, {after:.2f} s after")
    print(
        f"suite_seconds {wall:.1f} cpu_seconds {busy:.1f} idle_seconds {idle:.1f} "
        f"yardstick_seconds {stick:.2f} cpu_in_yardsticks {busy / stick:.0f}"
    )
    sys.exit(1 if done.returncode != 0 else 0)


if __name__ == "__main__":
    main()
