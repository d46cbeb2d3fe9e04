"""Running a tournament's games on a Ray cluster; the coordinator stays the ledger's only writer.

The ``arena`` process the user started (the coordinator) keeps everything that must be exact: the
schedule, the ledger, the ratings. Each game goes to the cluster as a Ray task that asks for one CPU per
bot process; the node that runs it plays it on a referee of its own (one per Ray worker process), with
the bots launched, limited and sandboxed there exactly as they are locally, and sends the match record
back. The bots' files travel through Ray's object store. See :mod:`.connect` (the cluster),
:mod:`.bot_files` (the bots' files), :mod:`.player` (the coordinator's side) and :mod:`.node` (the
node's side).

Importing this package does not import Ray: only connecting to a cluster does.

It may use :mod:`arena.play` (one game, its rules and seatings), the service, the bots, the
sandbox, the ledger's row types and :mod:`arena.common`; never tournament/, competition/,
abtest/, cli/ or web/ (the command line hands a tournament the cluster's player).
"""

from arena.cluster.errors import ClusterError

__all__ = ["ClusterError"]
