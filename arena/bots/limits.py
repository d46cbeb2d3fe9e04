"""Resource limits and isolation for local bot processes, set per tournament (``[limits]``) or per
server (``arena serve --sandbox/--memory-mb/... --limits FILE``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from arena.common.bounds import MAX_CPUS
from arena.sandbox import MODES, Rlimits

MIB = 1024 * 1024
_SIZES = (
    "memory_mb",
    "cpu_seconds",
    "processes",
    "file_size_mb",
    "open_files",
    "log_bytes",
    "disk_mb",
    "cpus",
)


@dataclass(frozen=True, slots=True)
class Limits:
    """What a local bot may use. Sizes in MiB; 0 means no limit."""

    # address space (RLIMIT_AS); and all its processes' memory together, where the arena can make
    # control groups (arena.sandbox.cgroups), as is `processes`
    memory_mb: int = 4096
    cpu_seconds: int = 900  # CPU time of each process (RLIMIT_CPU), over every game it plays
    processes: int = 4096  # processes and threads of its uid (RLIMIT_NPROC): a fork-bomb brake
    file_size_mb: int = 64  # largest file it may write (RLIMIT_FSIZE)
    open_files: int = 1024  # file descriptors (RLIMIT_NOFILE)
    log_bytes: int = 1_000_000  # its stdout and stderr kept in its log, then truncated
    # sandboxed: the size of its home folder (also its /tmp), held in memory; and the most a
    # submission's build may leave on the disk (it works in a tmpfs of that size: see intake)
    disk_mb: int = 256
    # CPUs its processes together may keep busy at once, where the arena can make control groups
    # with the cpu controller: a bot of many busy processes took its opponent's cores
    cpus: int = 1
    # auto: isolated by bubblewrap where the machine can, else light with a warning; required (or
    # bubblewrap): isolated or not started; none: light (see arena.sandbox).
    sandbox: str = "auto"
    freeze: bool = False  # stop (freeze) the bot while it is not its turn

    def __post_init__(self) -> None:
        """Every problem at once, a line each, each line starting with its field's name."""
        problems = []
        for name in _SIZES:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                problems.append(f"{name} must be an integer >= 0, got {value!r}")
            elif name == "cpus" and value > MAX_CPUS:
                problems.append(f"cpus must be at most {MAX_CPUS}, got {value}")
        if self.sandbox not in MODES:
            problems.append(f"sandbox must be one of {', '.join(MODES)}, got {self.sandbox!r}")
        freeze: object = self.freeze  # typed bool, but a table may hold anything
        if not isinstance(freeze, bool):
            problems.append(f"freeze must be true or false, got {freeze!r}")
        if problems:
            raise ValueError("\n".join(problems))

    def rlimits(self) -> Rlimits:
        return Rlimits(
            address_space=self.memory_mb * MIB,
            cpu_seconds=self.cpu_seconds,
            processes=self.processes,
            file_size=self.file_size_mb * MIB,
            open_files=self.open_files,
            home_bytes=self.disk_mb * MIB,
            cpus=self.cpus,
            freeze=self.freeze,
        )

    @classmethod
    def from_table(cls, table: Mapping[str, object], where: str = "limits") -> Limits:
        """Limits from a TOML table such as a tournament file's ``[limits]``; a bad or unknown field
        raises ValueError naming ``where.field``."""
        known = [f.name for f in fields(cls)]
        for key, value in table.items():
            if key not in known:
                raise ValueError(
                    f"{where}.{key}: unknown field; expected one of {', '.join(known)}"
                )
            try:
                cls(**{key: value})  # type: ignore[arg-type]
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{where}.{key}: {exc}") from exc
        return cls(**table)  # type: ignore[arg-type]
