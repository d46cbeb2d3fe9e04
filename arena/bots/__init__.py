"""Local bot processes: launched from a command line, supervised, and killed with all their children."""
