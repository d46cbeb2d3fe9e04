"""``arena compete ...``: a standing competition.

For the organiser (on the ledger, :mod:`.organiser`): ``serve`` runs it; ``author add`` gives an author
a token; ``status``, ``leaderboard``, ``pause``/``resume``, ``suspend``/``reinstate``; ``runtimes``
says which bundle languages this machine can build and run. For authors (over
the network, with their token, :mod:`.author`): ``submit``, ``submissions``, ``log``, ``withdraw``,
``remote``, ``webhook set|show|remove``, ``challenge``, ``challenges``, ``challenge-cancel``,
``challenge-replay``, and ``leaderboard --server``. What both use, ``leaderboard`` among it:
:mod:`.shared`.
"""

from __future__ import annotations

import typer

from arena.cli.compete import author, organiser, shared

app = typer.Typer(
    help="A standing competition: submissions, a continuous ladder, authors and versions.",
    no_args_is_help=True,
)
author_app = typer.Typer(help="The competition's authors.", no_args_is_help=True)
app.add_typer(author_app, name="author")
webhook_app = typer.Typer(
    help="Your notifications: a webhook told of your submissions' changes and a daily digest.",
    no_args_is_help=True,
)

# In this order in `arena compete --help`: the organiser's commands, then the authors'.
app.command("serve")(organiser.serve)
author_app.command("add")(organiser.author_add)
author_app.command("list")(organiser.author_list)
app.command("runtimes")(organiser.runtimes_command)
app.command("status")(organiser.status)
app.command("leaderboard")(shared.leaderboard)
app.command("pause")(organiser.pause)
app.command("resume")(organiser.resume)
app.command("suspend")(organiser.suspend)
app.command("reinstate")(organiser.reinstate)
app.command("submit")(author.submit)
app.command("submissions")(author.submissions)
app.command("log")(author.log)
app.command("history")(author.history)
app.command("withdraw")(author.withdraw)
app.command("remote")(author.remote)
app.add_typer(webhook_app, name="webhook")
webhook_app.command("set")(author.webhook_set)
webhook_app.command("show")(author.webhook_show)
webhook_app.command("remove")(author.webhook_remove)
app.command("challenge")(author.challenge)
app.command("challenges")(author.challenges)
app.command("challenge-cancel")(author.challenge_cancel)
app.command("challenge-replay")(author.challenge_replay)
