"""A/B tests (``arena sprt``): two versions of a bot played in duplicate pairs until a sequential test
decides (:mod:`.duplicate_pairs`), each game recorded in the ledger as it ends and an interrupted test
resumed (:mod:`.ledger_store`).

It may use :mod:`arena.play` (deals, stall watching, the ledger's thread), the service's match
manager, the ledger, the statistics and the rules; never tournament/, competition/, cluster/, cli/
or web/.
"""
