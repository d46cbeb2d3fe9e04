"""The system calls an isolated bot may not make: a seccomp filter bubblewrap loads (``--seccomp FD``)
just before it executes the bot's command.

- ``setsid``: a new session is a scheduler autogroup of its own, and the kernel shares the CPU
  between autogroups, not processes: a bot that started 32 busy processes each in a session of its
  own took 32 shares of the machine against its opponent's one, which then timed out (a red-team
  finding). Kept in the session bubblewrap gives it, a bot's processes share one autogroup.
- ``io_uring_setup``, ``io_uring_enter``, ``io_uring_register``: a large kernel surface that a bot
  never needs (programs that use it, such as Node.js, fall back when it is refused), refused by
  container runtimes' default profiles too.
- On x86-64, every call of the x32 ABI (numbers from 0x40000000): the same calls by other numbers.

A refused call fails with EPERM; every other call is allowed. The filter is classic BPF, written here
(no library): on a machine of another architecture there is none (:func:`program` gives None).
"""

from __future__ import annotations

import os
import platform
import struct

# struct seccomp_data: int nr; __u32 arch; ...
_NR, _ARCH = 0, 4
# BPF instruction classes and modes
_LD_W_ABS = 0x00 | 0x00 | 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x05 | 0x10 | 0x00  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x05 | 0x30 | 0x00  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06 | 0x00  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM

_X32 = 0x40000000
IO_URING = (425, 426, 427)  # io_uring_setup, _enter, _register: the same on every architecture
# machine name -> (AUDIT_ARCH_*, setsid's number, whether x32 calls are refused)
_ARCHES = {
    "x86_64": (0xC000003E, 112, True),
    "aarch64": (0xC00000B7, 157, False),
}


def _op(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (this one's by default) as bubblewrap reads it (an array of
    ``struct sock_filter``), or None for an architecture it does not know."""
    arch = _ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit, setsid, x32 = arch
    refused = (setsid, *IO_URING)
    # Laid out as: check the arch, load nr, [x32 test], one test per refused call, allow, refuse.
    body: list[tuple[str, int]] = ([("jge", _X32)] if x32 else []) + [("jeq", n) for n in refused]
    ops = [_op(_LD_W_ABS, 0, 0, _ARCH)]
    # Another architecture's calls (a 32-bit program): refused whole, as their numbers differ.
    ops.append(_op(_JEQ_K, 1, 0, audit))
    ops.append(_op(_RET_K, 0, 0, _EPERM))
    ops.append(_op(_LD_W_ABS, 0, 0, _NR))
    for i, (test, k) in enumerate(body):
        to_refuse = len(body) - i  # over the remaining tests and the allow
        ops.append(_op(_JGE_K if test == "jge" else _JEQ_K, to_refuse, 0, k))
    ops.append(_op(_RET_K, 0, 0, _ALLOW))
    ops.append(_op(_RET_K, 0, 0, _EPERM))
    return b"".join(ops)


def filter_fd() -> int | None:
    """A file descriptor holding :func:`program`, at its start (close-on-exec: it reaches only the
    process started with it in ``pass_fds``, whose bubblewrap reads it); None where there is no
    filter for this machine. The caller closes it once the bot has started."""
    code = program()
    if code is None:
        return None
    fd = os.memfd_create("arena-seccomp", os.MFD_CLOEXEC)  # pass_fds gives it to the bot alone
    try:
        os.write(fd, code)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
