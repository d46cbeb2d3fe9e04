"""The ``arena`` command line: a typer app composed of one module per command group.

It wires the rooms together (it may use every one of them) and holds no logic of the game, the
referee or the ledger of its own; nothing imports it.
"""
