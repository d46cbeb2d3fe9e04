"""What the organiser does to a competition (pause, resume, suspend, reinstate, add an author, list
the authors), in one place: ``arena compete`` runs these on the ledger itself (``--ledger``), and the
submission service runs the same ones for the organiser's calls (``--server``, the web's organiser
pages), on the competition server's ledger thread.

The organiser's token: ``arena compete serve`` creates one on its first start (shown once) or takes
one from a file (``--organiser-token-file``); only its SHA-256 is kept, in the competition's data
folder (:data:`TOKEN_FILE`), as an author's token's is kept in the ledger.
"""

from __future__ import annotations

import hmac
import os
from dataclasses import dataclass
from pathlib import Path

from arena.common.secret_tokens import new_token
from arena.ledger import LedgerError
from arena.ledger import competitions as store

TOKEN_FILE = "organiser-token.sha256"  # in the competition's data folder
MAX_REASON = 500  # characters of a suspension's reason (shown to its author)


class OrganiserError(Exception):
    """An organiser's action refused; the message says why."""


# ---------------------------------------------------------------- the organiser's token


def token_file(data_dir: Path) -> Path:
    return data_dir / TOKEN_FILE


def take_token(data_dir: Path, given: str | None) -> str | None:
    """Keep the hash of the organiser's token: ``given``'s (replacing any kept), or a new token's
    when none is kept yet. Returns the new token (for the caller to show once), else None."""
    token = None
    if given is not None:
        given = given.strip()
        if len(given) < 16 or not given.isprintable() or " " in given:
            raise OrganiserError(
                "the organiser's token must be at least 16 printable characters with no space"
            )
    elif not token_file(data_dir).exists():
        token = given = new_token()
    if given is None:
        return None
    data_dir.mkdir(parents=True, exist_ok=True)
    path = token_file(data_dir)
    partial = path.with_name(path.name + ".new")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(store.hash_token(given) + "\n")
    partial.replace(path)
    return token


def is_organiser(data_dir: Path, token: str) -> bool:
    """Whether ``token`` is the organiser's (compared with the hash kept, in constant time)."""
    if not token:
        return False
    try:
        kept = token_file(data_dir).read_text().strip()
    except OSError:
        return False
    return bool(kept) and hmac.compare_digest(kept, store.hash_token(token))


# ---------------------------------------------------------------- the actions


def set_paused(comp: store.Competitions, cid: int, paused: bool) -> bool:
    comp.set_paused(cid, paused)
    return paused


def _by_bot(comp: store.Competitions, cid: int, bot: str, status: str) -> list[store.Submission]:
    found = [s for s in comp.submissions(cid, None, (status,)) if s.bot == bot]
    if not found:
        raise OrganiserError(f"no {status} submission of a bot named {bot!r}")
    return found


def suspend(comp: store.Competitions, cid: int, bot: str, reason: str) -> int:
    """Take a bot's versions in play out of play, with the reason its author is shown."""
    reason = " ".join(reason.split())
    if not reason:
        raise OrganiserError("give the reason for the suspension (its author is shown it)")
    if len(reason) > MAX_REASON:
        raise OrganiserError(f"the reason is {len(reason)} characters, over {MAX_REASON}")
    return sum(
        comp.set_status(s.id, store.SUSPENDED, f"suspended: {reason}", when=(store.ACTIVE,))
        for s in _by_bot(comp, cid, bot, store.ACTIVE)
    )


def reinstate(comp: store.Competitions, cid: int, bot: str) -> int:
    """Put a bot's suspended versions back into play (only while still suspended: a later version
    may have entered play and replaced one)."""
    return sum(
        comp.set_status(s.id, store.ACTIVE, "", when=(store.SUSPENDED,))
        for s in _by_bot(comp, cid, bot, store.SUSPENDED)
    )


def add_author(comp: store.Competitions, cid: int, name: str) -> tuple[store.Author, str]:
    """A new author and their token (shown once: only its hash is kept)."""
    try:
        token = comp.add_author(cid, name)
    except LedgerError as exc:
        raise OrganiserError(str(exc).removeprefix(f"{comp.path}: ")) from exc
    author = comp.author_of(cid, token)
    assert author is not None
    return author, token


def authors(comp: store.Competitions, cid: int) -> list[store.Author]:
    return comp.authors(cid)


@dataclass(frozen=True, slots=True)
class Status:
    """A competition as ``arena compete status`` shows it, on the ledger or through the server."""

    name: str
    variant: str
    paused: bool
    played: int  # games played
    failures: int  # of them, ended by a bot's failure
    submissions: list[store.Submission]
    last_games: list[store.LastGame]  # newest first, :data:`LAST_GAMES` at most


LAST_GAMES = 10  # games the status lists


def status(comp: store.Competitions, cid: int) -> Status:
    """Whether the competition is paused, its games played, all its submissions and its last
    games."""
    # By its id: a tournament named as another's id must not stand in for it.
    t = next(t for t in comp.ledger.tournaments() if t.id == cid)
    return Status(
        t.name, t.variant, comp.paused(cid), t.played, t.failures, comp.submissions(cid),
        comp.last_games(cid, LAST_GAMES),
    )  # fmt: skip
