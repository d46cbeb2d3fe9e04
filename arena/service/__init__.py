"""The gRPC service: thin servicers over the referee (bot gateway, admin/spectator, health,
reflection), and the match manager that owns tokens, ports, local bot processes and running matches.

It owns the servers, the ports of the bots' streams, the match manager with its process pool
(:mod:`.process_pool`) and lobby (:mod:`.lobby`). It may use the referee, the bots' launcher,
the wire, the rules and :mod:`arena.common`; never play/ or anything above it.
"""
