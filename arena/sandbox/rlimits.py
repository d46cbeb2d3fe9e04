"""A bot process's resource limits as the kernel takes them (prlimit's flags, setrlimit's values), in
a module of their own: the command lines (:mod:`.commands`) and the launcher (:mod:`.core`) both
use them."""

from __future__ import annotations

import resource
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rlimits:
    """Resource limits as the kernel takes them (0: none)."""

    address_space: int = 0  # bytes
    cpu_seconds: int = 0
    processes: int = 0
    file_size: int = 0  # bytes
    open_files: int = 0
    home_bytes: int = 256 * 1024 * 1024  # the writable space of an isolated bot (0: no limit)
    cpus: int = 0  # CPUs its processes together may keep busy (a cgroup's quota; 0: no limit)
    freeze: bool = False  # its processes are to be frozen together between turns (a freezer group)

    def prlimit_args(self) -> list[str]:
        out = []
        for flag, which, value in (
            ("--as", resource.RLIMIT_AS, self.address_space),
            ("--cpu", resource.RLIMIT_CPU, self.cpu_seconds),
            ("--nproc", resource.RLIMIT_NPROC, self.processes),
            ("--fsize", resource.RLIMIT_FSIZE, self.file_size),
            ("--nofile", resource.RLIMIT_NOFILE, self.open_files),
        ):
            if value > 0:
                out.append(f"{flag}={_lowered(which, value)}")
        return out

    def values(self) -> list[int]:
        return [
            _lowered(which, value) if value > 0 else 0
            for which, value in (
                (resource.RLIMIT_AS, self.address_space),
                (resource.RLIMIT_CPU, self.cpu_seconds),
                (resource.RLIMIT_NPROC, self.processes),
                (resource.RLIMIT_FSIZE, self.file_size),
                (resource.RLIMIT_NOFILE, self.open_files),
            )
        ]


def _lowered(which: int, value: int) -> int:
    """A limit never above the arena's own hard limit (raising it would fail)."""
    _soft, hard = resource.getrlimit(which)
    return value if hard == resource.RLIM_INFINITY else min(value, hard)
