"""The gRPC service: thin servicers over the referee (bot gateway, admin/spectator, health,
reflection), and the match manager that owns tokens, ports, local bot processes and running matches."""
