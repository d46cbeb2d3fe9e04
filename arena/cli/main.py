"""The ``arena`` command: entry point composing the command groups."""

from __future__ import annotations

import atexit
import gc
import inspect

import typer
from typer.models import CommandInfo, TyperInfo

from arena.cli.check_bot import check_bot
from arena.cli.compete import app as compete_app
from arena.cli.deals import deals_app
from arena.cli.ledger import export, games_app, leaderboard, ratings_app, replay
from arena.cli.match import match
from arena.cli.play import play
from arena.cli.remote import matches, start, watch
from arena.cli.serve import serve
from arena.cli.sprt import sprt
from arena.cli.tournament import run, tournaments
from arena.cli.web import web

# At exit the interpreter's full garbage collections walk every object a command still holds (its
# modules, the ledger's rows): some 80 ms of the 0.4 s of CPU of `arena leaderboard`, and cycles left
# as garbage at that point only hold memory the process is giving back. So they are skipped: what is
# alive is handed to the collector's permanent generation first. (Objects are still freed as their
# references go, so files and connections close as before.)
atexit.register(gc.freeze)

app = typer.Typer(
    name="arena",
    help="Bezique Arena: rules engine, referee, tournaments and ratings for Bezique bots.",
    no_args_is_help=True,
    add_completion=False,
)
app.command("play")(play)
app.command("start")(start)
app.command("matches")(matches)
app.command("watch")(watch)
app.command("serve")(serve)
app.command("match")(match)
app.command("check-bot")(check_bot)
app.command("run")(run)
app.command("tournaments")(tournaments)
app.command("leaderboard")(leaderboard)
app.command("replay")(replay)
app.command("export")(export)
app.command("web")(web)
app.add_typer(games_app, name="games")
app.add_typer(ratings_app, name="ratings")
app.add_typer(compete_app, name="compete")
app.command("sprt")(sprt)
app.add_typer(deals_app, name="deals")


@app.callback()
def main() -> None:
    """Bezique Arena: rules engine, referee, tournaments and ratings for Bezique bots."""


def reflowed(text: str) -> str:
    """A command's help with each paragraph on one line, for the terminal to wrap: Typer keeps a
    docstring's line breaks, which at 80 columns break every line of ours in two, raggedly."""
    return "\n\n".join(" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n"))


def _reflow_help(group: typer.Typer) -> None:
    infos: list[CommandInfo | TyperInfo] = list(group.registered_commands)
    if group.registered_callback is not None:
        infos.append(group.registered_callback)
    for info in infos:
        text = info.help or inspect.getdoc(info.callback)
        if text:
            info.help = reflowed(text)
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _reflow_help(sub.typer_instance)


_reflow_help(app)


if __name__ == "__main__":
    app()
