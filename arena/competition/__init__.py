"""Standing competitions (``arena compete``): a competition file (:mod:`.spec`), authors' submissions
taken in (bundles unpacked, built and checked: :mod:`.bundles`, :mod:`.intake`), the matchmaker
(:mod:`.matchmaker`), the server that runs it until stopped, and its submission API: the desk it
asks for (:mod:`.desk_port`), who may make which call (:mod:`.submission_access`) and the gRPC
servicer (:mod:`.submission_api`).

It may use :mod:`arena.play`, the cluster, the service, the bots' launcher, the sandbox, the ledger,
the referee and the rules; never tournament/, abtest/, cli/ or web/.
"""
