"""Tournaments: a competition described in a TOML file, its schedule of games (round robin, gauntlet,
Swiss; duplicate deals), and the runner that plays the schedule through the referee into the ledger.

It may use :mod:`arena.play`, the service, the bots, the sandbox, the ledger, the statistics
and the rules; never cluster/ (the command line hands the runner its player), competition/,
abtest/, cli/ or web/.
"""
