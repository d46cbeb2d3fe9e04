"""What every room of the arena may use, and which imports nothing of the arena: the bounds that
tournament and competition files, the command line and bot limits hold numbers to
(:mod:`.bounds`), the per-process scratch folders (:mod:`.scratch_dirs`) and the secrets handed out
as tokens (:mod:`.secret_tokens`)."""
