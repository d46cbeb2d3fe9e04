"""The ``arena`` command: entry point composing the command groups."""

from __future__ import annotations

import typer

from arena.cli.play import play

app = typer.Typer(
    name="arena",
    help="Bezique Arena: rules engine, referee, tournaments and ratings for Bezique bots.",
    no_args_is_help=True,
    add_completion=False,
)
app.command("play")(play)


@app.callback()
def main() -> None:
    """Bezique Arena: rules engine, referee, tournaments and ratings for Bezique bots."""


if __name__ == "__main__":
    app()
