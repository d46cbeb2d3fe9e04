"""Bezique Arena: a gRPC referee and tournament arena for bots playing Bezique."""

import os as _os

__version__ = "0.1.0"

# gRPC's transport. Since grpcio 1.80 its Python library runs every socket on the EventEngine, which
# on Linux costs a small message about twice the CPU and latency of the older transport: a bare
# grpc.aio ping-pong between two processes makes some 5,000 round trips a second on it against
# 10,000 on the older one (python benchmarks/grpc_floor.py, see benchmarks/referee.py), and every
# decision of every match is such a round trip. The older transport is still in grpcio, behind these
# two switches, read once when grpc is first imported: so this runs before any arena module imports
# grpc (the bot SDK imports this package first). Whoever sets GRPC_EXPERIMENTS keeps their own
# choice (an empty value is grpc's defaults). The processes the arena starts inherit it, bots too
# (arena.bots.launcher passes it through the scrubbed environment).
_os.environ.setdefault("GRPC_EXPERIMENTS", "-event_engine_client,-event_engine_listener")
