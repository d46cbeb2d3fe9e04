"""The ``arena`` command line: a typer app composed of one module per command group."""
