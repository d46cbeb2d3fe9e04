"""How a bot process is confined: one interface, used by the bot launcher.

Modes (``[limits] sandbox`` in a tournament file, ``--sandbox`` on the command line):

- ``auto`` (the default): isolation by bubblewrap where this machine can do it, else the light mode
  with a warning (:meth:`Probe.describe` says which and why);
- ``required`` (also ``bubblewrap``): isolation or nothing; a bot is never started without it;
- ``none``: the light mode, chosen explicitly (a developer testing their own bot).

:func:`probe` tells which mode will really run and why, before anything is started; :func:`confine`
gives the command that runs one bot process under it, and the :class:`Confinement` that starts it
(:meth:`Confinement.spawn`: a start called off half-way leaves nothing running), finds its processes
and releases what it held when the bot is gone.

It may use :mod:`arena.common` only.
"""

from arena.sandbox.core import (
    ISOLATING,
    MODES,
    Confinement,
    Probe,
    RefereeAddress,
    SandboxError,
    SandboxUnavailable,
    completed_or_undone,
    confine,
    probe,
    require,
)
from arena.sandbox.mounts import HOME, SOCKET, SOCKET_ADDRESS
from arena.sandbox.rlimits import Rlimits

__all__ = [
    "HOME",
    "ISOLATING",
    "MODES",
    "SOCKET",
    "SOCKET_ADDRESS",
    "Confinement",
    "Probe",
    "RefereeAddress",
    "Rlimits",
    "SandboxError",
    "SandboxUnavailable",
    "completed_or_undone",
    "confine",
    "probe",
    "require",
]
