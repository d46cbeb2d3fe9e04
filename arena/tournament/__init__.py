"""Tournaments: a competition described in a TOML file, its schedule of games (round robin, gauntlet,
Swiss; duplicate deals), and the runner that plays the schedule through the referee into the ledger."""
