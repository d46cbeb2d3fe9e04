"""``arena play``: a seeded game between random players, printed as a readable transcript."""

from __future__ import annotations

import random
from typing import Annotated

import typer

from arena.cli.options import VariantOption, VariantOptionsOption
from arena.game import GameState, VariantError, variant
from arena.game.transcript import Policy, narrate_game


def random_policy(seed: int) -> Policy:
    rng = random.Random(seed)
    return lambda state: rng.choice(state.legal_actions())


def parse_options(options: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for opt in options:
        key, eq, value = opt.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise typer.BadParameter(
                f"expected NAME=VALUE (for example game_end=immediate), got {opt!r}",
                param_hint="--option",
            )
        if key in out:  # the last one would win without a word
            raise typer.BadParameter(
                f"{key} is given twice ({key}={out[key]}, {key}={value}): give it once",
                param_hint="--option",
            )
        out[key] = value
    return out


def play(
    variant_name: VariantOption = "two-handed",
    seed: Annotated[int, typer.Option(help="Seed of the deals and of the random players.")] = 1,
    option: VariantOptionsOption = None,
    seat: Annotated[
        int | None, typer.Option(help="Show only what this seat sees (default: every hand).")
    ] = None,
) -> None:
    """Play a seeded game between random players and print its transcript."""
    try:
        v = variant(variant_name, **parse_options(option or []))
    except VariantError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if seat is not None and not 0 <= seat < v.seats:
        raise typer.BadParameter(f"--seat must be 0..{v.seats - 1} for {v.name}, got {seat}")
    state = GameState.new(v, seed=seed)
    policies = [random_policy(seed * 7919 + s) for s in range(v.seats)]
    for line in narrate_game(state, policies, seat):
        typer.echo(line)
