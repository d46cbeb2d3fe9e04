"""Local bot processes: launched from a command line, supervised, and killed with all their children.

It owns the launcher, a bot's limits and its logs' folder. It may use the sandbox and
:mod:`arena.common`; never the service, the referee or anything above them.
"""
