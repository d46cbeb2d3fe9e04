"""Resource limits and isolation for local bot processes, set per tournament (``[limits]``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    """What a local bot may use. Sizes in MiB; 0 means no limit."""

    memory_mb: int = 4096  # address space (RLIMIT_AS)
    cpu_seconds: int = 900  # CPU time of each process (RLIMIT_CPU), over every game it plays
    processes: int = 4096  # processes and threads of the user (RLIMIT_NPROC): a fork-bomb brake
    file_size_mb: int = 64  # largest file it may write (RLIMIT_FSIZE)
    open_files: int = 1024  # file descriptors (RLIMIT_NOFILE)
    log_bytes: int = 1_000_000  # its stdout and stderr kept in its log, then truncated
    sandbox: str = "none"  # "bubblewrap": no network, a read-only view of the system
    freeze: bool = False  # SIGSTOP the bot while it is not its turn

    def __post_init__(self) -> None:
        for name in (
            "memory_mb",
            "cpu_seconds",
            "processes",
            "file_size_mb",
            "open_files",
            "log_bytes",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        if self.sandbox not in ("none", "bubblewrap"):
            raise ValueError(f"sandbox must be none or bubblewrap, got {self.sandbox!r}")
