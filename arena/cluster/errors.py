"""The cluster's one error type, importable without Ray."""

from __future__ import annotations


class ClusterError(Exception):
    """The cluster cannot be used (Ray missing, an address that does not answer, a node that lacks what
    the games need); the message names the problem and what to do."""


INSTALL_HINT = "pip install 'bezique-arena[cluster]'"
