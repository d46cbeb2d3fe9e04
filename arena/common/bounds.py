"""The bounds a tournament file, a competition file, bot limits and the command line hold every number
to, in a module below every room that uses them: the command line reads them without loading the
tournament file's models."""

from __future__ import annotations

# The largest time a bot can be told: the bot protocol carries times as 32-bit unsigned integers, so a
# larger one would reach the bot wrong (and its games end as its crash).
MAX_MS = 2**32 - 1
# The largest size in MiB whose bytes a resource limit can take (a signed 64-bit count): beyond it
# prlimit cannot read the limit and no bot starts.
MAX_MB = (2**63 - 1) // 2**20

# The most CPUs a bot's limits may give it (a control group's quota the kernel takes).
MAX_CPUS = 1024
# The largest seed of a deal: the ledger stores seeds as signed 64-bit integers.
MAX_SEED = 2**63 - 1

# Bounds on every count, so that a typing slip cannot ask for a schedule that never ends.
MAX_ENTRANTS = 1000
MAX_DEALS_PER_PAIRING = 10_000
MAX_ROUNDS = 1000
MAX_CONCURRENCY = 256
MAX_PLANNED_GAMES = 1_000_000
MAX_MATCHES_PER_PROCESS = 10_000
