"""Playing games: what tournaments, competitions, A/B tests and the cluster all stand on.

It owns playing one scheduled game on the in-process referee with its replays after the arena's own
stalls (:mod:`.game`, :mod:`.stall_watch`), the ledger's writer thread (:mod:`.ledger_thread`),
deal suites (:mod:`.deals`), the models and error messages that tournament and competition files
share (:mod:`.file_models`), and the conformance check of a bot (:mod:`.conformance`) with the
arranged deals of its scripted session (:mod:`.scripted_opponent`).

It may use the service (a match manager and its server), the bots' launcher and limits, the referee,
the rules, the ledger's row types and :mod:`arena.common`; never tournament/, competition/,
abtest/, cluster/, cli/ or web/.
"""
