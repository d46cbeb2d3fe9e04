"""``arena deals``: deal suites, the fixed deals that A/B tests, tournaments and matches can play."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.common import console, errors
from arena.cli.options import VariantOption
from arena.game import VARIANT_NAMES
from arena.play.deals import MAX_DEALS, DealFileError, fresh_deals, load_deals

deals_app = typer.Typer(
    help="Deal suites: files of deals (seeds, or explicit card orders) to play the same cards again.",
    no_args_is_help=True,
)


@deals_app.command("make")
def make(
    count: Annotated[int, typer.Argument(min=1, max=MAX_DEALS, help="How many deals.")],
    file: Annotated[Path, typer.Argument(help="The file to write.")],
    variant_name: VariantOption = "two-handed",
    force: Annotated[bool, typer.Option(help="Overwrite FILE if it exists.")] = False,
) -> None:
    """Write a deal suite of COUNT deals with fresh random seeds to FILE."""
    if variant_name not in VARIANT_NAMES:
        raise typer.BadParameter(
            f"unknown variant {variant_name!r}; one of: {', '.join(VARIANT_NAMES)}",
            param_hint="--variant",
        )
    if file.exists() and not force:
        errors.print(
            f"[red]error:[/] {escape(str(file))} exists (give --force to overwrite it)",
            soft_wrap=True,
        )
        raise typer.Exit(2)
    suite = fresh_deals(count, variant_name)
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        suite.save(file)
    except OSError as exc:
        errors.print(f"[red]error:[/] cannot write {escape(str(file))}: {escape(str(exc))}")
        raise typer.Exit(1) from exc
    console.print(f"{count} {variant_name} deals written to {escape(str(file))}", soft_wrap=True)


@deals_app.command("check")
def check(
    file: Annotated[Path, typer.Argument(help="The deal suite to read.")],
    variant_name: Annotated[
        str | None,
        typer.Option(
            "--variant", "-v", help="The variant it must be made for.", show_default=False
        ),
    ] = None,
) -> None:
    """Read a deal suite and report its variant and deals, or the first error with its line."""
    try:
        suite = load_deals(file, variant_name)
    except DealFileError as exc:
        errors.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from exc
    explicit = sum(1 for d in suite.deals if d.decks)
    console.print(
        f"{escape(str(file))}: {len(suite)} {suite.variant} deals"
        + (f", {explicit} with explicit card orders" if explicit else ""),
        soft_wrap=True,
    )
