"""The options several commands take are defined once (arena.cli.options) and used as they are: a
change to one (its help, its bounds) reaches every command that takes it."""

from __future__ import annotations

import inspect
from typing import Any, get_type_hints

import typer

from arena.cli import options
from arena.cli.main import app


def _commands() -> dict[str, Any]:
    """Every command's callback by its full name (``compete author add``)."""
    found: dict[str, Any] = {}

    def walk(group: typer.Typer, prefix: str) -> None:
        for info in group.registered_commands:
            name = info.name or (info.callback.__name__ if info.callback else "")
            found[f"{prefix}{name}".replace("_", "-")] = info.callback
        for sub in group.registered_groups:
            assert sub.typer_instance is not None
            walk(sub.typer_instance, f"{prefix}{sub.name} ")

    walk(app, "")
    return found


def _users() -> dict[str, set[str]]:
    """For each alias of arena.cli.options, the commands with a parameter of exactly that alias."""
    aliases = {
        name: value
        for name, value in vars(options).items()
        if name.endswith("Option") and hasattr(value, "__metadata__")
    }
    users: dict[str, set[str]] = {name: set() for name in aliases}
    for command, callback in _commands().items():
        hints = get_type_hints(callback, include_extras=True)
        for param in inspect.signature(callback).parameters:
            for name, alias in aliases.items():
                if hints.get(param) == alias and hints[param].__metadata__ is alias.__metadata__:
                    users[name].add(command)
    return users


def test_every_shared_option_is_used_where_the_commands_share_it() -> None:
    users = _users()
    assert users["VariantOption"] == {"play", "match", "sprt", "deals make"}
    assert users["VariantOptionsOption"] == {"play", "match", "sprt"}
    assert users["SandboxOption"] == {"match", "sprt", "check-bot"}
    assert users["BotLogsOption"] == {"match", "sprt"}
    for time_option in ("BudgetOption", "BankOption", "GraceOption"):
        assert users[time_option] == {"match", "sprt", "start"}
    assert users["OnFailureOption"] == users["MaxStrikesOption"] == {"match", "start"}
    assert users["RefereeOption"] == users["AdminTokenOption"] == {"start", "matches", "watch"}
    assert users["LogsMaxOption"] == {"serve", "compete serve"}
    author = {"compete submit", "compete submissions", "compete log", "compete withdraw"}
    assert users["SubmissionServerOption"] >= {*author, "compete remote"}
    assert users["AuthorTokenOption"] >= {*author, "compete remote"}
    assert users["CompetitionOption"] >= {"compete status", "compete pause", "compete resume"}
    assert {"run", "tournaments", "leaderboard", "export", "web", "compete serve"} <= users[
        "LedgerOption"
    ]
    assert all(users.values()), {name for name, used in users.items() if not used}
