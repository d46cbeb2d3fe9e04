"""Bezique Arena: a gRPC referee and tournament arena for bots playing Bezique."""

__version__ = "0.1.0"
